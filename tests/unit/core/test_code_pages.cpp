#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/core/code_pages.h"

using namespace oomdx;

namespace {

// Resident kB of the mapping that holds `addr` (/proc/self/smaps), or -1.
long resident_kb_at(const void* addr) {
    std::ifstream in("/proc/self/smaps");
    std::string line;
    bool inside = false;
    const auto a = reinterpret_cast<std::uintptr_t>(addr);
    while (std::getline(in, line)) {
        unsigned long lo = 0, hi = 0;
        char dash = 0;
        std::istringstream head(line);
        if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
            inside = a >= lo && a < hi;
            continue;
        }
        if (inside && line.rfind("Rss:", 0) == 0) return std::strtol(line.c_str() + 4, nullptr, 10);
    }
    return -1;
}

int touched(int x) { return x * 3 + 1; }

}  // namespace

TEST_CASE("code pages: released from the resident set, and the code still runs") {
#if defined(__linux__)
    const void* code = reinterpret_cast<const void*>(&touched);
    const long before = resident_kb_at(code);
    REQUIRE(before > 0);
    ::setenv("OOMDX_KEEP_CODE_PAGES", "1", 1);
    CHECK_FALSE(release_code_pages());  // kept when asked
    ::unsetenv("OOMDX_KEEP_CODE_PAGES");
    if (!release_code_pages()) {
        MESSAGE("not released (run under a debugger?)");
        return;
    }
    const long after = resident_kb_at(code);
    CHECK(after < before);
    CHECK(touched(2) == 7);  // faulted in again
    CHECK(resident_kb_at(code) > 0);
#endif
}
