#include "engine/estimator/estimator_constants.h"

#include <filesystem>
#include <map>

#include <fmt/format.h>
#include "engine/core/yaml_node.h"

#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/yaml_file.h"

namespace oomdx {

estimator_constants load_estimator_constants(const std::string& path) {
    estimator_constants k;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return k;
    std::map<std::string, double*> slots{
        {"budget_fraction", &k.budget_fraction},
        {"logits_bytes_unfused", &k.logits_bytes_unfused},
        {"logits_bytes_megatron", &k.logits_bytes_megatron},
        {"logits_bytes_megatron_outofplace", &k.logits_bytes_megatron_outofplace},
        {"logits_bytes_megatron_fused", &k.logits_bytes_megatron_fused},
        {"logits_bytes_megatron_fused_high", &k.logits_bytes_megatron_fused_high},
        {"logits_bytes_chunked", &k.logits_bytes_chunked},
        {"logits_bytes_chunked_compiled", &k.logits_bytes_chunked_compiled},
        {"logits_bytes_chunked_eager", &k.logits_bytes_chunked_eager},
        {"logits_bytes_linear_ce_eager", &k.logits_bytes_linear_ce_eager},
        {"torchtune_loss_chunks", &k.torchtune_loss_chunks},
        {"logits_bytes_fused", &k.logits_bytes_fused},
        {"logits_bytes_compiled", &k.logits_bytes_compiled},
        {"logits_bytes_hf_loss_fn", &k.logits_bytes_hf_loss_fn},
        {"logits_bytes_rl_logprob", &k.logits_bytes_rl_logprob},
        {"logits_bytes_rl_logprob_entropy", &k.logits_bytes_rl_logprob_entropy},
        {"logits_bytes_model_dtype_ce", &k.logits_bytes_model_dtype_ce},
        {"logits_bytes_model_dtype_ce_held", &k.logits_bytes_model_dtype_ce_held},
        {"logits_bytes_torchtune_kept", &k.logits_bytes_torchtune_kept},
        {"logits_bytes_loss_parallel", &k.logits_bytes_loss_parallel},
        {"logits_bytes_loss_parallel_high", &k.logits_bytes_loss_parallel_high},
        {"allocator_rounding", &k.allocator_rounding},
        {"nf4_unchunked_quant_bytes", &k.nf4_unchunked_quant_bytes},
        {"stranded_layer_transients", &k.stranded_layer_transients},
        {"reserved_factor_megatron", &k.reserved_factor_megatron},
        {"runtime_context_lazy_bytes", &k.runtime_context_lazy_bytes},
        {"runtime_context_eager_bytes", &k.runtime_context_eager_bytes},
        {"runtime_context_eager_low_bytes", &k.runtime_context_eager_low_bytes},
        {"nccl_comm_bytes", &k.nccl_comm_bytes},
        {"nccl_comm_pair_bytes", &k.nccl_comm_pair_bytes},
        {"nccl_nvls_bytes", &k.nccl_nvls_bytes},
        {"runtime_npu_bytes", &k.runtime_npu_bytes},
        {"workspace_bytes", &k.workspace_bytes},
        {"megatron_activation_buffer", &k.megatron_activation_buffer},
        {"muon_2d_fraction", &k.muon_2d_fraction},
        {"ddp_bucket_bytes", &k.ddp_bucket_bytes},
        {"deepspeed_bucket_elements", &k.deepspeed_bucket_elements},
        {"nvfp4_saved_bytes", &k.nvfp4_saved_bytes},
        {"host_buffer_factor", &k.host_buffer_factor},
        {"host_budget_fraction", &k.host_budget_fraction},
    };
    const YAML::Node root = load_yaml_file(path);
    if (!root || root.IsNull()) return k;
    if (!root.IsMap() || !root["constants"] || !root["constants"].IsMap())
        throw input_error::in_file(path, "expected a map with a 'constants' map");
    for (const auto& kv : root["constants"]) {
        const std::string key = kv.first.as<std::string>();
        const int line = kv.first.Mark().line + 1;
        auto it = slots.find(key);
        if (it == slots.end()) throw input_error::at_line(path, line, fmt::format("unknown constant '{}'", key));
        const YAML::Node v = kv.second.IsMap() ? kv.second["value"] : kv.second;
        try {
            const double d = v.as<double>();
            if (!(d >= 0.0) || d > 1e15)
                throw input_error::at_line(path, line, fmt::format("constant '{}' out of range", key));
            *it->second = d;
        } catch (const YAML::Exception&) {
            throw input_error::at_line(path, line, fmt::format("constant '{}' is not a number", key));
        }
    }
    return k;
}

const estimator_constants& estimator_k() {
    static const estimator_constants k = load_estimator_constants(data_path("knowledge/estimator.yaml"));
    return k;
}

}  // namespace oomdx
