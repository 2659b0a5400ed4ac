#include "engine/estimator/moe_dispatch.h"

#include <algorithm>

#include "engine/estimator/estimate.h"
#include "engine/estimator/estimate_model.h"

namespace oomdx::est {

moe_dispatcher_kind moe_dispatcher(const estimate_input& in) {
    if (in.moe_dispatcher != moe_dispatcher_kind::unknown) return in.moe_dispatcher;
    // Megatron-LM's --moe-token-dispatcher-type defaults to allgather (adapters that default otherwise, ms-swift's
    // Megatron backend: alltoall, say so through framework.moe_token_dispatcher)
    if (in.framework == train_framework::megatron) return moe_dispatcher_kind::allgather;
    // torchtitan sends tokens all-to-all across the EP mesh; without EP, and in the HF per-expert loop, the experts
    // run where the tokens are
    if (in.framework == train_framework::torchtitan && in.ep > 1) return moe_dispatcher_kind::alltoall;
    return moe_dispatcher_kind::local;
}

double moe_rows_per_token(const estimate_input& in) {
    const double k = double(std::max<std::int64_t>(1, in.model.top_k));
    if (in.moe_capacity_factor <= 0) return k;  // dropless: every routed copy
    // Megatron pads each expert's input to its capacity (T x k / E x factor per source rank) when asked; dropping
    // alone sends at most what dropless would
    return in.moe_pad_to_capacity ? k * in.moe_capacity_factor : k * std::min(1.0, in.moe_capacity_factor);
}

moe_dispatch_bytes moe_dispatch_temporaries(const estimate_input& in, double tokens) {
    moe_dispatch_bytes out;
    const estimate_model& m = in.model;
    if (m.experts <= 0 || tokens <= 0) return out;
    const double h = double(m.hidden), E = double(m.experts);
    const double t = double(std::max<std::int64_t>(1, in.tp));
    const double ep = double(std::max<std::int64_t>(1, in.ep)), etp = double(std::max<std::int64_t>(1, in.etp));
    const bool sp = in.sequence_parallel || in.tp <= 1;
    const double T = sp ? tokens / t : tokens;        // tokens entering the MoE layer on this rank
    const double b = 2.0 * fp32_compute_act_scale(in);  // compute dtype
    const double R = T * moe_rows_per_token(in);       // routed rows this rank sends (and, balanced, receives)
    out.rows = R;
    // The saved set (layer_activation) already holds one R x h copy of the expert output; what follows is above it.
    switch (moe_dispatcher(in)) {
        case moe_dispatcher_kind::alltoall: {
            // Megatron-Core MoEAlltoAllTokenDispatcher (token_dispatcher.py), at the combine step: the experts' fc2
            // output (etp x R rows, the MoE layer holds it until combine returns), its copy sorted back by source rank
            // when the rank holds several experts (sort_chunks_by_idxs), under expert TP the cast to the router
            // probabilities' dtype before the reduce-scatter (combine_preprocess `hidden_states.to(self.probs.dtype)`:
            // a copy only when that dtype differs) and the reduce-scatter output, then the all-to-all output (R rows;
            // none on a one-rank EP group). torchtitan's all-to-all dispatcher has the same fc2 output, a2a output
            // and the fp32 scored copy of the local combine (below).
            const bool several = E / ep > 1.0;
            const double rb = in.moe_router_bytes > 0 ? double(in.moe_router_bytes) : b;
            const double fc2 = R * etp * b;
            double pre = fc2 + (several ? R * etp * b : 0.0);
            if (etp > 1.0) pre += (rb != b ? R * etp * rb : 0.0) + R * rb;
            const double combine = fc2 + ((several || etp > 1.0) ? R * b : 0.0) + (ep > 1.0 ? R * b : 0.0);
            double fwd = std::max(pre, combine) - R * b;
            if (in.framework == train_framework::torchtitan) fwd = R * b * (ep > 1.0 ? 1.0 : 0.0) + R * (4.0 + b) - R * b;
            out.forward = std::max(0.0, fwd) * h;
            out.backward = out.forward;  // each copy's gradient twin (unpermute / a2a / sort run backwards)
            break;
        }
        case moe_dispatcher_kind::allgather: {
            // Megatron-Core MoEAllGatherTokenDispatcher: every rank of the expert-TP x EP group gathers the group's
            // tokens (G rows), permutes the ones its experts take (the saved fc1 input), and at the combine scatters
            // the fc2 output (etp x R rows) back into a G-row buffer that is reduce-scattered to its T rows.
            // Combine high-water: fc2 output + the G-row unpermuted buffer + the reduce-scatter output.
            const double group = ep * etp;
            const double G = T * group;
            const double fwd = R * etp * b + (group > 1.0 ? G * b + T * b : 0.0) - R * b;
            out.forward = std::max(0.0, fwd) * h;
            out.backward = out.forward;
            break;
        }
        case moe_dispatcher_kind::flex:
            // DeepEP / HybridEP keep their dispatch buffers in their own pre-registered memory (outside the caching
            // allocator; sized by the library, not by the step): nothing counted here
            break;
        case moe_dispatcher_kind::local:
        case moe_dispatcher_kind::unknown:
            if (in.framework == train_framework::torchtitan) {
                // torchtitan LocalTokenDispatcher.combine: routed_output.to(float32) * scores (fp32, kept for the
                // scores' gradient), then .to(bf16) for the scatter_add: 4 + 2 B per routed row element
                out.forward = R * (4.0 + b) * h - R * b * h;
            } else {
                // HF per-expert loop (Mixtral / Qwen2-MoE / Qwen3-MoE SparseMoeBlock): the int64 one-hot expert mask
                // (T x k x E, one_hot(selected_experts, num_classes).permute(2, 1, 0)) lives through the loop; the
                // per-expert slices are the saved inputs themselves
                out.forward = T * double(std::max<std::int64_t>(1, m.top_k)) * E * 8.0;
            }
            // the recomputed forward repeats them in backward under checkpointing; without it nothing is rebuilt
            out.backward = in.ac != ac_kind::none ? out.forward : 0.0;
            break;
    }
    return out;
}

}  // namespace oomdx::est
