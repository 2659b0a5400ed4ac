#include "parsers/log/candidate_cache.h"

#include <algorithm>
#include <cstring>

#include "parsers/log/line_splitter.h"  // splitter_detail::k_avx2

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OOMDX_CACHE_X86 1
#endif

namespace oomdx {

namespace {

constexpr size_t k_sets = 64;  // of two lines each (two shapes that share a set do not evict each other)
constexpr size_t k_min_len = 16;    // shorter lines cost little to search
constexpr size_t k_max_len = 4096;  // longer ones are rarely repeated
constexpr std::int64_t k_period = 1 << 16;  // lines between two looks at whether the memo pays

bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

std::uint64_t load64(const char* p) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

#if OOMDX_CACHE_X86
// Bytes '0'..'9' as '0' (0x30..0x39 & ~0x0F), every other byte as it is.
inline __m128i digits_as_zero(__m128i v) {
    const __m128i d = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    return _mm_andnot_si128(_mm_and_si128(d, _mm_set1_epi8(0x0F)), v);
}

// a: a line with its digits as '0'; b: a line as printed (n >= 16)
bool same_shape_sse2(const char* a, const char* b, size_t n) {
    auto block = [](const char* x, const char* y) {
        const __m128i vx = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
        const __m128i vy = digits_as_zero(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y)));
        return _mm_movemask_epi8(_mm_cmpeq_epi8(vx, vy)) == 0xFFFF;
    };
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        if (!block(a + i, b + i)) return false;
    return i == n || block(a + n - 16, b + n - 16);  // the tail, overlapping
}

[[gnu::target("avx2")]] inline __m256i digits_as_zero(__m256i v) {
    const __m256i d =
        _mm256_and_si256(_mm256_cmpgt_epi8(v, _mm256_set1_epi8('0' - 1)), _mm256_cmpgt_epi8(_mm256_set1_epi8('9' + 1), v));
    return _mm256_andnot_si256(_mm256_and_si256(d, _mm256_set1_epi8(0x0F)), v);
}

[[gnu::target("avx2")]] inline __m256i eq_avx2(const char* x, const char* y) {
    const __m256i vx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
    const __m256i vy = digits_as_zero(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(y)));
    return _mm256_cmpeq_epi8(vx, vy);
}

[[gnu::target("avx2")]] inline bool all_set(__m256i v) {
    return static_cast<std::uint32_t>(_mm256_movemask_epi8(v)) == 0xFFFFFFFFu;
}

[[gnu::target("avx2")]] bool same_shape_avx2(const char* a, const char* b, size_t n) {  // n >= 32
    size_t i = 0;
    for (; i + 64 <= n; i += 64)  // one test per 64 bytes
        if (!all_set(_mm256_and_si256(eq_avx2(a + i, b + i), eq_avx2(a + i + 32, b + i + 32)))) return false;
    if (i + 32 <= n) {
        if (!all_set(eq_avx2(a + i, b + i))) return false;
        i += 32;
    }
    return i == n || all_set(eq_avx2(a + n - 32, b + n - 32));  // the tail, overlapping
}
#endif

// Whether b, with its digits as '0', is a (n bytes): equal bytes, or digits on both sides.
bool same_shape(const char* a, const char* b, size_t n) {
#if OOMDX_CACHE_X86
    if (splitter_detail::k_avx2 && n >= 32) return same_shape_avx2(a, b, n);
    return same_shape_sse2(a, b, n);
#else
    for (size_t i = 0; i < n; ++i) {
        const auto y = static_cast<unsigned char>(b[i]);
        if (a[i] != static_cast<char>(is_digit(y) ? '0' : y)) return false;
    }
    return true;
#endif
}

// The slot key: the length and the first and last 8 bytes with digits as '0'; never 0.
std::uint64_t shape_key(const char* p, size_t n) {
    std::uint64_t first = load64(p), last = load64(p + n - 8);
#if OOMDX_CACHE_X86
    const __m128i v = digits_as_zero(_mm_set_epi64x(static_cast<long long>(last), static_cast<long long>(first)));
    first = static_cast<std::uint64_t>(_mm_cvtsi128_si64(v));
    last = static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)));
