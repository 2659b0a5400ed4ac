// Where a run's threads allocate, and handing freed heap pages back.
#pragma once

#include <cstddef>

namespace oomdx {

// glibc gives each new thread an arena of its own: a 64 MiB reservation that grows one
// mprotect() per page a request reaches (the main heap's 128 KiB top padding does not apply
// there), whose freed memory the other threads never reuse. A run with one input calls this
// before it starts its threads: they all allocate from the main heap, so the rule packs'
// thread makes ~10 brk() calls instead of ~120 mprotect() (or 42 of them and 42 page faults to
// reserve 4 MiB ahead, as before snap22), and what it frees (the stored rule set's bytes, the
// category rules' YAML tree) is reused by the reader. Only where no other thread allocates at
// the same time (not with several files and -j, nor with a large input's read-ahead and block
// pool threads). No-op with another libc.
void share_main_heap();

// Returns the free pages inside the malloc arenas to the kernel (glibc's malloc_trim): what a
// finished load freed (the rule packs' YAML trees, ~1.2 MB of that thread's 2 MB arena) no
// longer counts in the resident set while the snapshot is read. No-op with another libc.
void release_free_heap();

}  // namespace oomdx
