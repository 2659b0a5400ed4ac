// Splits a byte stream into line segments without copying: a segment ends at '\n' or '\r'
// (tqdm redraws and Windows line endings); line numbers count '\n'. Segments longer than
// the cap are cut (only the first `cap` bytes are kept) so memory stays bounded.
#pragma once

#include <cstdint>
#include <cstring>
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
            const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
            const char* stop = nl ? nl : end;
            if (stop > p) m_tail = true;
            // split [p, stop) at '\r'
            while (p < stop) {
                const char* cr = static_cast<const char*>(std::memchr(p, '\r', static_cast<size_t>(stop - p)));
                const char* seg_end = cr ? cr : stop;
                if (!cr && !nl) {  // incomplete segment: carry it
                    append(p, static_cast<size_t>(seg_end - p));
                    return;
                }
                emit(p, static_cast<size_t>(seg_end - p), fn);
                p = cr ? cr + 1 : stop;
            }
            if (nl) {
                m_tail = false;
                ++m_line;
                p = nl + 1;
            }
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
