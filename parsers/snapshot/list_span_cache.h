// Frame lists by the bytes that wrote them. Python's pickler writes a stack it has written
// before as the same BINGETs of the same memoized frame dicts, so the bytes of a fresh frames
// list name the list it was interned as, for as long as no memo slot is overwritten (the
// reader clears the cache then). A hit costs a compare of the bytes instead of reading every
// item's memo slot and interning the list again. Since a trace repeats its sequence of stacks,
// the span that followed the previous one last time is compared first (and fetched into the
// cache ahead), before the reader has even found where the span ends (find_predicted); then a
// hash table. The bytes are kept in 1 MiB chunks (no reallocation copy). Bounded: past
// k_max_lists lists or k_max_bytes of stored bytes nothing more is added, and once full, a cache
// that misses more than half of the lists of a round of k_round is switched off (a trace with
// more distinct stacks than it holds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "parsers/snapshot/frame_lists.h"
#include "parsers/snapshot/pickle_common.h"

namespace oomdx::snap {

class list_span_cache {
public:
    static constexpr std::size_t k_max_lists = std::size_t(1) << 16;
    static constexpr std::size_t k_max_bytes = std::size_t(16) << 20;
    static constexpr std::uint32_t k_round = 4096;

    bool enabled() const { return m_enabled; }

    struct hit {
        frames_id id = -1;  // -1: not cached
        std::uint32_t items = 0;
        std::uint32_t len = 0;  // bytes
    };

    // The span predicted to come next, when the `room` bytes at p begin with its bytes followed
    // by the byte `end` (the opcode that closes the list). No hash, and the caller need not
    // have scanned the span. A miss changes nothing: find() follows.
    // (snap41) Where fewer than a quarter of the predictions of a round of 256 came true (a
    // trace with a fresh frames list per event: 17%), predicting stops but for every 16th list,
    // which keeps measuring, and so does fetching the predicted span ahead.
    hit find_predicted(const std::uint8_t* p, std::size_t room, std::uint8_t end) {
        if (m_prev < 0) return {};
        const std::int32_t c = m_entries[static_cast<std::size_t>(m_prev)].next;
        if (c < 0) return {};
        if (!m_predicting && (++m_skipped & 15) != 0) return {};
        const entry& e = m_entries[static_cast<std::size_t>(c)];
        const bool same = e.len < room && p[e.len] == end && std::memcmp(e.data, p, e.len) == 0;
        if (++m_predicted == 256) [[unlikely]] {
            m_predicting = (m_came_true + same) * 4 >= m_predicted;
            m_predicted = m_came_true = 0;
        } else {
            m_came_true += same;
        }
        if (!same) return {};
        count_look();
        return take(c);
    }

    // The span of 16 bytes or more last added or found by find() whose first 16 bytes are
    // those at p (16 bytes at p must be readable: the reader's slack), when the `room` bytes at p begin with its bytes
    // followed by `end` (snap30). Like find_predicted, no scan of the items for the span's end
    // and no hash of its bytes: one look-up by the first two words. A miss changes nothing.
    // Two ways a head (snap41): the latest two spans with the same first 16 bytes (a stack's
    // innermost frames are shared by many stacks: one way sent 12% of a list-per-event trace's
    // lists to the hash), the more recently found first.
    hit find_head(const std::uint8_t* p, std::size_t room, std::uint8_t end) {
        if (m_heads.empty()) return {};
        std::int32_t* const w = &m_heads[2 * head_of(p)];
        for (int k = 0; k < 2; ++k) {
            const std::int32_t c = w[k];
            if (c < 0) return {};
            const entry& e = m_entries[static_cast<std::size_t>(c)];
            if (e.len >= room || p[e.len] != end || std::memcmp(e.data, p, e.len) != 0) continue;
            if (k) std::swap(w[0], w[1]);
            count_look();
            return take(c);
        }
        return {};
    }

    // Looks up the n bytes at p; `h` receives their hash when it had to be computed (0 if not).
    // `predicted`: find_predicted was tried for these bytes already.
    hit find(const std::uint8_t* p, std::size_t n, std::uint64_t& h, bool predicted = false) {
        h = 0;
        if (m_entries.empty()) return {};
        count_look();
        if (m_prev >= 0 && !predicted) {
            const std::int32_t c = m_entries[static_cast<std::size_t>(m_prev)].next;
            if (c >= 0 && same(m_entries[static_cast<std::size_t>(c)], p, n)) return take(c);
        }
        h = hash_bytes(p, n) | 1;
        const std::size_t mask = m_table.size() - 1;
        for (std::size_t i = h & mask; m_table[i].entry >= 0; i = (i + 1) & mask) {
            const slot& s = m_table[i];
            if (s.hash == h && same(m_entries[static_cast<std::size_t>(s.entry)], p, n)) {
                if (n >= 16) set_head(p, s.entry);
                return take(s.entry);
            }
        }
        if (m_full) ++m_missed;
        return {};
    }

