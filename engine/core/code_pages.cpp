#include "engine/core/code_pages.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace oomdx {

#if defined(__linux__)
namespace {

struct code_range {
    std::uintptr_t begin = 0, end = 0;
};

// The first object dl_iterate_phdr reports is the executable itself.
int first_object(dl_phdr_info* info, size_t, void* data) {
    auto* r = static_cast<code_range*>(data);
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || (ph.p_flags & PF_W)) continue;
        r->begin = info->dlpi_addr + ph.p_vaddr;
        r->end = r->begin + ph.p_memsz;
        break;
    }
    return 1;
}

// A debugger's (or another tracer's) breakpoints are written into private copies of code
// pages; dropping those would drop the breakpoints.
bool traced() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return true;
    char line[256];
    bool yes = true;
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "TracerPid:", 10) == 0) {
            yes = std::strtol(line + 10, nullptr, 10) != 0;
            break;
        }
    std::fclose(f);
    return yes;
}

}  // namespace

bool release_code_pages() {
    if (std::getenv("OOMDX_KEEP_CODE_PAGES") || traced()) return false;
    code_range r;
    dl_iterate_phdr(first_object, &r);
    const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    // Whole pages inside the segment only: its first and last page may hold other sections.
    const std::uintptr_t b = (r.begin + page - 1) & ~(page - 1), e = r.end & ~(page - 1);
    return e > b && madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED) == 0;
}

#else
bool release_code_pages() { return false; }
#endif

}  // namespace oomdx
