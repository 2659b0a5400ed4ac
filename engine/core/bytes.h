// Byte sizes: formatting for people and parsing of sizes as logs print them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oomdx {

// 1536 -> "1.50 KiB", 0 -> "0 B"; binary units, two decimals.
std::string format_bytes(std::int64_t bytes);
// "20.00 MiB", "1.5GiB", "512 bytes", "80GB" (decimal GB treated as GiB only when binary=true).
// Returns nullopt when the text is not a size or does not fit in 63 bits.
std::optional<std::int64_t> parse_size(std::string_view text);
// A double as int64 without undefined behaviour: NaN -> 0, beyond the range -> the nearest bound.
std::int64_t saturate_to_int64(double d);
// Half of the display unit the text was printed in ("20.00 MiB" -> 0.005 MiB in bytes).
std::int64_t display_half_unit(std::string_view text);

}  // namespace oomdx
