// The numeric core of the estimator: per-stage, per-phase byte figures, no strings.
// estimate.cpp turns a `breakdown` into components with formulas; plan search uses it directly.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/estimator/estimate.h"

namespace oomdx::est {

// torchtitan build dates (yyyymmdd) where the memory behaviour changed; estimate_input.framework_date
// picks the side, an unknown date puts the other side in the interval (docs/estimator.md).
inline constexpr int date_compiled_loss = 20250402;        // bbb1b616: the loss is compiled with the model
                                                           // (d1f62be7, 2025-02-20, kept it commented out; est19)
inline constexpr int date_pp_microbatch_size = 20250407;   // 5e2033c7: pipeline_parallel_microbatch_size (default 1)
inline constexpr int date_pp_drops_outputs = 20251022;     // e5ef99aa: step(return_outputs=False)
// 01f0ffad1: torchtitan's own MXFP8 linear keeps the quantized dgrad weight for backward; before it
// torchao's mx_mm saved the bf16 input and the FSDP-managed weight (nothing extra; est19)
inline constexpr int date_mxfp8_saves_dgrad_weight = 20260821;
// est62: torchao 03c850afa (#2356) makes Float8LinearConfig.force_recompute_fp8_weight_in_bwd a no-op; from e91955800
// (2024-10-02) until then its default (False) let torch.compile save the unsharded fp8 weight transpose for backward
inline constexpr int date_torchao_fp8_recompute_noop = 20250613;
// est29: torchtitan 83e694105 (#1094) wraps tok_embeddings and [norm, output] as their own FSDP units; before,
// they belonged to the root unit, which FSDP2 never reshards after forward
inline constexpr int date_tt_split_root_unit = 20250728;
// est29: torchtitan puts cuDNN attention first on compute capability >= 10.0 (3b85aa31f, #1196); its op-SAC save
// list names only the flash and efficient SDPA ops until b39377f9f (#2095) adds every SDPA backend
inline constexpr int date_tt_cudnn_sdpa_first = 20250514;
inline constexpr int date_tt_cudnn_sdpa_saved = 20251201;
// torchtune build date from which its torchao pin quantizes NF4 in chunks (c1c9f308a: torchao==0.3;
// pytorch/ao 6081796bc, v0.2.0); before it torchtune pinned torchao==0.1, which quantizes a whole
// weight at once while the model loads.
inline constexpr int date_torchtune_chunked_nf4 = 20240626;
// torchtune recipes `del logits` after the loss (est27): lora_finetune_distributed since cb3ed29d7 (#1046),
// the single-device and full fine-tuning recipes since 8a98fbaa3 (#1235); before, the recipe's shifted
// fp32 logits stay referenced through loss.backward().
inline constexpr int date_torchtune_lora_dist_del_logits = 20240604;
inline constexpr int date_torchtune_del_logits = 20240728;
inline constexpr int date_verl_entropy_on_demand = 20250417;  // volcengine/verl@25b0f226: entropy only for entropy_coeff != 0
// est46: torchtune 73647e26e (#620) gives InstructDataset a max_seq_len and the builders (alpaca_dataset and the
// rest) the default 512; 8295cc350 (#1284, SFTDataset) drops it (the tokenizer's max_seq_len, unset by default, cuts)
inline constexpr int date_torchtune_dataset_cap_512 = 20240330;
inline constexpr int date_torchtune_dataset_cap_none = 20240815;
// est73: torchtune #1575 (cca50f02e) gives torch.optim.AdamW fused: True in the shipped configs; before it the
// foreach step (one sqrt(exp_avg_sq)-sized buffer for the whole group) ran
inline constexpr int date_torchtune_adamw_fused = 20240914;
inline constexpr std::int64_t torchtune_dataset_cap_default = 512;

// est35: Megatron-LM 9ad1a56f82 makes Megatron Core the default model (--use-legacy-models to keep the old one);
// before it megatron/model/transformer.py ParallelMLP runs SwiGLU unfused (fc1 (+ bias), chunk, silu, mul): autograd
// keeps the fc1 output (silu's input is a view of it), the SiLU output and the product; Core's bias_swiglu keeps the
// fc1 output only and recomputes the rest
inline constexpr int date_megatron_mcore_default = 20240525;
// est35: Megatron-LM 9634c0e4a3 subtracts the logits' row max in place in the vocab-parallel cross-entropy; before it
// the shifted fp32 logits are a second fp32 copy (knowledge/estimator.yaml logits_bytes_megatron_outofplace)
inline constexpr int date_megatron_inplace_ce = 20240613;

// est41: accelerate d1c96ba9 (#3848, v1.13.0) upcasts only parameters that require grad in fsdp2_prepare_model; from
// FSDP2 support (d7c741a6, v1.6.0) until then it ran model.to(torch.float32) under mixed precision, so a LoRA job's
// frozen 16-bit weights were stored, and sharded, in fp32 (the MixedPrecisionPolicy all-gathers them in bf16)
inline constexpr int date_accelerate_fsdp2_trainable_upcast = 20251126;

// Which side of `day` the job's build is on: +1 on or after it (the date given, or a lower bound
// from the config's keys that reaches it), -1 before it (the date given), 0 unknown.
inline int build_side(const estimate_input& in, int day) {
    if (in.framework_date > 0) return in.framework_date >= day ? 1 : -1;
    return in.framework_date_min >= day ? 1 : 0;
}

// Whether the job's build behaves as builds before `day` do (`before`) or on/after it: known from
// the dates; unknown, the behaviour that takes more memory (`costlier_side`) is the interval's high
// end (variant > 0) and the other its low end (variant < 0).
inline bool build_behaves(const estimate_input& in, int day, bool before, bool before_is_costlier) {
    if (const int side = build_side(in, day); side != 0) return before ? side < 0 : side > 0;
    return before == before_is_costlier ? in.variant > 0 : in.variant < 0;
}

// est53: bitsandbytes' 4-bit MatMul4Bit kept its input for backward until 0.43.2 (9e753741, #1270: ctx.tensors =
// (None, B)); LLM.int8's MatMul8bitLt keeps (CAt, subA, A) in every release. Unknown build: the point and the high end
// keep it (the measurements the term was fitted on are of the older releases), the low end does not
inline bool bnb_keeps_input(const estimate_input& in) {
    if (!in.ft.quant_keeps_input) return false;
    if (in.ft.base_bits != 4) return true;
    if (in.ft.bnb4_keeps_input_side != 0) return in.ft.bnb4_keeps_input_side > 0;
    return in.variant >= 0;
}

// Megatron's legacy GPTModel: stated, or a build dated before Core became the default. Unknown date: Core
// (Megatron-Bridge, Megatron-SWIFT and MindSpeed build Core models only), no interval
inline bool megatron_unfused_swiglu(const estimate_input& in) {
    if (in.framework != train_framework::megatron || in.npu || !in.model.gated) return false;
    if (in.megatron_legacy != 0) return in.megatron_legacy > 0;
    return build_side(in, date_megatron_mcore_default) < 0;
}

// torchtune's whole-logits loss keeps the recipe's shifted fp32 logits through backward in builds before
// its `del logits` (the LoRA distributed recipe got it first); unknown date: high end
inline bool torchtune_keeps_logits(const estimate_input& in) {
    if (in.framework != train_framework::torchtune || in.hf_model || in.chunked_loss) return false;
    const bool lora_dist = in.ft.kind == finetune_kind::lora && in.world > 1;
    return build_behaves(in, lora_dist ? date_torchtune_lora_dist_del_logits : date_torchtune_del_logits, true, true);
}

// est43: the frozen non-linear weights (embedding, head, norms) stayed fp32 after PEFT's kbit preparation
inline bool fp32_frozen_rest(const estimate_input& in) {
    return in.ft.fp32_frozen_rest && in.zero_stage < 3 && in.variant >= 0;
}
// PEFT's kbit preparation upcast the norms: the residual stream is fp32 (estimate.cpp, est11);
// sharded QLoRA skips it, and so does the interval's low end
inline bool fp32_residual_stream(const estimate_input& in) {
    return in.ft.fp32_residual && in.zero_stage < 3 && in.variant >= 0;
}

// Parameter counts of one transformer layer, split by how they shard.
struct layer_params {
    double tp_sharded = 0;   // attention, dense MLP, shared experts: / TP
    double replicated = 0;   // norms, router, MLA latent norms
    double routed = 0;       // routed experts: / (EP * ETP)
};

layer_params dense_layer_params(const estimate_model& m);
layer_params moe_layer_params(const estimate_model& m);
bool is_moe_layer(const estimate_model& m, std::int64_t i);
// The linear weights of a dense layer that adapters can target (in, out) with their lora_target bit;
// returns how many (at most 7) were written to `out`.
struct dense_module { unsigned bit; double in, out; };
int dense_modules(const estimate_model& m, dense_module* out);
// Whether the float8 all-gather the job asks for applies: torchtitan turns it on only with
// data_parallel_shard_degree > 1 (its float8 handler ANDs the option with dp_shard_enabled), so
// FSDP over CP alone all-gathers bf16 weights.
bool fp8_all_gather_applies(const estimate_input& in);
// torchtitan op-level SAC on a compute-capability >= 10.0 device of the catalog (B200, GB200, RTX 5090),
// where builds of 2025-05-14 .. 2025-12-01 run SDPA through cuDNN attention (est29).
bool tt_sac_on_cudnn_sdpa_device(const estimate_input& in);
// torchtitan op-SAC on cuDNN attention (SM100, 2025-05-14 .. 2025-12-01): SDPA output recomputed, not saved
bool tt_sdpa_output_recomputed(const estimate_input& in);
double total_params(const estimate_model& m);
// Bytes per trainable parameter of the optimizer's states (`master`: beside a DeepSpeed fp32 master copy).
double optimizer_moment_bytes(const estimate_input& in, double param_bytes, bool master);
// Parameter offload as torch FSDP does it: the gradients and the optimizer step go to the CPU with the parameters.
bool fsdp_cpu_offload(const estimate_input& in);
// Parameters of one layer held in linear weights (what 4/8-bit and float8 convert), before TP.
double linear_params(const estimate_model& m, bool moe);
// Largest single linear weight of a layer (dequantization / float8 cast buffer), before TP.
double largest_linear(const estimate_model& m, bool moe);
// Trainable adapter parameters of one layer (LoRA A and B, DoRA magnitudes), before TP.
double adapter_params(const estimate_input& in, bool moe);
// torchtune chunked output with a trained head: loss-phase bytes the head-weight gradient adds above
// (2 + 2/n) B per logit element (`nv` elements, `head_grad` bytes, `n` chunks)
double chunked_head_grad_bytes(double nv, double head_grad, double n);

// Activation bytes per token of one layer in the current AC mode, after TP/SP division.
struct layer_act {
    double saved = 0;        // kept until backward
    double working = 0;      // one layer without AC (recompute / forward working set)
    double transient = 0;    // forward intermediates freed at the end of the layer (eager > compiled)
    double backward = 0;     // the layer's own backward buffers beyond what it saved (HF eager attention)
};
// `trainable`: the layer's own weights train (false for frozen layers under freeze tuning).
// `converted`: the layer's linears run in the low-precision recipe (NVFP4 keeps a bf16 tail).
layer_act layer_activation(const estimate_input& in, bool moe, bool trainable = true, bool converted = true);

// est26: 2 when fp32 parameters train without autocast (activations in fp32), else 1
double fp32_compute_act_scale(const estimate_input& in);
// est26 / est65: torch.autocast over fp32 trainable weights (HF Trainer / accelerate AMP of an fp32 model, unsharded)
bool autocast_fp32_weights(const estimate_input& in);
// est26: autocast's compute-dtype copies of fp32 trainable weights: bytes held in forward and at the
// loss (`fwd_loss`) and at the start of backward (`bwd`); zero unless AMP runs over fp32 weights.
void amp_weight_copy_bytes(const estimate_input& in, double lin_rank, double max_layer_lin, double* fwd_loss, double* bwd);

struct stage_figures {
    int stage = 0;
    std::int64_t layers = 0, moe_layers = 0;
    double params_rank = 0, expert_params_rank = 0;     // parameter counts on one rank
    double inflight = 0;                                 // layer x micro-batch activations held
    // bytes
    double params = 0, grads = 0, master = 0, optimizer = 0;
    double expert_state = 0;                             // routed-expert share of the four above
    double activations = 0, logits = 0;
    double temp_forward = 0, temp_backward = 0, temp_step = 0, temp_loss = 0;
    double grads_in_forward = 0;                         // grads resident while activations live
    double grads_unsharded = 0;                          // est61: every trainable gradient of the stage, unsharded
    double phase_forward = 0, phase_loss = 0, phase_backward = 0, phase_step = 0;
    double phase_load = 0;                               // model load: weights + on-device quantization (0 if not modelled)
    double temp_load = 0;                                // the quantization intermediates of phase_load
    double peak = 0;
    int phase = 0;                                       // 0 forward, 1 loss, 2 backward, 3 step, 4 model load
    // issue 16
    double trainable_rank = 0;                           // trainable params on this rank (before sharding)
    double frozen = 0;                                   // frozen weights (in `params`)
    double vision = 0;                                   // frozen vision-tower weights (in `params` and `frozen`)
    double reference = 0;                                // est44: the frozen reference model's weights (DPO / KTO)
    double ref_logits = 0;                               // est44: its no-grad forward's logits at the loss (last stage)
    double lowp_saved = 0;                               // float8/MX weight copies kept for backward (in activations)
    double stranded_loss = 0;                            // cached blocks the loss buffers cannot reuse
    double eob_segment = 0;                              // est37: a new segment for the root's end-of-backward buffer
    double layer_transient = 0;                          // one layer's freed forward intermediates
    double unshard_pool = 0;                             // FSDP1 unshard / pre-unshard stream blocks free at the loss (est17)
    double fsdp1_floor = 0;                              // FSDP1 construction cache + side-stream and small-block pools (est18)
    bool floor_sets_reserved = false;                    // fsdp1_floor is the largest term of `reserved`
    double symm = 0;                                     // async-TP P2P workspace (symmetric memory, outside the allocator)
    double paged = 0;                                    // bitsandbytes paged optimizer states (managed memory, outside the allocator; est21)
    double reserved = 0;                                 // caching-allocator high-water mark of this stage
    double pp_buffers = 0;                               // pipeline receive buffers (activations, gradients)
    double pp_outputs = 0;                               // last-stage outputs kept until the step ends (in logits)
    double pp_stage_outputs = 0;                         // in-flight stage outputs kept for backward (non-last stages)
    double pp_input_grads = 0;                           // input gradients left on the receive buffers (non-first stages)
};

struct breakdown {
    std::vector<stage_figures> stages;
    int worst = 0;
    double peak = 0, reserved = 0, runtime = 0, device = 0;
    double reserved_factor = 1;      // reserved / allocated at the worst stage
    bool reserved_capped = false;    // the cache model reached the device capacity
    double trainable = 0;            // trainable parameters in the model
    double logits_bpe = 0;           // loss-phase bytes per token x vocab element
    double logits_tensor_elements = 0;  // one micro-batch's whole logits per rank (0 when chunked)

    double tokens = 0;               // tokens per micro-batch per rank
    double shard_n = 1, expert_shard_n = 1;
    double state_bytes_per_param = 0;
};

// Fills `out` (reusing its storage); returns the device peak in bytes.
double compute(const estimate_input& in, breakdown& out);

}  // namespace oomdx::est
