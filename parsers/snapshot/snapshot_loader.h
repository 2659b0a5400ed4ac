// Loads a memory snapshot (pickle protocol 2-5 or JSON, detected by content) into the model.
// Never executes code: only data opcodes are accepted. Every error is an input_error naming
// the file and the byte offset.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "engine/core/limits.h"
#include "parsers/snapshot/snapshot_model.h"

namespace oomdx {
class fact_sink;
}

namespace oomdx::snap {

// Safety bounds, from the process limits (engine/core/limits.h) unless set here.
struct load_limits {
    std::int64_t max_depth = current_limits().snapshot_depth;          // nested MARKs / JSON nesting
    std::int64_t max_stack = current_limits().snapshot_stack;          // values on the unpickler stack
    std::int64_t max_memo = current_limits().snapshot_memo;            // memo slots
    std::int64_t max_string = current_limits().snapshot_string_bytes;  // bytes in one string
    std::int64_t max_objects = current_limits().snapshot_objects;      // decoded values in total
    std::int64_t max_live_containers = current_limits().snapshot_containers;  // generic dicts/lists alive at once
    std::int64_t max_file_bytes = current_limits().snapshot_file_bytes;
};

// Reads the file through a memory map, releasing pages behind the cursor.
snapshot load_snapshot(const std::string& path, const load_limits& limits = {});
// Same, reporting (bytes read, file size) every few MB (progress on large files).
snapshot load_snapshot(const std::string& path, const load_limits& limits,
                       const std::function<void(std::size_t, std::size_t)>& progress);

// Same, from bytes in memory; `name` is used in messages.
snapshot load_snapshot_bytes(std::string_view data, const std::string& name,
                             const load_limits& limits = {});

// Emits the snapshot_file.* facts (knowledge/facts/snapshot_file.yaml) describing what was read.
void emit_file_facts(const snapshot& s, fact_sink& sink);

// True when the bytes look like a pickle (PROTO opcode) rather than JSON.
bool looks_like_pickle(std::string_view head);

}  // namespace oomdx::snap
