// The rank a line names in its first 96 bytes: `[rankN]:` prefixes of torchrun's
// --tee/--log-line-prefix and `rankN]` forms; -1 when none.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace oomdx {

inline std::int64_t rank_prefix(std::string_view s) {
    const std::string_view h = s.substr(0, std::min<size_t>(s.size(), 96));
    size_t pos = 0;
    while ((pos = h.find("rank", pos)) != std::string_view::npos) {
        size_t i = pos + 4, d = i;
        std::int64_t v = 0;
        while (d < h.size() && d - i < 7 && h[d] >= '0' && h[d] <= '9') v = v * 10 + (h[d++] - '0');
        if (d > i && d < h.size() && h[d] == ']') return v;
        pos = i;
    }
    return -1;
}

}  // namespace oomdx
