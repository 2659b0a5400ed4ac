// A thread's own malloc heap, grown in a few large steps instead of page by page.
#pragma once

#include <cstddef>

namespace oomdx {

// glibc gives each new thread an arena of its own and grows it one mprotect() per request
// that reaches its top (the main arena's top padding does not apply there): loading the rule
// packs on their thread made ~350 of them. This grows the calling thread's arena to `bytes`
// in steps of just under the mmap threshold and hands the memory back at once: the pages are
// returned to the kernel, the arena keeps its permissions, so its later growth is page faults
// only. Harmless elsewhere (another allocator, or the main thread: ordinary mallocs and frees).
void reserve_thread_heap(std::size_t bytes);

}  // namespace oomdx
