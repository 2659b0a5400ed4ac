// The cores this process may run on (its CPU affinity: taskset, cgroup cpusets), at least 1;
// the hardware thread count where the affinity cannot be read.
#pragma once

#include <sched.h>

#include <algorithm>
#include <thread>

namespace oomdx {

inline unsigned usable_cores() {
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace oomdx
