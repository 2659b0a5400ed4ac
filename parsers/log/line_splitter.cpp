#include "parsers/log/line_splitter.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace oomdx::splitter_detail {

#if defined(__x86_64__) && defined(__GNUC__)
namespace {
bool detect_avx2() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}
}  // namespace

const bool k_avx2 = detect_avx2();

// Two 32-byte compares per 64 bytes instead of four 16-byte ones.
[[gnu::target("avx2")]] void break_masks_avx2(const char* blk, std::uint64_t* out) {
    const __m256i nl = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r');
    for (int k = 0; k < 4; ++k) {
        const char* b = blk + 64 * k;
        const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
        const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32));
        const auto m0 = static_cast<std::uint32_t>(
            _mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(v0, nl), _mm256_cmpeq_epi8(v0, cr))));
        const auto m1 = static_cast<std::uint32_t>(
            _mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(v1, nl), _mm256_cmpeq_epi8(v1, cr))));
        out[k] = m0 | static_cast<std::uint64_t>(m1) << 32;
    }
}
#else
const bool k_avx2 = false;
void break_masks_avx2(const char*, std::uint64_t*) {}
#endif

}  // namespace oomdx::splitter_detail
