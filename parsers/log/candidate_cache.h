// A memo of the literal prefilter for lines of a repeated shape. Training logs print the same
// lines again and again with other numbers in them (a step, a loss, a rank); two lines of the same
// length whose bytes are equal wherever one of them is not a digit have the same literal hits:
// a literal without digits sits on the same bytes in both, and a literal with digits can sit only
// where its digits-as-any-digit form sits in both, where the cache compares it exactly. The hits
// are then copied instead of searched (signature_set::candidates' result, byte for byte).
// One per thread: it keeps copies of the lines it remembers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/log/log_signatures.h"

namespace oomdx {

class candidate_cache {
public:
    explicit candidate_cache(const signature_set& sigs);
    // As sigs.candidates(text, hits, mark).
    void candidates(std::string_view text, std::vector<int>& hits, std::vector<char>& mark);

    std::int64_t served() const { return m_served; }  // lines answered from the memo (tests)

private:
    // Where a literal with digits could sit (its shape does): the span from its first to its last
    // digit. Where a line's bytes there differ from the remembered line's, the line is searched
    // unless no such literal has those bytes over its span (m_span_filter).
    struct site {
        std::uint32_t pos = 0;  // of the span in the line
        std::uint32_t len = 0;  // 1-8
        std::uint64_t bytes = 0;  // the remembered line's bytes over the span
        bool found = false;  // the remembered line holds one of the literals here
    };
    struct entry {
        std::uint64_t key = 0;  // 0: empty
        std::string norm;       // the line with its digits as '0'
        std::vector<int> hits;
        std::vector<site> sites;
    };
    struct digit_shape {  // the distinct shapes of the literals with digits
        std::string shape;  // digits as '0'
        std::uint32_t span_at = 0, span_len = 0;  // first digit .. last digit in the shape
        std::vector<std::string> lits;  // the literals of this shape
    };
    void remember(entry& e, std::uint64_t key, std::string_view text, const int* hits, size_t n);
    bool sites_agree(const entry& e, const char* text) const;

    const signature_set& m_sigs;
    std::vector<digit_shape> m_shapes;
    // bits of (span length, span bytes) of every literal with digits: a span whose bytes are none
    // of them holds none of those literals
    std::vector<std::uint64_t> m_span_filter;
    static unsigned span_hash(std::uint64_t bytes, std::uint32_t len) {
        return static_cast<unsigned>(((bytes ^ len) * 0x9E3779B97F4A7C15ull) >> 52);  // 12 bits
    }
    std::vector<entry> m_entries;
    std::vector<std::uint64_t> m_seen;  // per slot: the last key that missed (remembered on its second miss)
    std::string m_norm;  // scratch: a line with its digits as '0'
    std::int64_t m_lines = 0, m_remembered = 0, m_served = 0;
    bool m_off = false;  // lines of no repeated shape: the memo rests until the next period
    bool m_never = false;  // a literal's digits span more than 8 bytes: the memo is not used
};

}  // namespace oomdx
