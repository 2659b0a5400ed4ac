// Tunable estimator constants, loaded once from knowledge/estimator.yaml (each with a source
// note there); compiled-in defaults are used for keys the file does not set.
#pragma once

#include <string>

namespace oomdx {

struct estimator_constants {
    double budget_fraction = 0.95;              // method Step 1: estimate <= capacity x 0.95
    double logits_bytes_unfused = 12.0;         // bf16 logits + fp32 upcast + log-softmax + grad
    double logits_bytes_megatron = 6.0;         // bf16 logits + fp32 vocab-parallel CE buffers
    double logits_bytes_megatron_outofplace = 10.0;  // builds before 2024-06-13: + the shifted fp32 copy (est35)
    double logits_bytes_megatron_fused = 10.0;  // --cross-entropy-loss-fusion native: + one compiled fp32 copy
    double logits_bytes_megatron_fused_high = 14.0;
    double logits_bytes_chunked = 3.5;          // chunked CE: bf16 logits of all chunks + fp32 work of one chunk
    double logits_bytes_chunked_compiled = 2.25; // torchtune chunked CE, compute_cross_entropy compiled: bf16 chunks + one chunk's bf16 grad
    double logits_bytes_chunked_eager = 6.5;     // torchtune chunked CE, compile off: bf16 chunks + every chunk's saved fp32 log-probs + one upcast (est55)
    double logits_bytes_linear_ce_eager = 4.75;  // torchtune LinearCrossEntropyLoss, compile off: every chunk's fp32 log-probs + one chunk's bf16 and upcast
    double torchtune_loss_chunks = 8.0;         // CEWithChunkedOutputLoss num_output_chunks default
    double logits_bytes_fused = 1.5;            // projection + CE per chunk inside the loss: one chunk's fp32 work
    double logits_bytes_compiled = 4.0;         // loss compiled with the model: bf16 logits + bf16 gradient
    double logits_bytes_hf_loss_fn = 14.0;      // transformers 4.46-4.48 ForCausalLMLoss: bf16 logits + fp32 + shifted fp32 + log-softmax
    double logits_bytes_rl_logprob = 4.0;          // verl: bf16 logits + the temperature-scaled copy; fused CE, in-place grad
    double logits_bytes_rl_logprob_entropy = 10.0; // ... plus the entropy's softmax and product buffers and a separate gradient
    double logits_bytes_model_dtype_ce = 6.0;   // script's own CE on the model's un-upcast bf16 logits, no autocast (est30)
    double logits_bytes_model_dtype_ce_held = 8.0;  // the same with the loop's `logits` held through backward (est50)
    double logits_bytes_torchtune_kept = 16.0;  // torchtune before #1235/#1046: the recipe's shifted fp32 logits live through backward (est27)
    double logits_bytes_loss_parallel = 16.0;   // DTensor loss-parallel CE over TP: fp32 shards kept separately
    double logits_bytes_loss_parallel_high = 20.0;
    double allocator_rounding = 0.02;           // caching allocator: segment rounding, small-block pool
    double stranded_layer_transients = 1.0;     // freed layer intermediates cached but unusable at the loss
    double reserved_factor_megatron = 1.05;
    // est60: memory outside the allocator (engine/estimator/runtime_memory.h)
    double runtime_context_lazy_bytes = 4.0e8;        // CUDA context, lazy module loading (CUDA >= 11.7, torch >= 1.13)
    double runtime_context_eager_bytes = 1408237568.0;     // eager module loading: 1343 MiB (HF guide, torch 1.10)
    double runtime_context_eager_low_bytes = 666632192.0;  // eager, pytorch#86509's reading
    double nccl_comm_bytes = 6.88e8;            // one NCCL communicator of > 2 ranks (nccl#964, A100 NVLink)
    double nccl_comm_pair_bytes = 5.44e8;       // one of 2 ranks
    double nccl_nvls_bytes = 301989888.0;       // NVLS buffers per rank of a > 2-rank communicator (nvlsPerRankSize)
    double runtime_npu_bytes = 5.0e9;           // CANN + HCCL + driver (MindSpeed's flat 5000 MB)
    double workspace_bytes = 67108864.0;        // cuBLAS/cuDNN workspaces served by the allocator
    double megatron_activation_buffer = 1.05;   // Megatron's 5 % activation buffer
    double muon_2d_fraction = 0.9;              // share of params Muon treats as 2-D
    double ddp_bucket_bytes = 52428800.0;       // 2 x 25 MB DDP buckets
    double deepspeed_bucket_elements = 5.0e8;   // reduce_bucket_size default
    double nvfp4_saved_bytes = 0.5625;          // NVFP4 GEMM input copy kept for wgrad: 4 bit + e4m3 scale / 16
    double nf4_unchunked_quant_bytes = 68.0;    // torchao <= 0.1 to_nf4 of a whole weight: bytes per element
    double host_buffer_factor = 1.5;            // host RAM for offloaded states: DeepSpeed's additional_buffer_factor
    double host_budget_fraction = 0.8;          // share of a node's RAM offloaded states may take (OS, loaders, page cache)
};

// Loaded from data_path("knowledge/estimator.yaml") once; defaults if the file is absent.
// A malformed file throws input_error naming file and line.
const estimator_constants& estimator_k();
estimator_constants load_estimator_constants(const std::string& path);

}  // namespace oomdx
