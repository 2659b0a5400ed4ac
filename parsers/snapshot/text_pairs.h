// Which adjacent byte pairs occur in a text, hashed into 512 bits: a needle whose first or last
// pair is absent cannot occur in the text, so its search can be skipped. A present bit proves
// nothing (hash collisions): the search then runs as before, so the answer is always the
// search's. Used where one text meets many needles (the category rules, docs/snapshot.md snap37).
#pragma once

#include <cstdint>
#include <string_view>

namespace oomdx::snap {

class text_pairs {
public:
    text_pairs() = default;
    explicit text_pairs(std::string_view s) {
        for (std::size_t i = 1; i < s.size(); ++i) set(slot(s[i - 1], s[i]));
    }
    // Whether `needle` may occur in the text (false: it does not).
    bool may_contain(std::string_view needle) const {
        const std::size_t n = needle.size();
        return n < 2 || (has(slot(needle[0], needle[1])) && has(slot(needle[n - 2], needle[n - 1])));
    }
    // hay.find(needle) != npos, where `hay` is the text this was built from.
    bool contains(std::string_view hay, std::string_view needle) const {
        return may_contain(needle) && hay.find(needle) != std::string_view::npos;
    }

private:
    static unsigned slot(char a, char b) {
        return ((static_cast<unsigned char>(a) * 0x9E3779B1u) ^ (static_cast<unsigned char>(b) * 0x85EBCA77u)) >> 23;
    }
    void set(unsigned k) { m_w[k >> 6] |= std::uint64_t(1) << (k & 63); }
    bool has(unsigned k) const { return (m_w[k >> 6] >> (k & 63)) & 1; }
    std::uint64_t m_w[8] = {};
};

}  // namespace oomdx::snap
