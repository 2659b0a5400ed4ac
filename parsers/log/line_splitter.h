// Splits a byte stream into line segments without copying: a segment ends at '\n' or '\r'
// (tqdm redraws and Windows line endings); line numbers count '\n'. Segments longer than
// the cap are cut (only the first `cap` bytes are kept) so memory stays bounded.
#pragma once

#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <string>
#include <string_view>

namespace oomdx {

class line_splitter {
public:
    explicit line_splitter(size_t cap) : m_cap(cap) {}

    // fn(std::string_view segment, std::int64_t line_no, bool cut) for every non-empty segment.
    template <class Fn>
    void feed(const char* p, size_t n, Fn&& fn) {
        const char* end = p + n;
        while (p < end) {
            const char* brk = find_break(p, end);  // first '\n' or '\r'
            if (brk > p) m_tail = true;
            if (brk == end) {  // incomplete segment: carry it
                append(p, static_cast<size_t>(end - p));
                return;
            }
            emit(p, static_cast<size_t>(brk - p), fn);
            if (*brk == '\n') {
                m_tail = false;
                ++m_line;
            }
            p = brk + 1;
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
    static const char* find_break(const char* p, const char* end) {
#if defined(__SSE2__)
        const __m128i nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            int m = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, cr)));
            if (m) return p + __builtin_ctz(static_cast<unsigned>(m));
            p += 16;
        }
#endif
        while (p < end && *p != '\n' && *p != '\r') ++p;
        return p;
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
