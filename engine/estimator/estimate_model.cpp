#include "engine/estimator/estimate_model.h"

#include <algorithm>
#include <cmath>

#include "engine/estimator/estimator_constants.h"

namespace oomdx::est {

namespace {

bool is_mla(const estimate_model& m) { return m.kv_lora > 0; }

double attention_params(const estimate_model& m) {
    const double h = double(m.hidden), a = double(m.heads), g = double(m.kv_heads), d = double(m.head_dim);
    if (is_mla(m)) {
        const double dn = double(m.qk_nope), dr = double(m.qk_rope), dv = double(m.v_head);
        const double q = m.q_lora > 0 ? double(m.q_lora) * (h + a * (dn + dr)) : h * a * (dn + dr);
        const double kv = double(m.kv_lora) * (h + a * (dn + dv)) + h * dr;
        return q + kv + a * dv * h;
    }
    double p = h * a * d + 2.0 * h * g * d + a * d * h;
    if (m.family == "gpt" || m.family == "gpt2") p += (a + 2.0 * g) * d + h;  // biases
    return p;
}

double mla_latent_norms(const estimate_model& m) {
    return is_mla(m) ? double(m.q_lora) + double(m.kv_lora) : 0.0;
}

double mlp_matrices(const estimate_model& m) { return m.gated ? 3.0 : 2.0; }

}  // namespace

layer_params dense_layer_params(const estimate_model& m) {
    const double h = double(m.hidden);
    layer_params p;
    p.tp_sharded = attention_params(m) + mlp_matrices(m) * h * double(m.ffn);
    if (!m.gated) p.tp_sharded += double(m.ffn) + h;  // GPT MLP biases
    p.replicated = 2.0 * h * (m.gated ? 1.0 : 2.0) + mla_latent_norms(m);
    return p;
}

layer_params moe_layer_params(const estimate_model& m) {
    const double h = double(m.hidden), fe = double(m.expert_ffn > 0 ? m.expert_ffn : m.ffn);
    layer_params p;
    p.tp_sharded = attention_params(m) + double(m.shared_experts) * 3.0 * h * fe;
    p.replicated = 2.0 * h + mla_latent_norms(m) + h * double(m.experts);
    p.routed = double(m.experts) * 3.0 * h * fe;
    return p;
}

bool is_moe_layer(const estimate_model& m, std::int64_t i) {
    if (m.experts <= 0) return false;
    if (i < m.first_dense) return false;
    return m.moe_freq <= 1 || i % m.moe_freq == 0;
}

double total_params(const estimate_model& m) {
    const layer_params d = dense_layer_params(m), e = moe_layer_params(m);
    double n = 0;
    for (std::int64_t i = 0; i < m.layers; ++i) {
        const layer_params& p = is_moe_layer(m, i) ? e : d;
        n += p.tp_sharded + p.replicated + p.routed;
    }
    const double h = double(m.hidden), v = double(m.vocab);
    n += v * h * (m.tied ? 1.0 : 2.0) + h;
    n += double(m.mtp_layers) * (e.tp_sharded + e.replicated + e.routed + 2.0 * h * h + 2.0 * h);
    return n;
}

// Bytes per token for one layer. Terms follow Korthikanti et al. (2022) Table 2 rebuilt from
// shapes: GQA/MLA q,k,v, SwiGLU or GELU MLP, MoE dispatch, dropout masks, eager extras.
layer_act layer_activation(const estimate_input& in, bool moe) {
    const estimate_model& m = in.model;
    const double h = double(m.hidden), a = double(m.heads), g = double(m.kv_heads), d = double(m.head_dim);
    const double t = double(std::max<std::int64_t>(1, in.tp));
    const bool sp = in.sequence_parallel || in.tp <= 1;
    const bool eager = !in.compile && in.framework != train_framework::megatron;
    const bool drop = m.dropout > 0.0;
    double rep = 0, shard = 0;  // replicated outside TP regions / sharded by TP

    // attention block
    rep += eager ? 12.0 * h : 4.0 * h;  // two norm inputs; eager fp32 upcast keeps x.float() 4h + normed 2h each
    rep += 2.0 * h;                     // input of the QKV projection
    double q_dim = a * d, k_dim = g * d, v_dim = g * d, o_dim = a * d;
    if (is_mla(m)) {
        q_dim = k_dim = a * double(m.qk_nope + m.qk_rope);
        v_dim = o_dim = a * double(m.v_head);
        rep += 4.0 * double(m.q_lora + m.kv_lora + m.qk_rope);  // latents and their norm inputs
    }
    shard += 2.0 * (q_dim + k_dim + v_dim) + 2.0 * o_dim;
    double quad = 0;  // per token, s^2 term
    if (in.flash)
        shard += 4.0 * a;  // fp32 log-sum-exp
    else
        quad = a * double(in.seq_len) * (drop ? 5.0 : 2.0);
    if (drop) rep += 2.0 * h;  // two dropout masks (1 byte each)
    rep += 2.0 * h;            // MLP / router input

    double mlp_shard = 0, mlp_rep = 0;
    if (moe) {
        const double fe = double(m.expert_ffn > 0 ? m.expert_ffn : m.ffn), k = double(std::max<std::int64_t>(1, m.top_k));
        const double etp = double(std::max<std::int64_t>(1, in.etp));
        mlp_rep += 8.0 * double(m.experts);                  // router logits and probs (fp32)
        mlp_rep += k * (2.0 * h + 2.0 * h);                  // permuted input and expert output
        mlp_rep += k * (eager ? 8.0 : 6.0) * fe / etp;       // expert SwiGLU intermediates
        mlp_shard += double(m.shared_experts) * (eager ? 8.0 : 6.0) * fe;
    } else {
        const double f = double(m.ffn);
        mlp_shard += m.gated ? (eager ? 8.0 : 6.0) * f : 4.0 * f;
    }

    const double full_none = (sp ? (rep + mlp_rep) / t : rep + mlp_rep) + (shard + mlp_shard + quad) / t;
    layer_act r;
    r.working = full_none;
    const double input = sp ? 2.0 * h / t : 2.0 * h;
    switch (in.ac) {
        case ac_kind::none: r.saved = full_none; break;
        case ac_kind::full: r.saved = input; break;
        case ac_kind::selective_layer: {
            const double f = 1.0 / double(std::max(1, in.ac_every));
            r.saved = (1.0 - f) * full_none + f * input;
            break;
        }
        case ac_kind::selective_op:
            if (in.framework == train_framework::megatron || in.framework == train_framework::deepspeed) {
                // core-attention recompute: drops the s^2 term only
                r.saved = full_none - quad / t;
            } else {
                // torchtitan op-level SAC: layer input, every second matmul output, SDPA output
                double saved_mm = 2.0 * (q_dim + v_dim) + 2.0 * o_dim;
                // Float8 linears run as scaled matmuls, which the op-SAC save list does not keep:
                // only the SDPA output survives (torchtitan's policy saves aten.mm outputs).
                if (in.float8)
                    saved_mm = 2.0 * o_dim;
                else if (moe)
                    saved_mm += 0.5 * (mlp_shard / t + mlp_rep / (sp ? t : 1.0)) * t;
                else
                    saved_mm += 2.0 * (double(m.ffn) + h);
                r.saved = input + saved_mm / t;
            }
            break;
    }
    if (in.activation_offload) r.saved = 0;
    return r;
}

namespace {

struct state_rates {
    double p_full = 0, p_shard = 0, g_full = 0, g_shard = 0, m_full = 0, m_shard = 0, o_full = 0, o_shard = 0;
    bool grads_in_forward = false;
};

double optimizer_moment_bytes(const estimate_input& in) {
    const estimator_constants& k = estimator_k();
    const double sb = in.master_weights || in.param_bytes >= 4 ? double(in.state_dtype_bytes) : double(in.param_bytes);
    const std::string& o = in.optimizer;
    if (o == "sgd") return sb;
    if (o == "lion") return sb;
    if (o == "adafactor") return 0.05 * sb;
    if (o == "muon") return k.muon_2d_fraction * sb + (1.0 - k.muon_2d_fraction) * 2.0 * sb;
    if (o == "adam8bit" || o == "adamw8bit" || o == "paged_adamw8bit") return 2.0;
    return 2.0 * sb;  // adam, adamw and unknown (assumed Adam-like)
}

state_rates resolve_rates(const estimate_input& in) {
    state_rates r;
    const double pb = double(in.param_bytes);
    const bool mixed = pb < 4.0;
    const bool master = mixed && in.master_weights;
    const double S = optimizer_moment_bytes(in);
    switch (in.framework) {
        case train_framework::megatron:
            r.p_full = pb;
            r.g_full = master ? 4.0 : pb;  // fp32 main-grad buffer
            if (in.zero_stage >= 1) {
                r.m_shard = master ? 4.0 : 0.0;
                r.o_shard = S;
            } else {
                r.m_full = master ? 4.0 : 0.0;
                r.o_full = S;
            }
            r.grads_in_forward = true;
            break;
        case train_framework::deepspeed:
            r.grads_in_forward = true;
            if (in.zero_stage >= 3) {
                r.p_shard = pb;
                r.g_shard = master ? 4.0 : pb;
            } else {
                r.p_full = pb;
                if (in.zero_stage == 2)
                    r.g_shard = pb + (master ? 4.0 : 0.0);
                else if (in.zero_stage == 1) {
                    r.g_full = pb;
                    r.g_shard = master ? 4.0 : 0.0;
                } else
                    r.g_full = pb + (master ? 4.0 : 0.0);
            }
            if (in.zero_stage >= 1) {
                r.m_shard = master ? 4.0 : 0.0;
                r.o_shard = S;
            } else {
                r.m_full = master ? 4.0 : 0.0;
                r.o_full = S;
            }
            break;
        default:
            // torchtitan / FSDP2 and plain PyTorch: params are kept in fp32 when mixed precision
            // has master weights (FSDP2 sharded fp32 params, or autocast over fp32 params).
            {
                const double p = master ? 4.0 : pb;
                if (in.zero_stage >= 3) {
                    r.p_shard = p;
                    r.g_shard = p;
                    r.o_shard = S;
                } else if (in.zero_stage == 2) {
                    r.p_full = p;
                    r.g_shard = p;
                    r.o_shard = S;
                } else if (in.zero_stage == 1) {
                    r.p_full = p;
                    r.g_full = p;
                    r.o_shard = S;
                } else {
                    r.p_full = p;
                    r.g_full = p;
                    r.o_full = S;
                }
            }
            r.grads_in_forward = false;
            break;
    }
    if (in.optimizer_offload) {
        r.m_full = r.m_shard = r.o_full = r.o_shard = 0;
        if (in.framework == train_framework::deepspeed) r.g_shard = std::min(r.g_shard, pb);
    }
    if (in.swap_optimizer) {
        const double f = 1.0 / double(std::max(1, in.swap_times));
        r.o_full *= f;
        r.o_shard *= f;
    }
    if (in.params_offload) {
        r.p_shard = 0;
        r.g_shard = 0;
    }
    return r;
}

}  // namespace

double compute(const estimate_input& in, breakdown& out) {
    const estimator_constants& k = estimator_k();
    const estimate_model& m = in.model;
    const std::int64_t p = std::max<std::int64_t>(1, in.pp);
    const std::int64_t v = in.schedule == pp_schedule_kind::interleaved ? std::max<std::int64_t>(1, in.vpp) : 1;
    const double t = double(std::max<std::int64_t>(1, in.tp));
    const double c = double(std::max<std::int64_t>(1, in.cp));
    const double ep = double(std::max<std::int64_t>(1, in.ep)), etp = double(std::max<std::int64_t>(1, in.etp));
    const double h = double(m.hidden), V = double(m.vocab);
    const double pb = double(in.param_bytes);

    double shard_n = 1;
    const double dp_total = std::max(1.0, double(in.dp_shard) * double(std::max<std::int64_t>(1, in.dp_replicate)));
    if (in.framework == train_framework::torchtitan || in.framework == train_framework::generic ||
        in.framework == train_framework::torchtune)
        shard_n = double(std::max<std::int64_t>(1, in.dp_shard)) * c;
    else
        shard_n = dp_total * c;
    const double expert_shard_n = std::max(1.0, shard_n * t / (ep * etp));
    out.shard_n = shard_n;
    out.expert_shard_n = expert_shard_n;

    const state_rates rates = resolve_rates(in);
    out.state_bytes_per_param = rates.p_full + rates.g_full + rates.m_full + rates.o_full +
                                (rates.p_shard + rates.g_shard + rates.m_shard + rates.o_shard) / shard_n;

    const layer_params dl = dense_layer_params(m), ml = moe_layer_params(m);
    const layer_act dact = layer_activation(in, false);
    const layer_act mact = m.experts > 0 ? layer_activation(in, true) : dact;

    const double tokens = double(std::max<std::int64_t>(1, in.micro_batch)) * double(std::max<std::int64_t>(1, in.seq_len)) / c;
    out.tokens = tokens;
    const double mb = double(std::max<std::int64_t>(1, in.num_microbatches));

    const bool fsdp = in.zero_stage >= 3 && shard_n > 1;
    const bool fsdp2 = fsdp && in.framework != train_framework::deepspeed && in.framework != train_framework::megatron;

    out.stages.resize(std::size_t(p));
    const std::int64_t base = m.layers / p, rem = m.layers % p;
    std::int64_t first = 0;
    out.worst = 0;
    out.peak = 0;
    for (std::int64_t s = 0; s < p; ++s) {
        stage_figures& st = out.stages[std::size_t(s)];
        st = stage_figures{};
        st.stage = int(s);
        const std::int64_t n = base + (s < rem ? 1 : 0);
        st.layers = n;
        double tp_sh = 0, rep = 0, routed = 0, max_layer = 0;
        for (std::int64_t i = first; i < first + n; ++i) {
            const bool moe = is_moe_layer(m, i);
            const layer_params& lp = moe ? ml : dl;
            if (moe) ++st.moe_layers;
            tp_sh += lp.tp_sharded;
            rep += lp.replicated;
            routed += lp.routed;
            max_layer = std::max(max_layer, lp.tp_sharded / t + lp.replicated + lp.routed / (ep * etp));
        }
        first += n;
        const bool last = s == p - 1;
        double embed_rank = 0, output_rank = 0;
        if (s == 0) embed_rank = V * h / t;
        if (last) {
            if (!m.tied || p > 1) output_rank = V * h / t;
            rep += h;  // final norm
            if (m.mtp_layers > 0) {
                tp_sh += double(m.mtp_layers) * (ml.tp_sharded + 2.0 * h * h);
                rep += double(m.mtp_layers) * (ml.replicated + 2.0 * h);
                routed += double(m.mtp_layers) * ml.routed;
            }
        }
        const double dense_rank = tp_sh / t + rep + embed_rank + output_rank;
        const double expert_rank = routed / (ep * etp);
        st.params_rank = dense_rank + expert_rank;
        st.expert_params_rank = expert_rank;

        auto bytes_of = [&](double full, double shard) {
            return full * (dense_rank + expert_rank) + shard * (dense_rank / shard_n + expert_rank / expert_shard_n);
        };
        auto expert_bytes = [&](double full, double shard) { return full * expert_rank + shard * expert_rank / expert_shard_n; };
        st.params = bytes_of(rates.p_full, rates.p_shard);
        st.grads = bytes_of(rates.g_full, rates.g_shard);
        st.master = bytes_of(rates.m_full, rates.m_shard);
        st.optimizer = bytes_of(rates.o_full, rates.o_shard);
        st.expert_state = expert_bytes(rates.p_full + rates.g_full + rates.m_full + rates.o_full,
                                       rates.p_shard + rates.g_shard + rates.m_shard + rates.o_shard);

        // in-flight layer x micro-batch activations
        double inflight_mb = 1;
        double layers_held = double(n);
        if (p > 1) {
            switch (in.schedule) {
                case pp_schedule_kind::gpipe: inflight_mb = mb; break;
                case pp_schedule_kind::interleaved: {
                    const double chunks = std::min(double(p * v + p - 1 - 2 * s), mb * double(v));
                    inflight_mb = 1;
                    layers_held = chunks * double(m.layers) / double(p * v);
                    break;
                }
                default: inflight_mb = std::min(double(p - s), mb); break;
            }
        }
        st.inflight = inflight_mb * layers_held;
        const double moe_frac = n > 0 ? double(st.moe_layers) / double(n) : 0.0;
        const double saved_per_layer = (1.0 - moe_frac) * dact.saved + moe_frac * mact.saved;
        const double working = std::max(dact.working, st.moe_layers > 0 ? mact.working : 0.0);
        st.activations = st.inflight * saved_per_layer * tokens;
        if (in.activation_offload) st.activations = 2.0 * 2.0 * h / t * tokens;  // layers in transit
        if (in.framework == train_framework::megatron) st.activations *= k.megatron_activation_buffer;

        // logits and loss (last stage)
        if (last) {
            const bool vocab_parallel = in.tp > 1 && (in.loss_parallel || in.framework == train_framework::megatron);
            const double bpe = in.chunked_loss ? k.logits_bytes_chunked
                               : in.framework == train_framework::megatron ? k.logits_bytes_megatron
                                                                          : k.logits_bytes_unfused;
            st.logits = tokens * V / (vocab_parallel ? t : 1.0) * bpe;
            // final-norm output feeding the output projection (replicated without loss parallel)
            st.logits += tokens * 2.0 * h / (vocab_parallel ? 1.0 : 1.0);
        }

        // temporaries
        const double layer_unsharded = max_layer * pb;
        double fwd = k.workspace_bytes, bwd = k.workspace_bytes, step = 0, loss = k.workspace_bytes;
        if (fsdp2) {
            fwd += 2.0 * layer_unsharded;                 // current + prefetched unit, all-gathered
            bwd += 2.0 * layer_unsharded + max_layer * (pb + 4.0);  // + unsharded grads and fp32 reduce-scatter input
            if (last) loss += output_rank * pb;           // output projection all-gathered at the loss
            if (p > 1) {
                // torchtitan: no reshard after forward under PP; unsharded grads accumulate (fp32)
                const double unsharded = st.params_rank * pb;
                fwd += unsharded;
                bwd += unsharded + (mb > 1 ? st.params_rank * 4.0 : 0.0);
                loss += unsharded;
            }
        } else if (fsdp && in.framework == train_framework::deepspeed) {
            fwd += 4.0 * max_layer * pb;
            bwd += 4.0 * max_layer * pb;
            loss += 2.0 * output_rank * pb;
        } else if (in.framework == train_framework::deepspeed && in.zero_stage >= 1) {
            bwd += std::min(k.deepspeed_bucket_elements, st.params_rank) * pb;
        } else if (in.framework != train_framework::megatron && dp_total > 1) {
            bwd += k.ddp_bucket_bytes;
        }
        // backward of one layer: recompute under AC, activation gradients of the residual stream
        const double act_grad = 2.0 * 2.0 * h * tokens / (in.sequence_parallel ? t : 1.0);
        if (in.ac != ac_kind::none) bwd += working * tokens;
        bwd += act_grad;
        if (in.optimizer_in_backward) {
            bwd += max_layer * pb;  // one layer's grads before its fused step
        }
        // gradients present while activations are still held
        double grads_fwd = rates.grads_in_forward && !in.optimizer_in_backward ? st.grads : 0.0;
        // end of backward: all grads plus the first layer's transients
        double grads_end = in.optimizer_in_backward ? 0.0 : st.grads;
        step += 0;  // fused optimizers: no full-size temporaries
        st.temp_forward = fwd;
        st.temp_backward = bwd;
        st.temp_loss = loss;
        st.temp_step = step + k.workspace_bytes;
        st.grads_in_forward = grads_fwd;

        const double resident = st.params + st.master + st.optimizer;
        st.phase_forward = resident + grads_fwd + st.activations + fwd;
        st.phase_loss = last ? resident + grads_fwd + st.activations + st.logits + loss : 0.0;
        st.phase_backward = resident + grads_fwd + st.activations + bwd;
        st.phase_step = resident + grads_end + st.temp_step +
                        (in.ac == ac_kind::none ? 0.0 : 0.0);
        const double ph[4] = {st.phase_forward, st.phase_loss, st.phase_backward, st.phase_step};
        st.phase = int(std::max_element(ph, ph + 4) - ph);
        st.peak = ph[st.phase];
        if (st.peak > out.peak) {
            out.peak = st.peak;
            out.worst = int(s);
        }
    }
    out.reserved_factor = in.framework == train_framework::megatron ? k.reserved_factor_megatron : k.reserved_factor;
    out.runtime = in.npu ? k.runtime_npu_bytes : k.runtime_cuda_bytes;
    out.reserved = out.peak * out.reserved_factor;
    // the allocator cannot cache beyond the device: near capacity reserved ~ allocated
    if (in.capacity_bytes > 0)
        out.reserved = std::min(out.reserved, std::max(out.peak, double(in.capacity_bytes) - out.runtime));
    out.device = out.reserved + out.runtime;
    return out.device;
}

}  // namespace oomdx::est
