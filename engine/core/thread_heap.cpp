#include "engine/core/thread_heap.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace oomdx {

void share_main_heap() {
#if defined(__GLIBC__)
    ::mallopt(M_ARENA_MAX, 1);
#endif
}

void release_free_heap() {
#if defined(__GLIBC__)
    ::malloc_trim(0);
#endif
}

}  // namespace oomdx
