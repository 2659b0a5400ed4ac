// Memory-efficient full-parameter training: the states each method keeps (est52; the arithmetic and its sources
// are in knowledge/sources/memory_efficient_full_training.md).
#include "engine/estimator/memory_efficient.h"

#include <algorithm>

#include "engine/estimator/estimate.h"
#include "engine/estimator/estimate_model.h"

namespace oomdx {

const char* me_name(me_kind k) {
    switch (k) {
        case me_kind::badam: return "BAdam";
        case me_kind::galore: return "GaLore";
        case me_kind::apollo: return "APOLLO";
        case me_kind::lisa: return "LISA";
        default: return "none";
    }
}

namespace est {

me_states memory_efficient_states(const estimate_input& in, const me_stage& s) {
    const memory_efficient_spec& me = in.me;
    const double t = double(std::max<std::int64_t>(1, in.tp));
    const double pb = double(in.param_bytes);
    me_states r;
    switch (me.kind) {
        case me_kind::badam: {
            // BlockOptimizer: only the active block requires grad; at its step the block's 16-bit gradients become
            // fp32 (the 16-bit ones dropped), Adam steps an fp32 copy of the block and copies it back. Every block
            // is one decoder layer (the default partition, embedding and head excluded); the largest is the peak.
            // BlockOptimizerRatio (badam_mode ratio): every layer's linears require grad, each gradient is
            // masked to the update ratio in a hook; the masked entries keep fp32 values, copy and moments.
            if (!me.badam_ratio) {
                r.trainable = s.layers > 0 ? s.layer_params : 0.0;
                r.grads = 4.0 * r.trainable;
                r.master = 4.0 * r.trainable;
                r.optimizer = s.o_rate_fp32 * r.trainable;
            } else {
                const double all = s.layers * s.layer_linear;
                r.trainable = me.badam_update_ratio * all;
                r.grads = 4.0 * r.trainable + pb * s.largest_linear;  // one dense 16-bit gradient before its mask
                r.master = 4.0 * r.trainable;
                r.optimizer = s.o_rate_fp32 * r.trainable;
            }
            break;
        }
        case me_kind::galore:
        case me_kind::apollo: {
            // GaLore (GaLoreProjector) and APOLLO project each targeted matrix's gradient onto rank r along its
            // shorter side: the moments hold r x (longer side); the projection matrix r x (shorter side) stays in
            // the gradient's dtype. Other trainable parameters (embedding, head, norms, untargeted linears) keep
            // the optimizer's ordinary states. Gradients are unchanged (layer-wise: freed in backward).
            dense_module l[8];  // one TP rank holds 1/t of each
            const int n = dense_modules(in.model, l);
            double targeted = 0, projected = 0, projector = 0;
            for (int i = 0; i < n; ++i) {
                if (!(me.targets & l[i].bit)) continue;
                const double a = l[i].in, b = l[i].out;
                const double rk = std::min(double(std::max<std::int64_t>(1, me.rank)), std::min(a, b));
                targeted += a * b / t;
                projected += rk * std::max(a, b) / t;
                projector += rk * std::min(a, b) / t;
            }
            targeted *= s.layers;
            projected *= s.layers;
            projector *= s.layers;
            r.trainable = s.params_rank;
            r.grads = s.g_rate * s.params_rank;
            r.master = s.m_rate * s.params_rank;
            r.optimizer = s.o_rate * (std::max(0.0, s.params_rank - targeted) + projected) + pb * projector;
            // Q-GaLore's INT8 weights (QGaLoreLinear): 1 B per element plus 2 x 4 B per group of 256
            if (me.weight_bits == 8 && pb > 1.0) r.params_saved = (pb - (1.0 + 8.0 / 256.0)) * targeted;
            break;
        }
        case me_kind::lisa: {
            // LISA: the embedding and the head always train, plus lisa_layers sampled decoder layers
            r.trainable = std::min(s.params_rank, s.embed_head + std::min(s.layers, double(std::max<std::int64_t>(1, me.lisa_layers))) * s.layer_params);
            r.grads = s.g_rate * r.trainable;
            r.master = s.m_rate * r.trainable;
            r.optimizer = s.o_rate * r.trainable;
            break;
        }
        default: break;
    }
    return r;
}

}  // namespace est
}  // namespace oomdx
