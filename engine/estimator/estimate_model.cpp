#include "engine/estimator/estimate_model.h"

#include <algorithm>
#include <cmath>

#include "engine/estimator/estimator_constants.h"
#include "engine/estimator/fsdp_offload_staging.h"
#include "engine/estimator/moe_dispatch.h"
#include "engine/estimator/runtime_memory.h"

namespace oomdx::est {

namespace {

bool is_mla(const estimate_model& m) { return m.kv_lora > 0; }

// GPT-style blocks (LayerNorm with bias, biased linears, 2-matrix MLP).
bool gpt_style(const estimate_model& m) {
    const std::string& f = m.family;
    return f == "gpt" || f == "gpt2" || f == "opt" || f == "bert" || f == "bloom" || f == "phi" || f == "gpt_neox" ||
           f == "starcoder2" || f == "gptj";
}
bool linear_bias(const estimate_model& m) {
    const std::string& f = m.family;
    return (gpt_style(m) && f != "gptj") || f == "qwen2" || f == "chatglm" || f == "seed_oss" || f == "stablelm" ||
           f == "glm4_moe" || f == "gpt_oss";
}

// est65: HF modules that project q, k and v with one linear (c_attn, query_key_value, W_pack, wqkv, qkv_proj)
bool fused_qkv(const estimate_model& m) {
    const std::string& f = m.family;
    return f == "gpt" || f == "gpt2" || f == "bloom" || f == "gpt_neox" || f == "falcon" || f == "chatglm" ||
           f == "baichuan" || f == "internlm2" || f == "dbrx" || f == "phi3";
}
// and the gate and up projections with one (gate_up_proj, dense_h_to_4h)
bool fused_gate_up(const estimate_model& m) { return m.family == "phi3" || m.family == "chatglm"; }

double attention_params(const estimate_model& m) {
    const double h = double(m.hidden), a = double(m.heads), g = double(m.kv_heads), d = double(m.head_dim);
    if (is_mla(m)) {
        const double dn = double(m.qk_nope), dr = double(m.qk_rope), dv = double(m.v_head);
        const double q = m.q_lora > 0 ? double(m.q_lora) * (h + a * (dn + dr)) : h * a * (dn + dr);
        const double kv = double(m.kv_lora) * (h + a * (dn + dv)) + h * dr;
        return q + kv + a * dv * h;
    }
    double p = h * a * d + 2.0 * h * g * d + a * d * h;
    if (linear_bias(m)) p += (a + 2.0 * g) * d + (gpt_style(m) ? h : 0.0);  // biases
    return p;
}

double mla_latent_norms(const estimate_model& m) {
    return is_mla(m) ? double(m.q_lora) + double(m.kv_lora) : 0.0;
}

double mlp_matrices(const estimate_model& m) { return m.gated ? 3.0 : 2.0; }

// Python RMSNorm (Llama-style code run eagerly) keeps an fp32 copy of its input.
bool python_rmsnorm(const estimate_input& in) {
    return in.norm_upcast && !in.compile && in.framework != train_framework::megatron && !gpt_style(in.model) &&
           in.model.family != "falcon" && in.model.family != "stablelm";  // nn.LayerNorm
}

// est26: fp32 parameters trained without autocast (training.mixed_precision_param float32) compute in
// fp32, so an activation the layer formula counts at 2 B per element takes 4 B. Dropout masks (1 B) and
// tensors already fp32 (norm upcasts, log-sum-exp, softmax probabilities) keep their size; the
// half-precision copy of eager attention's probabilities is then the fp32 tensor itself.
// (param_bytes 4 alone is not enough: LLaMA-Factory's fp32 trainable adapters set it over a bf16 base)

}  // namespace

double fp32_compute_act_scale(const estimate_input& in) {
    return in.param_bytes >= 4 && in.ft.kind == finetune_kind::full ? 2.0 : 1.0;
}

int dense_modules(const estimate_model& m, dense_module* out) {
    const double h = double(m.hidden), a = double(m.heads), g = double(m.kv_heads), d = double(m.head_dim),
                 f = double(m.ffn);
    int n = 0;
    out[n++] = {lora_target::q, h, a * d};
    out[n++] = {lora_target::k, h, g * d};
    out[n++] = {lora_target::v, h, g * d};
    out[n++] = {lora_target::o, a * d, h};
    if (m.gated) out[n++] = {lora_target::gate, h, f};
    out[n++] = {lora_target::up, h, f};
    out[n++] = {lora_target::down, f, h};
    return n;
}

// est29: torchtitan builds from 3b85aa31f (2025-05-14) to b39377f9f (2025-12-01) on compute capability >= 10.0
// (B200, GB200, RTX 5090 in the device catalog) run SDPA through cuDNN attention, whose op is not in the op-SAC
// save list: the attention output and its log-sum-exp are recomputed in backward, not saved. Unknown build date:
// the point keeps them (the low end does not).
bool tt_sac_on_cudnn_sdpa_device(const estimate_input& in) {
    const std::string& d = in.device_id;
    return in.framework == train_framework::torchtitan && in.ac == ac_kind::selective_op &&
           (d == "b200" || d == "gb200" || d == "rtx5090");
}

bool tt_sdpa_output_recomputed(const estimate_input& in) {
    if (!tt_sac_on_cudnn_sdpa_device(in)) return false;
    const int a = build_side(in, date_tt_cudnn_sdpa_first), b = build_side(in, date_tt_cudnn_sdpa_saved);
    if (a > 0 && b < 0) return true;
    if (a < 0 || b > 0) return false;
    return in.variant < 0;
}

layer_params dense_layer_params(const estimate_model& m) {
    const double h = double(m.hidden);
    layer_params p;
    p.tp_sharded = attention_params(m) + mlp_matrices(m) * h * double(m.ffn);
    if (!m.gated) p.tp_sharded += double(m.ffn) + h;  // GPT MLP biases
    p.replicated = double(m.norms_per_layer) * h * (m.gated ? 1.0 : 2.0) + mla_latent_norms(m);
    return p;
}

layer_params moe_layer_params(const estimate_model& m) {
    const double h = double(m.hidden), fe = double(m.expert_ffn > 0 ? m.expert_ffn : m.ffn);
    layer_params p;
    // est57: an expert has the MLP's shape, fc1 doubled only for a gated linear unit (Megatron-Core
    // moe/experts.py, mlp.py): a GELU expert has two matrices, a SwiGLU expert three
    p.tp_sharded = attention_params(m) + double(m.shared_experts) * mlp_matrices(m) * h * fe;
    p.replicated = double(m.norms_per_layer) * h + mla_latent_norms(m) + h * double(m.experts);
    p.routed = double(m.experts) * mlp_matrices(m) * h * fe;
    return p;
}

bool fp8_all_gather_applies(const estimate_input& in) {
    const bool float8 = in.lowp == lowp_kind::float8_tensorwise || in.lowp == lowp_kind::float8_rowwise;
    return in.fp8_all_gather && float8 && (in.framework != train_framework::torchtitan || in.dp_shard > 1);
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

double linear_params(const estimate_model& m, bool moe) {
    const layer_params p = moe ? moe_layer_params(m) : dense_layer_params(m);
    return p.tp_sharded + p.routed;  // biases ride along (negligible)
}

double largest_linear(const estimate_model& m, bool moe) {
    const double h = double(m.hidden);
    const double f = moe ? double(m.expert_ffn > 0 ? m.expert_ffn : m.ffn) : double(m.ffn);
    return std::max({h * f, h * double(m.heads) * double(std::max<std::int64_t>(1, m.head_dim)), h * h});
}

double adapter_params(const estimate_input& in, bool moe) {
    const finetune_spec& ft = in.ft;
    if (ft.kind != finetune_kind::lora) return 0.0;
    const estimate_model& m = in.model;
    const double r = double(std::max<std::int64_t>(1, ft.lora_rank));
    dense_module mods[8];
    const int n = dense_modules(m, mods);
    double p = 0;
    const double h = double(m.hidden), fe = double(m.expert_ffn > 0 ? m.expert_ffn : m.ffn);
    for (int i = 0; i < n; ++i) {
        if (!(ft.targets & mods[i].bit)) continue;
        const bool mlp = mods[i].bit & (lora_target::gate | lora_target::up | lora_target::down);
        double count = 1, fin = mods[i].in, fout = mods[i].out;
        if (mlp && moe) {  // every routed and shared expert carries its own adapter
            count = double(m.experts + m.shared_experts);
            fin = mods[i].bit == lora_target::down ? fe : h;
            fout = mods[i].bit == lora_target::down ? h : fe;
        }
        p += count * (r * (fin + fout) + (ft.dora ? fout : 0.0));
    }
    return p;
}

// The caching allocator serves requests of at most 1 MiB from its small-block pool (kSmallSize).
constexpr double kSmallBlock = 1048576.0;

// est53: what of the gradients zero_grad(set_to_none) freed before the forward stays stranded in the cache. Each
// parameter's gradient is one cached block; the caching allocator serves a request from the smallest cached block at
// least as large and splits the remainder off while more than 1 MiB is left (c10/cuda/CUDACachingAllocator.cpp
// get_free_block, should_split), so the forward's hidden-state-sized tensors (tokens x hidden in the compute dtype)
// reuse every gradient block at least that large, up to what the forward allocates. Smaller blocks (k/v projections
// at long sequences, norms) stay stranded. Dense unsharded full training on one TP / PP rank only.
static double stranded_freed_grads(const estimate_input& in, double freed, double tokens, double params, double activations) {
    const estimate_model& m = in.model;
    if (freed <= 0 || params <= 0 || in.ft.kind != finetune_kind::full || in.me.kind != me_kind::none || m.experts > 0 ||
        in.tp > 1 || in.pp > 1 || in.zero_stage > 0 || in.framework == train_framework::megatron)
        return freed;
    const double h = double(m.hidden), V = double(m.vocab);
    const double gb = freed / params;  // gradient bytes per element
    const double a = tokens * h * 2.0 * fp32_compute_act_scale(in);
    dense_module mods[8];
    const int n = dense_modules(m, mods);
    double fits = 0;
    for (int i = 0; i < n; ++i)
        if (mods[i].in * mods[i].out * gb >= a) fits += mods[i].in * mods[i].out;
    fits *= double(m.layers);
    if (V * h * gb >= a) fits += (m.tied ? 1.0 : 2.0) * V * h;
    const double reusable = std::min({fits * gb, freed, activations});
    return freed - reusable;
}

// Elements of the largest LoRA matrix (A is r x in, B is out x r) over the targeted dense modules.
static double largest_adapter_matrix(const estimate_input& in) {
    const finetune_spec& ft = in.ft;
    if (ft.kind != finetune_kind::lora) return 0.0;
    const double r = double(std::max<std::int64_t>(1, ft.lora_rank));
    dense_module mods[8];
    const int n = dense_modules(in.model, mods);
    double big = 0;
    for (int i = 0; i < n; ++i)
        if (ft.targets & mods[i].bit) big = std::max({big, r * mods[i].in, r * mods[i].out});
    return big;
}

bool autocast_fp32_weights(const estimate_input& in) {
    return in.hf_model && in.ft.kind == finetune_kind::full && in.master_weights && in.param_bytes < 4 && in.zero_stage == 0 &&
           in.framework != train_framework::deepspeed;
}

// est26: torch.autocast over fp32 trainable weights (HF Trainer / accelerate fp16 or bf16 AMP of a model
// loaded in fp32, no sharding) casts each weight an autocast op uses to the compute dtype and keeps the
// copy: autocast's weight cache holds it until the autocast region ends (after the loss;
// aten/src/ATen/autocast_mode.cpp cached_cast: leaf fp32 tensors requiring grad), and the linear's
// autograd node saves it for the input gradient until that layer's backward. Under reentrant
// checkpointing the forward saves nothing, and the recompute enters and leaves autocast per layer.
// Bytes held in forward and at the loss (whole stage) and at the start of backward.
void amp_weight_copy_bytes(const estimate_input& in, double lin_rank, double max_layer_lin, double* fwd_loss, double* bwd) {
    *fwd_loss = *bwd = 0;
    if (!autocast_fp32_weights(in)) return;
    *fwd_loss = double(in.param_bytes) * lin_rank;
    *bwd = in.ac == ac_kind::none ? *fwd_loss : double(in.param_bytes) * max_layer_lin;
}

// Bytes per token for one layer. Terms follow Korthikanti et al. (2022) Table 2 rebuilt from
// shapes (GQA/MLA q,k,v, SwiGLU or GELU MLP, MoE dispatch, dropout masks, eager extras), then
// what a frozen base does not save (autograd keeps a matmul's input only for its weight's
// gradient), the adapters' own inputs, and what each AC mode and low-precision recipe keeps.
layer_act layer_activation(const estimate_input& in, bool moe, bool trainable, bool converted) {
    const estimate_model& m = in.model;
    const finetune_spec& ft = in.ft;
    const double h = double(m.hidden), a = double(m.heads), g = double(m.kv_heads), d = double(m.head_dim);
    const double t = double(std::max<std::int64_t>(1, in.tp));
    const bool sp = in.sequence_parallel || in.tp <= 1;
    const bool eager = !in.compile && in.framework != train_framework::megatron;
    const bool upcast_norm = python_rmsnorm(in);
    const bool drop = m.dropout > 0.0;
    const bool lora = ft.kind == finetune_kind::lora;
    const bool frozen = lora || (ft.kind == finetune_kind::freeze && !trainable);
    const unsigned tg = lora ? ft.targets : 0u;
    const bool quant = lora && ft.base_bits < 16;
    // bitsandbytes MatMul4Bit (before 0.43.2) / MatMul8bitLt keep their input in ctx (not through saved-tensor hooks)
    const bool keeps_input = quant && bnb_keeps_input(in) && (in.ac == ac_kind::none || in.variant > 0);
    // Eager frozen linears: the published LitGPT LoRA measurements need the inputs of the frozen
    // projections kept (about 10 h per token and layer more than a frozen matmul needs); a
    // compiled graph keeps only what backward reads. Low end of the interval: not kept.
    // Megatron's Transformer Engine linears (and grouped expert linears) save their input only when the
    // weight trains (transformer_engine pytorch/module: backward_needs_input = is_grad_enabled and
    // weight.requires_grad; est33), so a frozen TE projection keeps nothing for its weight
    // (MindSpeed on Ascend runs Megatron's own layers, not Transformer Engine: not counted there)
    const bool te_layers = in.framework == train_framework::megatron && !in.npu;
    const bool frozen_keeps = frozen && !in.compile && in.variant >= 0 && !te_layers;
    double rep = 0, shard = 0;  // replicated outside TP regions / sharded by TP
    const double x = fp32_compute_act_scale(in);  // 2 when the compute dtype is fp32 (est26)
    double extra_transient = 0;   // eager intermediates that are never saved

    // norms: a Python RMSNorm keeps x.float() (4h) and, when its weight trains, the bf16
    // normalized input (2h); fused/compiled norms keep the input (2h)
    // est65: autocast over fp32 weights keeps the residual stream fp32 (a half-precision linear output added to the
    // fp32 residual promotes to fp32; layer_norm and rms_norm are on autocast's fp32 list), so a norm's input is fp32
    // and a Python RMSNorm's normalized product stays fp32 (weight fp32, input_dtype fp32)
    const bool amp32 = autocast_fp32_weights(in);
    const double norm_each = amp32 ? (upcast_norm ? 8.0 * h : 4.0 * h)
                             : upcast_norm ? (frozen ? 4.0 * h : (4.0 + 2.0 * x) * h)
                                           : 2.0 * x * h;
    rep += double(m.norms_per_layer) * norm_each;
    // est43: in a parallel block with a norm each (GPT-NeoX) both norms read the same x, which autograd keeps once
    if (m.parallel_block == 1) rep -= norm_each;
    if (upcast_norm) extra_transient += 2.0 * 4.0 * h;  // fp32 normalized product
    double q_dim = a * d, k_dim = g * d, v_dim = g * d, o_dim = a * d;
    if (is_mla(m)) {
        q_dim = k_dim = a * double(m.qk_nope + m.qk_rope);
        v_dim = o_dim = a * double(m.v_head);
        rep += 4.0 * double(m.q_lora + m.kv_lora + m.qk_rope);  // latents and their norm inputs
    }
    const double r = double(std::max<std::int64_t>(1, ft.lora_rank));
    // est33: Megatron's Transformer Engine linears under FP8 (--fp8-format, any scaling recipe) save the
    // FP8 cast of their input for the weight gradient, 1 B per element (transformer_engine pytorch/module
    // linear.py, layernorm_linear.py: the quantized input is what ctx keeps), not the bf16 tensor; the
    // attention output's bf16 copy stays with flash attention and the FP8 cast is a tensor of its own
    const bool te_fp8 = in.framework == train_framework::megatron && !in.npu && converted &&
                        (in.lowp == lowp_kind::float8_tensorwise || in.lowp == lowp_kind::float8_rowwise ||
                         in.lowp == lowp_kind::mxfp8);
    const double lin_in = te_fp8 ? 1.0 : 2.0 * x;  // bytes per element of a saved linear input
    // input of the q/k/v projections (the first norm's output)
    const bool qkv_adapted = tg & (lora_target::q | lora_target::k | lora_target::v);
    const bool qkv_in_kept = !frozen || frozen_keeps || (!ft.lora_dropout && qkv_adapted);
    if (qkv_in_kept) rep += lin_in * h;
    // est65: autocast caches only the casts of leaf fp32 weights (aten/src/ATen/autocast_mode.cpp cached_cast), so
    // with an fp32 residual stream each of separate q, k and v projections casts the norm output on its own and keeps
    // its own half-precision copy for its weight gradient
    if (amp32 && qkv_in_kept && !fused_qkv(m)) rep += 2.0 * lin_in * h;
    shard += 2.0 * x * (q_dim + k_dim + v_dim + o_dim);  // post-RoPE q, k, v and the attention output
    if (te_fp8) shard += 1.0 * o_dim;                      // the output projection's FP8 input
    // est33: Megatron's q/k layernorm (qk_layernorm, a TE norm module of its own) keeps its input, the
    // pre-norm q and k, for its backward; only counted for Megatron (other frameworks' rows were fitted without)
    if (te_layers && m.qk_norm && !is_mla(m)) shard += 2.0 * x * (q_dim + k_dim);
    if (eager) extra_transient += 8.0 * (q_dim + k_dim);   // RoPE in fp32 (complex) copies
    double quad = 0;  // per token, s^2 term
    double quad_bwd = 0;  // per token, s^2 buffers of the attention's own backward
    if (in.flash) {
        shard += 4.0 * a;  // fp32 log-sum-exp
    } else if (in.hf_model || in.manual_attn) {
        // HF eager attention (transformers LlamaAttention since 4.31, eager_attention_forward today):
        // softmax(scores, dtype=float32).to(query.dtype) saves the fp32 probabilities (softmax backward
        // reads its output) and the half-precision copy for the matmul with V: 4 + 2 B per score; with
        // dropout the copy is freed, its mask and output kept (4 + 1 + 2). Backward (est27): ATen's
        // softmax(x, dtype=float32) takes the fused half-to-float kernel only for fp16 input; bf16 scores
        // (and autocast, which casts softmax inputs to fp32) are converted first, so the softmax runs on
        // an fp32 copy and its backward writes an fp32 input gradient (aten/src/ATen/native/SoftMax.cpp):
        // saved output + incoming fp32 gradient + fp32 input gradient, 12 B per score, once the matmul's
        // node has freed the copy (and dropout its mask and output): 6 B above the saved set, 5 with dropout.
        // soft-capping (Gemma 2: tanh(scores / cap) * cap before the mask) keeps the tanh output, 2 B per
        // score more (tanh's backward reads its result; LitGPT model.py and HF's eager Gemma 2 alike)
        // (fp32 compute: probabilities 4 B, no copy; with dropout + mask 1 B + output 4 B)
        quad = a * double(in.seq_len) * ((drop ? 5.0 + 2.0 * x : x > 1.0 ? 4.0 : 6.0) + (m.attn_softcap > 0 ? 2.0 * x : 0.0));
        quad_bwd = a * double(in.seq_len) * (x > 1.0 ? 4.0 * x : drop ? 5.0 : 6.0);  // fp32: 8 B above the saved 4
    } else {
        quad = a * double(in.seq_len) * (drop ? 1.0 + 4.0 * x : 2.0 * x);
    }
    if (drop) rep += 2.0 * h;  // two dropout masks (1 byte each)
    const bool mlp_in_adapted = tg & (lora_target::gate | lora_target::up);
    // MLP / router input; est43: with one shared norm (GPT-J, Phi, Falcon-7B) it is the QKV input itself
    const bool mlp_in_shared = m.parallel_block == 2 && qkv_in_kept && !moe;
    if ((!frozen || frozen_keeps || (!ft.lora_dropout && mlp_in_adapted)) && !mlp_in_shared) {
        rep += (moe ? 2.0 * x : lin_in) * h;
        if (amp32 && !moe && m.gated && !fused_gate_up(m)) rep += lin_in * h;  // est65: gate and up cast apart
    }

    double mlp_shard = 0, mlp_rep = 0;
    if (moe) {
        // est67: routed rows per token (top-k; k x the capacity factor when each expert's input is padded to it)
        const double fe = double(m.expert_ffn > 0 ? m.expert_ffn : m.ffn), k = moe_rows_per_token(in);
        const double etp = double(std::max<std::int64_t>(1, in.etp));
        // frozen TE experts (Megatron LoRA, experts not adapted): no fc1 input (the permuted tokens) and no
        // fc2 input are kept; the SwiGLU input and the expert output (the unpermute's probability gradient) are
        const bool te_frozen_experts = frozen && te_layers;
        // est57: expert TP shards an expert's FFN width, so each expert-TP rank runs every token routed to its
        // experts: Megatron-Core gathers the tokens over the expert-TP x EP group (token_dispatcher.py, tp_ep_group;
        // alltoall: the expert-TP gather after the all-to-all). Per rank that is etp x the local routed tokens at
        // full hidden width (the permuted fc1 input) and the local routed tokens' worth of full-width intermediates
        // (fe / etp each for etp x as many tokens). A GELU expert keeps as much as a SwiGLU one: the GELU input, the
        // GELU output (the probability multiplication reads it for the router's gradient: experts.py
        // `intermediate_parallel * permuted_probs`) and the fc2 input, 6 B per FFN element
        mlp_rep += 8.0 * double(m.experts);                  // router logits and probs (fp32)
        mlp_rep += x * k * ((te_frozen_experts ? 0.0 : 2.0 * h * etp) + 2.0 * h);  // permuted input and expert output
        mlp_rep += x * k * (te_frozen_experts ? 4.0 : eager ? 8.0 : 6.0) * fe;  // expert intermediates
        mlp_shard += x * double(m.shared_experts) * (te_frozen_experts ? 4.0 : eager ? 8.0 : 6.0) * fe;
    } else {
        const double f = double(m.ffn);
        const bool down_in = !frozen || frozen_keeps || (tg & lora_target::down);  // input of the down projection
        if (m.gated) {
            // gate and up outputs (SiLU input, product operand), the SiLU output when eager
            // (TE FP8: the down projection keeps the FP8 cast of the SwiGLU output, not the bf16 tensor)
            // (Megatron's legacy model keeps the SiLU output too: est35)
            const bool silu_kept = eager || megatron_unfused_swiglu(in);
            mlp_shard += x * (silu_kept ? 6.0 : 4.0) * f + (down_in ? (te_fp8 ? 1.0 : 2.0 * x) * f : 0.0);
            if (eager && !down_in) extra_transient += 2.0 * x * f;
        } else {
            mlp_shard += x * (2.0 * f + (down_in ? 2.0 * f : 0.0));  // GELU input, FC2 input
        }
    }
    // adapters: own (dropped-out) inputs, the rank-r intermediate, DoRA's kept outputs
    double adapters = 0;
    if (keeps_input) {
        // bitsandbytes: each quantized linear holds an input-sized buffer of its own until
        // backward (LitGPT's QLoRA rows measure about one per quantized linear over LoRA)
        dense_module mods[8];
        const int n = dense_modules(m, mods);
        for (int i = 0; i < n; ++i)
            if (!moe || !(mods[i].bit & (lora_target::gate | lora_target::up | lora_target::down))) adapters += 2.0 * mods[i].in;
    }
    if (lora) {
        dense_module mods[8];
        const int n = dense_modules(m, mods);
        for (int i = 0; i < n; ++i) {
            if (!(tg & mods[i].bit)) continue;
            if (moe && (mods[i].bit & (lora_target::gate | lora_target::up | lora_target::down))) continue;
            adapters += 2.0 * x * r;
            if (ft.lora_dropout) adapters += (2.0 * x + 1.0) * mods[i].in;  // masked copy (2) + mask (1)
            if (ft.dora) adapters += 4.0 * mods[i].out;         // base and adapter outputs for the magnitude
        }
    }

    // est33: Megatron LoRA with sequence parallelism: the LoRA-A of a column-parallel layer (linear_qkv,
    // linear_fc1) reads the sequence-gathered norm output and keeps that full tensor until backward for its
    // weight gradient, beside the sequence-local shard the layer itself keeps (Megatron-Bridge
    // docs/performance-guide.md and peft/lora.py: what sequence_parallel_input_regather avoids). Routed
    // experts' adapters see permuted tokens, not a gathered input
    if (lora && te_layers && in.sequence_parallel && in.tp > 1) {
        if (qkv_adapted) adapters += 2.0 * x * h * t;
        if (mlp_in_adapted && !moe) adapters += 2.0 * x * h * t;
    }
    const double full_none = (sp ? (rep + mlp_rep) / t : rep + mlp_rep) + (shard + mlp_shard + quad + adapters) / t;
    layer_act res;
    res.working = full_none;
    res.backward = quad_bwd / t;
    // the checkpointed layer input: fp32 when PEFT's kbit preparation upcast the norms (est11;
    // without checkpointing the norms keep an fp32 input either way)
    const bool fp32_resid = fp32_residual_stream(in) || amp32;  // est65: autocast over fp32 weights too
    const double resid = fp32_resid ? 4.0 : 2.0 * x;
    const double input = sp ? resid * h / t : resid * h;
    switch (in.ac) {
        case ac_kind::none: res.saved = full_none; break;
        case ac_kind::full: res.saved = input; break;
        case ac_kind::selective_layer: {
            const double f = 1.0 / double(std::max(1, in.ac_every));
            res.saved = (1.0 - f) * full_none + f * input;
            break;
        }
        case ac_kind::selective_op:
            if (in.framework == train_framework::megatron || in.framework == train_framework::deepspeed) {
                // core-attention recompute: drops the s^2 term only. Under TE FP8 (est33) the checkpointed
                // core attention keeps only its inputs (tensor_parallel.checkpoint saves q, k, v) and the
                // output projection its own FP8 input, so the bf16 attention output and the LSE go too
                res.saved = full_none - quad / t - (te_fp8 && in.flash ? (2.0 * x * o_dim + 4.0 * a) / t : 0.0);
            } else {
                // torchtitan op-level SAC: the layer input, every second matmul output (q, v, w1,
                // w2), the SDPA output. Float8/MX linears still dispatch aten.mm under the SAC
                // mode, so they save the same bf16 outputs; NVFP4's opaque GEMM is not matched:
                // it keeps only the SDPA output and its own fp4 copies of the GEMM inputs.
                double saved_mm = tt_sdpa_output_recomputed(in) ? 0.0 : 2.0 * o_dim + 4.0 * a;
                if (converted && in.lowp == lowp_kind::nvfp4) {
                    const double fp4 = in.variant < 0 ? 0.0 : estimator_k().nvfp4_saved_bytes;
                    saved_mm += fp4 * (h + o_dim + h + (moe ? 0.0 : double(m.ffn)));
                } else {
                    saved_mm += 2.0 * (q_dim + v_dim);
                    if (moe)
                        saved_mm += 0.5 * (mlp_shard / t + mlp_rep / (sp ? t : 1.0)) * t;
                    else if (in.compile && in.framework == train_framework::torchtitan && in.variant < 0)
                        // est29, low end: under torch.compile the SAC policy only tags the graph and the
                        // partitioner saves what the backward graph reads; no backward op reads w2's output
                        // (the residual add passes its gradient through), so only w1's output is kept. The
                        // point keeps eager's set: the trainy, NVFP4-doc and MI300X rows fall 6-10 % with it
                        saved_mm += 2.0 * double(m.ffn);
                    else
                        saved_mm += 2.0 * (double(m.ffn) + h);
                }
                res.saved = input + saved_mm / t;
            }
            break;
    }
    res.transient = std::max(0.0, full_none + extra_transient / t - res.saved);
    if (in.ac != ac_kind::none) res.transient = std::max(0.0, full_none + extra_transient / t - input);
    if (in.activation_offload) res.saved = 0;
    // MindSpeed --swap-attention without recomputation (docs/features/swap_attention.md, default
    // --swap-modules input_norm,self_attention,post_attention_norm): what the attention block saves
    // goes to the host in forward and is prefetched back in backward, one layer ahead; the MLP's
    // saved tensors and the adapters stay on the device
    if (in.swap_attention && in.ac == ac_kind::none && !in.activation_offload) {
        const double mlp_input = (!frozen || frozen_keeps || (!ft.lora_dropout && mlp_in_adapted)) ? 2.0 * h : 0.0;
        const double mlp_part = (sp ? (mlp_rep + mlp_input) / t : mlp_rep + mlp_input) + (mlp_shard + adapters) / t;
        const double attention_part = std::max(0.0, full_none - mlp_part);
        res.saved = full_none - attention_part;
        res.transient += attention_part;  // the layer prefetched back for the next backward
    }
    return res;
}

// Parameter offload as torch FSDP does it (gradients and the optimizer step go to CPU as well),
// rather than DeepSpeed's offload_param (parameters only) or Megatron's.
bool fsdp_cpu_offload(const estimate_input& in) {
    return in.params_offload && in.zero_stage >= 3 && in.framework != train_framework::deepspeed &&
           in.framework != train_framework::megatron;
}

double optimizer_moment_bytes(const estimate_input& in, double param_bytes, bool master) {
    const estimator_constants& k = estimator_k();
    const double sb = master || param_bytes >= 4 ? double(in.state_dtype_bytes) : param_bytes;
    const std::string& o = in.optimizer;
    if (o == "sgd") return sb;
    if (o == "lion") return sb;
    if (o == "adafactor") return 0.05 * sb;
    if (o == "muon") return k.muon_2d_fraction * sb + (1.0 - k.muon_2d_fraction) * 2.0 * sb;
    if (o == "adam8bit" || o == "adamw8bit" || o == "paged_adamw8bit") return 2.0;
    // torchao AdamW4bit: each state packs two 4-bit codes a byte plus one fp32 scale per 128-element block
    // (torchao/optim/subclass_4bit.py OptimState4bit.zeros; tensors under 4096 elements keep full states)
    if (o == "adam4bit" || o == "adamw4bit") return 2.0 * (0.5 + 4.0 / 128.0);
    // bitsandbytes 32-bit optimizers (the paged ones here) keep fp32 states for bf16 parameters
    // (Optimizer2State.init_state: optim_bits 32 -> torch.float32)
    if (in.optimizer_paged && (o == "adamw" || o == "adam")) return 8.0;
    return 2.0 * sb;  // adam, adamw and unknown (assumed Adam-like)
}

namespace {

struct state_rates {
    double p_full = 0, p_shard = 0, g_full = 0, g_shard = 0, m_full = 0, m_shard = 0, o_full = 0, o_shard = 0;
    bool grads_in_forward = false;
};

// est71: an optimizer built on parameters that parallelisation then replaced (optimizer.stale_params) finds no
// gradient on them: step() allocates no state (nor the foreach step buffer, a fraction of the states), and its
// zero_grad() reaches none of the live gradients, which stay from the first backward through every later forward
// (knowledge/sources/stale_optimizer_params.md)
void stale_optimizer(const estimate_input& in, state_rates& r) {
    if (!in.optimizer_stale) return;
    r.m_full = r.m_shard = r.o_full = r.o_shard = 0;
    r.grads_in_forward = true;
}

state_rates resolve_rates(const estimate_input& in) {
    state_rates r;
    const double pb = double(in.param_bytes);
    const bool mixed = pb < 4.0;
    const bool master = mixed && in.master_weights;
    const double S = optimizer_moment_bytes(in, pb, in.master_weights);
    switch (in.framework) {
        case train_framework::megatron:
            if (mixed && in.autocast_fp32_params) {  // cfg67: fp32 weights, fp32 main grads and states, no master copy
                r.p_full = 4.0;
                r.g_full = 4.0;
                (in.zero_stage >= 1 ? r.o_shard : r.o_full) = optimizer_moment_bytes(in, 4.0, false);
                r.grads_in_forward = true;
                break;
            }
            r.p_full = pb;
            r.g_full = master ? double(in.grad_reduce_bytes) : pb;  // main-grad buffer (fp32 unless reduced in bf16)
            if (in.zero_stage >= 1) {
                r.m_shard = master ? 4.0 : 0.0;
                r.o_shard = S;
            } else {
                r.m_full = master ? 4.0 : 0.0;
                r.o_full = S;
            }
            r.grads_in_forward = true;
            break;
        case train_framework::deepspeed: {
            // the master partition and its gradients: fp32, or bf16 with bf16_master_weights_and_grads (est32)
            const double mb = master ? double(in.master_bytes) : 0.0;
            r.grads_in_forward = true;
            if (in.zero_stage >= 3) {
                r.p_shard = pb;
                r.g_shard = master ? mb : pb;
            } else {
                r.p_full = pb;
                if (in.zero_stage == 2)
                    r.g_shard = pb + mb;
                else if (in.zero_stage == 1) {
                    r.g_full = pb;
                    r.g_shard = mb;
                } else
                    r.g_full = pb + mb;
            }
            if (in.zero_stage >= 1) {
                r.m_shard = mb;
                r.o_shard = S;
            } else {
                r.m_full = mb;
                r.o_full = S;
            }
            break;
        }
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
                    if (in.fsdp_zero2_shards) r.p_shard = p;  // est50: the shard the optimizer steps stays too
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
        // torch FSDP's CPU offload (FSDP1 CPUOffload(offload_params=True), FSDP2 CPUOffloadPolicy)
        // moves gradients too and steps the optimizer on CPU; DeepSpeed's offload_param does not
        if (fsdp_cpu_offload(in)) r.m_shard = r.o_shard = 0;
    }
    stale_optimizer(in, r);
    return r;
}

// Fine-tuning: trainable parameters in their own dtype (grads and optimizer states for them
// only); frozen weights stay in the load dtype, or 8/4-bit with their quantization constants.
state_rates trainable_rates(const estimate_input& in, double tb) {
    state_rates r;
    // torch optimizers keep moments in the parameter's dtype; DeepSpeed keeps fp32 master copies
    const bool ds_master = tb < 4.0 && in.master_weights && in.framework == train_framework::deepspeed;
    const double S = optimizer_moment_bytes(in, tb, ds_master);
    const bool shard_p = in.zero_stage >= 3, shard_g = in.zero_stage >= 2, shard_o = in.zero_stage >= 1;
    (shard_p ? r.p_shard : r.p_full) = tb;
    if (in.fsdp_zero2_shards) r.p_shard = tb;  // est50: torch FSDP ZeRO-2 keeps the shard beside the unsharded copy
    (shard_g ? r.g_shard : r.g_full) = tb;
    (shard_o ? r.o_shard : r.o_full) = S;
    if (ds_master) (shard_o ? r.m_shard : r.m_full) = double(in.master_bytes);
    r.grads_in_forward = in.framework == train_framework::megatron || in.framework == train_framework::deepspeed;
    if (in.optimizer_offload) r.m_full = r.m_shard = r.o_full = r.o_shard = 0;
    // parameters offloaded with ZeRO-3 / FSDP: the sharded adapters live on CPU; torch FSDP also
    // their gradients and optimizer states (the step runs on CPU)
    if (in.params_offload && in.zero_stage >= 3) {
        r.p_shard = 0;
        if (fsdp_cpu_offload(in)) r.g_shard = r.m_shard = r.o_shard = 0;
    }
    stale_optimizer(in, r);
    return r;
}

// Bytes per parameter of a frozen linear weight.
double frozen_linear_bytes(const finetune_spec& ft) {
    // GPTQ / AWQ: packed int4 (or int8) + an fp16 scale and a packed zero point per group of 128
    if (ft.group_quant && (ft.base_bits == 4 || ft.base_bits == 8)) return ft.base_bits / 8.0 + (2.0 + ft.base_bits / 8.0) / 128.0;
    switch (ft.base_bits) {
        case 4:  // packed 4-bit + absmax per 64 (fp32, or 8-bit with an fp32 per 256 blocks)
            return 0.5 + (ft.double_quant ? 1.0 / 64.0 + 4.0 / (64.0 * 256.0) : 4.0 / 64.0);
        case 8:  // int8 + one fp32 scale per row (negligible)
            return 1.0;
        default: return double(ft.load_bytes);
    }
}

// est70: bytes a packed 4-bit weight gains per parameter when a cast of the whole model to fp32 reaches it
// (accelerate's FSDP2 upcast before 1.13: Module.to converts floating-point parameters only). Packed into a
// 16-bit storage dtype, the 0.5 B a parameter become fp32 elements, twice the bytes (the values survive the
// bf16 -> fp32 -> bf16 round trip of the all-gather's param_dtype, so the job still trains); uint8 storage and
// LLM.int8 weights are not floating point and stay as they are.
double upcast_packed_extra_bytes(const finetune_spec& ft) {
    if (ft.base_bits != 4 || ft.group_quant || ft.quant_storage_bytes < 2) return 0.0;
    return 0.5 * (4.0 / ft.quant_storage_bytes - 1.0);
}

// liger's fused linear cross-entropy over `bt` tokens (Liger-Kernel ops/fused_linear_cross_entropy.py):
// chunks of next_pow2(ceil(bt / ceil(V / h))) rows, so one chunk's logits (compute dtype, the
// gradient written in place) hold about bt x h elements; plus the input gradient it computes in
// forward (bt x h) and the fp32 per-token loss. The head's weight gradient is counted with the
// gradients.
double liger_loss_bytes(double bt, double V, double h, double pb) {
    if (bt < 1 || h < 1) return 0;
    const double inc = std::ceil(V / h);
    double rows = 1;
    while (rows < std::ceil(bt / inc)) rows *= 2;
    rows = std::min(rows, std::ceil(bt));
    return rows * V * pb + bt * h * pb + bt * 4.0;
}

// Layers of pipeline rank `rank` (p ranks, v stages each). torchtitan's generate_split_points
// (9dec370 pipelining_utils.py; later pipeline_module_split) gives the first stage the base
// share, the middle stages one extra while extras remain, the last stage the rest; rank r holds
// stages r, r + p, ... Other frameworks: the first L mod p ranks take one more.
std::int64_t rank_layers(const estimate_input& in, std::int64_t L, std::int64_t p, std::int64_t v, std::int64_t rank) {
    if (in.framework != train_framework::torchtitan || p * v > L) return L / p + (rank < L % p ? 1 : 0);
    const std::int64_t S = p * v, base = L / S;
    std::int64_t extra = L % S, n = 0, used = 0;
    for (std::int64_t i = 0; i < S; ++i) {
        std::int64_t li = base;
        if (i == S - 1)
            li = L - used;
        else if (i > 0 && extra > 0) {
            ++li;
            --extra;
        }
        used += li;
        if (i % p == rank) n += li;
    }
    return n;
}

}  // namespace

// torchtune's chunked output (a list of per-chunk projections) with a trained head (tied or not):
// each chunk's backward makes a full head-weight gradient that autograd adds into the one kept
// from earlier chunks (InputBuffer accumulation), while the bf16 logit gradients of the chunks
// not yet projected back are alive. Peak over the chunks, above the (2 + 2/n) B per element
// already counted: the first chunk 2 B x NV + G, later ones (2 - 2/n) B x NV + 2 G.
double chunked_head_grad_bytes(double nv, double head_grad, double n) {
    n = std::max(1.0, n);
    const double base = (2.0 + 2.0 / n) * nv;
    return std::max(0.0, std::max(2.0 * nv + head_grad, (2.0 - 2.0 / n) * nv + 2.0 * head_grad) - base);
}

// Share of the trainable elements whose optimizer states a bitsandbytes paged optimizer puts in
// CUDA managed memory: Optimizer8bit.get_state_buffer pages a state only when its parameter has at
// least 1e5 elements (smaller ones are torch.zeros_like on the device): norms stay, weight matrices
// (and their FSDP shards) page; LoRA matrices are r x in and out x r each.
double paged_state_share(const estimate_input& in, double params_rank, double small_params) {
    constexpr double kPagedMinElements = 1e5;
    if (!in.optimizer_paged) return 0.0;
    if (in.ft.kind != finetune_kind::lora) return params_rank > 0 ? std::clamp(1.0 - small_params / params_rank, 0.0, 1.0) : 0.0;
    const double r = double(std::max<std::int64_t>(1, in.ft.lora_rank));
    dense_module mods[8];
    const int n = dense_modules(in.model, mods);
    double all = 0, big = 0;
    for (int i = 0; i < n; ++i) {
        if (!(in.ft.targets & mods[i].bit)) continue;
        for (double e : {r * mods[i].in, r * mods[i].out}) {
            all += e;
            if (e >= kPagedMinElements) big += e;
        }
    }
    return all > 0 ? big / all : 0.0;
}

double compute(const estimate_input& in, breakdown& out) {
    const estimator_constants& k = estimator_k();
    const estimate_model& m = in.model;
    const finetune_spec& ft = in.ft;
    const std::int64_t p = std::max<std::int64_t>(1, in.pp);
    const std::int64_t v = in.schedule == pp_schedule_kind::interleaved ? std::max<std::int64_t>(1, in.vpp) : 1;
    const double t = double(std::max<std::int64_t>(1, in.tp));
    const double c = double(std::max<std::int64_t>(1, in.cp));
    const double ep = double(std::max<std::int64_t>(1, in.ep)), etp = double(std::max<std::int64_t>(1, in.etp));
    const double h = double(m.hidden), V = double(m.vocab);
    // est26: a sequence classifier computes no vocabulary-sized logits (its head is the pooled classifier)
    const double V_out = m.seq_classifier ? 0.0 : V;
    const double a_heads_dim = double(m.heads) * double(std::max<std::int64_t>(1, m.head_dim));
    const double pb = double(in.param_bytes);
    const bool finetune = ft.kind != finetune_kind::full;
    const bool lora = ft.kind == finetune_kind::lora;
    const bool float8 = in.lowp == lowp_kind::float8_tensorwise || in.lowp == lowp_kind::float8_rowwise;
    const bool fp8_ag = fp8_all_gather_applies(in);

    double shard_n = 1;
    const double dp_total = std::max(1.0, double(in.dp_shard) * double(std::max<std::int64_t>(1, in.dp_replicate)));
    if (in.framework == train_framework::torchtitan || in.framework == train_framework::generic ||
        in.framework == train_framework::torchtune)
        shard_n = double(std::max<std::int64_t>(1, in.dp_shard)) * c;
    else
        shard_n = std::max(1.0, dp_total * c / double(std::max<std::int64_t>(1, in.dist_opt_instances)));
    const double expert_shard_n = std::max(1.0, shard_n * t / (ep * etp));
    out.shard_n = shard_n;
    out.expert_shard_n = expert_shard_n;

    const state_rates rates = resolve_rates(in);
    const state_rates trates = trainable_rates(in, double(in.ft.trainable_bytes));
    // est54: PEFT modules_to_save copies of the embedding / head, in their own dtype
    const state_rates srates = trainable_rates(in, double(in.ft.saved_copy_bytes));
    out.state_bytes_per_param = rates.p_full + rates.g_full + rates.m_full + rates.o_full +
                                (rates.p_shard + rates.g_shard + rates.m_shard + rates.o_shard) / shard_n;

    const layer_params dl = dense_layer_params(m), ml = moe_layer_params(m);
    const std::int64_t first_trainable = ft.kind == finetune_kind::freeze
                                             ? std::max<std::int64_t>(0, m.layers - std::max<std::int64_t>(1, ft.trainable_layers))
                                             : 0;
    const layer_act dact = layer_activation(in, false);
    const layer_act mact = m.experts > 0 ? layer_activation(in, true) : dact;
    // freeze tuning: layers below the trainable ones keep only the checkpointed inputs (the
    // embedding output requires grad under gradient checkpointing), or nothing without AC
    layer_act frozen_act;
    if (ft.kind == finetune_kind::freeze) {
        frozen_act = layer_activation(in, false, false);
        if (in.ac == ac_kind::none) frozen_act.saved = 0;
    }
    // NVFP4 mixed recipe: the last layers stay bf16
    const layer_act tail_act = in.lowp == lowp_kind::nvfp4 && in.lowp_bf16_tail > 0 ? layer_activation(in, false, true, false) : dact;
    const std::int64_t first_tail = m.layers - std::max<std::int64_t>(0, in.lowp_bf16_tail);

    // pipeline micro-batch: the high end takes the older framework default when it was assumed
    std::int64_t mbsz = std::max<std::int64_t>(1, in.micro_batch), nmb = std::max<std::int64_t>(1, in.num_microbatches);
    if (in.variant > 0 && in.pp > 1 && in.pp_alt_micro_batch > mbsz) {
        nmb = std::max<std::int64_t>(1, mbsz * nmb / in.pp_alt_micro_batch);
        mbsz = in.pp_alt_micro_batch;
    }
    // est45: pairwise preference losses run the policy over chosen + rejected: 2 sequences per sample
    const double tokens = double(mbsz) * double(std::max(1, in.policy_seqs_per_sample)) *
                          double(std::max<std::int64_t>(1, in.seq_len)) / c;
    out.tokens = tokens;
    const moe_dispatch_bytes moe_disp = moe_dispatch_temporaries(in, tokens);
    const double mb = double(nmb);

    // with its parameters offloaded to the host, even one rank runs FSDP's unit by unit gathers (each unit
    // copied to the device for its forward and backward), so the working set exists at any shard count
    // est74: DeepSpeed's stage 3 partitions and gathers at any world size: one rank keeps its whole partition and
    // all-gathers each module into a separate buffer (partition_parameters.py all_gather_coalesced), and its
    // optimizer keeps the reduce bucket (stage3.py), so one GPU under ZeRO-3 runs the same working set
    const bool fsdp = in.zero_stage >= 3 && (shard_n > 1 || in.params_offload || in.framework == train_framework::deepspeed);
    const bool fsdp2 = fsdp && in.framework != train_framework::deepspeed && in.framework != train_framework::megatron;

    // loss-phase bytes per token x vocab element and what the allocator strands before them
    const bool vocab_parallel = in.tp > 1 && (in.loss_parallel || in.framework == train_framework::megatron);
    double bpe = k.logits_bytes_unfused, strand_bpe = 0;
    // chunked loss: torchtune's CEWithChunkedOutputLoss keeps every chunk's bf16 logits; torchtitan's
    // ChunkedLossWrapper and liger's fused linear cross-entropy project inside the loss, chunk by chunk
    const bool fused_chunks = in.framework == train_framework::torchtitan || in.hf_model;
    const bool fp32_resid = fp32_residual_stream(in);
    // torchtune (since #1390, 2024-08-28) compiles CEWithChunkedOutputLoss.compute_cross_entropy when
    // compile is on: the upcast is fused into the kernel, which keeps the bf16 chunk and a per-row
    // log-sum-exp and writes one bf16 chunk gradient (knowledge/estimator.yaml)
    const bool tt_compiled_chunks = in.framework == train_framework::torchtune && in.chunked_loss && in.compile && !in.hf_model;
    // est55: eager (compile off), each chunk's F.cross_entropy(logits.float()) leaves its fp32 log-probs saved
    // for backward, so every chunk's are held at the end of the loss beside the bf16 chunks
    const bool tt_eager_chunks = in.framework == train_framework::torchtune && in.chunked_loss && !in.compile && !in.hf_model;
    // liger's fused linear cross-entropy (HF Trainer / LLaMA-Factory use_liger_kernel) sizes its
    // chunks so that one chunk's logits hold about BT x H elements: no term per vocab element
    const bool liger = in.chunked_loss && in.hf_model;
    if (liger)
        bpe = 0;
    else if (in.chunked_loss)
        bpe = fused_chunks         ? k.logits_bytes_fused
              : tt_compiled_chunks ? k.logits_bytes_chunked_compiled
              : tt_eager_chunks    ? (in.chunked_loss_projects ? k.logits_bytes_linear_ce_eager : k.logits_bytes_chunked_eager)
                                   : k.logits_bytes_chunked;
    else if (in.framework == train_framework::megatron)
        // the native fused cross-entropy runs its in-place steps through torch.compile: one more fp32 copy
        // (builds dated before the in-place shift keep a second fp32 copy; unknown date: today's path)
        bpe = in.ce_fusion != 1 ? (!in.npu && build_side(in, date_megatron_inplace_ce) < 0 ? k.logits_bytes_megatron_outofplace
                                                                                          : k.logits_bytes_megatron)
              : in.variant > 0  ? k.logits_bytes_megatron_fused_high
                                : k.logits_bytes_megatron_fused;
    else if (in.compile && in.compile_loss && in.framework == train_framework::torchtitan &&
             build_behaves(in, date_compiled_loss, false, true)) {
        // torchtitan compiles the loss with the model since 2025-04 (bbb1b616; not in earlier builds):
        // one fused kernel keeps the bf16 logits and a per-row log-sum-exp
        bpe = k.logits_bytes_compiled;
    } else {
        // bf16 logits are freed once the fp32 copy exists; the fp32 buffers cannot reuse them
        strand_bpe = 2.0;
        // transformers 4.46-4.48: the model keeps its bf16 logits while the loss function makes the
        // fp32 and the shifted fp32 copies (knowledge/estimator.yaml logits_bytes_hf_loss_fn)
        if (in.fused_logprob_loss && !vocab_parallel) {
            // verl's log-probs from the 16-bit logits: no fp32 copy; the entropy, when the update takes it, adds
            // its softmax and product buffers and keeps the gradient out of place (knowledge/estimator.yaml)
            const bool entropy = in.rl_entropy > 0 || (in.rl_entropy < 0 && in.variant > 0);
            bpe = entropy ? k.logits_bytes_rl_logprob_entropy : k.logits_bytes_rl_logprob;
            strand_bpe = 0.0;
        } else if (in.loss_in_model_dtype && !vocab_parallel) {
            // the script's own CE on the model's bf16 logits (est30): logits, the shifted reshape copy and the
            // bf16 log-softmax in forward; its gradient and the slice's padded gradient in backward
            bpe = in.caller_keeps_logits ? k.logits_bytes_model_dtype_ce_held : k.logits_bytes_model_dtype_ce;
            strand_bpe = 0.0;
        } else if (in.hf_model && !vocab_parallel && (in.hf_loss_keeps_logits > 0 || (in.hf_loss_keeps_logits < 0 && in.variant > 0))) {
            bpe = k.logits_bytes_hf_loss_fn;
            strand_bpe = 0.0;
        }
        if (vocab_parallel) bpe = in.variant < 0 ? k.logits_bytes_unfused : in.variant > 0 ? k.logits_bytes_loss_parallel_high
                                                                                             : k.logits_bytes_loss_parallel;
        // torchtune recipes before `del logits` keep their shifted fp32 logits referenced through
        // loss.backward(), beside the log-softmax and its two gradients (knowledge/estimator.yaml)
        else if (torchtune_keeps_logits(in))
            bpe = k.logits_bytes_torchtune_kept;
    }
    out.logits_bpe = bpe;
    // one micro-batch's whole logits on this rank, as the output projection writes it (none when chunked)
    out.logits_tensor_elements = in.chunked_loss ? 0.0 : tokens * V_out / (vocab_parallel ? double(in.tp) : 1.0);

    out.stages.resize(std::size_t(p));
    const bool tt = in.framework == train_framework::torchtitan;
    // torch.distributed.pipelining (torchtitan) keeps every micro-batch's last-stage output
    // (output_chunks, merged at the end of step()) until torchtitan passes return_outputs=False
    const bool pp_keeps_outputs = tt && p > 1 && build_behaves(in, date_pp_drops_outputs, true, true);
    std::int64_t first = 0;
    out.worst = 0;
    out.peak = 0;
    out.trainable = 0;
    double worst_reserved = 0;
    for (std::int64_t s = 0; s < p; ++s) {
        stage_figures& st = out.stages[std::size_t(s)];
        st = stage_figures{};
        st.stage = int(s);
        const std::int64_t n = rank_layers(in, m.layers, p, v, s);
        st.layers = n;
        double tp_sh = 0, rep = 0, routed = 0, max_layer = 0, lin = 0, max_lin = 0, adapters = 0, train_layer_params = 0;
        std::int64_t frozen_layers = 0, tail_layers = 0;
        for (std::int64_t i = first; i < first + n; ++i) {
            const bool moe = is_moe_layer(m, i);
            const layer_params& lp = moe ? ml : dl;
            if (moe) ++st.moe_layers;
            tp_sh += lp.tp_sharded;
            rep += lp.replicated;
            routed += lp.routed;
            max_layer = std::max(max_layer, lp.tp_sharded / t + lp.replicated + lp.routed / (ep * etp));
            lin += (lp.tp_sharded / t + lp.routed / (ep * etp));
            max_lin = std::max(max_lin, largest_linear(m, moe) / t);
            if (lora) adapters += adapter_params(in, moe) / t;
            if (ft.kind == finetune_kind::freeze) {
                if (i >= first_trainable)
                    train_layer_params += lp.tp_sharded / t + lp.replicated + lp.routed / (ep * etp);
                else
                    ++frozen_layers;
            }
            if (i >= first_tail && in.lowp == lowp_kind::nvfp4) ++tail_layers;
        }
        first += n;
        const bool last = s == p - 1;
        double embed_rank = 0, output_rank = 0;
        if (s == 0) embed_rank = V * h / t;
        // a vision tower trained with the model (full fine-tuning, freeze_vision_tower: false) sits on
        // the first stage, unsplit by TP, and trains like the language model's own weights
        if (s == 0 && m.vision_trainable && !finetune) rep += double(m.vision_params);
        if (last) {
            if ((!m.tied || p > 1) && !m.seq_classifier) output_rank = V * h / t;
            // LitGPT's QLoRA quantizes the head as well (Lightning's BitsandbytesPrecision replaces every
            // nn.Linear; LitGPT passes no ignore_modules): NF4 weight, and its dequantized copy is the
            // largest frozen linear's temporary (each chunk's forward and backward dequantize it)
            if (ft.quant_head && output_rank > 0) {
                lin += output_rank;
                max_lin = std::max(max_lin, output_rank);
            }
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
        double params_whole = 0;  // every parameter of the stage unsharded, as stored (est56: FSDP1 over a device model)
        if (!finetune) {
            st.params = bytes_of(rates.p_full, rates.p_shard);
            params_whole = (rates.p_full + rates.p_shard) * st.params_rank;
            // est33: Megatron --fp8-param-gather keeps the linear weights as TE FP8 tensors (1 B; the
            // distributed optimizer's fp32 main copy and the main-grad buffer are unchanged)
            if (in.framework == train_framework::megatron && !in.npu && float8 && in.fp8_all_gather && rates.p_shard == 0.0)
                st.params -= lin * std::max(0.0, rates.p_full - 1.0);
            // est62: torch FSDP ZeRO-2 (FSDP2 reshard_after_forward=False) with torchao's float8 all-gather keeps each
            // converted linear unsharded as the all-gathered fp8 data (torchao float8/fsdp_utils.py fsdp_post_all_gather:
            // a Float8Tensor over the uint8 all-gather output), 1 B/param; the bf16 shard the optimizer steps stays
            if (in.fsdp_zero2_shards && fp8_ag) st.params -= lin * std::max(0.0, rates.p_full - 1.0);
            st.grads = bytes_of(rates.g_full, rates.g_shard);
            st.grads_unsharded = (rates.g_full + rates.g_shard) * (dense_rank + expert_rank);
            st.master = bytes_of(rates.m_full, rates.m_shard);
            st.optimizer = bytes_of(rates.o_full, rates.o_shard);
            st.expert_state = expert_bytes(rates.p_full + rates.g_full + rates.m_full + rates.o_full,
                                           rates.p_shard + rates.g_shard + rates.m_shard + rates.o_shard);
            st.trainable_rank = st.params_rank;
            // est52: BAdam / GaLore / APOLLO / LISA change who keeps gradients and states, and their size
            if (in.me.kind != me_kind::none) {
                me_stage ms;
                ms.layers = double(n);
                ms.layer_params = dl.tp_sharded / t + dl.replicated;
                ms.layer_linear = linear_params(m, false) / t;
                ms.params_rank = st.params_rank;
                ms.embed_head = embed_rank + output_rank;
                ms.largest_linear = largest_linear(m, false) / t;
                ms.g_rate = rates.g_full + rates.g_shard / shard_n;
                ms.m_rate = rates.m_full + rates.m_shard / shard_n;
                ms.o_rate = rates.o_full + rates.o_shard / shard_n;
                ms.o_rate_fp32 = in.optimizer_offload ? 0.0 : optimizer_moment_bytes(in, 4.0, true);
                const me_states ms_out = memory_efficient_states(in, ms);
                st.grads = ms_out.grads;
                st.master = ms_out.master;
                st.optimizer = ms_out.optimizer;
                st.trainable_rank = ms_out.trainable;
                st.params -= ms_out.params_saved;
            }
        } else {
            // frozen weights: linear weights at the base precision, the rest in the load dtype
            const double trainable = lora ? adapters : train_layer_params;
            // est41: accelerate's FSDP2 before 1.13 stores the frozen 16-bit weights as fp32 shards
            const bool fsdp2_upcast = in.accelerate_fsdp2_mp && build_behaves(in, date_accelerate_fsdp2_trainable_upcast, true, true);
            const double store = fsdp2_upcast ? 4.0 : double(ft.load_bytes);
            const double rest_store = lora && fp32_frozen_rest(in) ? 4.0 : store;  // est43
            const double qbytes = frozen_linear_bytes(ft) + (fsdp2_upcast ? upcast_packed_extra_bytes(ft) : 0.0);  // est70
            const double fbytes = lora ? lin * (ft.base_bits >= 16 ? store : qbytes) + std::max(0.0, st.params_rank - lin) * rest_store
                                       : std::max(0.0, st.params_rank - train_layer_params) * store;
            // bitsandbytes keeps a 4-bit weight's quantization constants (absmax, nested absmax, code)
            // in a QuantState attribute of the Params4bit and of its Linear4bit (bitsandbytes 0.43
            // nn/modules.py, fix_4bit_weight_quant_state_from_module), not in a parameter: FSDP and
            // ZeRO-3 shard and offload parameters only, so every rank keeps the whole model's constants
            const double bnb_consts =
                lora && ft.base_bits == 4 && ft.quant_keeps_input && !ft.group_quant ? lin * (frozen_linear_bytes(ft) - 0.5) : 0.0;
            st.frozen = in.zero_stage >= 3 ? (fbytes - bnb_consts) / shard_n + bnb_consts : fbytes;
            if (in.params_offload && in.zero_stage >= 3) st.frozen = bnb_consts;  // sharded weights on CPU
            auto tbytes = [&](double full, double shard) { return (full + shard / shard_n) * trainable; };
            st.params = st.frozen + tbytes(trates.p_full, trates.p_shard);
            params_whole = fbytes + (trates.p_full + trates.p_shard) * trainable;
            // est68: FSDP1 units mixing frozen weights and adapters grow gradients for the whole unit (the decoder
            // layers; the root unit of embedding and head holds no adapter)
            const double grad_elems =
                lora && in.fsdp1_mixed_units ? std::max(trainable, st.params_rank - embed_rank - output_rank + trainable) : trainable;
            st.grads = (trates.g_full + trates.g_shard / shard_n) * grad_elems;
            st.grads_unsharded = (trates.g_full + trates.g_shard) * grad_elems;
            st.master = tbytes(trates.m_full, trates.m_shard);
            st.optimizer = tbytes(trates.o_full, trates.o_shard);
            st.trainable_rank = trainable;
            // est54: modules_to_save: the frozen original stays in `frozen` above; the trainable copy adds its
            // weight, gradient and optimizer states (peft/utils/other.py ModulesToSaveWrapper: copy.deepcopy)
            // est58: PEFT wraps each listed module on its own, so a tied head listed beside (or without) the embedding
            // gets a copy of its own (peft PR #2803, 2025-09: the opt-in ensure_weight_tying keeps them shared)
            const double head_copy = last && !m.seq_classifier ? V * h / t : 0.0;
            const double saved = lora ? (ft.save_embed ? embed_rank : 0.0) + (ft.save_head ? head_copy : 0.0) : 0.0;
            if (saved > 0) {
                auto sbytes = [&](double full, double shard) { return (full + shard / shard_n) * saved; };
                st.params += sbytes(srates.p_full, srates.p_shard);
                params_whole += (srates.p_full + srates.p_shard) * saved;
                st.grads += sbytes(srates.g_full, srates.g_shard);
                st.master += sbytes(srates.m_full, srates.m_shard);
                st.optimizer += sbytes(srates.o_full, srates.o_shard);
                st.trainable_rank += saved;
            }
        }
        // a frozen vision tower: its weights in the load dtype on the first stage, sharded like the
        // other frozen weights under FSDP / ZeRO-3 (on the host when ZeRO-3 offloads parameters)
        if (s == 0 && m.vision_params > 0 && !(m.vision_trainable && !finetune)) {
            const double vb = double(m.vision_params) * double(m.vision_bytes);
            st.vision = in.zero_stage >= 3 ? (in.params_offload ? 0.0 : vb / shard_n) : vb;
            st.frozen += st.vision;
            st.params += st.vision;
            params_whole += vb;
        }
        // est44: DPO / KTO keep a frozen reference copy in its load dtype. TRL (huggingface/trl@f2cd5771
        // trl/models/utils.py prepare_deepspeed) and LLaMA-Factory (hiyouga/LLaMA-Factory@ff6d4d12
        // train/dpo/trainer.py) prepare it with the policy's engine: sharded under ZeRO-3 / FSDP (and
        // offloaded with ZeRO-3's parameter offload), whole on every rank otherwise (ZeRO-1/2 set to stage 0)
        st.reference = 0;
        st.ref_logits = 0;
        if (in.reference_bytes > 0) {
            const double vis = s == 0 && m.vision_params > 0 && !(m.vision_trainable && !finetune) ? double(m.vision_params) : 0.0;
            const double dense = std::max(0.0, st.params_rank - expert_rank) + vis;
            const double rb = double(in.reference_bytes);
            // est45: OpenRLHF's --ref_offload keeps the reference's ZeRO-3 partitions on the host
            st.reference = in.zero_stage >= 3 ? (in.params_offload || in.reference_offload ? 0.0 : rb * (dense / shard_n + expert_rank / expert_shard_n))
                                              : rb * (dense + expert_rank);
        }
        out.trainable += st.trainable_rank * t;
        // bitsandbytes paged optimizers: the large states live in managed memory, which the caching
        // allocator does not count (allocated / reserved) and the driver evicts to the host when the
        // device fills (bitsandbytes functional.get_paged, cget_managed_ptr)
        st.paged = st.optimizer * paged_state_share(in, finetune ? st.trainable_rank : st.params_rank, rep);
        st.optimizer -= st.paged;

        // in-flight layer x micro-batch activations
        double inflight_mb = 1;
        double layers_held = double(n);
        if (p > 1) {
            switch (in.schedule) {
                case pp_schedule_kind::gpipe: inflight_mb = mb; break;
                case pp_schedule_kind::interleaved: {
                    // Megatron's interleaved warmup (schedules.py get_pp_rank_microbatches): (p - s - 1) x 2 +
                    // (v - 1) x microbatch_group_size_per_vp_stage forwards, + 1; the group defaults to p (est62)
                    const double group = in.pp_mb_group > 0 ? double(in.pp_mb_group) : double(p);
                    const double chunks = std::min(double(2 * (p - 1 - s)) + double(v - 1) * group + 1.0, mb * double(v));
                    inflight_mb = 1;
                    layers_held = chunks * double(n) / double(v);
                    break;
                }
                default: inflight_mb = std::min(double(p - s), mb); break;
            }
        }
        st.inflight = inflight_mb * layers_held;
        const double nn = double(std::max<std::int64_t>(1, n));
        const double moe_frac = double(st.moe_layers) / nn;
        const double frozen_frac = double(frozen_layers) / nn, tail_frac = double(tail_layers) / nn;
        const double dense_frac = std::max(0.0, 1.0 - moe_frac - frozen_frac - tail_frac);
        const double saved_per_layer =
            dense_frac * dact.saved + moe_frac * mact.saved + frozen_frac * frozen_act.saved + tail_frac * tail_act.saved;
        const double working = std::max({dact.working, st.moe_layers > 0 ? mact.working : 0.0, tail_frac > 0 ? tail_act.working : 0.0});
        st.layer_transient = std::max(dact.transient, st.moe_layers > 0 ? mact.transient : 0.0) * tokens;
        const double layer_backward = std::max(dact.backward, st.moe_layers > 0 ? mact.backward : 0.0) * tokens;
        st.activations = st.inflight * saved_per_layer * tokens;
        if (in.activation_offload) st.activations = 2.0 * 2.0 * h / t * tokens;  // layers in transit
        if (in.framework == train_framework::megatron) st.activations *= k.megatron_activation_buffer;

        // low-precision weight copies kept from forward to backward (all layers of the stage):
        // torchtitan's own MXFP8 linear (since 01f0ffad1) keeps its quantized dgrad weight, torchao's
        // mx_mm before it saved only the bf16 input and the FSDP-managed weight; float8 may keep the
        // unsharded fp8 weight when compile saves it (torchao force_recompute_fp8_weight_in_bwd)
        const double converted_lin = lin * (1.0 - tail_frac);
        if (in.ac != ac_kind::full && fsdp) {
            if (in.lowp == lowp_kind::mxfp8 && build_behaves(in, date_mxfp8_saves_dgrad_weight, false, false))
                st.lowp_saved = converted_lin * (1.0 + 1.0 / 32.0);
            if (float8 && in.variant > 0 && in.fp8_force_recompute != 1) st.lowp_saved = converted_lin;
        }
        // est62: the flag stated off (torchao's default then) on a build before it became a no-op: compile saves the
        // unsharded fp8 weight transpose (torchao config.py's own comment, e91955800..03c850afa), under ZeRO-2 as under
        // ZeRO-3; lightning-thunder #1528 measured it: turning the flag on lowered the peak by the linears' fp8 size
        if (in.ac != ac_kind::full && (fsdp || in.fsdp_zero2_shards) && float8 && in.compile &&
            in.fp8_force_recompute == 0 && build_side(in, date_torchao_fp8_recompute_noop) < 0)
            st.lowp_saved = converted_lin;
        // est62: torchao's tensorwise Float8Linear saves its fp8 input cast for backward, not the bf16 input
        // (float8_linear.py at 4f8021f2a, 2024-12: manual_float8_matmul_with_args_in_float8 saves (input_fp8,
        // weight_fp8_t)); without AC the bf16 inputs nothing else keeps are freed: the q/k/v and gate/up inputs (norm
        // outputs) and the down projection's; the attention output stays (flash keeps it) and gains its fp8 copy. Net
        // (2h + f - a d) x 1 B less per token and layer. From 03c850afa (2025-06-13) the hp inputs are saved instead
        // (the point keeps bf16 there); undated builds: low end. lightning-thunder #997 / #1528 measure the effect
        const int ao_side = build_side(in, date_torchao_fp8_recompute_noop);
        if (in.lowp == lowp_kind::float8_tensorwise && in.ac == ac_kind::none && in.framework != train_framework::megatron &&
            (ao_side < 0 || (ao_side == 0 && in.variant < 0))) {
            const double per_token = 2.0 * h + (double(m.ffn) - double(m.heads) * double(std::max<std::int64_t>(1, m.head_dim))) / t;
            st.activations -= std::max(0.0, st.inflight * tokens * per_token * (1.0 - tail_frac));
        }
        st.activations += st.lowp_saved;
        // est62: Megatron --defer-embedding-wgrad-compute: the output layer keeps its input (forward) and the incoming
        // logits gradient (backward) of the first wgrad_deferral_limit micro-batches (0: all) and computes their weight
        // gradients only after the last backward (tensor_parallel/layers.py embedding_activation_buffer /
        // grad_output_buffer; schedules.py finish_embedding_wgrad_compute); the current micro-batch's are counted already
        if (last && in.framework == train_framework::megatron && in.defer_embedding_wgrad && V_out > 0) {
            const double limit = in.wgrad_deferral_limit > 0 ? double(in.wgrad_deferral_limit) : mb;
            const double held = std::max(0.0, std::min(limit, mb - 1.0));
            const double in_tokens = in.sequence_parallel && t > 1 ? tokens / t : tokens;
            st.activations += held * (in_tokens * h + tokens * V_out / t) * pb;
        }

        // logits and loss (last stage)
        if (last) {
            st.logits = tokens * V_out / (vocab_parallel ? t : 1.0) * bpe;
            // est44: the reference's no-grad forward runs after the policy's, before its backward, over the
            // policy's batch: its logits in the load dtype (TRL _compute_loss, LLaMA-Factory get_batch_loss_metrics).
            // est45: for the pairwise losses that batch is the policy's own (`tokens`, chosen + rejected). KTO's
            // reference runs over the micro-batch and its mismatched KL batch: LLaMA-Factory keeps the first's logits
            // through the second's forward (train/kto/trainer.py concatenated_forward), so 2 x the micro-batch as
            // est44 counted it; TRL's KTOTrainer frees the KL logits first (1 x, counted high there)
            // est48: with no copy (LoRA) the same forward runs on the policy's model: reference_logit_bytes
            if (const int ref_lb = in.reference_logit_width(); ref_lb > 0)
                st.ref_logits = in.reference_forward_seqs() * tokens * V_out / (vocab_parallel ? t : 1.0) * double(ref_lb);
            st.logits += tokens * (fp32_resid ? 4.0 : 2.0 * fp32_compute_act_scale(in)) * h;  // final-norm output feeding the output projection
            if (liger) {
                st.logits += liger_loss_bytes(tokens, V, h, pb);
                // a trained head: the forward also allocates the head's weight gradient (zeros_like
                // the weight as the forward sees it: the unsharded compute-dtype copy under FSDP,
                // the stored parameter otherwise) and keeps it for backward
                if (!finetune) st.logits += output_rank * (fsdp ? pb : std::max(rates.p_full, pb));
            }
            else if (in.chunked_loss && fused_chunks) st.logits += tokens * 4.0 * h;  // fp32 hidden-gradient accumulator
            else if (tt_compiled_chunks && !finetune)
                st.logits += chunked_head_grad_bytes(tokens * V_out / (vocab_parallel ? t : 1.0), V * h / t * pb, k.torchtune_loss_chunks);
            st.stranded_loss = tokens * V_out / (vocab_parallel ? t : 1.0) * strand_bpe;
            if (pp_keeps_outputs) {
                // every micro-batch's logits (compute dtype) stay referenced until the step ends, so
                // the current one is live rather than stranded in the cache
                st.pp_outputs = mb * tokens * V_out / (vocab_parallel ? t : 1.0) * pb;
                st.logits += st.pp_outputs;
                st.stranded_loss = 0;
            }
        }

        // temporaries
        const bool quant_base = lora && ft.base_bits < 16;
        // FSDP all-gathers frozen quantized weights packed; float8 all-gather moves 1 B/param
        double gather_bytes = pb;
        if (quant_base) gather_bytes = frozen_linear_bytes(ft);
        const double lin_frac = max_layer > 0 ? std::min(1.0, (lin / std::max<double>(1.0, double(n))) / max_layer) : 0.0;
        if (fp8_ag) gather_bytes = lin_frac * 1.0 + (1.0 - lin_frac) * pb;
        const double layer_unsharded = max_layer * gather_bytes;
        double fwd = k.workspace_bytes, bwd = k.workspace_bytes, step = 0, loss = k.workspace_bytes;
        double step_eob = 0;  // end-of-backward buffers reported with the step phase (gone before the optimizer runs)
        double wrap_load = 0;  // est56: FSDP1 wrapping a model already on the device (allocated at that moment)
        double eob_flat = 0;  // the largest of them, one allocation (allocator model below)
        if (fsdp2) {
            fwd += 2.0 * layer_unsharded;                 // current + prefetched unit, all-gathered
            if (in.params_offload) {
                // est67: the unit's shard copied host-to-device in the dtype it is stored in, and its cast to the
                // all-gather dtype when they differ (fp32 shards under mixed precision; fsdp_offload_staging.h)
                double stored = gather_bytes;
                if (!finetune)
                    stored = pb < 4.0 && in.master_weights ? 4.0 : pb;
                else if (!quant_base)
                    stored = in.accelerate_fsdp2_mp && build_behaves(in, date_accelerate_fsdp2_trainable_upcast, true, true)
                                 ? 4.0
                                 : double(ft.load_bytes);
                const double staged = fsdp_offload_staging_bytes(max_layer, shard_n, stored, gather_bytes);
                fwd += staged;
                bwd += staged;
            }
            bwd += 2.0 * layer_unsharded;
            if (!finetune)
                bwd += max_layer * (pb + 4.0);            // unsharded grads and fp32 reduce-scatter input
            else
                bwd += (lora ? adapter_params(in, false) / t : max_layer) * (ft.trainable_bytes + 4.0);
            const double root_bytes = finetune ? double(ft.load_bytes) : pb;
            if (in.fsdp1) {
                // FSDP1's root unit (embedding, final norm, head: everything outside the wrapped
                // layers) is not resharded after forward (torch fsdp/_runtime_utils.py
                // _post_forward_reshard: `not state._is_root`), so it stays unsharded from the first
                // forward op to its post-backward hook. Its gradients wait for the whole unit: the
                // head's from the start of backward, the embedding's at the end, when autograd
                // assembles the flat gradient from the views (a copy) before the reduce-scatter
                const double root = embed_rank + output_rank + (last ? h : 0.0);
                // FSDP1 all-gathers into padded unsharded flat parameters allocated under its unshard
                // stream (_runtime_utils.py _unshard: `with stream(unshard_stream): handle.unshard()`,
                // _flat_param.py _alloc_padded_unsharded_flat_param) and frees them there after
                // record_stream; the caching allocator keeps one pool per stream, so those blocks serve
                // only later all-gathers. After the last layer's forward the current and the
                // prefetched unit are free in that pool (the root stays unsharded): the loss buffers,
                // allocated on the default stream, cannot reuse them
                st.unshard_pool = 2.0 * layer_unsharded;
                // with CPU offload FlatParamHandle.pre_unshard first copies the shard to the device
                // (flat_param_to, under _unshard's pre-unshard stream) and reshard drops it: a third
                // pool, holding the current and the prefetched unit's shard copies
                if (in.params_offload) st.unshard_pool += 2.0 * layer_unsharded / shard_n;
                // floor under reserved: FSDP1 moves each unit to the device, flattens it (a copy) and clones
                // its shard (fsdp/_init_utils.py _init_param_handle_from_module, _flat_param.py), the root
                // last, beside every other shard; its parameters and flat copy stay cached on the default
                // stream. Training reuses them except from the unshard stream (root, two layer units) and
                // from the small-block pool (<= 1 MiB): the adapters' grads, AdamW states and foreach
                // temporary when every adapter matrix is its own unit (PEFT's fsdp_auto_wrap_policy, which
                // HF Trainer installs for LoRA; fsdp_qlora's policy) and its shard is that small
                const double root_unsharded = root * root_bytes;
                const double unit = std::max(root_unsharded, layer_unsharded);
                double small_pool = 0;
                if (lora && largest_adapter_matrix(in) / t * double(ft.trainable_bytes) / shard_n <= kSmallBlock) {
                    const bool foreach = in.optimizer_foreach > 0 || (in.optimizer_foreach < 0 && in.variant > 0);
                    small_pool = st.grads + st.optimizer * (foreach ? 1.5 : 1.0);
                }
                st.fsdp1_floor = st.params + 2.0 * unit + (in.params_offload ? unit / shard_n : 0.0) + root_unsharded +
                                 st.unshard_pool + small_pool;
                // est56: a model already whole on the device. FSDP1 flattens each unit (torch.cat, a new block), frees
                // the originals into the cache as per-parameter blocks and clones its shard (_flat_param.py shard():
                // _get_shard's chunk clone, then the flat storage resized to 0). The originals' blocks stay cached;
                // a layer's shard is a new block when it is larger than the largest weight freed before it, and
                // the root's flat copy is larger than any cached block: all of it is reserved before the first step
                if (in.fsdp1_device_load) {
                    const double layer_shard = layer_unsharded / shard_n;
                    const double new_shards = layer_shard > max_lin * gather_bytes ? double(n) * layer_shard : 0.0;
                    st.fsdp1_floor = std::max(st.fsdp1_floor, params_whole + new_shards + root_unsharded + layer_unsharded +
                                                                  st.unshard_pool + small_pool);
                    // allocated: the whole model beside the first unit's flat copy and shard
                    wrap_load = params_whole + layer_unsharded + layer_shard;
                }
                fwd += root * root_bytes;
                loss += root * root_bytes;
                bwd += root * root_bytes;
                if (!finetune) {
                    bwd += output_rank * pb;
                    step_eob += root * root_bytes + 2.0 * root * pb;  // end of backward: unsharded root, its grads and the flat copy
                }
            } else if (in.fsdp1_root_live) {
                // est61: the same root, unsharded from the first forward op to its post-backward hook (LitGPT Fabric)
                const double root = embed_rank + output_rank + (last ? h : 0.0);
                fwd += root * root_bytes;
                loss += root * root_bytes;
                bwd += root * root_bytes;
            } else if (tt && p == 1 && in.variant > 0 && build_behaves(in, date_tt_split_root_unit, true, true)) {
                // est29, high end: torchtitan before 83e694105 puts the embedding, final norm and head in the
                // root unit; FSDP2's lazy init never reshards the root after forward (_fsdp_state.py _lazy_init:
                // post_forward_mesh_info = None), so they stay unsharded from the first forward op to the root's
                // post-backward at the end of backward, and the head's unsharded gradient waits there too. The
                // point keeps the head only at the loss: its stranding constants were fitted without the rest
                const double root = embed_rank + output_rank + (last ? h : 0.0);
                fwd += root * root_bytes;
                loss += root * root_bytes;
                bwd += root * root_bytes + (finetune ? 0.0 : output_rank * pb);
            } else if (in.hf_model && !tt && in.framework != train_framework::torchtune) {
                // est66: accelerate's fsdp2_prepare_model shards each decoder layer, then the model: the root
                // group holds the embedding, final norm and head, and FSDP2's lazy init never reshards the root
                // after forward (the same _lazy_init rule as torchtitan's root above), so they stay unsharded
                // from the first forward op to the root's post-backward; a full fine-tune's head gradient waits too
                const double root = embed_rank + output_rank + (last ? h : 0.0);
                fwd += root * root_bytes;
                loss += root * root_bytes;
                bwd += root * root_bytes + (finetune ? 0.0 : output_rank * pb);
            } else if (last) {
                loss += output_rank * root_bytes;  // output projection all-gathered
            }
            if (tt && !in.fsdp1 && p == 1 && !finetune && !in.optimizer_in_backward) {
                // est37: torchtitan's root unit (tok_embeddings; before 83e694105 also norm and output) is
                // the last to reduce-scatter, when every other unit's sharded gradient is complete. FSDP2's
                // post_backward reshards it, then foreach_reduce copies its unsharded compute-dtype grads
                // into one reduce-dtype (fp32) buffer of the unsharded size before freeing them
                // (_fsdp_collectives.py: reduce_scatter_input, foreach_reduce_scatter_copy_in)
                const bool whole_root = build_behaves(in, date_tt_split_root_unit, true, true);
                const double root = embed_rank + (whole_root ? output_rank + (last ? h : 0.0) : 0.0);
                step_eob += root * (pb + 4.0);
                // after the split the [norm, output] unit reduce-scatters a buffer at least as large at the
                // start of backward, which the cache keeps for the embedding's: a new segment only in builds
                // dated before it (an undated build's interval is left as est29 set it)
                if (build_side(in, date_tt_split_root_unit) < 0) eob_flat = root * 4.0;
            }
            if (p > 1) {
                // torchtitan: no reshard after forward under PP (float8 all-gather: the unsharded
                // linears stay fp8); FSDP2 accumulates the unsharded gradients in the fp32 reduce
                // dtype until the last micro-batch (to_accumulated_grad_if_needed), and in 1F1B the
                // last stage computes each later loss with them alive
                const double unsharded = fp8_ag ? lin * 1.0 + std::max(0.0, st.params_rank - lin) * pb
                                                                     : st.params_rank * pb;
                const double accumulated = mb > 1 ? st.trainable_rank * 4.0 : 0.0;
                fwd += unsharded;
                bwd += unsharded + accumulated;
                loss += unsharded + (in.schedule != pp_schedule_kind::gpipe ? accumulated : 0.0);
            }
        } else if (fsdp && in.framework == train_framework::deepspeed) {
            // est74: a tied head is the embedding matrix, a ZeRO-3 parameter like the others (output_rank counts
            // only an untied head). The coordinator gathers it for the head's forward and keeps it to the head's
            // backward, the next module of the trace (partitioned_param_coordinator.py __params_to_release: reused
            // within stage3_max_reuse_distance); knowledge/sources/deepspeed_zero3_residency.md
            const double tied_head = last && p == 1 && m.tied && !m.seq_classifier ? V * h / t : 0.0;
            double fwd_gather = 4.0 * max_layer * gather_bytes;
            // est74: prefetch pops whole parameters, so the head is all-gathered while the last layer's forward
            // still runs, beside every saved activation; with offload_param each all-gather first copies the host
            // partition to the device (partition_parameters.py all_gather_coalesced: ds_tensor.to(device)) beside
            // the gathered buffer. A large head is then the largest gather of the step
            if (last && output_rank + tied_head > 0) {
                const double staged = in.params_offload ? 1.0 / shard_n : 0.0;
                fwd_gather = std::max(fwd_gather, (output_rank + tied_head) * pb * (1.0 + staged) + max_lin * gather_bytes);
            }
            fwd += fwd_gather;
            bwd += 4.0 * max_layer * gather_bytes;
            // est74: a trained tied head's gradient: autograd sums the head's contribution with the embedding's
            // before the one AccumulateGrad runs, so it is held from the head's backward to the embedding's
            const bool tied_trains = tied_head > 0 && !finetune;
            loss += 2.0 * output_rank * pb + tied_head * pb * (tied_trains ? 2.0 : 1.0);
            if (tied_trains) bwd += tied_head * pb;
            // est49: the contiguous reduce bucket, allocated at optimizer init and kept (gradient dtype)
            const double ipg = in.ds_ipg_bucket_elements * pb;
            fwd += ipg;
            loss += ipg;
            bwd += ipg;
            step += ipg;
        } else if (in.framework == train_framework::deepspeed && (in.zero_stage == 1 || in.zero_stage == 2) &&
                   in.ds_ipg_bucket_elements > 0) {
            // est59: the stated IPG buffers (estimate.cpp), from the first backward until the step: later
            // micro-batches' forwards and losses run beside them
            const double ipg = in.ds_ipg_bucket_elements * pb;
            fwd += ipg;
            loss += ipg;
            bwd += ipg;
        } else if (in.framework == train_framework::deepspeed && in.zero_stage >= 1) {
            bwd += std::min(k.deepspeed_bucket_elements, st.trainable_rank) * pb;
        } else if (in.ddp_grad_copy) {
            // est36: DDP's flat buckets hold a copy of every gradient from construction on (estimate.cpp)
            fwd += st.grads;
            loss += st.grads;
            bwd += st.grads;
            step += st.grads;
        } else if (in.framework != train_framework::megatron && dp_total > 1) {
            bwd += std::min(k.ddp_bucket_bytes, st.trainable_rank * 4.0);
        }
        // dequantized copy of the largest frozen linear (forward and backward), DoRA's weight
        // norm (W + scale * B A materialized in the adapter dtype), float8 casts of one layer
        if (quant_base) {
            // Lightning's bitsandbytes plugin (LitGPT) quantizes from fp16 (_Linear4bit._quantize_weight:
            // .to(dtype=torch.half)), so MatMul4Bit's dequantize_4bit(...).to(A.dtype) makes an fp16 copy and
            // then its bf16 cast: 4 B per element at the cast. The 2024 LitGPT QLoRA rows need it, the 2023
            // ones do not (docs/estimator.md, est24): high end
            const double deq = ft.quant_head && ft.base_bits == 4 && in.variant > 0 ? 4.0 : 2.0;
            if (ft.gptq_keeps_dequant) {
                // est64: auto-gptq's QuantLinear (qlinear_cuda_old / qlinear_cuda) trains on its dequantize path:
                // shift the packed int32 weight (int32 result), cast to int8, subtract the zeros and scale to an
                // fp16 weight, then torch.matmul, which keeps that weight for the input's gradient. One linear's
                // unpacking peaks at 4 + 1 B per element; the layer's fp16 weights stay saved until its backward:
                // one layer's under checkpointing (its recompute), every layer's from the forward on without
                const double layer_lin = n > 0 ? lin / double(n) : 0.0;
                const double unpack = 5.0 * max_lin;
                const double saved = 2.0 * (in.ac == ac_kind::full ? std::max(0.0, layer_lin - max_lin) : lin);
                fwd += unpack + (in.ac == ac_kind::full ? 0.0 : saved);
                bwd += unpack + saved;
                if (in.ac != ac_kind::full) loss += saved;
            } else {
                fwd += deq * max_lin;
                bwd += deq * max_lin;
            }
            // a quantized head (LitGPT) is dequantized again by each chunk's backward, which autograd runs
            // after every chunk's cross-entropy backward (those nodes are newer) while the training loop still
            // holds the logits: the loss-phase buffers are alive beside the bf16 copy (litgpt/finetune/lora.py)
            if (ft.quant_head && output_rank > 0) loss += deq * output_rank;
        }
        if (lora && ft.dora) {
            fwd += 2.0 * double(ft.trainable_bytes) * max_lin;
            bwd += 2.0 * double(ft.trainable_bytes) * max_lin;
        }
        if (in.lowp != lowp_kind::none) {
            fwd += max_layer;
            bwd += max_layer;
        }
        // TP with sequence parallel: the all-gathered input of a matmul and the reduce-scatter
        // input of the next, tokens x h each. Async TP keeps both in the caching allocator (torch
        // _symmetric_memory: fused_all_gather_matmul returns A_flat.new_empty(...), the fused
        // matmul-reduce-scatter computes into x.new_empty(...)); symmetric memory holds only the
        // P2P workspace, the largest of one shard and two reduce-scatter output chunks
        double tp_buf = 0;
        if (in.tp > 1 && in.sequence_parallel && in.framework != train_framework::megatron)
            tp_buf = 2.0 * tokens * 2.0 * h;
        if (in.async_tp) st.symm = tp_buf / t;  // 2 x (tokens / TP) x h x 2 B, outside allocated/reserved
        // backward of one layer: recompute under AC, activation gradients of the residual stream
        const double act_grad = 2.0 * (fp32_resid || autocast_fp32_weights(in) ? 4.0 : 2.0) * h * tokens / (in.sequence_parallel ? t : 1.0);
        // torch.distributed.pipelining allocates a receive buffer per micro-batch (and per stage
        // chunk) for the activations (all but the first stage) and the gradients (all but the
        // last) once, and keeps them; the in-flight activation buffers are the stages' saved inputs
        double pp_grads_bwd = 0;
        if (p > 1 && (tt || in.framework == train_framework::torchtune)) {
            const double io = tokens * 2.0 * h / (in.sequence_parallel ? t : 1.0);
            const double chunks = mb * double(v);
            const double act_recv = chunks - (s == 0 ? mb : 0.0);
            const double grad_recv = chunks - (last ? mb : 0.0);
            const double held = in.schedule == pp_schedule_kind::interleaved ? st.inflight / std::max(1.0, double(n) / double(v))
                                                                             : inflight_mb;
            st.pp_buffers = (std::max(0.0, act_recv - held) + grad_recv) * io;
            // forward_one_chunk keeps each micro-batch's stage output in fwd_cache until its backward
            // (the last stage's output is the logits, counted there); stage_backward reads the input
            // gradient from the receive buffer's .grad, which stays until clear_runtime_states() at the
            // next step: the micro-batches already done while the most are in flight, all at the step
            // (torch/distributed/pipelining/stage.py)
            const double held_out = last ? held * double(v - 1) / double(v) : held;
            st.pp_stage_outputs = held_out * io;
            pp_grads_bwd = std::max(0.0, act_recv - held) * io;
            st.pp_input_grads = act_recv * io;
        }
        // torch ring attention (torchtitan CP, all-gather rotation by default): each layer gathers the
        // K/V of every CP rank (torchtitan repeats K/V to all heads first) and merges the partial
        // outputs in fp32; its backward gathers again and accumulates dq, dk, dv in fp32 and passes
        // the dk/dv accumulators around the ring (torch/distributed/tensor/experimental/_attention.py)
        double cp_fwd = 0, cp_bwd = 0;
        if (tt && in.cp > 1) {
            const double hd = a_heads_dim / t, kv = 2.0 * 2.0 * hd;
            cp_fwd = tokens * (c * kv + kv + 4.0 * hd);
            cp_bwd = tokens * (c * kv + kv + 12.0 * hd + 16.0 * hd);
        }
        // HF models with use_cache on return each layer's post-RoPE K and V (before any GQA repeat) in the
        // forward's past_key_values until the caller takes the loss (transformers LlamaModel:
        // next_decoder_cache / DynamicCache): under full AC nothing else keeps them (est27)
        if (in.hf_kv_cache && in.ac == ac_kind::full) {
            const double kv_cache = double(n) * tokens * 2.0 * double(m.kv_heads * m.head_dim) / t * pb;
            fwd += kv_cache;
            loss += kv_cache;
        }
        if (in.ac != ac_kind::none) bwd += working * tokens;
        // est67: one MoE layer's dispatch copies above its saved set (moe_dispatch.h), in its forward and backward
        if (st.moe_layers > 0) {
            fwd += moe_disp.forward;
            bwd += moe_disp.backward;
        }
        bwd += layer_backward;
        bwd += act_grad + tp_buf + st.pp_buffers + st.pp_stage_outputs + pp_grads_bwd + cp_bwd;
        fwd += tp_buf + st.pp_buffers + st.pp_stage_outputs + cp_fwd;
        loss += st.pp_buffers + st.pp_stage_outputs;
        step += st.pp_buffers + st.pp_input_grads + (pp_keeps_outputs && last ? 2.0 * st.pp_outputs : 0.0);  // outputs merged by step()
        // torch's foreach Adam/AdamW allocates sqrt(exp_avg_sq) for every parameter of the group at
        // once (optim/adamw.py _multi_tensor_adamw, torch 2.4): one second moment's worth, after the
        // backward's end-of-unit buffers (FSDP1 root) are gone
        if (in.optimizer_foreach > 0 || (in.optimizer_foreach < 0 && in.variant > 0)) {
            const double foreach_tmp = 0.5 * st.optimizer;
            step += std::max(step_eob, foreach_tmp);
        } else {
            step += step_eob;
        }
        if (in.optimizer_in_backward) {
            bwd += max_layer * pb;  // one layer's grads before its fused step
        }
        // gradients present while activations are still held
        double grads_fwd = rates.grads_in_forward && !in.optimizer_in_backward ? st.grads : 0.0;
        if (finetune) grads_fwd = trates.grads_in_forward && !in.optimizer_in_backward ? st.grads : 0.0;
        if (in.grad_accum > 1 && !in.optimizer_in_backward) grads_fwd = st.grads;  // accumulated across micro-batches
        if (in.zero_grad_keeps_grads && !in.optimizer_in_backward) grads_fwd = st.grads;  // torch 1.x zero_grad (est26)
        // est61: FSDP1 accumulating under no_sync: the unsharded gradients of the earlier micro-batches live through the
        // later forwards and backwards (the synchronised backward reduce-scatters them unit by unit); the step sees shards
        if (in.fsdp1_no_sync && in.grad_accum > 1 && !in.optimizer_in_backward)
            grads_fwd = std::max(grads_fwd, st.grads_unsharded);
        // end of backward: all grads plus the first layer's transients
        double grads_end = in.optimizer_in_backward ? 0.0 : st.grads;
        {
            double amp_fwd = 0, amp_bwd = 0;  // autocast's compute-dtype weight copies (est26)
            amp_weight_copy_bytes(in, lin, n > 0 ? lin / double(n) : 0.0, &amp_fwd, &amp_bwd);
            fwd += amp_fwd;
            loss += amp_fwd;
            bwd += amp_bwd;
        }
        st.temp_forward = fwd;
        st.temp_backward = bwd;
        st.temp_loss = loss;
        st.temp_step = step + k.workspace_bytes;
        st.grads_in_forward = grads_fwd;

        // model load: torchtune quantizes the frozen linears to NF4 on the device as it copies the
        // checkpoint in (its NF4 copy_ runs to_nf4 on the moved bf16 tensor); torchao 0.1 does so
        // for a whole weight at once (difference to the 16 levels and its abs, 32 B each per
        // element), later builds in 1M-element chunks (knowledge/estimator.yaml)
        st.temp_load = 0;
        st.phase_load = wrap_load;
        if (quant_base && in.framework == train_framework::torchtune && !ft.quant_keeps_input &&
            build_behaves(in, date_torchtune_chunked_nf4, true, true)) {
            st.temp_load = k.nf4_unchunked_quant_bytes * max_lin;
            st.phase_load = std::max(st.phase_load, st.params + st.temp_load);
        }
        const double resident = st.params + st.master + st.optimizer + st.reference;
        st.phase_forward = resident + grads_fwd + st.activations + fwd;
        st.phase_loss = last ? resident + grads_fwd + st.activations + st.logits + st.ref_logits + loss : 0.0;
        st.phase_backward = resident + grads_fwd + st.activations + bwd;
        st.phase_step = resident + grads_end + st.temp_step;
        const double ph[5] = {st.phase_forward, st.phase_loss, st.phase_backward, st.phase_step, st.phase_load};
        st.phase = int(std::max_element(ph, ph + 5) - ph);
        st.peak = ph[st.phase];

        // caching allocator: reserved is the high-water mark of live blocks plus cached blocks
        // the live ones could not reuse. At the loss, the freed compute-dtype logits and one
        // layer's freed forward intermediates sit in the cache while larger fp32 buffers are
        // allocated; elsewhere blocks are reused and only segment rounding remains.
        if (in.framework == train_framework::megatron) {
            st.reserved = st.peak * k.reserved_factor_megatron;
        } else {
            // gradients freed by zero_grad(set_to_none) before the forward stay cached as per-parameter
            // blocks; the loss buffers cannot use them, the forward's activations reuse the large ones (est53)
            const double freed_all = grads_fwd > 0 || in.optimizer_in_backward ? 0.0 : st.grads;
            const double freed_grads = stranded_freed_grads(in, freed_all, tokens, st.params_rank, st.activations);
            const double round = 1.0 + k.allocator_rounding;
            // FSDP2 views the sharded gradients into its reduce-scatter output, allocated on the
            // reduce-scatter stream, so the blocks zero_grad frees return to that stream's pool; with PP
            // the reduce-scatters wait for the last micro-batch's backward, and the blocks stay stranded
            // through every earlier backward (torch fsdp _fsdp_collectives.foreach_reduce)
            const double rs_pool = fsdp2 && p > 1 ? freed_grads : 0.0;
            double res_before_step = std::max({st.phase_forward + freed_grads, st.phase_backward + rs_pool});
            if (last)
                res_before_step = std::max(res_before_step, st.phase_loss + freed_grads + st.stranded_loss + st.unshard_pool +
                                                                k.stranded_layer_transients * st.layer_transient);
            double res = std::max({res_before_step, st.phase_step, st.phase_load, st.fsdp1_floor});
            // est37: the root's fp32 reduce-scatter input is one allocation at the end of backward. When it
            // is clearly larger than every block the cache holds by then (the eager loss's fp32 logits
            // buffers, a layer's reduce-scatter input), no free block serves it and the allocator maps a
            // new segment on top of what it already reserved (torchtitan at 4096 tokens: 4.2 GB against
            // 2.1 GB). Only with the eager fp32 loss: what a compiled loss leaves cached was not read, and
            // the compiled-loss rows (est28's tutorial, the NVFP4 doc) sit above their measurements already
            if (eob_flat > 0 && last && !in.chunked_loss && bpe > 4.0) {
                const double largest = std::max(finetune ? 0.0 : max_layer * 4.0, tokens * V_out / (vocab_parallel ? t : 1.0) * 4.0);
                if (eob_flat > largest * round && res_before_step + eob_flat > res) {
                    res = res_before_step + eob_flat;
                    st.eob_segment = eob_flat;
                }
            }
            st.stranded_loss += freed_grads;
            st.floor_sets_reserved = st.fsdp1_floor > 0 && st.fsdp1_floor >= res;
            st.reserved = res * round;
        }
        if (st.peak > out.peak) {
            out.peak = st.peak;
            out.worst = int(s);
        }
        worst_reserved = std::max(worst_reserved, st.reserved);
    }
    out.runtime = runtime_memory(in, in.variant).total();
    const stage_figures& w = out.stages[std::size_t(out.worst)];
    out.reserved = std::max(worst_reserved, out.peak);
    // the allocator cannot cache beyond the device: near capacity reserved ~ allocated
    if (in.capacity_bytes > 0) {
        const double cap = std::max(out.peak, double(in.capacity_bytes) - out.runtime - w.symm);
        out.reserved_capped = out.reserved > cap;
        out.reserved = std::min(out.reserved, cap);
    }
    out.reserved_factor = out.peak > 0 ? out.reserved / out.peak : 1.0;  // after the cap: the figure the text states
    out.device = out.reserved + out.runtime + w.symm;  // async-TP symmetric memory sits beside the allocator
    // paged optimizer states (w.paged) are not added: the driver evicts managed pages to the host when
    // the device fills, so they never make a job run out of memory (they slow it down instead)
    return out.device;
}

}  // namespace oomdx::est
