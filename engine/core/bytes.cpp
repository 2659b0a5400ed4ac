#include "engine/core/bytes.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace oomdx {

std::string format_bytes(std::int64_t bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    const bool neg = bytes < 0;
    double v = std::fabs(static_cast<double>(bytes));
    int u = 0;
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        ++u;
    }
    if (u == 0) return fmt::format("{}{} B", neg ? "-" : "", static_cast<std::int64_t>(v));
    return fmt::format("{}{:.2f} {}", neg ? "-" : "", v, units[u]);
}

namespace {
struct parsed {
    double number = 0;
    double multiplier = 1;
    int decimals = 0;
    bool ok = false;
};

parsed parse(std::string_view t) {
    parsed p;
    size_t i = 0;
    while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
    size_t start = i;
    bool dot = false;
    while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || (t[i] == '.' && !dot))) {
        if (t[i] == '.') dot = true;
        else if (dot) ++p.decimals;
        ++i;
    }
    if (i == start) return p;
    p.number = std::strtod(std::string(t.substr(start, i - start)).c_str(), nullptr);
    while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
    std::string unit;
    while (i < t.size() && std::isalpha(static_cast<unsigned char>(t[i])))
        unit += static_cast<char>(std::tolower(static_cast<unsigned char>(t[i++])));
    if (unit.empty() || unit == "b" || unit == "byte" || unit == "bytes") p.multiplier = 1;
    else if (unit == "k" || unit == "kib" || unit == "kb") p.multiplier = 1024.0;
    else if (unit == "m" || unit == "mib" || unit == "mb") p.multiplier = 1024.0 * 1024;
    else if (unit == "g" || unit == "gib" || unit == "gb") p.multiplier = 1024.0 * 1024 * 1024;
    else if (unit == "t" || unit == "tib" || unit == "tb") p.multiplier = 1024.0 * 1024 * 1024 * 1024;
    else return p;
    p.ok = true;
    return p;
}
}  // namespace

std::optional<std::int64_t> parse_size(std::string_view text) {
    parsed p = parse(text);
    if (!p.ok) return std::nullopt;
    const double v = std::round(p.number * p.multiplier);
    if (!(v < 9.0e18)) return std::nullopt;  // beyond int64 (or not finite)
    return static_cast<std::int64_t>(v);
}

std::int64_t saturate_to_int64(double d) {
    if (!(d == d)) return 0;
    if (d >= 9.2e18) return INT64_MAX;
    if (d <= -9.2e18) return INT64_MIN;
    return static_cast<std::int64_t>(d);
}

std::int64_t display_half_unit(std::string_view text) {
    parsed p = parse(text);
    if (!p.ok) return 0;
    return static_cast<std::int64_t>(0.5 * p.multiplier * std::pow(10.0, -p.decimals));
}

}  // namespace oomdx
