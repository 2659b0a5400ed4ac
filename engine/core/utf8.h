// UTF-8 validation: inputs may hold any bytes; reports and JSON hold valid UTF-8 only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace oomdx {

// Length of the UTF-8 sequence starting at s[i] (1-4), or 0 when it is invalid there.
// Surrogates (ED A0..BF ..) are accepted unless allow_surrogates is false; Python's
// surrogatepass writes them.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i, bool allow_surrogates = true);
// Offset of the first byte that is not valid UTF-8, or npos.
std::size_t first_invalid_utf8(std::string_view s);
// The longest prefix of at most max_bytes that does not end inside a multi-byte character
// (an excerpt cut for a report stays valid UTF-8).
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);
// Invalid bytes replaced by U+FFFD; `drop_controls` also replaces C0 controls other than tab.
std::string to_valid_utf8(std::string_view s, bool drop_controls = false);

}  // namespace oomdx
