// One key/value read from a config file before any framework mapping: a dotted path (TOML,
// JSON, YAML, Python call keywords), a flag (CLI) or an environment variable, with its location.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/text_file.h"
#include "engine/core/value.h"

namespace oomdx {

struct raw_entry {
    std::string key;         // "training.local_batch_size", "micro-batch-size", "env.X"
    value val;               // literal value; null for containers and non-literals
    bool literal = true;     // false: expression, unresolved shell variable, "auto", ...
    bool container = false;  // table / object / dataclass call: only used when mapped
    std::string text;        // raw text of the value as written
    std::int64_t line = 0;   // 1-based
    std::string excerpt;     // the source line, trimmed and bounded
    std::string file;        // the file it was written in when not the config's own (an mmengine `_base_`)
};

// The trimmed text of 1-based `line` of `text`, at most 200 bytes.
std::string line_excerpt(std::string_view text, std::int64_t line);
// A double that is a whole number inside the int64 range, as an integer.
bool whole_number(double d, std::int64_t& out);
// Reads a whole config or model file (engine/core/text_file.h checks); throws input_error.
std::string read_config_file(const std::string& path);

// Flatteners: nested documents -> dotted keys. Lists of scalars become list values.
// Each throws input_error naming file:line on malformed input.
std::vector<raw_entry> flatten_json(std::string_view text, const std::string& file);
std::vector<raw_entry> flatten_toml(std::string_view text, const std::string& file);
std::vector<raw_entry> flatten_yaml(std::string_view text, const std::string& file);

}  // namespace oomdx
