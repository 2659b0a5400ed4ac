// Device memory a training process holds outside the caching allocator (est60): the CUDA context, whose
// size depends on how the runtime loads kernel modules, and NCCL's per-communicator buffers, which depend
// on how many parallel dimensions run collectives and whether NVLink SHARP (NVLS) is in use. Sources and
// figures: knowledge/estimator.yaml (runtime_* constants) and docs/estimator.md, round est60.
#pragma once

#include <string>

#include "engine/estimator/estimate.h"

namespace oomdx::est {

struct runtime_parts {
    double context = 0;       // driver context and the kernels loaded into it
    double nccl = 0;          // NCCL communicator buffers (ring / tree channels) over every communicator
    double nvls = 0;          // NVLS multicast buffers (H100-class NVSwitch systems, > 2 ranks)
    int communicators = 0;    // NCCL communicators with at least two ranks
    double total() const { return context + nccl + nvls; }
};

// The point (variant 0), low (-1) or high (+1) end for this job; no strings, cheap (plan search calls it).
runtime_parts runtime_memory(const estimate_input& in, int variant);

// One line for the breakdown: what the runtime term holds and why (point figures).
std::string runtime_note(const estimate_input& in);

// The interval reason, or "" when the low and high ends equal the point.
std::string runtime_interval_reason(const estimate_input& in);

}  // namespace oomdx::est
