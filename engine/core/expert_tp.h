// Megatron's expert tensor-parallel degree when the job does not state it. Megatron-Core takes the
// tensor-parallel degree (arguments.py: expert_tensor_parallel_size = tensor_model_parallel_size), but a
// job whose EP x TP cannot fit the ranks of one pipeline stage did not run that way: a report that
// names TP and EP alone ("TP2/PP1/EP8" on 8 GPUs) ran with expert TP 1, the only layout that fits.
#pragma once

#include <cstdint>

namespace oomdx {

// `stage_ranks` = world size / PP (0 when the world size is unknown).
inline std::int64_t megatron_default_expert_tp(std::int64_t tp, std::int64_t ep, std::int64_t stage_ranks) {
    if (tp <= 1 || ep <= 1 || stage_ranks <= 0) return tp;
    if (stage_ranks % (ep * tp) == 0) return tp;
    return stage_ranks % ep == 0 ? 1 : tp;
}

}  // namespace oomdx
