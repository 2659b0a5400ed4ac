#include "engine/core/thread_heap.h"

#include <cstdlib>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace oomdx {

void reserve_thread_heap(std::size_t bytes) {
    // 96 KiB: below glibc's smallest mmap threshold (128 KiB), so each comes from the arena.
    constexpr std::size_t k_step = 96 * 1024;
    void* steps[128];
    std::size_t n = 0;
    for (; n < sizeof steps / sizeof steps[0] && n * k_step < bytes; ++n) {
        steps[n] = std::malloc(k_step);
        if (!steps[n]) break;
    }
    // In allocation order: each joins the free block before it, the last joins the top, and
    // the arena trims the whole top once.
    for (std::size_t i = 0; i < n; ++i) std::free(steps[i]);
}

void release_free_heap() {
#if defined(__GLIBC__)
    ::malloc_trim(0);
#endif
}

}  // namespace oomdx
