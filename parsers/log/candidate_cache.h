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
#include <utility>
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
    // only when they are the span of a literal whose shape sits there (a `0000` site of a step
    // number can hold `3090`, not `EL0004`'s `0004`).
    struct site {
        std::uint32_t pos = 0;  // of the span in the line
        std::uint32_t len = 0;  // 1-8
        std::uint64_t bytes = 0;  // the remembered line's bytes over the span
        bool found = false;  // the remembered line holds one of the literals here
        std::uint32_t spans_at = 0, spans_end = 0;  // its literals' spans in entry::spans
        // the span read with one 8-byte load at `load_at` (inside the line): (word >> shift) & mask
        std::uint32_t load_at = 0, shift = 0;
        std::uint64_t mask = 0;
        // the bits all its literals' spans share (none when `found`): other bytes hold none of them
        std::uint64_t common_mask = 0, common = 0;
    };
    struct entry {
        std::uint64_t key = 0;  // 0: empty
        std::string norm;       // the line with its digits as '0'
        std::vector<int> hits;
        std::vector<site> sites;
        std::vector<std::uint64_t> spans;  // per site, the spans of the literals whose shape sits there
    };
    struct digit_shape {  // the distinct shapes of the literals with digits
        std::string shape;  // digits as '0'
        std::uint32_t span_at = 0, span_len = 0;  // first digit .. last digit in the shape
        std::vector<std::string> lits;  // the literals of this shape
        std::vector<std::uint64_t> spans;  // their bytes over the span (distinct)
    };
    void remember(entry& e, std::uint64_t key, std::string_view text, const int* hits, size_t n);
    bool sites_agree(const entry& e, const char* text) const;

    const signature_set& m_sigs;
    std::vector<digit_shape> m_shapes;
    std::vector<entry> m_entries;  // two per set, the set picked by the key
    std::vector<std::uint64_t> m_seen;  // per set: the last two keys that missed (remembered on a second miss)
    std::vector<std::uint8_t> m_lru;    // per set: the way to fill next
    std::vector<std::pair<std::uint32_t, const digit_shape*>> m_site_shapes;  // scratch of remember: (site, shape)
    std::string m_norm;  // scratch: a line with its digits as '0'
    std::int64_t m_lines = 0, m_remembered = 0, m_served = 0;
    bool m_off = false;  // lines of no repeated shape: the memo rests until the next period
    bool m_never = false;  // a literal's digits span more than 8 bytes: the memo is not used
};

}  // namespace oomdx