#else
    auto norm = [](std::uint64_t w) {
        unsigned char b[8];
        std::memcpy(b, &w, 8);
        for (auto& c : b)
            if (is_digit(c)) c = '0';
        std::memcpy(&w, b, 8);
        return w;
    };
    first = norm(first);
    last = norm(last);
#endif
    std::uint64_t h = first * 0x9E3779B97F4A7C15ull ^ (last + n) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 31;
    return h | 1;
}

}  // namespace

// The bytes [at, at + len) of a line of n bytes (len <= 8) as one word, the first byte lowest.
static std::uint64_t span_bytes(const char* p, size_t n, size_t at, size_t len) {
    if (at + 8 <= n) return load64(p + at) & (len == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * len)) - 1);
    std::uint64_t v = 0;
    std::memcpy(&v, p + at, len);
    return v;
}

candidate_cache::candidate_cache(const signature_set& sigs)
    : m_sigs(sigs), m_entries(2 * k_sets), m_seen(2 * k_sets, 0), m_lru(k_sets, 0) {
    for (const auto& s : sigs.all())
        for (const auto& l : s.literals) {
            const size_t d0 = l.find_first_of("0123456789");
            if (d0 == std::string::npos) continue;
            const size_t d1 = l.find_last_of("0123456789");
            if (d1 - d0 + 1 > 8) m_never = true;
            std::string shape = l;
            for (auto& c : shape)
                if (is_digit(static_cast<unsigned char>(c))) c = '0';
            auto it = std::find_if(m_shapes.begin(), m_shapes.end(), [&](const digit_shape& d) { return d.shape == shape; });
            if (it == m_shapes.end()) {
                m_shapes.push_back({shape, static_cast<std::uint32_t>(d0), static_cast<std::uint32_t>(d1 - d0 + 1), {}});
                it = m_shapes.end() - 1;
            }
            if (std::find(it->lits.begin(), it->lits.end(), l) == it->lits.end()) it->lits.push_back(l);
        }
    for (digit_shape& d : m_shapes)
        for (const std::string& l : d.lits) {
            const std::uint64_t b = span_bytes(l.data(), l.size(), d.span_at, d.span_len);
            if (std::find(d.spans.begin(), d.spans.end(), b) == d.spans.end()) d.spans.push_back(b);
        }
}

bool candidate_cache::sites_agree(const entry& e, const char* text) const {
    const std::uint64_t* spans = e.spans.data();
    for (const site& s : e.sites) {
        const std::uint64_t b = (load64(text + s.load_at) >> s.shift) & s.mask;  // span_bytes(text, n, s.pos, s.len)
        if (b == s.bytes) continue;  // the same digits: the same literals here
        if ((b & s.common_mask) != s.common) continue;  // none of its literals' spans
        if (s.found) return false;   // the remembered line had one here
        for (std::uint32_t k = s.spans_at; k < s.spans_end; ++k)
            if (spans[k] == b) return false;  // this line has one here
    }
    return true;
}

