// Static per-device memory estimate of one training configuration, from facts only.
// Formulas and the allocator statistic each figure compares with: docs/estimator.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/core/fact.h"
#include "engine/core/value.h"

namespace oomdx {

class fact_store;

// A canonical config override ("parallelism.tensor_parallel_degree" = 4): the config parsers'
// canonical_override when their header is present, else a struct of the same shape.
#if __has_include("parsers/config/framework_adapter.h")
}  // namespace oomdx
#include "parsers/config/framework_adapter.h"
#include "engine/estimator/memory_efficient.h"
#include "engine/estimator/moe_dispatch.h"
namespace oomdx {
using estimate_override = canonical_override;
#else
struct canonical_override {
    std::string key;
    value val;
};
using estimate_override = canonical_override;
#endif

enum class train_framework { torchtitan, megatron, deepspeed, torchtune, generic };
enum class ac_kind { none, selective_op, selective_layer, full };
enum class pp_schedule_kind { gpipe, one_f_one_b, interleaved, zero_bubble };
// Which parameters train: all (full), low-rank adapters on a frozen base (LoRA, QLoRA, DoRA),
// or the last layers only (freeze tuning).
enum class finetune_kind { full, lora, freeze };
// Low-precision linear layers (torchao / torchtitan converters).
enum class lowp_kind { none, float8_tensorwise, float8_rowwise, mxfp8, nvfp4 };
// Linear modules of a layer an adapter can target (bit mask).
namespace lora_target {
inline constexpr unsigned q = 1, k = 2, v = 4, o = 8, gate = 16, up = 32, down = 64;
inline constexpr unsigned all = 127;
}  // namespace lora_target

// Model shape the estimator needs (model.* facts).
struct estimate_model {
    std::string name, family;
    std::int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
    bool tied = false, gated = true;
    double dropout = 0.0;
    std::int64_t experts = 0, top_k = 0, shared_experts = 0, expert_ffn = 0, first_dense = 0,
                 moe_freq = 1;
    std::int64_t q_lora = 0, kv_lora = 0, qk_nope = 0, qk_rope = 0, v_head = 0, mtp_layers = 0;
    std::int64_t norms_per_layer = 2;  // Gemma 2: post-attention and post-MLP norms too (4)
    // est43: attention and MLP both read the layer input x: 0 sequential block, 1 parallel with a norm
    // each (GPT-NeoX, Falcon 40B/180B), 2 parallel with one shared norm (GPT-J, Phi-1/1.5/2, Falcon-7B)
    int parallel_block = 0;
    double attn_softcap = 0;           // attention logit soft-capping (Gemma 2: 50), 0 = none
    bool qk_norm = false;              // est33: per-head RMSNorm of q and k before RoPE (Qwen3, OLMo 2/3, Gemma 3)
    bool seq_classifier = false;       // est26: a sequence-classification head (HF *ForSequenceClassification): no vocabulary logits
    std::int64_t vision_params = 0;    // vision tower of a vision-language model (frozen unless vision_trainable)
    bool vision_trainable = false;     // full fine-tuning with LLaMA-Factory freeze_vision_tower: false
    int vision_bytes = 2;              // bytes per frozen vision weight (the load dtype)
};

// Parameter-efficient fine-tuning as the frameworks implement it (docs/estimator.md).
struct finetune_spec {
    finetune_kind kind = finetune_kind::full;
    std::int64_t lora_rank = 8;
    unsigned targets = lora_target::all;  // modules carrying an adapter
    bool dora = false;                    // + magnitude vector, base and adapter outputs kept
    bool lora_dropout = false;            // dropout > 0: each adapter keeps its own masked input copy
    int base_bits = 16;                   // frozen linear weights: 16 (load dtype), 8 (LLM.int8), 4 (NF4/FP4)
    bool double_quant = true;             // 4-bit: quantized absmax constants (bitsandbytes, torchao NF4)
    bool quant_keeps_input = true;        // bitsandbytes MatMul4Bit keeps its input for backward
    // est53: which side of bitsandbytes 0.43.2 (PR #1270, 2024-07-16; released 2024-07-23) the job's build is on:
    // +1 before it (MatMul4Bit keeps its input), -1 on or after it (the packed weight only), 0 not known
    int bnb4_keeps_input_side = 0;
    bool quant_head = false;              // the output head is a quantized linear too (LitGPT QLoRA)
    bool group_quant = false;             // GPTQ / AWQ checkpoint: packed weights + a scale and zero per group of 128
    // est64: auto-gptq's QuantLinear dequantizes its whole weight to fp16 and multiplies with torch.matmul, so
    // autograd keeps that fp16 copy for the input's gradient (AWQ's kernels dequantize again in backward)
    bool gptq_keeps_dequant = false;
    // est70: bytes of the dtype bitsandbytes packs a 4-bit weight into (bnb_4bit_quant_storage): 1 (uint8, the
    // BitsAndBytesConfig default) or 2 (axolotl's QLoRA sets the compute dtype, bf16). A 16-bit storage is a
    // floating-point parameter, so a dtype cast of the whole model converts it too (accelerate's FSDP2 upcast)
    int quant_storage_bytes = 1;
    int load_bytes = 2;                   // dtype of the frozen weights
    int trainable_bytes = 4;              // dtype of trainable params (LLaMA-Factory upcasts to fp32)
    std::int64_t trainable_layers = 2;    // freeze tuning: the last N layers train
    // est11: PEFT's prepare_model_for_kbit_training (HF Trainer / TRL, unsharded bitsandbytes base)
    // casts the norms to fp32, so the norm outputs, the bitsandbytes linears' outputs (returned in
    // their input's dtype) and from the first layer's MLP on the residual stream are fp32
    bool fp32_residual = false;
    // est43: the same preparation left the embedding, head, norms and biases (every frozen parameter that is
    // not a quantized linear) in fp32, and nothing cast them back (axolotl before 2023-09-01 without flash_attention)
    bool fp32_frozen_rest = false;
    // est54: PEFT modules_to_save on the embedding / output head: ModulesToSaveWrapper keeps the frozen original
    // and trains a deep copy of it in full (its gradient and optimizer states), in the copy's own dtype
    bool save_embed = false, save_head = false;
    int saved_copy_bytes = 2;             // the module's dtype; LLaMA-Factory upcasts trainable parameters to fp32
};

// Everything estimate() reads; plain values so the plan search can copy and vary it cheaply.
struct estimate_input {
    estimate_model model;
    train_framework framework = train_framework::torchtitan;
    std::int64_t world = 1, tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1, etp = 1;
    std::int64_t pp_mb_group = 0;         // Megatron --microbatch-group-size-per-virtual-pipeline-stage (0: the PP degree; est62)
    std::int64_t dist_opt_instances = 1;  // Megatron --num-distributed-optimizer-instances: shards over DP x CP / N (est63)
    std::int64_t dp_shard = 1, dp_replicate = 1;
    bool sequence_parallel = true;
    int zero_stage = 3;                   // 0 none, 1 optimizer, 2 +grads, 3 +params (FSDP)
    pp_schedule_kind schedule = pp_schedule_kind::one_f_one_b;
    std::int64_t micro_batch = 1, seq_len = 2048, num_microbatches = 1;
    int param_bytes = 2;                  // compute dtype of parameters
    ac_kind ac = ac_kind::none;
    int ac_every = 1;                     // selective_layer: every N-th layer checkpointed
    std::string optimizer = "adamw";
    int state_dtype_bytes = 4;            // 4 fp32, 2 bf16, 1 int8
    bool master_weights = true;
    // cfg67: the parameters stay fp32 and autocast computes in param_bytes' dtype (NeMo 1.x without
    // megatron_amp_O2): Megatron keeps no separate master copy, and gradients and states are fp32
    bool autocast_fp32_params = false;
    int master_bytes = 4;                 // the master copy and master-grad partition (DeepSpeed bf16 master: 2)
    bool optimizer_offload = false, swap_optimizer = false, optimizer_in_backward = false;
    // est71: the optimizer holds parameters that parallelisation replaced (optimizer.stale_params): no
    // states, and nothing frees the gradients between steps (knowledge/sources/stale_optimizer_params.md)
    bool optimizer_stale = false;
    int swap_times = 1;
    bool params_offload = false;
    bool optimizer_nvme = false, params_nvme = false;  // ZeRO-Infinity: offloaded to NVMe, not the host's RAM
    std::int64_t node_ranks = 8;          // ranks per node (job.nproc_per_node, else min(world, 8)): they share the host
    std::int64_t host_memory_bytes = 0;   // host RAM of a node (job.host_memory_bytes; 0: not stated)
    bool compile = false, float8 = false, flash = true, chunked_loss = false, loss_parallel = true;
    bool chunked_loss_projects = false;   // the chunked loss projects each chunk itself (torchtune LinearCrossEntropyLoss, est55)
    bool compile_loss = true;             // torchtitan compile.components lists "loss" (its default)
    bool activation_offload = false;
    bool swap_attention = false;          // MindSpeed --swap-attention: each layer's attention-block activations on the host
    int ce_fusion = 0;                    // Megatron --cross-entropy-loss-fusion: 0 off, 1 native (compiled), 2 te
    bool defer_embedding_wgrad = false;   // Megatron --defer-embedding-wgrad-compute (est62)
    std::int64_t wgrad_deferral_limit = 0;  // --wgrad-deferral-limit: micro-batches deferred, 0 = all of them
    int grad_reduce_bytes = 4;            // Megatron gradient buffer (main_grad): fp32, 2 with --grad-reduce-in-bf16
    // est67: MoE token dispatch (engine/estimator/moe_dispatch.h): the dispatcher (unknown: the framework's default),
    // the router's logits / probabilities dtype in bytes (Megatron --moe-router-dtype fp32: 4; 0 the compute dtype),
    // the expert capacity factor (0: dropless) and whether each expert's input is padded to its capacity
    moe_dispatcher_kind moe_dispatcher = moe_dispatcher_kind::unknown;
    int moe_router_bytes = 0;
    double moe_capacity_factor = 0;
    bool moe_pad_to_capacity = false;
    // Added with issue 16 (all additive; defaults keep the earlier behaviour).
    finetune_spec ft;
    lowp_kind lowp = lowp_kind::none;     // float8 == (lowp is a float8 recipe)
    bool fp8_all_gather = false;          // FSDP all-gathers float8 weights (1 B/param)
    int fp8_force_recompute = -1;         // force_recompute_fp8_weight_in_bwd: -1 unknown, 0, 1
    std::int64_t lowp_bf16_tail = 0;      // NVFP4 mixed recipe: last N layers stay bf16
    bool async_tp = false;                // micro-pipelined TP: a symmetric-memory P2P workspace beside the allocator
    bool hf_model = false;                // HF transformers modeling code (LLaMA-Factory, HF Trainer)
    // est24: LitGPT computes a soft-capped attention by hand (q @ k^T, tanh, fp32 softmax, bf16 copy)
    bool manual_attn = false;
    bool norm_upcast = true;              // the model's RMSNorm computes in fp32 (HF, torchtitan, torchtune)
    // est27: an HF model's forward returns every layer's K/V (config use_cache left on; HF's own gradient
    // checkpointing turns it off, FSDP's checkpoint wrapper does not): extra under full AC until the loss
    bool hf_kv_cache = false;
    // est30: the script takes the cross-entropy itself on the model's 16-bit logits, not upcast, no autocast
    bool loss_in_model_dtype = false;
    bool caller_keeps_logits = false;  // the loop's own `logits` variable holds them through backward (est50)
    // RL trainers that take per-token log-probabilities from the model's 16-bit logits with a fused cross-entropy
    // (verl: flash-attn's Triton kernel with in-place backward, torch_npu's npu_cross_entropy_loss): no fp32 copy
    bool fused_logprob_loss = false;
    int rl_entropy = 0;  // the update also takes the entropy over the vocabulary: 1 yes, 0 no, -1 unknown (high end)
    // est52: BAdam / GaLore / APOLLO / LISA full-parameter training (engine/estimator/memory_efficient.h)
    memory_efficient_spec me;
    // Added in round est9 (held-out fine-tuning rows).
    std::int64_t grad_accum = 1;          // micro-batches per optimizer step outside a pipeline: gradients live through later forwards
    bool fsdp_zero2_shards = false;       // torch FSDP ZeRO-2: the sharded parameters persist beside the unsharded ones (est50)
    bool fsdp1 = false;                   // torch FSDP1 (HF Trainer / accelerate): the root unit stays unsharded through backward
    // est61: FSDP1 accumulating under no_sync (LitGPT's fabric.no_backward_sync): unsharded gradients between steps
    bool fsdp1_no_sync = false;
    // est61: torch FSDP1 outside HF / accelerate (LitGPT's Fabric): the root unit stays unsharded through the step's
    // forward and backward (the live tensors of est17's term, without its allocator floor)
    bool fsdp1_root_live = false;
    // est68: torch FSDP1 units that hold frozen weights beside trainable adapters (use_orig_params=True): the unit's
    // gradient covers every element of its FlatParameter, frozen ones included
    bool fsdp1_mixed_units = false;
    bool fsdp1_device_load = false;       // est56: every rank holds the whole model on its device before FSDP1 wraps it
    // est41: accelerate's FSDP2 with mixed precision over adapters on a 16-bit load: accelerate before 1.13
    // (fsdp2_prepare_model) upcasts the whole model to fp32 after fully_shard, frozen weights included;
    // est70: on a bitsandbytes base too (the unquantized rest, and packed weights stored in a 16-bit dtype)
    bool accelerate_fsdp2_mp = false;
    // est49: DeepSpeed ZeRO-3's contiguous reduce (IPG) bucket, elements; 0 = none (not ZeRO-3 DeepSpeed)
    double ds_ipg_bucket_elements = 0;
    bool ddp_grad_copy = false;           // est36: torch DDP (gradient_as_bucket_view false) keeps a bucket copy of every gradient
    bool pp_microbatch_assumed = false;   // pipeline micro-batch size was a framework default
    std::int64_t pp_alt_micro_batch = 0;  // the older default's micro-batch (high end), 0 = none
    bool dynamic_budget = false;          // est40: the micro-batch is a token budget filled with whole sequences (verl use_dynamic_bsz)
    // est42: torchtune without its config file and without a shipped config named: whether the recipe checkpoints
    // its layers is the config's choice (enable_activation_checkpointing), not known here
    bool ac_unknown = false;
    // est46: torchtune's dataset builders of 2024-03-30 .. 2024-08-15 cut every sample at dataset.max_seq_len,
    // 512 unless the config sets it; a longer length stated without the config read: the low end at this cap
    std::int64_t tt_dataset_cap = 0;
    int framework_date = 0;               // build date of the framework (yyyymmdd, 0 unknown): picks version-dependent behaviour
    int framework_date_min = 0;           // lower bound from the keys the config uses (yyyymmdd, 0 none)
    // Added in round est11 (held-out fine-tuning rows).
    int optimizer_foreach = 0;            // torch Adam/AdamW foreach step (sqrt of the second moment): 1 yes, 0 no, -1 unknown (high end)
    int megatron_legacy = 0;              // Megatron's legacy GPTModel: 1 stated (--use-legacy-models), -1 Megatron Core stated, 0 by the build date
    int hf_loss_keeps_logits = 0;         // transformers 4.46-4.48 loss_function: the bf16 logits stay live beside the fp32 copies: 1 yes, 0 no, -1 unknown (high end)
    // Added in round est21 (held-out torchtune rows).
    bool optimizer_paged = false;         // bitsandbytes Paged* optimizer: large states in CUDA managed memory, outside the allocator
    // Added in round est25: steps of varying length (HF-style collators pad each batch to its
    // longest sample; no packing, no fixed-length data) and the allocator setting that bounds it.
    bool lengths_vary = false;
    bool expandable_segments = false;     // PYTORCH_CUDA_ALLOC_CONF expandable_segments:True
    // Added in round est26: torch 1.x zero_grad() zeroes gradients in place (set_to_none=False), so they
    // stay allocated through every forward (job.torch_version < 2 outside Megatron / DeepSpeed)
    bool zero_grad_keeps_grads = false;
    // est44: preference training (DPO, KTO) keeps a frozen reference copy of the model beside the policy
    // (full or freeze tuning; none with LoRA, whose reference is the base with the adapter disabled, nor with
    // precomputed reference log-probabilities): bytes per reference weight (its load dtype), 0 = no copy
    int reference_bytes = 0;
    // est45: OpenRLHF's --ref_offload / --ref.offload: the reference's own DeepSpeed eval engine offloads its
    // parameters to the host (offload_param applies at ZeRO-3 only; under ZeRO-1/2 the reference is stage 0)
    bool reference_offload = false;
    // est48: where no copy is kept (LoRA: the base with the adapter disabled) the reference's no-grad forward still
    // runs over the policy's batch, and its logits live through the loss: bytes per logit (the compute dtype), 0 = none
    int reference_logit_bytes = 0;
    // est45: sequences the policy's forward runs per sample of the micro-batch: 2 for pairwise preference losses
    // (DPO, IPO, ORPO, SimPO, CPO: chosen and rejected concatenated into one batch), 1 otherwise (KTO, SFT)
    int policy_seqs_per_sample = 1;
    // The reference's no-grad forward at the loss: its batch in policy tokens (the pairwise losses' own, chosen +
    // rejected; KTO's micro-batch and its KL batch, 2 x) and its logits' bytes (the copy's load dtype, else the base's
    // with the adapter disabled; 0 = no reference forward)
    double reference_forward_seqs() const { return policy_seqs_per_sample >= 2 ? 1.0 : 2.0; }
    int reference_logit_width() const { return reference_bytes > 0 ? reference_bytes : reference_logit_bytes; }
    // est60: memory outside the allocator (runtime_memory.h): how the CUDA runtime loads kernel modules (+1 lazy,
    // -1 eager: CUDA_MODULE_LOADING, else torch < 1.13 or a build before it; 0 not stated: lazy, PyTorch's default
    // since 1.13), whether the device sits on an NVSwitch with NVLink SHARP, and NCCL_NVLS_ENABLE (-1 not stated)
    int module_loading = 0;
    bool nvls_capable = false;
    int nvls_enable = -1;
    std::int64_t nccl_buffsize = 0;       // env.NCCL_BUFFSIZE (Simple protocol buffer per connection), 0 not stated
    int variant = 0;                      // -1 low, 0 point, +1 high end of the interval
    std::int64_t capacity_bytes = 0;
    std::string device_id;
    bool npu = false;
    bool complete = true;
    std::vector<std::string> assumptions;
};

struct estimate_component {
    std::string id;       // params, grads, optimizer, master_weights, activations, logits, temporaries, overhead, reference (est44: DPO / KTO only)
    std::string label;
    std::int64_t bytes = 0;
    std::string formula;  // how the figure was computed, with the numbers
};

struct estimate_stage {
    int stage = 0;
    std::int64_t layers = 0;
    std::int64_t inflight_layer_microbatches = 0;
    std::int64_t peak_bytes = 0;          // live-tensor peak of this stage
    std::string peak_phase;
};

struct estimate_result {
    std::vector<estimate_component> components;  // at the peak phase of the worst stage
    std::int64_t peak_bytes = 0;            // live tensors (max_memory_allocated / peak active)
    std::int64_t reserved_peak_bytes = 0;   // caching allocator (max_memory_reserved)
    std::int64_t device_peak_bytes = 0;     // reserved + runtime memory outside the allocator
    bool reserved_capped = false;           // the cache model reached the card: the device figure is its capacity
    std::int64_t runtime_bytes = 0;         // est60: that runtime memory (CUDA context, NCCL buffers; runtime_memory.h)
    std::string runtime_note;               // what it holds
    std::int64_t capacity_bytes = 0;
    std::int64_t budget_bytes = 0;          // capacity x 0.95
    std::int64_t margin_bytes = 0;          // budget - device_peak
    bool fits = false;
    double margin_fraction = 0.0;           // margin / capacity
    std::string peak_phase;                 // forward | loss | backward | optimizer_step
    std::string worst_stage;                // "0", "3 (last)", ...
    int worst_stage_index = 0;
    std::vector<estimate_stage> stages;
    std::int64_t param_count = 0;
    double expert_bytes = 0.0;              // routed-expert params+grads+optimizer+master
    bool complete = true;
    std::vector<std::string> assumptions;
    std::vector<estimate_override> overrides;  // what-if overrides applied, if any
    // Interval of the device peak where framework versions differ or evidence disagrees
    // (low == high == device_peak_bytes when nothing is uncertain); reasons say why.
    std::int64_t low_bytes = 0, high_bytes = 0;
    std::vector<std::string> interval_reasons;
    std::int64_t trainable_params = 0;      // parameters that receive gradients
    std::int64_t optimizer_step_bytes = 0;  // live tensors at the optimizer step (worst stage): what an OOM there is measured against
    // lead32: the forward's and the backward's live peaks (worst stage): a job whose OOM came after a phase got through it
    std::int64_t forward_peak_bytes = 0, backward_peak_bytes = 0;
    std::int64_t logits_tensor_bytes = 0;   // one micro-batch's whole logits per rank, compute dtype (0 when chunked)
    std::int64_t logits_tensor_fp32_bytes = 0;  // the same tensor upcast to fp32 for the loss
    std::int64_t pp_microbatch_size = 0;    // pipeline micro-batch used (0 without PP)
    std::int64_t pp_microbatches = 0;
    std::string pp_microbatch_note;         // "given" or the default assumed
    std::string reserved_note;              // what the caching-allocator model added
    // est25: varying step lengths replayed through the caching-allocator model. `cache_high_bytes` is
    // what the device figure (reserved + runtime; max_memory_reserved, nvidia-smi) can read at the high
    // end, capped at the capacity; `high_bytes` takes only the growth the allocator cannot release
    // before raising OOM (it frees cached whole segments and retries). Equal to high_bytes when unused.
    std::int64_t cache_high_bytes = 0;
    std::vector<std::int64_t> varying_lengths;  // step lengths replayed (empty: not applied)
    std::int64_t varying_growth_bytes = 0;      // reserved growth above fixed-length steps (uncapped)
    std::int64_t varying_need_bytes = 0;        // growth of the smallest allocator limit the steps complete under
    std::int64_t fixed_high_bytes = 0;          // high end without the replay (allocated-statistic comparisons)
    // est65: bitsandbytes paged optimizer states are prefetched to the device before each update and stay there until
    // the driver evicts them, so a device reading (nvidia-smi, mem_get_info) can show the device peak plus those
    // states, up to the capacity. Not counted in the verdict (evicted under pressure). 0 without a paged optimizer.
    std::int64_t paged_reading_high_bytes = 0;
    // Host RAM per node for what the job offloads (host_memory.h): the states, and DeepSpeed's sizing (high)
    std::int64_t host_offload_bytes = 0, host_offload_high_bytes = 0;
    std::int64_t host_budget_bytes = 0;         // host RAM x host_budget_fraction (0: the node's RAM not stated)
    std::string host_offload_what;
    std::string host_offload_sizing;            // whose layout (host_memory.h; empty: nothing offloaded)

