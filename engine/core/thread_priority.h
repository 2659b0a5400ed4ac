// Helper threads that work ahead of a reader (prefilter workers, read-ahead, block pools) run
// at a lower priority, so on a busy machine the reader, the serial part, keeps its core.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

namespace oomdx {

inline void lower_this_thread_priority() {
    (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 5);  // best effort
}

}  // namespace oomdx
