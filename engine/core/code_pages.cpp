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

struct page_range {
    std::uintptr_t begin = 0, end = 0;
};

struct image {
    page_range parts[8];  // the read-only segments (code, read-only data)
    int count = 0;
    page_range relro;     // relocated at start, then made read-only: never released
};

// The first object dl_iterate_phdr reports is the executable itself.
int first_object(dl_phdr_info* info, size_t, void* data) {
    auto* im = static_cast<image*>(data);
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        const std::uintptr_t b = info->dlpi_addr + ph.p_vaddr;
        if (ph.p_type == PT_GNU_RELRO) im->relro = {b, b + ph.p_memsz};
        if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) || im->count == 8) continue;
        im->parts[im->count++] = {b, b + ph.p_memsz};
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
    image im;
    dl_iterate_phdr(first_object, &im);
    const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    bool any = false;
    for (int i = 0; i < im.count; ++i) {
        // Whole pages inside the segment only (its first and last page may hold other
        // sections), and none that the relocated read-only part shares.
        const std::uintptr_t b = (im.parts[i].begin + page - 1) & ~(page - 1), e = im.parts[i].end & ~(page - 1);
        if (e <= b) continue;
        if (im.relro.end > im.relro.begin && b < im.relro.end + page && im.relro.begin < e + page) continue;
        any = madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED) == 0 || any;
    }
    return any;
}

#else
bool release_code_pages() { return false; }
#endif

}  // namespace oomdx