    // Adds the n bytes at p (not found by find, whose hash `h` was; 0: computes it).
    void add(const std::uint8_t* p, std::size_t n, std::uint32_t items, std::uint64_t h, frames_id id) {
        if (m_entries.size() >= k_max_lists || m_stored + n > k_max_bytes) {
            m_full = true;
            m_prev = -1;
            return;
        }
        if (h == 0) h = hash_bytes(p, n) | 1;
        if ((m_entries.size() + 1) * 2 > m_table.size()) grow();
        const std::size_t mask = m_table.size() - 1;
        std::size_t i = h & mask;
        while (m_table[i].entry >= 0) i = (i + 1) & mask;
        const auto e = static_cast<std::int32_t>(m_entries.size());
        m_table[i] = slot{h, e};
        m_entries.push_back(entry{store(p, n), static_cast<std::uint32_t>(n), items, id, -1});
        if (n >= 16) {  // a shorter span's first 16 bytes are not all its own
            if (m_heads.empty()) m_heads.assign(2 * k_heads, -1);
            set_head(p, e);
        }
        follow(e);
    }

    // Lists read without the cache: the sequence restarts.
    void forget_previous() { m_prev = -1; }

    void clear() {
        m_table.clear();
        m_heads.clear();
        m_entries.clear();
        m_chunks.clear();
        m_used = k_chunk;
        m_stored = 0;
        m_prev = -1;
        m_full = false;
        m_looked = m_missed = 0;
        m_predicting = true;
        m_predicted = m_came_true = m_skipped = 0;
    }

private:
    static constexpr std::size_t k_chunk = std::size_t(1) << 20;
    static constexpr std::size_t k_heads = 2048;  // sets of two ways (16 KiB as one way of 4096 was), the least recently found goes
    void set_head(const std::uint8_t* p, std::int32_t e) {
        std::int32_t* const w = &m_heads[2 * head_of(p)];
        if (w[0] == e) return;
        w[1] = w[0];
        w[0] = e;
    }
    static std::size_t head_of(const std::uint8_t* p) {
        std::uint64_t x, y;
        std::memcpy(&x, p, 8);
        std::memcpy(&y, p + 8, 8);
        return static_cast<std::size_t>(((x * 0x9E3779B97F4A7C15ULL) ^ (y * 0xC2B2AE3D27D4EB4FULL)) >> 52) & (k_heads - 1);
    }
    struct entry {
        const std::uint8_t* data;
        std::uint32_t len, items;
        frames_id id;
        std::int32_t next;  // the entry that followed this one last time, -1 when none
    };
    const std::uint8_t* store(const std::uint8_t* p, std::size_t n) {
        if (n > k_chunk - m_used) {  // a new chunk; a span longer than a chunk gets its own
            m_chunks.push_back(std::make_unique_for_overwrite<std::uint8_t[]>(n > k_chunk ? n : k_chunk));
            m_used = 0;
        }
        std::uint8_t* d = m_chunks.back().get() + m_used;
        std::memcpy(d, p, n);
        m_used = n > k_chunk ? k_chunk : m_used + n;
        m_stored += n;
        return d;
    }
    void count_look() {
        if (m_full && ++m_looked == k_round) {  // m_missed counts this round's misses
            if (m_missed * 2 > k_round) m_enabled = false;
            m_looked = m_missed = 0;
        }
    }
    struct slot {
        std::uint64_t hash = 0;
        std::int32_t entry = -1;
    };
    bool same(const entry& e, const std::uint8_t* p, std::size_t n) const {
        return e.len == n && std::memcmp(e.data, p, n) == 0;
    }
    hit take(std::int32_t e) {
        follow(e);
        const entry& x = m_entries[static_cast<std::size_t>(e)];
        return {x.id, x.items, x.len};
    }
    void follow(std::int32_t e) {
        if (m_prev >= 0) m_entries[static_cast<std::size_t>(m_prev)].next = e;
        m_prev = e;
        const std::int32_t n = m_entries[static_cast<std::size_t>(e)].next;
        if (n >= 0 && m_predicting) {
            const entry& x = m_entries[static_cast<std::size_t>(n)];
            for (std::size_t o = 0; o < x.len; o += 64) __builtin_prefetch(x.data + o);
        }
    }
    void grow() {
        grow_open_table(m_table, 256, [](const slot& s) { return s.entry >= 0; });
    }
    std::vector<slot> m_table;
    std::vector<std::int32_t> m_heads;  // entries by head_of of their first bytes, 2 a set; empty until an add
    std::vector<entry> m_entries;
    std::vector<std::unique_ptr<std::uint8_t[]>> m_chunks;
    std::size_t m_used = k_chunk;  // bytes used in the last chunk
    std::size_t m_stored = 0;      // bytes stored in all
    std::int32_t m_prev = -1;
    bool m_full = false, m_enabled = true;
    bool m_predicting = true;                       // find_predicted compares (snap41)
    std::uint32_t m_predicted = 0, m_came_true = 0;  // this round's predictions compared, right
    std::uint32_t m_skipped = 0;
    std::uint32_t m_looked = 0, m_missed = 0;
};

}  // namespace oomdx::snap
