// Where a run's threads allocate, and handing freed heap pages back.
#pragma once

#include <cstddef>

namespace oomdx {

// glibc gives each new thread an arena of its own, which grows one mprotect() per page that a
// request reaches (the main heap's 128 KiB top padding does not apply there). A run with one
// small input calls this before it starts its threads: the rule packs' thread then allocates
// from the main heap, a few brk() calls (until snap22 it reserved 4 MiB of its own arena
// ahead: 42 mprotect() calls and 42 page faults, docs/snapshot.md). Only where no other thread
// allocates at the same time: not with several files and -j, nor with a large input's
// read-ahead and block-pool threads. No-op with another libc.
void share_main_heap();

// Returns the free pages inside the malloc arenas to the kernel (glibc's malloc_trim): what a
// finished load freed (the rule packs' YAML trees, ~1.2 MB of that thread's 2 MB arena) no
// longer counts in the resident set while the snapshot is read. No-op with another libc.
void release_free_heap();

}  // namespace oomdx
