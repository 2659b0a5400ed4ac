// Process-wide bounds on what an input may make oomdx read or allocate. Defaults are safe for
// real inputs (multi-GB logs and snapshots); `--limit NAME=VALUE` or OOMDX_LIMITS changes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace oomdx {

struct input_limits {
    std::int64_t text_file_bytes = 4LL << 20;       // configs, model files, rule packs, YAML knowledge
    std::int64_t text_items = 200000;               // lines plus list items in one such file
    std::int64_t log_file_bytes = 1LL << 40;        // one log (streamed: memory stays flat)
    std::int64_t snapshot_file_bytes = 256LL << 30; // one snapshot (memory-mapped)
    std::int64_t config_depth = 64;                 // nesting in configs and Python registries
    std::int64_t snapshot_depth = 10000;            // nested MARKs / JSON nesting in a snapshot
    std::int64_t snapshot_stack = 1LL << 24;        // values on the unpickler stack
    std::int64_t snapshot_memo = 1LL << 28;         // memo slots
    std::int64_t snapshot_string_bytes = 1LL << 28; // bytes in one pickled string
    std::int64_t snapshot_objects = 1LL << 32;      // decoded values in one snapshot
    std::int64_t snapshot_containers = 1LL << 22;   // generic dicts and lists alive at once
};

struct limit_info {
    const char* name;
    std::int64_t input_limits::*field;
    bool is_size;  // printed and parsed with size units
    const char* desc;
};
const std::vector<limit_info>& limit_table();

// The limits in force (defaults, then OOMDX_LIMITS, then --limit).
input_limits& current_limits();
// "name=value" (value: integer or size such as 2GiB/512M); throws usage_error naming the limit.
void set_limit(const std::string& assignment);
// "a=1,b=2" as from OOMDX_LIMITS.
void set_limits_from_list(const std::string& list);
// One line per limit: name, value, meaning.
std::string describe_limits();

}  // namespace oomdx
