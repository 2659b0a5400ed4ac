// CPU time (user + system) of the calling thread, in microseconds; for run statistics.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace oomdx {

inline std::int64_t thread_cpu_us() {
    struct rusage ru {};
    if (::getrusage(RUSAGE_THREAD, &ru) != 0) return 0;
    return (static_cast<std::int64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec +
           ru.ru_stime.tv_usec;
}

}  // namespace oomdx
