// Splits a byte stream into line segments without copying: a segment ends at '\n' or '\r'
// (tqdm redraws and Windows line endings); line numbers count '\n'. Segments longer than
// the cap are cut (only the first `cap` bytes are kept) so memory stays bounded.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <string>
#include <string_view>

namespace oomdx {

// A line without its trailing blanks (spaces, tabs, a '\r' left by CRLF).
inline std::string_view trim_line_end(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

namespace splitter_detail {
extern const bool k_avx2;  // the processor has AVX2 (checked once at start-up)
// The break masks of 256 bytes (four 64-byte blocks) with AVX2; only where k_avx2.
void break_masks_avx2(const char* blk, std::uint64_t* out);
}  // namespace splitter_detail

class line_splitter {
public:
    explicit line_splitter(size_t cap, std::int64_t first_line = 1) : m_cap(cap), m_line(first_line) {}

    // fn(std::string_view segment, std::int64_t line_no, bool cut) for every non-empty segment.
    // Breaks are found 64 bytes at a time: a bit mask of '\n' and '\r', walked bit by bit.
    template <class Fn>
    void feed(const char* p, size_t n, Fn&& fn) {
        const char* end = p + n;
        const char* start = p;  // of the current segment
        const char* blk = p;
        // 256 bytes at a time with AVX2 (four masks from one call), else 64 at a time
        if (splitter_detail::k_avx2)
            for (std::uint64_t masks[4]; end - blk >= 256; blk += 256) {
                for (int k = 0; k < 4; ++k) __builtin_prefetch(blk + 2048 + 64 * k);  // hardware prefetch stops at page boundaries
                splitter_detail::break_masks_avx2(blk, masks);
                for (int k = 0; k < 4; ++k) walk(blk + 64 * k, masks[k], start, fn);
            }
        for (; blk < end; blk += 64) {
            const size_t len = std::min<size_t>(64, static_cast<size_t>(end - blk));
            __builtin_prefetch(blk + 2048);
            walk(blk, break_mask(blk, len), start, fn);
        }
        if (start < end) {  // incomplete segment: carry it
            m_tail = true;
            append(start, static_cast<size_t>(end - start));
        }
    }

    // End of input: flush a last line without a newline.
    template <class Fn>
    void finish(Fn&& fn) {
        if (!m_carry.empty() || m_carry_cut) emit(nullptr, 0, fn);
    }

    std::int64_t lines() const { return m_line - 1 + (m_tail ? 1 : 0); }
    std::int64_t cut_segments() const { return m_cut_count; }

private:
    // The segments that end at the breaks of one block (bit i of m: blk[i] is a break).
    template <class Fn>
    [[gnu::always_inline]] void walk(const char* blk, std::uint64_t m, const char*& start, Fn& fn) {
        while (m) {
            const char* brk = blk + __builtin_ctzll(m);
            m &= m - 1;
            if (brk > start) m_tail = true;
            emit(start, static_cast<size_t>(brk - start), fn);
            if (*brk == '\n') {
                m_tail = false;
                ++m_line;
            }
            start = brk + 1;
        }
    }

    // Bit i set = blk[i] is '\n' or '\r' (i < len <= 64).
    static std::uint64_t break_mask(const char* blk, size_t len) {
#if defined(__SSE2__)
        if (len == 64) {
            const __m128i nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
            auto bits = [&](int i) {  // written out four times: the loop was not unrolled
                const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 16 * i));
                return static_cast<std::uint64_t>(static_cast<unsigned>(
                    _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, cr)))));
            };
            return bits(0) | bits(1) << 16 | bits(2) << 32 | bits(3) << 48;
        }
#endif
        std::uint64_t m = 0;
        for (size_t i = 0; i < len; ++i)
            if (blk[i] == '\n' || blk[i] == '\r') m |= std::uint64_t{1} << i;
        return m;
    }

    void append(const char* p, size_t n) {
        size_t room = m_cap > m_carry.size() ? m_cap - m_carry.size() : 0;
        if (n > room) {
            m_carry_cut = true;
            n = room;
        }
        m_carry.append(p, n);
    }

    template <class Fn>
    void emit(const char* p, size_t n, Fn& fn) {
        bool cut = false;
        std::string_view seg;
        if (!m_carry.empty() || m_carry_cut) {
            append(p, n);
            seg = m_carry;
            cut = m_carry_cut;
        } else {
            if (n > m_cap) {
                n = m_cap;
                cut = true;
            }
            seg = std::string_view(p, n);
        }
        if (cut) ++m_cut_count;
        if (!seg.empty()) {
            fn(seg, m_line, cut);
        }
        m_carry.clear();
        m_carry_cut = false;
    }

    size_t m_cap;
    std::string m_carry;
    bool m_carry_cut = false;
    bool m_tail = false;  // bytes after the last newline
    std::int64_t m_line = 1;
    std::int64_t m_cut_count = 0;
};

}  // namespace oomdx