    std::int64_t component(const std::string& id) const;
};

// Reads canonical facts (config.yaml, model.yaml, device.yaml, estimate.yaml names).
// Missing values take documented defaults, each listed in `assumptions`.
estimate_input from_facts(const fact_store& facts);
estimate_result estimate(const estimate_input& in);
// Fast path for plan search: device peak (reserved + runtime) of the worst stage, no strings.
std::int64_t estimate_device_peak(const estimate_input& in);
// What-if: the same inputs plus canonical overrides.
estimate_result estimate_with(const fact_store& base, const std::vector<estimate_override>& overrides);
// estimate.* facts, producer "estimator".
void emit_facts(const estimate_result& r, fact_sink& sink);
// {"schema": "oomdx.estimate/1", ...}
nlohmann::json to_json(const estimate_result& r);
// Human-readable breakdown table.
std::string render_text(const estimate_result& r);

// The largest micro-batch (at the given sequence length) and the longest sequence (at the
// given micro-batch) whose device peak stays within the budget; 0 when even 1 does not fit,
// -1 when capacity is unknown. `by_high_end` uses the high end of the interval.
struct fit_limits {
    std::int64_t max_micro_batch = -1;  // at in.seq_len
    std::int64_t max_seq_len = -1;      // at in.micro_batch
    std::int64_t seq_len = 0, micro_batch = 0;
    // rev40: the smallest tensor-parallel degree above the job's, within a node (at most 8) and a layout the job can
    // run (it divides the world size, the heads, the sequence), that fits at the job's batch and sequence with
    // sequence parallelism on; 0 when none does, -1 when not searched (capacity unknown, TP already 8)
    std::int64_t min_tp = -1;
};
fit_limits max_fitting(const estimate_input& in, bool by_high_end = true);

const char* framework_name(train_framework f);
const char* ac_name(ac_kind a);
const char* finetune_name(const finetune_spec& f);  // full, lora, qlora-4bit, dora, freeze, ...
const char* lowp_name(lowp_kind k);

}  // namespace oomdx
