// The executable's code pages in the resident set.
#pragma once

namespace oomdx {

// Unmaps the executable's code and read-only data pages from this process (madvise
// MADV_DONTNEED on its read-only segments, which are never written; not the relocated RELRO
// part): they stay in the page cache, and what is used again is mapped again on its next fault. The kernel maps the 64 KiB around each code fault, so the
// start-up (static initialisers, the command line, loading rules) leaves ~4 MB of code pages in
// the resident set that the rest of the run never executes; `oomdx snapshot` calls this before
// the read, whose peak they were a third of on small files (docs/snapshot.md, snap8).
// Does nothing under a debugger (TracerPid: its breakpoints are private copies of those pages)
// or with OOMDX_KEEP_CODE_PAGES set, and where unsupported. Returns whether it released.
bool release_code_pages();

}  // namespace oomdx
