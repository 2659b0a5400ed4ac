#include "engine/core/cjk_spacing.h"

namespace oomdx {

namespace {

// A three-byte UTF-8 sequence in the CJK ideograph blocks (U+3400..U+9FFF, U+F900..U+FAFF);
// punctuation (U+3000.., U+FF00..) is not one: "（3 GiB）" keeps no space.
bool ideograph_at(const std::string& s, std::size_t i) {
    if (i + 3 > s.size()) return false;
    const auto b0 = static_cast<unsigned char>(s[i]), b1 = static_cast<unsigned char>(s[i + 1]),
               b2 = static_cast<unsigned char>(s[i + 2]);
    if ((b0 & 0xF0) != 0xE0 || (b1 & 0xC0) != 0x80 || (b2 & 0xC0) != 0x80) return false;
    const unsigned cp = ((b0 & 0x0Fu) << 12) | ((b1 & 0x3Fu) << 6) | (b2 & 0x3Fu);
    return (cp >= 0x3400 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF);
}

bool ideograph_before(const std::string& s, std::size_t i) { return i >= 3 && ideograph_at(s, i - 3); }

bool ascii_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool needs_space(const std::string& s, std::size_t seam) {
    if (seam == 0 || seam >= s.size()) return false;
    if (ascii_alnum(s[seam - 1])) return ideograph_at(s, seam);
    if (ascii_alnum(s[seam])) return ideograph_before(s, seam);
    return false;
}

// The offset of a space to drop at a seam: one that a template wrote beside a value it expected to
// be Latin ("满足 {size} 的申请") when the value is Chinese ("未知大小"): two ideographs around it.
std::size_t extra_space(const std::string& s, std::size_t seam) {
    if (seam < s.size() && s[seam] == ' ' && ideograph_before(s, seam) && ideograph_at(s, seam + 1)) return seam;
    if (seam >= 1 && seam - 1 < s.size() && s[seam - 1] == ' ' && ideograph_before(s, seam - 1) && ideograph_at(s, seam))
        return seam - 1;
    return std::string::npos;
}

}  // namespace

void space_cjk_seams(std::string& text, const std::vector<std::size_t>& seams) {
    // From the last seam back, so that the earlier offsets stay valid.
    for (auto it = seams.rbegin(); it != seams.rend(); ++it) {
        if (needs_space(text, *it)) text.insert(*it, 1, ' ');
        else if (const std::size_t x = extra_space(text, *it); x != std::string::npos) text.erase(x, 1);
    }
}

}  // namespace oomdx
