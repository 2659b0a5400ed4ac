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

// Returns the free pages inside the malloc arenas to the kernel (glibc's malloc_trim): what a
// finished load freed (the rule packs' YAML trees, ~1.2 MB of that thread's 2 MB arena) no
// longer counts in the resident set while the snapshot is read. No-op with another libc.
void release_free_heap();

}  // namespace oomdx