void candidate_cache::remember(entry& e, std::uint64_t key, std::string_view text, const int* hits, size_t n) {
    ++m_remembered;
    e.key = key;
    e.hits.assign(hits, hits + n);
    e.sites.clear();
    e.spans.clear();
    e.norm.assign(text.data(), text.size());
    for (auto& c : e.norm)
        if (is_digit(static_cast<unsigned char>(c))) c = '0';
    // every place where a literal with digits has its shape: only there can a line of this shape
    // hold it
    const std::string_view norm(e.norm);
    std::vector<std::pair<std::uint32_t, const digit_shape*>>& at_site = m_site_shapes;  // (site, shape)
    at_site.clear();
    for (const digit_shape& d : m_shapes) {
        for (size_t at = norm.find(d.shape); at != std::string_view::npos; at = norm.find(d.shape, at + 1)) {
            const auto pos = static_cast<std::uint32_t>(at + d.span_at);
            size_t k = 0;
            while (k < e.sites.size() && !(e.sites[k].pos == pos && e.sites[k].len == d.span_len)) ++k;
            if (k == e.sites.size())
                e.sites.push_back({pos, d.span_len, span_bytes(text.data(), text.size(), pos, d.span_len), false, 0, 0, 0, 0, 0, 0, 0});
            at_site.emplace_back(static_cast<std::uint32_t>(k), &d);
            for (const std::string& l : d.lits)
                if (std::memcmp(text.data() + at, l.data(), l.size()) == 0) e.sites[k].found = true;
        }
    }
    // each site's candidate spans: those of the shapes found there
    const size_t len = text.size();  // >= 16
    for (size_t k = 0; k < e.sites.size(); ++k) {
        site& st = e.sites[k];
        st.spans_at = static_cast<std::uint32_t>(e.spans.size());
        for (const auto& [sk, d] : at_site)
            if (sk == k)
                for (const std::uint64_t b : d->spans)
                    if (std::find(e.spans.begin() + st.spans_at, e.spans.end(), b) == e.spans.end())
                        e.spans.push_back(b);
        st.spans_end = static_cast<std::uint32_t>(e.spans.size());
        st.load_at = static_cast<std::uint32_t>(std::min<size_t>(st.pos, len - 8));
        st.shift = 8 * (st.pos - st.load_at);
        st.mask = st.len == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * st.len)) - 1;
        std::uint64_t same = st.mask;  // bits equal in every span
        for (std::uint32_t i = st.spans_at + 1; i < st.spans_end; ++i) same &= ~(e.spans[i] ^ e.spans[st.spans_at]);
        st.common_mask = st.found || st.spans_at == st.spans_end ? 0 : same;
        st.common = st.found || st.spans_at == st.spans_end ? 0 : e.spans[st.spans_at] & same;
    }
}

void candidate_cache::candidates(std::string_view text, std::vector<int>& hits, std::vector<char>& mark) {
    const size_t n = text.size();
    if (n < k_min_len || n > k_max_len || m_off || m_never) {
        if (m_off && ++m_lines >= k_period) m_lines = m_remembered = 0, m_off = false;
        m_sigs.candidates(text, hits, mark);
        return;
    }
    if (++m_lines >= k_period) m_lines = m_remembered = 0;
    const std::uint64_t key = shape_key(text.data(), n);
    const size_t set = static_cast<size_t>(key >> 58) & (k_sets - 1);
    entry* const ways = &m_entries[set * 2];
    const int w = ways[0].key == key ? 0 : ways[1].key == key ? 1 : -1;
    if (w >= 0) {
        const entry& e = ways[w];
        if (e.norm.size() == n && same_shape(e.norm.data(), text.data(), n) && sites_agree(e, text.data())) {
            ++m_served;
            m_lru[set] = static_cast<std::uint8_t>(1 - w);
            hits.insert(hits.end(), e.hits.begin(), e.hits.end());
            return;
        }
    }
    const size_t first = hits.size();
    m_sigs.candidates(text, hits, mark);
    // remembered the second time its key misses, in the way it holds or the one used least recently
    std::uint64_t* seen = &m_seen[set * 2];
    if (w < 0 && seen[0] != key && seen[1] != key) {
        seen[1] = seen[0];
        seen[0] = key;
        return;
    }
    const int into = w >= 0 ? w : m_lru[set];
    m_lru[set] = static_cast<std::uint8_t>(1 - into);
    remember(ways[into], key, text, hits.data() + first, hits.size() - first);
    // lines of many shapes (tracebacks, prose): the copies cost more than they save
    if (m_lines >= 4096 && m_remembered * 32 > m_lines) m_off = true;
}

}  // namespace oomdx
