#include "engine/core/utf8.h"

namespace oomdx {

std::size_t utf8_sequence_length(std::string_view s, std::size_t i, bool allow_surrogates) {
    const auto* u = reinterpret_cast<const unsigned char*>(s.data());
    const unsigned char c = u[i];
    if (c < 0x80) return 1;
    std::size_t len;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) len = 3;
    else if (c >= 0xF0 && c <= 0xF4) len = 4;
    else return 0;
    if (i + len > s.size()) return 0;
    for (std::size_t k = 1; k < len; ++k)
        if ((u[i + k] & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && u[i + 1] < 0xA0) return 0;  // overlong
    if (c == 0xF0 && u[i + 1] < 0x90) return 0;  // overlong
    if (c == 0xF4 && u[i + 1] > 0x8F) return 0;  // above U+10FFFF
    if (!allow_surrogates && c == 0xED && u[i + 1] > 0x9F) return 0;
    return len;
}

std::size_t first_invalid_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        const std::size_t len = utf8_sequence_length(s, i);
        if (len == 0) return i;
        i += len;
    }
    return std::string_view::npos;
}

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
    if (s.size() <= max_bytes) return s;
    std::size_t n = max_bytes;
    // s[n] is the first byte left out; while it continues a sequence, that sequence is cut.
    for (int k = 0; k < 3 && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80; ++k) --n;
    return s.substr(0, n);
}

std::string to_valid_utf8(std::string_view s, bool drop_controls) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = utf8_sequence_length(s, i);
        const auto c = static_cast<unsigned char>(s[i]);
        if (len == 0 || (drop_controls && c < 0x20 && c != '\t')) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.append(s.substr(i, len));
            i += len;
        }
    }
    return out;
}

}  // namespace oomdx
