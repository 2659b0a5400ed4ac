#include "parsers/log/grouped_integer.h"

namespace oomdx {

// Digits, with thousands separators between them ("2,800" as BasicSR prints its iteration, "6,738,415,616"):
// where there is a separator, every group after the first has three digits ("67,38" is no number).
std::optional<std::int64_t> grouped_integer(std::string_view t) {
    if (t.empty() || t.size() > 24 || t.front() == ',' || t.back() == ',') return std::nullopt;
    const bool grouped = t.find(',') != std::string_view::npos;
    std::int64_t v = 0;
    int digits = 0, group = 0;
    for (char c : t) {
        if (c == ',') {
            if (group == 0 || (group != 3 && digits != group) || group > 3) return std::nullopt;
            group = 0;
            continue;
        }
        if (c < '0' || c > '9' || ++digits > 18) return std::nullopt;
        ++group;
        v = v * 10 + (c - '0');
    }
    if (grouped && group != 3) return std::nullopt;
    return v;
}

}  // namespace oomdx
