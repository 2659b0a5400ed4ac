// MoE dispatch temporaries (issue 16, est67): the copies of the routed tokens one MoE layer holds while it runs,
// beyond what autograd saves for backward (layer_activation counts the saved set: the permuted fc1 input, the
// intermediates, the router's logits and probabilities). Which copies exist depends on the token dispatcher
// (Megatron-Core alltoall / allgather, torchtitan's grouped MoE, the HF per-expert loop); the sources are listed in
// knowledge/estimator.yaml (est67).
#pragma once

#include <cstdint>

namespace oomdx {

struct estimate_input;

// How a job moves its routed tokens to the experts (Megatron --moe-token-dispatcher-type; `local` for the frameworks
// whose experts run where the tokens are: the HF per-expert loop, torchtitan without expert parallelism).
enum class moe_dispatcher_kind { unknown, alltoall, allgather, flex, local };

namespace est {

struct moe_dispatch_bytes {
    double rows = 0;       // routed token rows one rank's experts receive (T x k, or the padded capacity)
    double forward = 0;    // bytes above the saved set at the high-water of one MoE layer's forward (combine step)
    double backward = 0;   // the same in its backward: each forward copy has a gradient twin of its size
};

// The dispatcher a job runs: the stated one, else its framework's default.
moe_dispatcher_kind moe_dispatcher(const estimate_input& in);
// Routed rows per token on a rank: top-k, or with a capacity factor and padding to capacity, k x the factor
// (Megatron --moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity); dropping alone keeps at most k.
double moe_rows_per_token(const estimate_input& in);
// One MoE layer's dispatch temporaries for `tokens` micro-batch tokens on this rank (before the sequence-parallel
// split; the function divides by TP where the layer runs on sequence shards). Zero for a dense model.
moe_dispatch_bytes moe_dispatch_temporaries(const estimate_input& in, double tokens);

}  // namespace est
}  // namespace oomdx
