#include "parsers/log/param_count.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "parsers/log/grouped_integer.h"

namespace oomdx {

namespace {

// Significant digits of a decimal as printed ("20430.40" 7, "0.5" 1, "1,200" 4).
int significant_digits(std::string_view t) {
    int n = 0;
    bool leading = true;
    for (char c : t) {
        if (c < '0' || c > '9') continue;
        if (leading && c == '0') continue;
        leading = false;
        ++n;
    }
    return n;
}

}  // namespace

std::optional<printed_count> read_param_count(std::string_view t) {
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    double scale = 1;
    if (!t.empty()) {
        switch (t.back()) {
            case 'K': case 'k': scale = 1e3; break;
            case 'M': case 'm': scale = 1e6; break;
            case 'B': case 'b': case 'G': scale = 1e9; break;
            case 'T': case 't': scale = 1e12; break;
            default: break;
        }
        if (scale != 1) t.remove_suffix(1);
        while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    }
    double v = 0;
    bool whole = false;  // an integer without a suffix: every digit printed
    if (const auto n = grouped_integer(t)) {
        v = static_cast<double>(*n);
        whole = scale == 1;
    } else {
        if (t.empty() || t.size() > 24 || t.find(',') != std::string_view::npos) return std::nullopt;
        std::string tmp(t);
        char* end = nullptr;
        v = std::strtod(tmp.c_str(), &end);
        if (end != tmp.c_str() + tmp.size() || !std::isfinite(v)) return std::nullopt;
    }
    v *= scale;
    if (!(v >= 0.5) || v > 1e14) return std::nullopt;
    printed_count c;
    c.n = std::llround(v);
    c.rounded_digits = whole ? 0 : std::max(1, significant_digits(t));
    return c;
}

std::string count_in_billions(const printed_count& c) { return fmt::format("{:.4g}", static_cast<double>(c.n) / 1e9); }

}  // namespace oomdx
