// Handing a thread's freed heap pages back. (Until snap22 the rule packs' thread also reserved
// 4 MiB of its arena ahead: 42 page faults and 42 mprotect() calls to save ~80 mprotect() calls
// later. Sharing the main heap with that thread instead raised 100k-d20's peak RSS by ~70 KB;
// docs/snapshot.md.)
#pragma once

#include <cstddef>

namespace oomdx {

// Returns the free pages inside the malloc arenas to the kernel (glibc's malloc_trim): what a
// finished load freed (the rule packs' YAML trees, ~1.2 MB of that thread's 2 MB arena) no
// longer counts in the resident set while the snapshot is read. No-op with another libc.
void release_free_heap();

}  // namespace oomdx
