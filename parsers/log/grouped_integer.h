// A count as logs print it: digits, with thousands separators in place ("2,800", "6,738,415,616").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace oomdx {

// The integer, or nothing for anything else: a separator out of place ("67,38", "1,2345"), more than 18 digits,
// any other character.
std::optional<std::int64_t> grouped_integer(std::string_view t);

}  // namespace oomdx
