// Reading a whole text input (config, model file, rule pack, YAML knowledge) with the checks
// every such file gets: the limit text_file_bytes, no NUL bytes, valid UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oomdx {

// `kind` names what was expected in messages ("a config"); an empty (or blank) file is an error
// unless allow_empty. Throws input_error naming the file and the line.
std::string read_text_file(const std::string& path, const char* kind, bool allow_empty = false);
// 1-based line of byte `offset` in `text`.
std::int64_t line_of_offset(std::string_view text, std::size_t offset);

}  // namespace oomdx
