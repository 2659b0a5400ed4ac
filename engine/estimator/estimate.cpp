#include "engine/estimator/estimate.h"

#include <algorithm>
#include <numeric>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/bytes.h"
#include "engine/core/dynamic_batch.h"
#include "engine/core/errors.h"
#include "engine/core/expert_tp.h"
#include "engine/core/fact_store.h"
#include "engine/core/padded_vocab.h"
#include "engine/core/version.h"
#include "engine/estimator/estimate_model.h"
#include "engine/estimator/host_memory.h"
#include "engine/estimator/estimator_constants.h"
#include "engine/estimator/runtime_memory.h"
#include "engine/estimator/varying_lengths.h"

namespace oomdx {

const char* framework_name(train_framework f) {
    switch (f) {
        case train_framework::torchtitan: return "torchtitan";
        case train_framework::megatron: return "megatron";
        case train_framework::deepspeed: return "deepspeed";
        case train_framework::torchtune: return "torchtune";
        case train_framework::generic: return "generic";
    }
    return "generic";
}

const char* ac_name(ac_kind a) {
    switch (a) {
        case ac_kind::none: return "none";
        case ac_kind::selective_op: return "selective(op)";
        case ac_kind::selective_layer: return "selective(layer)";
        case ac_kind::full: return "full";
    }
    return "none";
}

const char* finetune_name(const finetune_spec& f) {
    switch (f.kind) {
        case finetune_kind::full: return "full";
        case finetune_kind::freeze: return "freeze";
        case finetune_kind::lora:
            if (f.base_bits == 4) return f.dora ? "qdora-4bit" : "qlora-4bit";
            if (f.base_bits == 8) return f.dora ? "qdora-8bit" : "qlora-8bit";
            if (f.base_bits < 16) return "qlora";
            return f.dora ? "dora" : "lora";
    }
    return "full";
}

const char* lowp_name(lowp_kind k) {
    switch (k) {
        case lowp_kind::none: return "none";
        case lowp_kind::float8_tensorwise: return "float8 (tensorwise)";
        case lowp_kind::float8_rowwise: return "float8 (rowwise)";
        case lowp_kind::mxfp8: return "MXFP8";
        case lowp_kind::nvfp4: return "NVFP4";
    }
    return "none";
}

std::int64_t estimate_result::component(const std::string& id) const {
    for (const auto& c : components)
        if (c.id == id) return c.bytes;
    return 0;
}

namespace {

std::string lower(std::string s) {
    for (auto& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

// Reads facts with a default and records the assumption when a value is missing.
struct reader {
    const fact_store& f;
    estimate_input& in;

    std::optional<std::int64_t> int_opt(const std::string& n) const {
        const fact* x = f.get(n);
        if (!x) return std::nullopt;
        if (x->val.is_integer()) return x->val.as_integer();
        if (x->val.is_number() && std::isfinite(x->val.as_number())) return std::int64_t(std::llround(x->val.as_number()));
        if (x->val.is_string()) {
            try {
                return std::stoll(x->val.as_string());
            } catch (...) {
                return std::nullopt;
            }
        }
        return std::nullopt;
    }
    std::optional<double> num_opt(const std::string& n) const {
        const fact* x = f.get(n);
        if (!x) return std::nullopt;
        if (x->val.is_integer()) return double(x->val.as_integer());
        if (x->val.is_number() && std::isfinite(x->val.as_number())) return x->val.as_number();
        return std::nullopt;
    }
    std::int64_t integer(const std::string& n, std::int64_t def, const char* why, bool required = false) {
        if (auto v = int_opt(n)) return *v;
        if (why) in.assumptions.push_back(fmt::format("{} = {} ({})", n, def, why));
        if (required) in.complete = false;
        return def;
    }
    std::optional<bool> bool_opt(const std::string& n) const {
        const fact* x = f.get(n);
        if (!x) return std::nullopt;
        if (x->val.is_bool()) return x->val.as_bool();
        if (x->val.is_integer()) return x->val.as_integer() != 0;
        if (x->val.is_string()) {
            const std::string s = lower(x->val.as_string());
            if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
            if (s == "false" || s == "0" || s == "no" || s == "off") return false;
        }
        return std::nullopt;
    }
    bool boolean(const std::string& n, bool def, const char* why) {
        if (auto v = bool_opt(n)) return *v;
        if (why) in.assumptions.push_back(fmt::format("{} = {} ({})", n, def ? "true" : "false", why));
        return def;
    }
    std::optional<std::string> str_opt(const std::string& n) const {
        const fact* x = f.get(n);
        if (!x) return std::nullopt;
        if (x->val.is_string()) return x->val.as_string();
        if (x->val.is_integer()) return std::to_string(x->val.as_integer());
        if (x->val.is_bool()) return std::string(x->val.as_bool() ? "true" : "false");
        return std::nullopt;
    }
    std::string str(const std::string& n, const std::string& def, const char* why) {
        if (auto v = str_opt(n)) return *v;
        if (why) in.assumptions.push_back(fmt::format("{} = {} ({})", n, def, why));
        return def;
    }
};

int dtype_bytes(const std::string& s) {
    const std::string d = lower(s);
    if (d == "float32" || d == "fp32" || d == "float") return 4;
    if (d == "int8" || d == "fp8" || d == "float8") return 1;
    return 2;
}

// "2024-12-26", "2024-12" (its first day), "20241226" or "2024/12/26" -> 20241226; 0 when unreadable.
int parse_framework_date(const std::string& s) {
    int y = 0, mo = 0, d = 0;
    std::string digits;
    std::vector<int> parts;
    for (char ch : s + "-") {
        if (ch >= '0' && ch <= '9') {
            if (digits.size() < 8) digits += ch;
        } else if (!digits.empty()) {
            parts.push_back(std::stoi(digits));
            digits.clear();
        }
    }
    if (parts.size() == 1 && parts[0] >= 19000101) {
        y = parts[0] / 10000, mo = parts[0] / 100 % 100, d = parts[0] % 100;
    } else if (parts.size() >= 2) {
        y = parts[0], mo = parts[1], d = parts.size() >= 3 ? parts[2] : 1;
    }
    if (y < 2000 || y > 2100 || mo < 1 || mo > 12 || d < 1 || d > 31) return 0;
    return y * 10000 + mo * 100 + d;
}

std::int64_t clamp_degree(std::int64_t v) { return std::clamp<std::int64_t>(v, 1, std::int64_t(1) << 24); }

// Adapter target names of PEFT / LLaMA-Factory (HF module names), torchtune, torchtitan,
// LitGPT and Megatron-core mapped to the layer's linear modules; "all" / "all-linear" is every linear.
unsigned lora_targets(const std::string& spec, std::vector<std::string>& unknown) {
    using namespace lora_target;
    unsigned bits = 0;
    std::string cur;
    auto flush = [&] {
        std::string n = lower(cur);
        cur.clear();
        n.erase(std::remove_if(n.begin(), n.end(), [](char ch) { return ch == ' ' || ch == '\'' || ch == '"' || ch == '[' || ch == ']'; }), n.end());
        if (n.empty()) return;
        if (n == "all" || n == "all-linear" || n == "all_linear") bits |= all;
        else if (n == "q_proj" || n == "query" || n == "wq" || n == "q") bits |= q;
        else if (n == "k_proj" || n == "key" || n == "wk" || n == "k") bits |= k;
        else if (n == "v_proj" || n == "value" || n == "wv" || n == "v") bits |= v;
        else if (n == "c_attn" || n == "query_key_value" || n == "qkv_proj" || n == "wqkv" || n == "attn" || n == "qkv") bits |= q | k | v;
        else if (n == "o_proj" || n == "output_proj" || n == "out_proj" || n == "wo" || n == "projection" || n == "dense" || n == "o")
            bits |= o;
        else if (n == "gate_proj" || n == "w1" || n == "gate") bits |= gate;
        else if (n == "up_proj" || n == "w3" || n == "c_fc" || n == "fc1" || n == "fc_1" || n == "dense_h_to_4h" || n == "up") bits |= up;
        else if (n == "gate_up_proj") bits |= gate | up;
        else if (n == "down_proj" || n == "w2" || n == "fc2" || n == "fc_2" || n == "dense_4h_to_h" || n == "down") bits |= down;
        else if (n == "c_proj") bits |= o | down;
        // Megatron-core module names (MindSpeed-LLM --lora-target-modules): fused QKV, attention
        // output, fused gate+up (SwiGLU fc1), down
        else if (n == "linear_qkv") bits |= q | k | v;
        else if (n == "linear_proj") bits |= o;
        else if (n == "linear_fc1") bits |= gate | up;
        else if (n == "linear_fc2") bits |= down;
        else if (n == "mlp") bits |= gate | up | down;
        else unknown.push_back(n);
    };
    for (char ch : spec) {
        if (ch == ',' || ch == ';') flush();
        else cur += ch;
    }
    flush();
    return bits;
}

}  // namespace

estimate_input from_facts(const fact_store& facts) {
    estimate_input in;
    reader r{facts, in};

    // framework
    // The framework's estimator conventions (its adapter's semantics), else its name.
    const std::string fw = facts.has("framework.estimator")
                               ? lower(r.str("framework.estimator", "torchtitan", nullptr))
                               : lower(r.str("job.framework", "torchtitan", "framework unknown; torchtitan semantics"));
    if (fw == "megatron" || fw == "mindspeed")
        in.framework = train_framework::megatron;
    else if (fw == "deepspeed")
        in.framework = train_framework::deepspeed;
    else if (fw == "torchtitan" || fw == "torchtitan_npu")
        in.framework = train_framework::torchtitan;
    else if (fw == "torchtune")
        in.framework = train_framework::torchtune;
    else
        in.framework = train_framework::generic;
    // the job's own framework name for conventions its estimator semantics do not carry
    const std::string job_fw = lower(r.str_opt("job.framework").value_or(fw));
    // HF transformers modeling code: the adapter's semantics say so (framework.hf_model), else the
    // two frameworks known to use it
    in.hf_model = facts.has("framework.hf_model") ? r.boolean("framework.hf_model", false, nullptr)
                                                   : job_fw == "hf_trainer" || job_fw == "llama_factory";
    const bool llama_factory = job_fw == "llama_factory";
    // HF Trainer and LLaMA-Factory with a DeepSpeed config train under the DeepSpeed engine: it
    // casts the module to the bf16/fp16 it is given and keeps fp32 master partitions
    // (deepspeed/runtime/engine.py, _configure_distributed_model), whatever dtype the trainer loaded.
    // A DeepSpeed setup named by a preset the framework ships (ms-swift `--deepspeed zero3`,
    // job.deepspeed_preset) runs the same engine as one named by its JSON file.
    // A log that shows the engine (job.runs_deepspeed) says the same where no config was given.
    const bool deepspeed = facts.has("job.deepspeed_config") || facts.has("job.deepspeed_preset") ||
                           facts.boolean("job.runs_deepspeed").value_or(false) ||
                           facts.boolean("job.deepspeed_via_accelerate").value_or(false);  // rev25
    if (in.framework == train_framework::generic && in.hf_model && deepspeed)
        in.framework = train_framework::deepspeed;

    // model
    estimate_model& m = in.model;
    m.name = r.str("model.name", "", nullptr);
    m.family = lower(r.str("model.family", "llama", nullptr));
    m.hidden = r.integer("model.hidden_size", 4096, "model dims missing", true);
    m.layers = r.integer("model.num_layers", 32, "model dims missing", true);
    m.heads = r.integer("model.num_attention_heads", 32, "model dims missing", true);
    m.kv_heads = r.integer("model.num_kv_heads", m.heads, nullptr);
    m.head_dim = r.integer("model.head_dim", m.heads > 0 ? m.hidden / m.heads : 128, nullptr);
    m.ffn = r.integer("model.intermediate_size", m.hidden * 4, "model dims missing", true);
    // est63: a Megatron script with no --vocab-size takes its tokenizer's vocabulary, padded by
    // Megatron to a multiple of --make-vocab-size-divisible-by (default 128) x TP
    // (megatron/training/tokenizer/tokenizer.py, _vocab_size_with_padding); TP is the job's
    const auto tokenizer_vocab = r.int_opt("model.tokenizer_vocab_size");
    const std::string tokenizer = r.str_opt("model.tokenizer").value_or(r.str_opt("model.tokenizer_type").value_or(""));
    if (r.int_opt("model.vocab_size")) {
        m.vocab = *r.int_opt("model.vocab_size");
    } else if (tokenizer_vocab && *tokenizer_vocab > 0) {
        const std::int64_t div = std::max<std::int64_t>(1, r.int_opt("model.vocab_divisible_by").value_or(128));
        const std::int64_t tp = std::max<std::int64_t>(1, r.int_opt("parallelism.tensor_parallel_degree").value_or(1));
        m.vocab = megatron_padded_vocab(*tokenizer_vocab, div, tp);
        in.assumptions.push_back(fmt::format(
            "model.vocab_size = {}: the tokenizer {} has {} tokens ({}), padded to a multiple of {} "
            "(make-vocab-size-divisible-by {} x TP {})",
            m.vocab, tokenizer, *tokenizer_vocab, r.str_opt("model.tokenizer_vocab_source").value_or("?"),
            megatron_padding_multiple(div, tp), div, tp));
    } else if (!tokenizer.empty()) {
        m.vocab = 32000;
        in.complete = false;
        in.assumptions.push_back(fmt::format("model.vocab_size = 32000 assumed: the tokenizer {} is neither a known model "
                                             "preset nor a local HF directory with config.json",
                                             tokenizer));
    } else {
        m.vocab = r.integer("model.vocab_size", 32000, "model dims missing", true);
    }
    m.tied = r.boolean("model.tie_word_embeddings", false, nullptr);
    // LitGPT's checkpoint conversion copies a tied embedding into a separate lm_head weight
    // (scripts/convert_hf_checkpoint.py) and its fine-tuning scripts never tie them again
    // (train.tie_embeddings is unsupported there; only pretrain.py ties): two copies
    if (m.tied && job_fw == "litgpt") {
        m.tied = false;
        in.assumptions.push_back("LitGPT keeps the output head apart from the tied embedding (two copies)");
    }
    if (auto g = r.bool_opt("model.gated_mlp"))
        m.gated = *g;
    else  // est38: the families whose presets carry a 2-matrix GELU/ReLU MLP (parsers/config/model_dims.cpp),
          // so a family given without model.gated_mlp (a job config, a --set) keeps its MLP shape
        m.gated = !(m.family == "gpt" || m.family == "gpt2" || m.family == "opt" || m.family == "bert" || m.family == "bloom" ||
                    m.family == "phi" || m.family == "gpt_neox" || m.family == "starcoder2" || m.family == "gptj" ||
                    m.family == "falcon" || m.family == "arcee");  // est41: Arcee AFM, ReLU^2 over up / down
    {
        // GPT-2, OPT and BERT train with dropout 0.1 in their published configs; modern LLMs with none
        const fact* d = facts.get("model.dropout");
        const bool classic = m.family == "gpt2" || m.family == "opt" || m.family == "bert";
        m.dropout = d && d->val.is_numeric() ? d->val.as_number() : classic ? 0.1 : 0.0;
        if (!(d && d->val.is_numeric()) && classic)
            in.assumptions.push_back(fmt::format("model.dropout = 0.1 ({} config default)", m.family));
        // est26: model.task sequence_classification (AutoModelForSequenceClassification): a pooled
        // classifier replaces the LM head, so no vocabulary-sized logits and no output projection
        const std::string task = lower(r.str("model.task", "", nullptr));
        m.seq_classifier = task == "sequence_classification" || task == "seq_cls" || task == "classification";
        if (m.family == "bert")
            in.assumptions.push_back(m.seq_classifier ? "encoder (bidirectional attention) estimated like a decoder of the same shapes; "
                                                        "sequence classifier: no vocabulary logits"
                                                      : "encoder (bidirectional attention) estimated like a decoder of the same shapes; "
                                                        "MLM logits counted for every position (BertForMaskedLM)");
    }
    m.experts = r.integer("model.num_experts", 0, nullptr);
    if (m.experts > 0) {
        m.top_k = r.integer("model.num_experts_per_tok", 2, "MoE top-k missing", true);
        m.shared_experts = r.integer("model.num_shared_experts", 0, nullptr);
        m.expert_ffn = r.integer("model.moe_intermediate_size", m.ffn, nullptr);
        m.first_dense = r.integer("model.first_k_dense_replace", 0, nullptr);
        m.moe_freq = r.integer("model.moe_layer_freq", 1, nullptr);
    }
    m.kv_lora = r.integer("model.kv_lora_rank", 0, nullptr);
    if (m.kv_lora > 0) {
        m.q_lora = r.integer("model.q_lora_rank", 0, nullptr);
        m.qk_nope = r.integer("model.qk_nope_head_dim", 128, "MLA dims missing", true);
        m.qk_rope = r.integer("model.qk_rope_head_dim", 64, "MLA dims missing", true);
        m.v_head = r.integer("model.v_head_dim", 128, "MLA dims missing", true);
    }
    m.mtp_layers = r.integer("model.mtp_layers", 0, nullptr);
    // Gemma 2 and 3 normalise each block's output as well as its input (post_attention_layernorm,
    // post_feedforward_layernorm in their config-defined modules; LitGPT post_attention_norm /
    // post_mlp_norm): four norms per layer. Gemma 2 soft-caps its attention logits at 50
    // (config.json attn_logit_softcapping)
    if (m.family == "gemma2" || m.family == "gemma3") m.norms_per_layer = 4;
    // est43: parallel attention + MLP blocks (x + attn(ln_1(x)) + mlp(ln_2(x)), or one shared ln(x)).
    // HF GPTNeoXLayer (use_parallel_residual, default true), GPTJBlock and PhiDecoderLayer (one ln),
    // FalconDecoderLayer (parallel_attn: one input_layernorm for 7B's multi-query layout, ln_attn / ln_mlp
    // under new_decoder_architecture for 40B / 180B; Falcon-RW, multi-head, is sequential); LitGPT
    // Block with parallel_residual / shared_attention_norm for the same models (litgpt/config.py)
    if (m.family == "gptj" || m.family == "phi")
        m.parallel_block = 2;
    else if (m.family == "gpt_neox")
        m.parallel_block = 1;
    else if (m.family == "falcon")
        m.parallel_block = m.kv_heads == 1 ? 2 : (m.kv_heads > 0 && m.kv_heads < m.heads) ? 1 : 0;
    if (m.parallel_block == 2) m.norms_per_layer = 1;
    if (m.family == "gemma2") m.attn_softcap = 50.0;
    // Qwen3 (and its MoE), OLMo 2/3 and Gemma 3 normalise q and k per head before RoPE (q_norm / k_norm in their
    // modeling code; Megatron-Core qk_layernorm in Megatron-Bridge's providers)
    m.qk_norm = m.family == "qwen3" || m.family == "qwen3_moe" || m.family == "olmo2" || m.family == "olmo3" ||
                m.family == "gemma3";
    // est63: a stated one wins (Megatron --qk-layernorm on any family)
    if (auto q = r.bool_opt("model.qk_norm")) m.qk_norm = *q;
    const auto sane = [](std::int64_t v, std::int64_t hi) { return v >= 0 && v <= hi; };
    if (!sane(m.hidden, 1 << 20) || !sane(m.layers, 100000) || !sane(m.heads, 1 << 16) ||
        !sane(m.kv_heads, 1 << 16) || !sane(m.head_dim, 1 << 16) || !sane(m.ffn, 1 << 24) ||
        !sane(m.vocab, 1 << 28) || !sane(m.experts, 1 << 20) || !sane(m.top_k, 1 << 20) ||
        !sane(m.expert_ffn, 1 << 24) || !sane(m.kv_lora, 1 << 20) || !sane(m.q_lora, 1 << 20) ||
        m.hidden <= 0 || m.layers <= 0 || m.heads <= 0)
        throw usage_error("model dimensions out of range (hidden, layers, heads, ffn, vocab, experts)");
    if (m.kv_heads <= 0) m.kv_heads = m.heads;
    if (m.head_dim <= 0) m.head_dim = std::max<std::int64_t>(1, m.hidden / m.heads);
    m.first_dense = std::max<std::int64_t>(0, m.first_dense);
    m.moe_freq = std::max<std::int64_t>(1, m.moe_freq);

    // parallelism
    in.tp = clamp_degree(r.integer("parallelism.tensor_parallel_degree", 1, nullptr));
    in.pp = clamp_degree(r.integer("parallelism.pipeline_parallel_degree", 1, nullptr));
    in.cp = clamp_degree(r.integer("parallelism.context_parallel_degree", 1, nullptr));
    in.ep = clamp_degree(r.integer("parallelism.expert_parallel_degree", 1, nullptr));
    in.dp_replicate = clamp_degree(r.integer("parallelism.data_parallel_replicate_degree", 1, nullptr));
    const std::int64_t model_par = in.tp * in.pp * in.cp;
    auto shard = r.int_opt("parallelism.data_parallel_shard_degree");
    auto world = r.int_opt("job.world_size");
    in.etp = clamp_degree(r.integer("parallelism.expert_tensor_parallel_degree",
                                    in.framework == train_framework::megatron
                                        ? megatron_default_expert_tp(in.tp, in.ep, world && *world > 0 ? *world / in.pp : 0)
                                        : 1,
                                    nullptr));
    // est67: how an MoE job moves its routed tokens (engine/estimator/moe_dispatch.h); the job's key, else the
    // framework's default (framework.moe_token_dispatcher: ms-swift's Megatron backend alltoall), else Megatron-LM's
    if (in.model.experts > 0) {
        const auto disp = r.str_opt("training.moe_token_dispatcher");
        const std::string d = lower(disp.value_or(r.str_opt("framework.moe_token_dispatcher").value_or("")));
        in.moe_dispatcher = d == "alltoall" || d == "alltoall_seq" ? moe_dispatcher_kind::alltoall
                            : d == "allgather"                   ? moe_dispatcher_kind::allgather
                            : d == "flex"                        ? moe_dispatcher_kind::flex
                                                                 : moe_dispatcher_kind::unknown;
        const std::string rd = lower(r.str_opt("training.moe_router_dtype").value_or(r.str_opt("framework.moe_router_dtype").value_or("")));
        in.moe_router_bytes = rd == "fp32" || rd == "float32" ? 4 : rd == "fp64" || rd == "float64" ? 8 : 0;
        in.moe_capacity_factor = std::max(0.0, r.num_opt("training.moe_capacity_factor").value_or(0.0));
        in.moe_pad_to_capacity = r.bool_opt("training.moe_pad_to_capacity").value_or(false);
        if (in.moe_capacity_factor <= 0)
            in.assumptions.push_back(
                "MoE routing dropless and balanced: each rank's experts receive tokens x top-k rows; a step whose "
                "routing is uneven sends more to the busiest rank (not bounded here)");
    }
    if (world && *world > 0) {
        in.world = clamp_degree(*world);
        if (!shard || *shard <= 0) shard = std::max<std::int64_t>(1, in.world / (model_par * in.dp_replicate));
    } else {
        if (!shard || *shard <= 0) {
            shard = 1;
            in.assumptions.push_back("job.world_size unknown: data-parallel shard degree 1");
            in.complete = false;
        }
        in.world = clamp_degree(*shard * in.dp_replicate * model_par);
    }
    in.dp_shard = clamp_degree(*shard);
    in.node_ranks = std::min<std::int64_t>(in.world, clamp_degree(r.integer("job.nproc_per_node", 8, nullptr)));
    in.host_memory_bytes = std::max<std::int64_t>(0, r.integer("job.host_memory_bytes", 0, nullptr));
    if (in.world != in.dp_shard * in.dp_replicate * model_par)
        in.assumptions.push_back(fmt::format("world size {} != dp_shard {} x dp_replicate {} x tp {} x pp {} x cp {}",
                                             in.world, in.dp_shard, in.dp_replicate, in.tp, in.pp, in.cp));
    in.sequence_parallel = r.boolean("parallelism.sequence_parallel", in.framework != train_framework::megatron &&
                                                                          in.framework != train_framework::deepspeed,
                                     in.tp > 1 ? "sequence parallel with TP (framework default)" : nullptr);
    in.vpp = clamp_degree(r.integer("parallelism.virtual_pipeline_degree", 1, nullptr));
    const std::string sched = lower(r.str("parallelism.pipeline_parallel_schedule",
                                          in.vpp > 1 ? "interleaved1f1b" : "1f1b", nullptr));
    if (sched.find("interleaved") != std::string::npos && sched.find("zero") == std::string::npos)
        in.schedule = pp_schedule_kind::interleaved;
    else if (sched == "gpipe")
        in.schedule = pp_schedule_kind::gpipe;
    else if (sched.find("zb") != std::string::npos || sched.find("zero") != std::string::npos ||
             sched.find("dualpipe") != std::string::npos)
        in.schedule = pp_schedule_kind::zero_bubble;
    else
        in.schedule = pp_schedule_kind::one_f_one_b;
    in.pp_mb_group = std::max<std::int64_t>(0, r.integer("parallelism.pipeline_microbatch_group_size", 0, nullptr));
    if (in.schedule == pp_schedule_kind::interleaved && in.vpp <= 1) {
        in.vpp = 2;
        in.assumptions.push_back("parallelism.virtual_pipeline_degree = 2 (interleaved schedule, degree missing)");
    }

    // ZeRO / FSDP
    const bool dist_opt = r.boolean("optimizer.distributed", false, nullptr);
    std::int64_t zdef = 0;
    const char* zwhy = nullptr;
    if (in.framework == train_framework::torchtitan) {
        // torchtitan has no ZeRO knob: FSDP exactly when dp_shard x cp > 1 (parallel_dims.py).
        zdef = in.dp_shard * in.cp > 1 ? 3 : 0;
    } else if (in.framework == train_framework::torchtune) {
        zdef = 3;
    } else if (in.framework == train_framework::megatron) {
        zdef = dist_opt ? 1 : 0;
    } else {
        zwhy = "no ZeRO/FSDP stage in the config";
    }
    in.zero_stage = in.framework == train_framework::torchtitan
                        ? int(zdef)
                        : int(std::clamp<std::int64_t>(r.integer("parallelism.zero_stage", zdef, zwhy), 0, 3));
    if (in.framework == train_framework::megatron && dist_opt) in.zero_stage = std::max(in.zero_stage, 1);
    // est63: --num-distributed-optimizer-instances N keeps N copies of the distributed optimizer, each sharded over its
    // intra-instance group of DP x CP / N ranks (core/parallel_state.py intra_distributed_optimizer_instance_group, the
    // collective group of core/distributed/param_and_grad_buffer.py's bucket groups under the distributed optimizer)
    if (in.framework == train_framework::megatron && dist_opt) {
        const std::int64_t n = r.integer("optimizer.distributed_instances", 1, nullptr);
        if (n > 1 && (in.dp_shard * in.dp_replicate * in.cp) % n == 0) in.dist_opt_instances = n;
    }
    // HF Trainer / LLaMA-Factory shard through accelerate's FSDP1 (FullyShardedDataParallel) unless
    // the config asks for fsdp_version 2; a DeepSpeed config takes the ZeRO path instead
    // est50: torch FSDP without resharding after forward (FSDP1 SHARD_GRAD_OP, FSDP2 reshard_after_forward False)
    // keeps each unit's unsharded parameters from its forward through its backward while the sharded storage the
    // optimizer steps stays allocated (torch/distributed/fsdp/_flat_param.py: _local_shard beside
    // _full_param_padded; _composable/fsdp/_fsdp_param.py: _sharded_param_data beside the unsharded params).
    // Only where an FSDP API is named: an unnamed ZeRO-2 may be DeepSpeed's, which keeps no 16-bit shard
    in.fsdp_zero2_shards = in.zero_stage == 2 && !deepspeed && in.framework != train_framework::megatron &&
                           r.int_opt("parallelism.fsdp_version").has_value();
    in.fsdp1 = in.hf_model && in.zero_stage >= 3 && !deepspeed &&
               r.integer("parallelism.fsdp_version", 1, nullptr) != 2;
    // est61: torch FSDP1's no_sync() skips the reduce-scatter in each unit's post-backward hook and leaves the
    // unsharded gradient in the FlatParameter's .grad (torch/distributed/fsdp/_runtime_utils.py _post_backward_hook:
    // `if not state._sync_gradients` returns before _reduce_grad), so accumulating micro-batches under it holds the
    // whole unsharded gradient of every unit until the synchronised backward reduces it. LitGPT's finetune scripts
    // accumulate that way (fabric.no_backward_sync(model, enabled=is_accumulating); Lightning's FSDP backward-sync
    // control enters module.no_sync()); a stated parallelism.fsdp_no_sync_accumulation wins for other scripts.
    // est62: HF Trainer / accelerate FSDP1 too: accelerate's accumulate() enters no_sync(model) on every micro-batch
    // but the synchronising one unless the GradientAccumulationPlugin sets sync_each_batch (accelerator.py), and the
    // Trainer's loop wraps every micro-batch but the last in accelerator.no_sync except under DeepSpeed (trainer.py);
    // for FSDP1 that is FullyShardedDataParallel.no_sync
    // Not the frameworks whose own loops call backward on every micro-batch without no_sync (their adapters' feature
    // fsdp1_no_sync_accumulation: false; verl's dp_actor, llama-recipes' train_utils)
    const bool own_loop = !r.boolean("framework.fsdp1_no_sync_accumulation", true, nullptr);
    in.fsdp1_no_sync = in.zero_stage >= 3 && !deepspeed && in.framework != train_framework::megatron &&
                       r.integer("parallelism.fsdp_version", 1, nullptr) != 2 &&
                       r.boolean("parallelism.fsdp_no_sync_accumulation", job_fw == "litgpt" || (in.fsdp1 && !own_loop), nullptr);
    // est61: FSDP1 does not reshard its root unit after forward (torch/distributed/fsdp/_runtime_utils.py
    // _post_forward_reshard: `not state._is_root`), whoever wraps it; LitGPT's FSDPStrategy(auto_wrap_policy={Block})
    // leaves the embedding, final norm and head in that root. HF / accelerate jobs take est17's whole term (in.fsdp1)
    in.fsdp1_root_live = !in.fsdp1 && job_fw == "litgpt" && in.zero_stage >= 3 && !deepspeed &&
                         r.integer("parallelism.fsdp_version", 1, nullptr) != 2;
    // est68: torch FSDP1 requires use_orig_params=True to wrap a unit whose parameters mix requires_grad True and
    // False, and then gives the unit's FlatParameter a gradient of all its elements, the frozen ones included
    // (torch/distributed/fsdp/_wrap_utils.py _validate_frozen_params: "the gradient memory usage will be higher than
    // expected (<total> numel instead of <nonfrozen> numel before sharding via reduce-scatter)"). LitGPT's
    // FSDPStrategy(auto_wrap_policy={Block}) puts each block's LoRA adapters in the block's unit (Fabric wraps with
    // use_orig_params=True); HF Trainer (_fsdp_qlora_plugin_updates: PEFT's fsdp_auto_wrap_policy) and torchtune's FSDP1
    // recipe wrap the adapters on their own. A stated parallelism.fsdp_mixed_frozen_units wins
    in.fsdp1_mixed_units = in.zero_stage >= 3 && !deepspeed && in.framework != train_framework::megatron &&
                           r.integer("parallelism.fsdp_version", 1, nullptr) != 2 &&
                           r.boolean("parallelism.fsdp_mixed_frozen_units", job_fw == "litgpt", nullptr);
    // est56: a script that loads the model onto its GPU (from_pretrained(device_map=rank), model.to(device)) before
    // wrapping it in FullyShardedDataParallel; HF Trainer / accelerate load on the host and torchtune on the meta device
    in.fsdp1_device_load = in.fsdp1 && r.boolean("parallelism.fsdp_wraps_device_model", false, nullptr);
    // est59: ZeRO-1 / 2 with contiguous_gradients (DeepSpeed's default) allocates its reduce (IPG) buffer of
    // reduce_bucket_size elements in the 16-bit dtype at the start of every backward, and a second one with
    // overlap_comm (deepspeed/runtime/zero/stage_1_and_2.py backward(): buf_0, buf_1), whatever the trainable
    // size; released only at the step (_release_ipg_buffers). Only where the config states the bucket: the
    // HF templates' "auto" is hidden x hidden
    if (in.framework == train_framework::deepspeed && (in.zero_stage == 1 || in.zero_stage == 2)) {
        if (const auto b = r.int_opt("parallelism.reduce_bucket_size"); b && *b > 0)
            in.ds_ipg_bucket_elements = double(*b) * (r.boolean("parallelism.overlap_comm", false, nullptr) ? 2.0 : 1.0);
    }
    // est49: DeepSpeed ZeRO-3 with contiguous_gradients (on by default) allocates one reduce (IPG) bucket buffer of
    // reduce_bucket_size elements per gradient dtype on the device when its optimizer is built, with or without
    // offload, and keeps it for the run (deepspeed/runtime/zero/stage3.py: ipg_buckets' buffer; 0.7:
    // __ipg_bucket_flat_buffer). A stated size wins; unset, DeepSpeed's default is 5e8 elements; the HF Trainer
    // stacks' ZeRO-3 templates say "auto", which transformers' integration fills with hidden x hidden
    if (in.framework == train_framework::deepspeed && in.zero_stage >= 3) {
        if (const auto b = r.int_opt("parallelism.reduce_bucket_size"); b && *b >= 0)
            in.ds_ipg_bucket_elements = double(*b);
        else if (in.hf_model && job_fw != "deepspeed")
            in.ds_ipg_bucket_elements = double(m.hidden) * double(m.hidden);
        else
            in.ds_ipg_bucket_elements = 5.0e8;
    }
    // est36: torch DDP's Reducer with gradient_as_bucket_view false (torch's default; accelerate's
    // DistributedDataParallelKwargs and Lightning Fabric's DDPStrategy leave it) allocates flat buckets for
    // every gradient at construction and copies them back into .grad after each all-reduce: a second copy
    // of all trainable gradients for the whole run. Unsharded data parallelism of the HF / LitGPT / plain
    // PyTorch stacks is that DDP unless an FSDP API is named (FSDP1 NO_SHARD) or the buckets are views
    {
        const bool own_dp = deepspeed || in.framework == train_framework::megatron ||
                            in.framework == train_framework::torchtitan || in.framework == train_framework::torchtune;
        in.ddp_grad_copy = !own_dp && in.zero_stage == 0 && in.dp_shard * std::max<std::int64_t>(1, in.dp_replicate) > 1 &&
                           !r.int_opt("parallelism.fsdp_version") &&
                           !r.boolean("parallelism.ddp_bucket_view", false, nullptr);
    }

    // training
    in.seq_len = std::clamp<std::int64_t>(r.integer("training.seq_len", 2048, "sequence length missing", true), 1, std::int64_t(1) << 26);
    std::int64_t local = 0;
    const auto dyn_tokens = r.int_opt("training.max_tokens_per_device");
    if (r.boolean("training.dynamic_batch", false, nullptr) && dyn_tokens && *dyn_tokens > 0) {
        // dynamic batching: whole sequences up to the token budget per device (x the sequence-parallel
        // ranks before the split); the sample micro-batch is not used
        local = std::min<std::int64_t>(dynamic_batch_sequences(*dyn_tokens, in.cp, in.seq_len), std::int64_t(1) << 24);
        in.dynamic_budget = true;
        in.assumptions.push_back(fmt::format("dynamic batch: {} tokens per device x {} sequence-parallel rank(s) / {} tokens per "
                                             "sequence = micro-batch {} (whole sequences; a shorter mix packs more)",
                                             *dyn_tokens, in.cp, in.seq_len, local));
    } else {
        local = std::clamp<std::int64_t>(r.integer("training.local_batch_size", 1, "micro-batch size missing", true), 1,
                                         std::int64_t(1) << 24);
    }
    // rev41: a framework that unpads each micro-batch (verl's use_remove_padding: training.packing with
    // framework.unpadded_real_lengths) holds the sequences at their real lengths; the estimate fills each one to the
    // cap (the token budget, or the length cap) and says which, since shorter responses need less
    if (r.boolean("training.packing", false, nullptr) && r.boolean("framework.unpadded_real_lengths", false, nullptr))
        in.assumptions.push_back(
            in.dynamic_budget
                ? fmt::format("unpadded micro-batches: the sequences' real lengths fill the token budget; estimated at the "
                              "budget, {} whole sequences of {} tokens", local, in.seq_len)
                : fmt::format("unpadded micro-batches: micro-batch {}, every sequence at its length cap of {} tokens (the "
                              "micro-batch holds the real lengths: an upper bound; a token budget per device would "
                              "bound it instead)", local, in.seq_len));
    in.micro_batch = local;
    in.framework_date = parse_framework_date(r.str("job.framework_date", "", nullptr));
    in.framework_date_min = parse_framework_date(r.str("job.framework_date_min", "", nullptr));
    if (in.pp > 1) {
        const bool pipelining = in.framework == train_framework::torchtitan || in.framework == train_framework::torchtune;
        // torchtitan before 2025-04-07 (5e2033c7) split the local batch into
        // experimental.pipeline_parallel_microbatches micro-batches, by default the PP degree
        const bool count_era = pipelining && in.framework_date > 0 && in.framework_date < est::date_pp_microbatch_size;
        if (auto mbs = r.int_opt("parallelism.pipeline_parallel_microbatch_size"); mbs && *mbs > 0) {
            in.micro_batch = *mbs;
            in.num_microbatches = std::max<std::int64_t>(1, local / *mbs);
        } else if (auto cnt = r.int_opt("parallelism.pipeline_parallel_microbatches"); cnt && *cnt > 0) {
            in.num_microbatches = *cnt;
            in.micro_batch = std::max<std::int64_t>(1, local / *cnt);
        } else if (count_era) {
            in.num_microbatches = in.pp;
            in.micro_batch = std::max<std::int64_t>(1, local / in.pp);
            in.pp_microbatch_assumed = true;
            in.assumptions.push_back(fmt::format(
                "pipeline micro-batches = PP degree {} of {} sequences (torchtitan default before 2025-04-07, the build "
                "date given)", in.pp, in.micro_batch));
        } else if (pipelining) {
            in.micro_batch = 1;
            in.num_microbatches = local;
            in.pp_microbatch_assumed = true;
            in.pp_alt_micro_batch = std::max<std::int64_t>(1, local / in.pp);
            in.assumptions.push_back(fmt::format(
                "parallelism.pipeline_parallel_microbatch_size = 1 (torchtitan default since 2025; before, the local batch "
                "was split into PP-degree micro-batches of {} sequences)", in.pp_alt_micro_batch));
        } else if (auto ga = r.int_opt("training.gradient_accumulation_steps"); ga && *ga > 0) {
            in.num_microbatches = *ga;
        } else if (auto gb = r.int_opt("training.global_batch_size"); gb && *gb > 0) {
            in.num_microbatches = std::max<std::int64_t>(1, *gb / (local * in.dp_shard * in.dp_replicate));
        } else {
            in.num_microbatches = in.pp;
            in.pp_microbatch_assumed = true;
            in.assumptions.push_back("pipeline micro-batches per step = pipeline degree (count unknown)");
        }
    }
    if (in.pp <= 1) {
        // gradient accumulation without a pipeline: autograd adds each micro-batch's gradients into
        // .grad and zero_grad runs only after the optimizer step, so every later forward runs with
        // the gradients alive (HF Trainer, LitGPT, torchtune, torchtitan alike)
        if (auto ga = r.int_opt("training.gradient_accumulation_steps"); ga && *ga > 0)
            in.grad_accum = *ga;
        else if (auto gb = r.int_opt("training.global_batch_size"); gb && *gb > 0)
            in.grad_accum = std::max<std::int64_t>(1, *gb / (local * std::max<std::int64_t>(1, in.dp_shard * in.dp_replicate)));
        in.grad_accum = std::clamp<std::int64_t>(in.grad_accum, 1, std::int64_t(1) << 24);
    }
    in.micro_batch = std::clamp<std::int64_t>(in.micro_batch, 1, std::int64_t(1) << 24);
    in.num_microbatches = std::clamp<std::int64_t>(in.num_microbatches, 1, std::int64_t(1) << 24);
    in.param_bytes = dtype_bytes(r.str("training.mixed_precision_param", "bfloat16", "compute dtype missing"));
    // pure bf16 (torchtitan training.dtype, LLaMA-Factory pure_bf16): optimizer states in the
    // parameters' dtype and no fp32 copy
    in.master_weights = r.boolean("optimizer.master_weights", !r.boolean("training.pure_bf16", false, nullptr), nullptr);
    in.autocast_fp32_params = r.boolean("training.autocast_fp32_params", false, nullptr);
    if (const fact* af = facts.get("training.autocast_fp32_params");
        in.autocast_fp32_params && in.param_bytes < 4 && af && af->prov.from_default())
        in.assumptions.push_back(
            "training.autocast_fp32_params = true (the framework's default where the config does not say: fp32 weights under "
            "autocast, 16 B per parameter with Adam instead of 18 B with a half-precision copy and fp32 master)");
    // est32: DeepSpeed's bf16_master_weights_and_grads keeps the master partition and its gradients in bf16
    // (still a separate copy, unlike pure bf16); other frameworks keep their fp32 master
    if (auto md = r.str_opt("optimizer.master_dtype")) in.master_bytes = lower(*md) == "float32" ? 4 : int(dtype_bytes(*md));

    // activation checkpointing
    const std::string ac = lower(r.str("activation_checkpoint.mode", llama_factory ? "full" : "none",
                                       llama_factory ? "LLaMA-Factory enables gradient checkpointing unless disable_gradient_checkpointing"
                                                     : "activation checkpointing not set"));
    if (ac == "full")
        in.ac = ac_kind::full;
    else if (ac == "selective") {
        const std::string opt = lower(r.str("activation_checkpoint.selective_ac_option", "op", nullptr));
        std::int64_t every = 0;
        try {
            every = std::stoll(opt);
        } catch (...) {
            every = 0;
        }
        if (every > 0) {
            in.ac = ac_kind::selective_layer;
            in.ac_every = int(std::min<std::int64_t>(every, 1 << 20));
        } else
            in.ac = ac_kind::selective_op;
    } else
        in.ac = ac_kind::none;
    // est42: torchtune without its config (no file read, no shipped config named by job.recipe_config): the recipes'
    // code default is no checkpointing (cfg.get("enable_activation_checkpointing", False)), which the point keeps, but
    // the shipped configs choose per model (knowledge/frameworks/torchtune.yaml shipped_files), so estimate() gives
    // the other setting as the interval's other end
    if (in.framework == train_framework::torchtune && !facts.has("job.config_file") && in.ac == ac_kind::none) {
        const fact* acf = facts.get("activation_checkpoint.mode");
        in.ac_unknown = !acf || acf->prov.from_default();
    }
    // est46: torchtune's dataset builders between #620 and #1284 truncate each sample at dataset.max_seq_len (512 by
    // default; knowledge/frameworks/torchtune.yaml maps the key to training.seq_len). With the config not read, a longer
    // stated length (a README's or a log's) may not be what the data reached: the interval's low end is at the cap
    if (in.framework == train_framework::torchtune && !facts.has("job.config_file") &&
        est::build_side(in, est::date_torchtune_dataset_cap_512) > 0 && est::build_side(in, est::date_torchtune_dataset_cap_none) < 0 &&
        !r.boolean("training.packing", false, nullptr) && !r.boolean("training.fixed_length", false, nullptr) &&
        in.seq_len > est::torchtune_dataset_cap_default)
        in.tt_dataset_cap = est::torchtune_dataset_cap_default;
    in.activation_offload = r.boolean("activation_checkpoint.offload", false, nullptr);
    in.swap_attention = r.boolean("activation_checkpoint.swap_attention", false, nullptr);

    // optimizer
    std::string opt = lower(r.str("optimizer.name", "adamw", "optimizer missing"));
    // bitsandbytes Paged* optimizers (PagedAdamW, PagedAdamW8bit, paged_adamw_32bit, ...)
    in.optimizer_paged = opt.find("paged") != std::string::npos;
    opt.erase(std::remove_if(opt.begin(), opt.end(), [](char ch) { return ch == '_' || ch == '-' || ch == '.'; }), opt.end());
    if (opt.find("8bit") != std::string::npos)
        opt = "adamw8bit";
    else if (opt.find("4bit") != std::string::npos)
        opt = "adamw4bit";  // torchao AdamW4bit, HF Trainer adamw_torch_4bit
    else if (opt.find("muon") != std::string::npos)
        opt = "muon";
    else if (opt.find("lion") != std::string::npos)
        opt = "lion";
    else if (opt.find("sgd") != std::string::npos)
        opt = "sgd";
    else if (opt.find("adafactor") != std::string::npos)
        opt = "adafactor";
    else if (opt.find("adam") != std::string::npos)
        opt = "adamw";
    else
        in.assumptions.push_back(fmt::format("optimizer '{}' treated as Adam-like (2 states)", opt));
    in.optimizer = opt;
    in.state_dtype_bytes = dtype_bytes(r.str("optimizer.state_dtype", "float32", nullptr));
    if (r.str_opt("optimizer.state_dtype") && lower(*r.str_opt("optimizer.state_dtype")) == "float32") in.state_dtype_bytes = 4;
    if (!r.str_opt("optimizer.state_dtype")) in.state_dtype_bytes = 4;
    const std::string off = lower(r.str("optimizer.offload", "none", nullptr));
    in.optimizer_offload = off == "cpu" || off == "nvme";
    in.swap_optimizer = r.boolean("optimizer.swap_optimizer", false, nullptr);
    in.swap_times = int(std::clamp<std::int64_t>(r.integer("optimizer.swap_optimizer_times", 16, nullptr), 1, 1 << 20));
    in.optimizer_in_backward = r.boolean("optimizer.in_backward", false, nullptr);
    in.optimizer_stale = r.boolean("optimizer.stale_params", false, nullptr);
    const std::string poff = lower(r.str("parallelism.offload_params", "none", nullptr));
    in.params_offload = poff == "cpu" || poff == "nvme";
    in.optimizer_nvme = off == "nvme";
    in.params_nvme = poff == "nvme";
    // verl's param_offload / optimizer_offload (framework.offload_between_phases) move the states to the host
    // while the rollout engine generates and load them back before the update (the engines' train_mode,
    // load_fsdp_model_to_gpu / load_fsdp_optimizer, load_megatron_model_to_gpu): the update holds them
    if ((in.params_offload || in.optimizer_offload) && r.boolean("framework.offload_between_phases", false, nullptr)) {
        in.params_offload = in.optimizer_offload = false;
        in.assumptions.push_back("parameter / optimizer offload moves the states to the host between phases only; they are "
                                 "loaded back for the update, which holds them (verl)");
    }

    // kernels and loss
    in.compile = r.boolean("compile.enable", false, nullptr);
    in.compile_loss = r.boolean("compile.loss", true, nullptr);
    in.float8 = r.boolean("quantize.linear.float8", false, nullptr);
    {
        // low-precision recipe: quantize.linear.recipe names it; the float8 switch alone means
        // torchtitan's default tensorwise recipe
        std::string rec = lower(r.str("quantize.linear.recipe", "", nullptr));
        // a float8 recipe's name beside a switch that says off (torchtune's enable_fp8_training: false) turns nothing on
        const auto f8_switch = r.bool_opt("quantize.linear.float8");
        if (f8_switch && !*f8_switch && (rec.find("rowwise") != std::string::npos || rec.find("tensorwise") != std::string::npos))
            rec.clear();
        if (rec.find("nvfp4") != std::string::npos) in.lowp = lowp_kind::nvfp4;
        else if (rec.find("mx") != std::string::npos) in.lowp = lowp_kind::mxfp8;
        else if (rec.find("rowwise") != std::string::npos) in.lowp = lowp_kind::float8_rowwise;
        else if (rec.find("tensorwise") != std::string::npos || rec == "float8") in.lowp = lowp_kind::float8_tensorwise;
        else if (r.boolean("quantize.linear.mx", false, nullptr)) in.lowp = lowp_kind::mxfp8;
        else if (in.float8) in.lowp = lowp_kind::float8_tensorwise;
        in.float8 = in.lowp == lowp_kind::float8_tensorwise || in.lowp == lowp_kind::float8_rowwise;
        in.fp8_all_gather = in.float8 && r.boolean("quantize.linear.float8_all_gather", false, nullptr);
        if (in.fp8_all_gather && !est::fp8_all_gather_applies(in))
            in.assumptions.push_back(
                "float8 all-gather not applied: torchtitan enables it only with data_parallel_shard_degree > 1 "
                "(FSDP over CP alone all-gathers bf16 weights)");
        if (auto f = r.bool_opt("quantize.linear.float8_force_recompute")) in.fp8_force_recompute = *f ? 1 : 0;
        in.lowp_bf16_tail = std::clamp<std::int64_t>(r.integer("quantize.linear.bf16_tail_layers", 0, nullptr), 0, m.layers);
        in.async_tp = in.tp > 1 && r.boolean("parallelism.async_tp", false, nullptr);
    }
    const std::string attn = lower(r.str("model.attn_impl", "flash", nullptr));
    in.flash = attn != "eager";
    // LitGPT cannot use SDPA with soft-capping (litgpt/model.py scaled_dot_product_attention): it
    // computes the scores, their tanh, an fp32 softmax and its bf16 copy itself, as HF's eager path does
    if (job_fw == "litgpt" && m.attn_softcap > 0) {
        in.flash = false;
        in.manual_attn = true;
        in.assumptions.push_back("LitGPT computes the soft-capped attention by hand (no SDPA): s x s scores per head");
    }
    in.chunked_loss = r.boolean("training.chunked_loss", false, nullptr);
    in.chunked_loss_projects = in.chunked_loss && r.boolean("training.chunked_loss_projects", false, nullptr);
    // est69: a trainer that computes the loss from the logits itself gives the model no labels, so a fused head + loss
    // (Liger) never runs (ms-swift's compute_loss: knowledge/sources/ms_swift_runs_and_readings.md)
    if (in.chunked_loss && r.boolean("training.loss_outside_model", false, nullptr)) {
        in.chunked_loss = in.chunked_loss_projects = false;
        in.assumptions.push_back(
            "the trainer computes the loss itself from the model's logits (the model gets no labels): the fused linear "
            "cross-entropy does not run, full logits");
    }
    in.norm_upcast = r.boolean("model.norm_upcast", true, nullptr);
    in.hf_kv_cache = in.hf_model && r.boolean("model.use_cache", false, nullptr);
    in.loss_parallel = r.boolean("training.loss_parallel", true, nullptr);
    if (in.framework == train_framework::megatron) {
        // Megatron's fused cross-entropy: the flag sets "native"; --cross-entropy-fusion-impl may name te
        const std::string ce = lower(r.str("training.cross_entropy_fusion", "none", nullptr));
        const std::string impl = lower(r.str("training.cross_entropy_fusion_impl", "native", nullptr));
        if (ce != "none" && ce != "false") in.ce_fusion = (ce == "te" || impl == "te") ? 2 : 1;
        in.defer_embedding_wgrad = r.boolean("training.defer_embedding_wgrad", false, nullptr);
        in.wgrad_deferral_limit = std::max<std::int64_t>(0, r.integer("training.wgrad_deferral_limit", 0, nullptr));
        // --grad-reduce-in-bf16: the DDP gradient buffer in the parameters' dtype instead of fp32
        const std::string red = lower(r.str("training.mixed_precision_reduce", "float32", nullptr));
        if (red == "bfloat16" || red == "float16") in.grad_reduce_bytes = 2;
    }

    if (const fact* a = facts.get("job.assumptions"); a && a->val.is_list())
        for (const auto& x : a->val.as_list())
            if (x.is_string()) in.assumptions.push_back(x.as_string());

    // fine-tuning (LoRA / QLoRA / DoRA / freeze) as the framework implements it
    {
        finetune_spec& ft = in.ft;
        const std::string ftype =
            lower(r.str("training.finetuning_type", llama_factory ? "lora" : "full", llama_factory ? "LLaMA-Factory default" : nullptr));
        const auto bits = r.int_opt("training.quantization_bit");
        if (ftype == "lora" || ftype == "qlora" || ftype == "dora" || ftype == "oft" || ftype == "qdora") {
            ft.kind = finetune_kind::lora;
            ft.dora = ftype == "dora" || ftype == "qdora" || r.boolean("training.use_dora", false, nullptr);
            ft.base_bits = bits && *bits > 0 && *bits < 16 ? int(*bits) : (ftype == "qlora" || ftype == "qdora" ? 4 : 16);
            if ((ftype == "qlora" || ftype == "qdora") && !bits) in.assumptions.push_back("training.quantization_bit = 4 (QLoRA)");
        } else if (ftype == "freeze") {
            ft.kind = finetune_kind::freeze;
            ft.trainable_layers = std::max<std::int64_t>(
                1, std::llabs(r.integer("training.freeze_trainable_layers", 2, "LLaMA-Factory default: the last 2 layers train")));
        } else if (ftype != "full") {
            in.assumptions.push_back(fmt::format("training.finetuning_type '{}' treated as full fine-tuning", ftype));
        }
        if (ft.kind == finetune_kind::lora) {
            // the default cited is the job's framework's own (rev23: torchtune jobs were told "LLaMA-Factory default")
            const bool torchtune = job_fw == "torchtune";
            const char* why_rank = llama_factory ? "PEFT / LLaMA-Factory default rank"
                                   : torchtune   ? "torchtune LoRA builders' default lora_rank"
                                                 : "PEFT LoraConfig default rank";
            const char* why_target = llama_factory ? "adapters on every linear module (LLaMA-Factory default)"
                                     : torchtune   ? "adapters on every linear module (assumed: the config names no lora_attn_modules)"
                                                   : "adapters on every linear module (assumed: no target given)";
            ft.lora_rank = std::clamp<std::int64_t>(r.integer("training.lora_rank", 8, why_rank), 1, 1 << 20);
            std::vector<std::string> unknown;
            const std::string tspec = r.str("training.lora_target", "all", why_target);
            ft.targets = lora_targets(tspec, unknown);
            // est69: a target from the default of the framework builds the config's spelling dates (job_config.cpp)
            if (const fact* t = facts.get("training.lora_target");
                t && t->prov.producer.size() > 17 && t->prov.producer.ends_with(".spelling_default"))
                in.assumptions.push_back(fmt::format("training.lora_target = {} ({})", tspec, t->prov.excerpt));
            for (const auto& u : unknown) in.assumptions.push_back(fmt::format("LoRA target '{}' not recognised: ignored", u));
            if (ft.targets == 0) ft.targets = lora_target::q | lora_target::v;
            // est54: PEFT LoraConfig(modules_to_save=...) (LLaMA-Factory additional_target, axolotl
            // lora_modules_to_save): the named embedding / head train in full beside the frozen original
            if (const auto ms = r.str_opt("training.lora_modules_to_save")) {
                std::string cur;
                auto flush = [&] {
                    std::string n = lower(cur);
                    cur.clear();
                    n.erase(std::remove_if(n.begin(), n.end(), [](char ch) { return ch == ' ' || ch == '\'' || ch == '"' || ch == '[' || ch == ']'; }), n.end());
                    if (n.empty() || n == "null" || n == "none") return;
                    if (n == "wte" || n == "embed_tokens" || n == "word_embeddings" || n == "tok_embeddings" || n == "embed_in" || n == "tok_embedding" || n == "embedding")
                        ft.save_embed = true;
                    else if (n == "lm_head" || n == "output" || n == "embed_out" || n == "output_layer")
                        ft.save_head = true;
                    else
                        in.assumptions.push_back(fmt::format("LoRA modules_to_save '{}' not recognised: ignored", n));
                };
                for (char ch : *ms) {
                    if (ch == ',' || ch == ';') flush();
                    else cur += ch;
                }
                flush();
            }
            if (const fact* d = facts.get("training.lora_dropout"); d && d->val.is_numeric()) ft.lora_dropout = d->val.as_number() > 0;
            ft.double_quant = r.boolean("training.double_quantization", true, nullptr);
            const std::string qm = lower(r.str("training.quantization_method", in.framework == train_framework::torchtune ? "torchao" : "bitsandbytes", nullptr));
            ft.quant_keeps_input = qm.find("bnb") != std::string::npos || qm.find("bitsandbytes") != std::string::npos;
            ft.group_quant = qm == "gptq" || qm == "awq";
            ft.gptq_keeps_dequant = qm == "gptq";
            // est70: axolotl's QLoRA loader passes bnb_4bit_quant_storage=torch.bfloat16 (since 2a1589f6f, 2024-03-21;
            // src/axolotl/loaders/model.py _set_quantization_config), transformers' default is uint8
            if (job_fw == "axolotl" && ft.base_bits == 4 && ft.quant_keeps_input && !ft.group_quant) ft.quant_storage_bytes = 2;
            if (ft.group_quant) ft.double_quant = false;
            // LitGPT: Lightning's BitsandbytesPrecision replaces every nn.Linear and LitGPT passes no
            // ignore_modules (litgpt/finetune/lora.py), so the head is a 4/8-bit linear too
            ft.quant_head = job_fw == "litgpt" && ft.base_bits < 16 && ft.quant_keeps_input && !ft.group_quant;
            // est53: bitsandbytes 0.43.2 (9e753741, #1270, released 2024-07-23) stopped MatMul4Bit keeping its input
            // (knowledge/sources/quantized_and_multigpu_lora.md): the stated version decides, else the build date
            if (ft.quant_keeps_input && ft.base_bits == 4) {
                constexpr int bnb_0432_release = 20240723;
                if (const auto bv = version_fact(facts, "job.bitsandbytes_version"); bv && bv->minor >= 0) {
                    ft.bnb4_keeps_input_side = bv->at_least(0, 43, 2) ? -1 : 1;
                } else if (in.framework_date > 0) {
                    ft.bnb4_keeps_input_side = in.framework_date >= bnb_0432_release ? -1 : 1;
                } else if (in.framework_date_min >= bnb_0432_release) {
                    ft.bnb4_keeps_input_side = -1;
                }
            }
        }
        if (ft.kind != finetune_kind::full) {
            const bool pure_bf16 = r.boolean("training.pure_bf16", false, nullptr) || !in.master_weights;
            const std::string prec = r.str_opt("training.mixed_precision_param").value_or("bfloat16");
            // LLaMA-Factory loads in its compute dtype (bf16 where supported); others load in the
            // job's parameter dtype
            const std::string load = r.str("training.load_dtype", llama_factory ? "bfloat16" : prec,
                                           llama_factory ? "frozen weights in bf16 (LLaMA-Factory infers the compute dtype)"
                                                         : "frozen weights in the parameter dtype");
            ft.load_bytes = dtype_bytes(load) >= 4 ? 4 : 2;
            // LLaMA-Factory and PEFT (autocast_adapter_dtype) train adapters in fp32; torchtune
            // and pure-bf16 runs keep them in bf16
            ft.trainable_bytes = pure_bf16 || in.framework == train_framework::torchtune ? 2 : 4;
            if (in.framework == train_framework::torchtitan && ft.kind == finetune_kind::freeze) ft.trainable_bytes = 4;
            // est54: a modules_to_save copy is a deepcopy of the module (its load dtype); PEFT's adapter autocast
            // does not touch it, LLaMA-Factory's fp32 upcast of trainable parameters does
            ft.saved_copy_bytes = llama_factory && !pure_bf16 ? 4 : ft.load_bytes;
            // est41: HF-model trainers shard with FSDP2 through accelerate, whose mixed precision upcast
            // (fsdp2_prepare_model) covers the frozen weights in builds before 1.13
            // est70: a bitsandbytes base takes the same cast (Module.to converts floating-point parameters only: the
            // unquantized rest, and packed 4-bit weights when their storage dtype is 16-bit)
            const bool bnb_base = ft.base_bits < 16 && ft.quant_keeps_input && !ft.group_quant;
            in.accelerate_fsdp2_mp = in.hf_model && !deepspeed && in.zero_stage >= 3 && !in.fsdp1 && !pure_bf16 &&
                                     (ft.base_bits >= 16 || bnb_base) && ft.load_bytes == 2 &&
                                     r.integer("parallelism.fsdp_version", 1, nullptr) == 2 &&
                                     in.framework != train_framework::torchtune && in.framework != train_framework::torchtitan;
        }
    }
    // Full fine-tuning of a model loaded in bf16/fp16 under an HF-model trainer without sharding
    // trains that dtype (torch AdamW keeps its moments in the parameter dtype, no fp32 copy), unless
    // the trainer upcasts trainable weights itself (LLaMA-Factory), DeepSpeed keeps master partitions,
    // or accelerate's FSDP upcasts low-precision parameters to fp32 for its mixed precision.
    if (in.ft.kind == finetune_kind::full && in.hf_model && !llama_factory && in.framework != train_framework::deepspeed &&
        in.zero_stage == 0 && !facts.has("optimizer.master_weights")) {
        const std::string load = lower(r.str_opt("training.load_dtype").value_or(""));
        if (load == "bfloat16" || load == "float16") {
            in.master_weights = false;
            in.param_bytes = 2;
        }
    }
    // est52: memory-efficient full-parameter training (engine/estimator/memory_efficient.cpp). LLaMA-Factory's
    // use_badam / use_galore / use_apollo (hparams/finetuning_args.py defaults: galore_rank 16, galore_target all,
    // apollo_rank 16, badam_mode layer, badam_update_ratio 0.05), HF Trainer's optim names (galore_adamw[_8bit]
    // [_layerwise], apollo_adamw[_layerwise]; rank 128 unless optim_args says), ms-swift's LISA
    if (in.ft.kind == finetune_kind::full) {
        memory_efficient_spec& me = in.me;
        const std::string oname = lower(r.str_opt("optimizer.name").value_or(""));
        const bool badam = r.boolean("training.badam", false, nullptr);
        const bool galore = r.boolean("optimizer.galore", false, nullptr) || oname.find("galore") != std::string::npos;
        const bool apollo = r.boolean("optimizer.apollo", false, nullptr) || oname.find("apollo") != std::string::npos;
        const auto lisa = r.int_opt("training.lisa_layers");
        const std::int64_t def_rank = llama_factory ? 16 : 128;
        const char* rank_why = llama_factory ? "LLaMA-Factory default" : "HF Trainer / ms-swift default";
        if (badam) {
            me.kind = me_kind::badam;
            me.badam_ratio = lower(r.str("training.badam_mode", "layer", "LLaMA-Factory default: one decoder layer per block")) == "ratio";
            if (me.badam_ratio) {
                if (const fact* x = facts.get("training.badam_update_ratio"); x && x->val.is_numeric())
                    me.badam_update_ratio = std::clamp(x->val.as_number(), 0.0, 1.0);
            }
            // LLaMA-Factory leaves trainable weights in half precision under BAdam (model/adapter.py): BlockOptimizer
            // keeps the fp32 copy of the active block itself
            in.master_weights = false;
            in.param_bytes = std::min(in.param_bytes, 2);
        } else if (galore || apollo) {
            me.kind = galore ? me_kind::galore : me_kind::apollo;
            const char* p = galore ? "optimizer.galore_" : "optimizer.apollo_";
            me.rank = std::clamp<std::int64_t>(r.integer(std::string(p) + "rank", def_rank, rank_why), 1, 1 << 20);
            std::vector<std::string> unknown;
            std::string tg = lower(r.str_opt(std::string(p) + "target").value_or("all"));
            for (const char* alias : {"self_attn", "attention"})
                for (std::size_t i; (i = tg.find(alias)) != std::string::npos;) tg.replace(i, std::string(alias).size(), "attn");
            me.targets = lora_targets(tg, unknown);
            for (const auto& u : unknown) in.assumptions.push_back(fmt::format("{} target '{}' not recognised: ignored", me_name(me.kind), u));
            if (me.targets == 0) me.targets = lora_target::all;
            me.layerwise = r.boolean(std::string(p) + "layerwise", false, nullptr) || oname.find("layerwise") != std::string::npos ||
                           oname.find("per_layer") != std::string::npos;
            if (me.layerwise) in.optimizer_in_backward = true;
            // est53: Q-GaLore's --weight_quant (weight_bits 8, its only width) keeps the targeted linears in INT8
            if (galore) {
                if (const auto wb = r.int_opt("training.weight_bits"); wb && *wb == 8) {
                    me.weight_bits = 8;
                    in.assumptions.push_back(
                        "Q-GaLore weight quantization: the projected linear weights are stored as uint8 with an fp32 scale "
                        "and zero per group of 256 (about 1.03 B per element)");
                }
            }
        } else if (lisa && *lisa > 0) {
            me.kind = me_kind::lisa;
            me.lisa_layers = *lisa;
        }
        if (me.kind == me_kind::badam)
            in.assumptions.push_back(
                me.badam_ratio ? fmt::format("BAdam (ratio mode, update ratio {:g}): every layer's linear gradients are masked to that share; the "
                                             "masked entries keep fp32 values, an fp32 copy and the moments",
                                             me.badam_update_ratio)
                               : "BAdam: one decoder layer trains at a time (its gradients in fp32 at the step, an fp32 copy and the moments); "
                                 "every other weight stays frozen in 16 bits; activations as full training (the first layer's block runs "
                                 "the whole backward)");
        else if (me.kind == me_kind::galore || me.kind == me_kind::apollo)
            in.assumptions.push_back(fmt::format("{} rank {}: moments on rank-{} projections of the targeted linear weights plus the "
                                                 "projection matrices; other parameters keep full states{}",
                                                 me_name(me.kind), me.rank, me.rank,
                                                 me.layerwise ? "; layer-wise: each gradient is stepped and freed in backward" : ""));
        else if (me.kind == me_kind::lisa)
            in.assumptions.push_back(fmt::format("LISA: {} sampled decoder layer(s), the embedding and the head train; the other layers are "
                                                 "frozen (no gradients or states)",
                                                 me.lisa_layers));
    }
    // A vision-language model's vision tower (model.vision_params, from the preset): LLaMA-Factory
    // freezes it by default (freeze_vision_tower: true, hparams/finetuning_args.py) and trains it only
    // in full fine-tuning with freeze_vision_tower: false; frozen, it stays in the load dtype. Image
    // tokens, and the tower's own activations, are not modelled.
    if (const auto vp = r.int_opt("model.vision_params"); vp && *vp > 0) {
        m.vision_params = *vp;
        const bool frozen = !r.boolean("training.freeze_vision_tower", true, nullptr) ? in.ft.kind != finetune_kind::full : true;
        m.vision_trainable = !frozen;
        m.vision_bytes = in.ft.kind != finetune_kind::full ? in.ft.load_bytes : llama_factory ? 2 : in.param_bytes;
        in.assumptions.push_back(
            frozen ? fmt::format("vision tower: {:.3g} B parameters counted as frozen weights ({} B each){}; image tokens and the "
                                 "tower's activations not counted",
                                 double(*vp) / 1e9, m.vision_bytes,
                                 facts.has("training.freeze_vision_tower") ? "" : " (freeze_vision_tower: true, LLaMA-Factory's default)")
                   : fmt::format("vision tower: {:.3g} B parameters trained with the language model (freeze_vision_tower: false); "
                                 "image tokens and the tower's activations not counted",
                                 double(*vp) / 1e9));
    }
    // est44: preference training's frozen reference model. DPO and KTO keep one (LLaMA-Factory `stage: dpo` / `kto`,
    // ms-swift `--rlhf_type dpo` / `kto`, TRL's DPOTrainer / KTOTrainer, the log naming such a trainer); ORPO, SimPO
    // and CPO need none (LLaMA-Factory pref_loss orpo / simpo: hiyouga/LLaMA-Factory@ff6d4d12 hparams/finetuning_args.py
    // use_ref_model), nor do precomputed reference log-probabilities (TRL precompute_ref_log_probs). With LoRA the
    // reference is the base with the adapter disabled: no copy (huggingface/trl@f2cd5771 dpo_trainer.py, LLaMA-Factory
    // trainer_utils.py create_ref_model, modelscope/ms-swift@3602360a arguments/rlhf_args.py: a copy only for full).
    {
        const std::string stage = lower(r.str_opt("training.stage").value_or(""));
        const std::string pref_loss = lower(r.str_opt("training.pref_loss").value_or(""));
        const bool stated = stage == "dpo" || stage == "kto";
        const bool from_log = stage.empty() && r.boolean("log.reference_trainer_reported", false, nullptr);
        const bool ref_free = pref_loss == "orpo" || pref_loss == "simpo" ||
                              r.boolean("training.precompute_ref_log_probs", false, nullptr);
        const bool ms_swift = job_fw == "ms_swift" || job_fw == "ms-swift";
        // est45: OpenRLHF's train_dpo builds the reference as a second Actor without LoRA, so LoRA jobs keep a copy
        // too (OpenRLHF/OpenRLHF@3c3be623 openrlhf/cli/train_dpo.py; the same at 10a4cd45 and f9a1676b)
        const bool openrlhf = job_fw.rfind("openrlhf", 0) == 0;
        const bool copy_kept =
            openrlhf || in.ft.kind == finetune_kind::full || (in.ft.kind == finetune_kind::freeze && !ms_swift);
        if ((stated || from_log) && !ref_free && !copy_kept) {
            // est48: no copy, but the reference log-probabilities are still computed every step by the policy's own
            // model with the adapter disabled, under no_grad, over the same batch (huggingface/trl@f2cd5771
            // dpo_trainer.py compute_ref_log_probs: null_ref_context + concatenated_forward; hiyouga/LLaMA-Factory@ff6d4d12
            // train/dpo/trainer.py compute_reference_log_probs; ms-swift's and axolotl's DPO run TRL's): its logits
            // exist beside the policy's at the loss, in the compute dtype
            in.reference_logit_bytes = in.ft.load_bytes >= 4 ? 4 : 2;  // the frozen base's dtype
            in.assumptions.push_back(fmt::format(
                "preference training ({}) with adapters: the reference is the base model with the adapter disabled (no "
                "copy); its no-grad forward's logits ({} B each) are counted at the loss",
                stated ? stage : "the log names DPO / KTO", in.reference_logit_bytes));
        }
        if ((stated || from_log) && !ref_free && copy_kept) {
            const auto load = r.str_opt("training.load_dtype");
            in.reference_bytes = load ? (dtype_bytes(*load) >= 4 ? 4 : 2) : llama_factory ? 2 : in.param_bytes;
            in.assumptions.push_back(fmt::format(
                "preference training ({}) keeps a frozen reference copy of the model: {} B per weight{}", stated ? stage : "the log names DPO / KTO",
                in.reference_bytes, load ? " (load dtype)" : llama_factory ? " (LLaMA-Factory loads it in bf16)" : " (the parameter dtype)"));
            // est45: --ref_offload / --ref.offload gives the reference's eval engine offload_param cpu
            // (openrlhf/utils/deepspeed/deepspeed_utils.py get_eval_ds_config); its stage is the policy's at ZeRO-3
            // and 0 otherwise (deepspeed.py get_ds_eval_config), and DeepSpeed offloads parameters only at ZeRO-3
            in.reference_offload = r.boolean("training.reference_offload", false, nullptr) && in.zero_stage >= 3;
        }
        // est45: the pairwise losses run the policy over each pair's chosen and rejected sequences concatenated into
        // one batch of 2 x the micro-batch: huggingface/trl@f2cd5771 trl/trainer/dpo_trainer.py (the collator stacks
        // prompt+chosen then prompt+rejected; _compute_loss chunks the logits in two), trl/experimental/{orpo,cpo}
        // concatenated_forward (ORPO, CPO and SimPO, which axolotl and ms-swift run); hiyouga/LLaMA-Factory@ff6d4d12
        // data/collator.py PairwiseDataCollatorWithPadding and train/dpo/trainer.py concatenated_forward (every
        // pref_loss); modelscope/ms-swift@3602360a swift/rlhf_trainers/dpo_trainer.py concatenated_forward;
        // OpenRLHF@3c3be623 openrlhf/trainer/dpo_trainer.py concatenated_inputs. The per-device batch counts pairs
        // (per_device_train_batch_size, axolotl micro_batch_size, OpenRLHF --micro_train_batch_size). KTO does not
        // concatenate: TRL, LLaMA-Factory and ms-swift run the policy with gradients over the micro-batch, and the
        // mismatched KL batch in a separate no-grad forward (kto_trainer.py _compute_kl_logps / forward(prefix="kl_")).
        if (stage == "dpo" || stage == "ipo" || stage == "orpo" || stage == "simpo" || stage == "cpo") {
            in.policy_seqs_per_sample = 2;
            in.assumptions.push_back(fmt::format(
                "preference training ({}): the policy's forward runs over each pair's chosen and rejected sequences "
                "concatenated (2 x the micro-batch of pairs): activations and logits sized for that batch",
                stage));
        }
    }
    // est30: a script that calls the model without labels and takes nn.CrossEntropyLoss on its logits
    // itself (training.loss_upcast false) runs the log-softmax in the logits' dtype when nothing autocasts:
    // HF causal LMs return un-upcast logits without labels (transformers 4.45+, #31292 / #33902), so with
    // a 16-bit head the loss buffers are 16-bit too (knowledge/estimator.yaml logits_bytes_model_dtype_ce)
    if (!r.boolean("training.loss_upcast", true, nullptr)) {
        const int head_bytes = in.ft.kind == finetune_kind::full ? in.param_bytes : in.ft.quant_head ? 2 : in.ft.load_bytes;
        in.loss_in_model_dtype = head_bytes == 2;
        in.assumptions.push_back(in.loss_in_model_dtype
                                     ? "the script's own cross-entropy runs on the model's 16-bit logits (training.loss_upcast false): "
                                       "16-bit log-softmax and gradients"
                                     : "training.loss_upcast false, but the head is fp32: the loss runs in fp32");
        // est50: LitGPT's loops (litgpt/pretrain.py at 29a33cbd, lightning-thunder's benchmark_litgpt.py) bind
        // the model output to `logits` and call backward with it in scope: unchunked, the 16-bit logits stay
        // beside the log-softmax and its two gradients (knowledge/estimator.yaml logits_bytes_model_dtype_ce_held)
        in.caller_keeps_logits = in.loss_in_model_dtype && job_fw == "litgpt" && !in.chunked_loss;
    }
    // est47: HF's GPT2LMHeadModel never upcasts its logits, and before transformers 4.46 (whose ForCausalLMLoss
    // calls logits.float()) its own loss was CrossEntropyLoss on the shifted model-dtype logits
    // (huggingface/transformers@0010f602 models/gpt2/modeling_gpt2.py): with 16-bit weights and no autocast
    // (a full fine-tune whose parameters are stored 16-bit: DeepSpeed fp16 / bf16, pure half; AMP's fp32
    // weights autocast the loss to fp32) the log-softmax and its gradients are 16-bit, labels passed or not.
    // Version unknown and no date: today's fp32 loss.
    const bool weights_16bit = in.framework == train_framework::deepspeed || !in.master_weights;
    if (!in.loss_in_model_dtype && in.hf_model && m.family == "gpt2" && in.ft.kind == finetune_kind::full &&
        in.param_bytes == 2 && weights_16bit && !in.chunked_loss) {
        const auto tv = version_fact(facts, "job.transformers_version");
        const bool before = tv && tv->minor >= 0 ? (tv->major < 4 || (tv->major == 4 && tv->minor < 46))
                                                 : in.framework_date > 0 && in.framework_date < 20241024;
        if (before) {
            in.loss_in_model_dtype = true;
            in.assumptions.push_back(
                "GPT-2 before transformers 4.46: the logits are not upcast and the cross-entropy runs on the 16-bit "
                "logits (16-bit log-softmax and gradients)");
        }
    }
    // est59: Qwen (v1)'s remote modeling code (modeling_qwen.py QWenLMHeadModel.forward, the trust_remote_code
    // model of Qwen/Qwen-1_8B ... Qwen-72B and their Int4 chat checkpoints) never upcasts: lm_logits =
    // self.lm_head(hidden_states), then CrossEntropyLoss on the contiguous shifted model-dtype logits. Under the
    // DeepSpeed engine (HF Trainer with a DeepSpeed config: no torch.autocast, the engine casts the module to
    // fp16 / bf16) the log-softmax and its gradients are 16-bit; under the HF Trainer's own AMP, autocast runs the
    // log-softmax in fp32 (the 12 B path stays)
    if (!in.loss_in_model_dtype && in.hf_model && m.family == "qwen" && in.framework == train_framework::deepspeed &&
        !in.chunked_loss) {
        const int head_bytes = in.ft.kind == finetune_kind::full ? in.param_bytes : in.ft.quant_head ? 2 : in.ft.load_bytes;
        if (head_bytes == 2) {
            in.loss_in_model_dtype = true;
            in.assumptions.push_back(
                "Qwen (v1) remote code under the DeepSpeed engine: the logits are not upcast and nothing autocasts, "
                "so the cross-entropy runs on the 16-bit logits (16-bit log-softmax and gradients)");
        }
    }

    // verl's actor takes per-token log-probs from the model's 16-bit logits (utils/torch_functional.py
    // logprobs_from_logits: flash-attn's Triton cross-entropy with in-place backward, torch_npu's fused loss on NPU).
    // Since 2025-04-17 (volcengine/verl@25b0f226) the update takes the entropy only for entropy_coeff != 0 (or
    // calculate_entropy, 2025-11-25); earlier builds took it in every update.
    in.fused_logprob_loss = r.boolean("framework.fused_logprob_loss", false, nullptr) && !in.chunked_loss;
    if (in.fused_logprob_loss) {
        const auto coeff = r.num_opt("training.entropy_coeff");
        const bool asked = r.boolean("training.calculate_entropy", false, nullptr) || (coeff && *coeff != 0.0);
        const bool new_build = in.framework_date >= est::date_verl_entropy_on_demand ||
                               in.framework_date_min >= est::date_verl_entropy_on_demand;
        in.rl_entropy = asked ? 1 : new_build ? 0 : -1;
    }

    // torch Adam/AdamW without fused=True steps with its foreach implementation on CUDA (torch
    // optim/optimizer.py _default_to_fused_or_foreach), which allocates sqrt(exp_avg_sq) for the
    // whole parameter group at once (optim/adamw.py _multi_tensor_adamw, torch 2.4): one
    // second-moment-sized buffer beside params, grads and states at the step. HF Trainer's
    // adamw_torch and LitGPT's torch.optim.AdamW take it; adamw_torch_fused, 8-bit, DeepSpeed's and
    // Megatron's fused Adam step in place. HF Trainer's default optim is version-dependent
    // (adamw_hf, adamw_torch, adamw_torch_fused with torch >= 2.8: training_args.py default_optim).
    if ((in.hf_model || job_fw == "litgpt") && in.framework != train_framework::deepspeed && in.optimizer == "adamw" &&
        !in.optimizer_offload && !in.optimizer_in_backward) {
        // rev40: HF Trainer's default optim (a framework default, not the job's) is version-dependent, as above
        const fact* of = facts.get("optimizer.name");
        const std::optional<std::string> named =
            of && of->prov.from_default() ? std::nullopt : r.str_opt("optimizer.name");
        std::string raw = lower(named.value_or(""));
        if (raw.find("fused") != std::string::npos || raw.find("apex") != std::string::npos || raw == "adamw_hf" ||
            raw.find("anyprecision") != std::string::npos)
            in.optimizer_foreach = 0;
        else if (named || job_fw == "litgpt")
            in.optimizer_foreach = 1;
        else
            in.optimizer_foreach = -1;
    }
    // est73: torchtune builds the optimizer its config names; its shipped configs gave torch.optim.AdamW no `fused`
    // until #1575 (cca50f02e, 2024-09-14) set fused: True, so older jobs step with the foreach buffer above; a job of
    // unknown date takes it at the high end only (optimizer.implementation, from the config's fused / foreach, wins)
    if (in.framework == train_framework::torchtune && in.optimizer == "adamw" && !in.optimizer_offload &&
        !in.optimizer_in_backward)
        in.optimizer_foreach = est::build_side(in, est::date_torchtune_adamw_fused) == 0  ? -1
                               : est::build_side(in, est::date_torchtune_adamw_fused) < 0 ? 1
                                                                                           : 0;
    if (const auto legacy = r.bool_opt("model.megatron_legacy")) in.megatron_legacy = *legacy ? 1 : -1;
    // a stated implementation wins: torch.optim.AdamW(foreach=True) or torchtitan's
    // optimizer.implementation = "foreach" takes the same group-wide buffer; fused / for-loop step in place
    if (const auto impl = r.str_opt("optimizer.implementation");
        impl && in.optimizer == "adamw" && !in.optimizer_offload && !in.optimizer_in_backward) {
        const std::string v = lower(*impl);
        if (v == "foreach")
            in.optimizer_foreach = 1;
        else if (v == "fused" || v == "for-loop" || v == "forloop")
            in.optimizer_foreach = 0;
    }
    // transformers 4.46-4.48: the causal LM calls self.loss_function(logits, ...) and keeps its bf16
    // logits while ForCausalLMLoss makes the fp32 copy and its shifted .contiguous() copy
    // (loss/loss_utils.py; before 4.46 the model rebinds logits to the fp32 copy, from 4.49 the shift
    // is a label pad, transformers #35646)
    if (in.hf_model) {
        const auto tv = version_fact(facts, "job.transformers_version");
        if (tv && tv->minor >= 0)
            in.hf_loss_keeps_logits = tv->major == 4 && tv->minor >= 46 && tv->minor <= 48 ? 1 : 0;
        else
            in.hf_loss_keeps_logits = -1;
    }
    // PEFT's prepare_model_for_kbit_training casts every non-4-bit parameter to fp32 (utils/other.py,
    // peft v0.13.2); TRL's SFTTrainer calls it for an unsharded 4/8-bit model and casts only the
    // embedding and head back (peft_module_casting_to_bf16, trl v0.13.0). The fp32 norm weight makes
    // the RMSNorm output fp32 (weight * x.to(input_dtype)), bitsandbytes' Linear4bit returns its
    // output in its input's dtype (bnb 0.43.3 nn/modules.py: out.to(inp_dtype)), so the MLP output
    // and the residual stream, i.e. every checkpointed layer input, are fp32. LLaMA-Factory does not
    // call it (upcast_layernorm is off by default); FSDP / ZeRO-3 QLoRA skips it.
    if (in.ft.kind == finetune_kind::lora && in.ft.base_bits < 16 && in.ft.quant_keeps_input && job_fw == "hf_trainer" &&
        in.zero_stage < 3) {
        in.ft.fp32_residual = true;
        in.assumptions.push_back(
            "QLoRA under HF Trainer: PEFT's prepare_model_for_kbit_training (TRL SFTTrainer calls it) casts the norms to "
            "fp32, so the residual stream and every checkpointed layer input are fp32 (low end: not called)");
    }

    // est42: axolotl calls the same function for an unsharded 8/4-bit LoRA. Since 1991946c5 (#504, 2023-09-01:
    // needs_fa2_dtype = cfg.adapter or cfg.fsdp) it casts the norms back to the compute dtype for every adapter job;
    // before it only flash_attention on a Llama model did (utils/models.py at dc71d8872), so xformers, sdpa and eager
    // jobs kept fp32 norms. A build dated before it takes the fp32 residual stream as the point; the low end is the
    // flash_attention case (the facts do not keep that key apart from xformers)
    constexpr int axolotl_norms_cast_back = 20230901;
    if (in.ft.kind == finetune_kind::lora && in.ft.base_bits < 16 && in.ft.quant_keeps_input && job_fw == "axolotl" &&
        in.zero_stage < 3 && in.framework_date > 0 && in.framework_date < axolotl_norms_cast_back) {
        in.ft.fp32_residual = true;
        // est43: PEFT's preparation casts every non-quantized parameter to fp32, and at dc71d8872 only the
        // flash_attention branch cast lm_head and embed_tokens back with the norms: they stay fp32 here too
        in.ft.fp32_frozen_rest = true;
        in.assumptions.push_back(
            "axolotl before 2023-09-01: after PEFT's prepare_model_for_kbit_training the norms stay fp32 unless "
            "flash_attention is set on a Llama model, so the residual stream and every checkpointed layer input are fp32, "
            "and the embedding and head weights are fp32 (low end: flash_attention)");
    }

    // est26: torch 1.x Module/Optimizer.zero_grad(set_to_none=False) zeroes the gradients in place
    // (torch 2.0 made set_to_none=True the default): HF Trainer of that era calls model.zero_grad(),
    // so the gradients stay allocated through the next forward. Megatron and DeepSpeed keep their own
    // gradient buffers (already counted as live in forward).
    {
        const auto tv = version_fact(facts, "job.torch_version");
        if (tv && tv->major == 1 && in.framework != train_framework::megatron && in.framework != train_framework::deepspeed) {
            in.zero_grad_keeps_grads = true;
            in.assumptions.push_back("torch " + tv->text + ": zero_grad() zeroes gradients in place (set_to_none=False before torch 2.0), "
                                     "so they stay allocated through the forward");
        }
    }

    // est25: HF-style collators pad each batch to its longest sample (framework.pads_to_longest, from
    // the adapter's semantics), so without packing or fixed-length data the step length varies; expandable
    // segments grow one segment per stream instead of caching a segment per size
    {
        in.expandable_segments = r.boolean("allocator.expandable_segments", false, nullptr);
        in.lengths_vary = r.boolean("framework.pads_to_longest", false, nullptr) &&
                          !r.boolean("training.packing", false, nullptr) &&
                          !r.boolean("training.fixed_length", false, nullptr);
    }

    // device
    in.device_id = r.str("device.id", "", nullptr);
    in.capacity_bytes = r.integer("device.capacity_bytes", 0, nullptr);
    if (in.capacity_bytes <= 0) {
        in.assumptions.push_back("device capacity unknown: fit not checked");
    }
    const std::string kind = lower(r.str("device.kind", "cuda", nullptr));
    in.npu = kind == "npu";
    // est60: memory outside the allocator (runtime_memory.h): module loading, NVLS, NCCL's buffer size
    {
        const std::string loading = lower(r.str("env.CUDA_MODULE_LOADING", "", nullptr));
        const auto tv = version_fact(facts, "job.torch_version");
        constexpr int torch_sets_lazy = 20221028;  // torch 1.13 (pytorch#85692 / #86509): LAZY unless the user sets it
        if (loading == "eager") in.module_loading = -1;
        else if (loading == "lazy") in.module_loading = 1;
        else if (tv) in.module_loading = tv->at_least(1, 13) ? 1 : -1;
        else if (in.framework_date > 0 && in.framework_date < torch_sets_lazy) in.module_loading = -1;
        static const char* const nvswitch_sm90[] = {"h100-80gb", "h800-80gb", "h20-96gb", "h200-141gb", "b200", "gb200"};
        for (const char* id : nvswitch_sm90) in.nvls_capable = in.nvls_capable || in.device_id == id;
        if (const auto nv = r.int_opt("env.NCCL_NVLS_ENABLE")) in.nvls_enable = *nv != 0 ? 1 : 0;
        in.nccl_buffsize = std::max<std::int64_t>(0, r.integer("env.NCCL_BUFFSIZE", 0, nullptr));
    }
    return in;
}

namespace {

const char* phase_name(int p) {
    switch (p) {
        case 0: return "forward";
        case 1: return "loss";
        case 2: return "backward";
        case 4: return "model_load";
        default: return "optimizer_step";
    }
}

std::int64_t to_i(double d) {
    if (!std::isfinite(d) || d < 0) return 0;
    if (d > 9.0e18) return std::int64_t(9000000000000000000LL);
    return std::int64_t(std::llround(d));
}

std::string gib(double b) { return fmt::format("{:.2f} GiB", b / 1073741824.0); }
std::string num(double x) {
    if (x >= 1e9) return fmt::format("{:.3g}B", x / 1e9);
    if (x >= 1e6) return fmt::format("{:.3g}M", x / 1e6);
    return fmt::format("{:.0f}", x);
}

}  // namespace

std::int64_t estimate_device_peak(const estimate_input& in) {
    thread_local est::breakdown b;
    return to_i(est::compute(in, b));
}

estimate_result estimate(const estimate_input& in) {
    est::breakdown b;
    est::compute(in, b);
    const est::stage_figures& st = b.stages[std::size_t(b.worst)];
    const estimator_constants& k = estimator_k();
    estimate_result r;
    r.param_count = to_i(est::total_params(in.model));
    r.logits_tensor_bytes = to_i(b.logits_tensor_elements * double(in.param_bytes));
    r.logits_tensor_fp32_bytes = to_i(b.logits_tensor_elements * 4.0);
    r.complete = in.complete;
    r.assumptions = in.assumptions;
    r.peak_phase = phase_name(st.phase);
    r.worst_stage_index = st.stage;
    r.worst_stage = in.pp > 1 ? fmt::format("{}{}", st.stage, st.stage == int(in.pp) - 1 ? " (last)" : st.stage == 0 ? " (first)" : "")
                              : "0";
    for (const auto& s : b.stages) {
        r.stages.push_back({s.stage, s.layers, std::int64_t(std::llround(s.inflight)), to_i(s.peak), phase_name(s.phase)});
        r.optimizer_step_bytes = std::max(r.optimizer_step_bytes, to_i(s.phase_step));
        r.forward_peak_bytes = std::max(r.forward_peak_bytes, to_i(s.phase_forward));
        r.backward_peak_bytes = std::max(r.backward_peak_bytes, to_i(s.phase_backward));
    }

    const double shard = b.shard_n;
    const std::string shard_txt = fmt::format("{:g}", shard);
    const std::string prank = num(st.params_rank);
    double temps = 0, grads = 0, logits = 0;
    switch (st.phase) {
        case 0: temps = st.temp_forward; grads = st.grads_in_forward; break;
        case 1: temps = st.temp_loss; grads = st.grads_in_forward; logits = st.logits; break;
        case 2: temps = st.temp_backward; grads = st.grads_in_forward; break;
        case 4: temps = st.temp_load; break;
        default: temps = st.temp_step; grads = in.optimizer_in_backward ? 0.0 : st.grads; break;
    }
    const double acts = st.phase >= 3 ? 0.0 : st.activations;
    auto add = [&](const char* id, const char* label, double bytes, std::string formula) {
        r.components.push_back({id, label, to_i(bytes), std::move(formula)});
    };
    const char* zero_txt[] = {"replicated", "ZeRO-1", "ZeRO-2", "FSDP/ZeRO-3"};
    const bool ft = in.ft.kind != finetune_kind::full;
    const std::string trank = num(st.trainable_rank);
    const std::string vision_txt = st.vision > 0 ? fmt::format("; frozen vision tower {}", gib(st.vision)) : std::string();
    if (!ft) {
        add("params", "parameters", st.params,
            fmt::format("{} params on this rank (TP {}, PP stage {}, EP {}) x {:.3g} B, {} over {} ranks{}", prank, in.tp,
                        st.stage, in.ep, (st.params - st.vision) / std::max(1.0, st.params_rank), zero_txt[in.zero_stage],
                        shard_txt, vision_txt));
    } else {
        // est41: accelerate's FSDP2 before 1.13 stores the frozen 16-bit weights as fp32 shards
        const bool fsdp2_fp32 = in.accelerate_fsdp2_mp && est::build_behaves(in, est::date_accelerate_fsdp2_trainable_upcast, true, true);
        const bool stored4 = in.ft.load_bytes >= 4 || fsdp2_fp32;
        // est70: packed 4-bit weights in a 16-bit storage dtype are converted by the same upcast
        const bool packed_fp32 = fsdp2_fp32 && in.ft.base_bits == 4 && !in.ft.group_quant && in.ft.quant_storage_bytes >= 2;
        const char* base = in.ft.base_bits == 4 && in.ft.group_quant ? "4-bit GPTQ/AWQ with per-group scales"
                           : packed_fp32 ? "fp32-stored, bf16-packed 4-bit NF4"
                           : in.ft.base_bits == 4 ? (in.ft.double_quant ? "4-bit NF4 + double-quantized constants" : "4-bit NF4")
                           : in.ft.base_bits == 8 ? "8-bit (LLM.int8)"
                           : stored4 ? "fp32" : "bf16";
        add("params", "parameters", st.params,
            fmt::format("frozen {} params: {} ({} linear weights{}; embeddings, norms{} in {}{}) + {} trainable x {} B{}", prank,
                        gib(st.frozen), base, in.ft.quant_head ? ", head included" : "", in.ft.quant_head ? "" : ", head",
                        stored4 ? "fp32" : "bf16", fsdp2_fp32 ? ", upcast by accelerate's FSDP2 before 1.13" : "", trank,
                        in.ft.trainable_bytes,
                        in.zero_stage >= 3 && shard > 1 ? fmt::format(", FSDP/ZeRO-3 over {} ranks", shard_txt) : "",
                        vision_txt));
    }
    add("grads", "gradients", grads,
        grads > 0 ? fmt::format("{} {}params x {:.3g} B/param ({} at {})", ft ? trank : prank, ft ? "trainable " : "",
                                st.grads / std::max(1.0, ft ? st.trainable_rank : st.params_rank),
                                in.framework == train_framework::megatron
                                    ? (in.grad_reduce_bytes == 2 ? "bf16 main-grad buffer" : "fp32 main-grad buffer")
                                    : "gradients",
                                phase_name(st.phase))
                  : std::string("not live at this phase (freed after the step / fused into backward)"));
    const bool loading = st.phase == 4;  // optimizer states and master weights do not exist yet
    add("optimizer", "optimizer states", loading ? 0.0 : st.optimizer,
        fmt::format("{} {}x {:.3g} B/param ({}{}{})", ft ? trank : prank, ft ? "trainable " : "",
                    st.optimizer / std::max(1.0, ft ? st.trainable_rank : st.params_rank), in.optimizer,
                    in.optimizer_offload ? ", offloaded" : "", in.swap_optimizer ? ", swapped" : "") +
            (st.paged > 0 ? fmt::format("; + {} paged by bitsandbytes into managed memory (outside allocated, reserved and the "
                                        "device peak: evicted to the host when the device fills)", gib(st.paged))
                          : std::string()));
    // est32: DeepSpeed's bf16 master partition (optimizer.master_dtype) is named and sized as it is
    const bool bf16_master = in.master_bytes != 4 && in.framework == train_framework::deepspeed;
    const int mbytes = bf16_master ? in.master_bytes : 4;
    add("master_weights", bf16_master ? "bf16 master weights" : "fp32 master weights", loading ? 0.0 : st.master,
        st.master > 0 ? (st.master >= (mbytes - 0.01) * st.params_rank ? fmt::format("{} x {} B (not sharded)", prank, mbytes)
                                                                        : fmt::format("{} x {} B / {}", prank, mbytes, shard_txt))
                      : std::string(in.zero_stage >= 3 && in.framework != train_framework::megatron &&
                                            in.framework != train_framework::deepspeed && in.master_weights
                                        ? "0: the fp32 sharded parameters are the master copy"
                                        : "0: no separate master copy"));
    std::string act_txt = fmt::format("{:g} layer x micro-batch held x {} tokens x {:.1f} B/token/layer (AC {}, TP {}{}, CP {}, {}{}{})",
                                      st.inflight, num(b.tokens),
                                      (st.activations - st.lowp_saved) / std::max(1.0, st.inflight * b.tokens), ac_name(in.ac),
                                      in.tp, in.sequence_parallel ? "+SP" : "", in.cp, in.flash ? "flash attention" : "eager attention",
                                      in.compile ? ", compiled" : ", eager",
                                      in.lowp != lowp_kind::none ? fmt::format(", {}", lowp_name(in.lowp)) : "");
    if (st.lowp_saved > 0)
        act_txt += fmt::format(" + {} {} weight copies kept for backward", gib(st.lowp_saved), lowp_name(in.lowp));
    if (ft)
        act_txt += in.ft.kind == finetune_kind::freeze ? "; frozen layers keep only checkpointed inputs"
                   : in.compile                         ? "; frozen matmuls keep no inputs, adapters keep theirs"
                                                        : "; eager frozen projections keep their inputs, adapters theirs";
    add("activations", "activations", acts, act_txt);
    const double V = double(in.model.vocab);
    add("logits", "logits and loss", logits,
        logits > 0 && in.chunked_loss && in.hf_model
            ? fmt::format("{} tokens: liger fused linear cross-entropy, one chunk's logits (about tokens x hidden) and the "
                          "input gradient; no full-vocabulary logits", num(b.tokens))
        : logits > 0 ? fmt::format("{} tokens x {} vocab{} x {:.1f} B/element{}", num(b.tokens), num(V),
                                 in.tp > 1 && (in.loss_parallel || in.framework == train_framework::megatron)
                                     ? fmt::format(" / TP {}", in.tp) : "",
                                 b.logits_bpe,
                                 in.chunked_loss && in.framework == train_framework::torchtune && in.compile
                                     ? (in.ft.kind == finetune_kind::full
                                            ? " (torchtune chunked CE, compiled: bf16 chunks + one chunk's gradient), + the trained head's "
                                              "weight gradient accumulated over the chunks (2 x vocab x hidden)"
                                            : " (torchtune chunked CE, compiled: bf16 chunks + one chunk's gradient; frozen head)")
                                 : in.chunked_loss ? " (chunked / fused loss)"
                                 : in.framework == train_framework::megatron && in.ce_fusion == 1
                                     ? " (bf16 logits + fp32 softmax + compiled copy: --cross-entropy-loss-fusion native)"
                                 : in.framework == train_framework::megatron ? " (bf16 logits + fp32 vocab-parallel CE)"
                                 : in.tp > 1 && in.loss_parallel ? " (fp32 shards of the loss-parallel CE)"
                                 : in.fused_logprob_loss
                                     ? (b.logits_bpe > k.logits_bytes_rl_logprob
                                            ? " (bf16 logits, scaled copy, the entropy's softmax and product, gradient)"
                                            : " (bf16 logits and scaled copy; fused log-prob CE, in-place gradient)")
                                                                 : " (fp32 log-probs, incoming and input gradients)")
                   : std::string("0 at this phase / stage"));
    add("temporaries", "temporaries", temps,
        st.phase == 4 ? fmt::format("NF4 quantization of the largest frozen linear while the model loads: {} elements x {:g} B "
                                    "(torchao 0.1 quantizes a whole weight at once)", num(st.temp_load / std::max(1.0, k.nf4_unchunked_quant_bytes)),
                                    k.nf4_unchunked_quant_bytes)
                      :
        fmt::format("{}workspaces{}{}{}{}{}{}", in.zero_stage >= 3 && shard > 1 ? "FSDP all-gather/reduce-scatter units, " : "",
                    st.phase == 2 && in.ac != ac_kind::none ? ", one layer recomputed" : "",
                    st.moe_layers > 0 && (st.phase == 0 || st.phase == 2) && est::moe_dispatch_temporaries(in, b.tokens).forward > 0
                        ? ", MoE dispatch copies"
                        : "",
                    in.ft.kind == finetune_kind::lora && in.ft.base_bits < 16 ? ", dequantized weight" : "",
                    in.lowp != lowp_kind::none ? ", low-precision casts" : "",
                    in.ddp_grad_copy ? ", DDP's bucket copy of every gradient" : "",
                    in.ds_ipg_bucket_elements > 0 ? fmt::format(", DeepSpeed ZeRO-{}'s reduce bucket", in.zero_stage) : ""));
    // est44: preference training's frozen reference model (DPO / KTO), a line of its own; est45: the pairwise losses'
    // tokens already count chosen + rejected, KTO's are the micro-batch and its KL batch (2 x)
    const auto ref_logits_text = [&](const char* sep) {
        return st.phase == 1 && st.ref_logits > 0
                   ? fmt::format("{}its no-grad forward's logits {} ({} tokens x {} vocab x {} B)", sep, gib(st.ref_logits),
                                 num(in.reference_forward_seqs() * b.tokens), num(V), in.reference_logit_width())
                   : std::string();
    };
    if (in.reference_bytes > 0) {
        const double ref = st.reference + (st.phase == 1 ? st.ref_logits : 0.0);
        add("reference", "reference model", ref,
            fmt::format("{} params x {} B (load dtype, no gradients or optimizer states){}{}",
                        prank, in.reference_bytes,
                        in.zero_stage >= 3 ? (in.params_offload       ? ", offloaded with ZeRO-3's parameters"
                                              : in.reference_offload ? ", on the host (its own ZeRO-3 parameter offload)"
                                                                     : fmt::format(", sharded like the policy over {} ranks", shard_txt))
                                           : ", whole on every rank (ZeRO-1/2 and DDP prepare it unsharded)",
                        ref_logits_text(" + ")));
    } else if (in.reference_logit_bytes > 0) {
        // est48: no copy (LoRA): only the reference forward's logits, at the loss
        add("reference", "reference model", st.phase == 1 ? st.ref_logits : 0.0,
            "no copy (the base with the adapter disabled)" + ref_logits_text("; "));
    }
    b.peak = st.peak;
    r.peak_bytes = to_i(st.peak);
    r.reserved_peak_bytes = to_i(b.reserved);
    // the cap is the card only where the live peak stays below it (above it, the cache collapses onto the live peak)
    r.reserved_capped = b.reserved_capped && b.reserved > b.peak;
    r.device_peak_bytes = to_i(b.device);
    r.runtime_bytes = to_i(b.runtime);
    r.runtime_note = est::runtime_note(in);
    {
        std::string why;
        if (in.framework == train_framework::megatron)
            why = fmt::format("x {:.2f} Megatron buffer", k.reserved_factor_megatron);
        else {
            const est::stage_figures& last = b.stages.back();
            why = fmt::format("{:+.0f}% segment rounding", 100.0 * k.allocator_rounding);
            if (last.stranded_loss > 0 || last.layer_transient > 0)
                why += fmt::format("; at the loss the cache also holds blocks the loss buffers cannot reuse: freed gradients "
                                   "and bf16 logits {}, one layer's freed intermediates {} (the largest temporaries dominate)",
                                   gib(last.stranded_loss), gib(k.stranded_layer_transients * last.layer_transient));
            if (last.eob_segment > 0)
                why += fmt::format("; at the end of backward the root unit's fp32 reduce-scatter input {} is larger than any "
                                   "cached block, so a new segment is reserved on top (torchtitan before 2025-07-28)",
                                   gib(last.eob_segment));
            if (last.unshard_pool > 0)
                why += fmt::format(", FSDP1's unshard-stream pools {} (all-gather and shard-copy blocks only later unshards reuse)",
                                   gib(last.unshard_pool));
            const est::stage_figures* top = &b.stages.front();
            for (const auto& s : b.stages)
                if (s.reserved > top->reserved) top = &s;
            if (top->floor_sets_reserved)
                why += in.fsdp1_device_load
                           ? fmt::format("; floor {} set it: FSDP1 wrapped a model already whole on the device, whose "
                                         "blocks stay cached beside the layer shards and the root's flat copy (est56)",
                                         gib(top->fsdp1_floor))
                           : fmt::format("; floor {} set it: FSDP1's construction left the root unit's parameters and flat copy "
                                         "cached, which the unshard-stream and small-block (<= 1 MiB) pools cannot reuse",
                                         gib(top->fsdp1_floor));
        }
        if (b.reserved_capped) why += "; capped at the device capacity less the runtime";
        r.reserved_note = fmt::format("reserved {} = {:.2f} x allocated ({})", gib(b.reserved), b.reserved_factor, why);
        add("overhead", "allocator cache + runtime", b.device - b.peak,
            fmt::format("{} + {} runtime outside the allocator ({}){}", r.reserved_note, gib(b.runtime), r.runtime_note,
                        st.symm > 0 ? fmt::format(" + {} async-TP symmetric memory", gib(st.symm)) : ""));
    }
    r.trainable_params = to_i(b.trainable);
    const host_offload_need host = host_offload(in, double(r.param_count), b.trainable);
    r.host_offload_bytes = to_i(host.bytes);
    r.host_offload_high_bytes = to_i(host.high_bytes);
    r.host_offload_what = host.what;
    r.host_offload_sizing = host.sizing;
    r.host_budget_bytes = to_i(double(in.host_memory_bytes) * k.host_budget_fraction);
    if (in.pp > 1) {
        r.pp_microbatch_size = in.micro_batch;
        r.pp_microbatches = in.num_microbatches;
        r.pp_microbatch_note =
            !in.pp_microbatch_assumed ? "from the config"
            : in.pp_alt_micro_batch > 0
                ? fmt::format("assumed: torchtitan default pipeline_parallel_microbatch_size = 1 (since 2025-04-07); older "
                              "torchtitan split the local batch into {} micro-batches of {} (high end)",
                              in.pp, in.pp_alt_micro_batch)
            : in.framework_date > 0 ? "assumed: micro-batches = PP degree (torchtitan default before 2025-04-07, the build date given)"
                                    : "assumed: micro-batches = PP degree (count not given)";
    }
    // interval where framework versions differ or evidence disagrees
    {
        estimate_input v = in;
        est::breakdown lo, hi;
        v.variant = -1;
        const double dlo = est::compute(v, lo);
        v.variant = 1;
        const double dhi = est::compute(v, hi);
        r.low_bytes = std::min(r.device_peak_bytes, to_i(dlo));
        r.high_bytes = std::max(r.device_peak_bytes, to_i(dhi));
        const bool fsdp = in.zero_stage >= 3 && b.shard_n > 1;
        const bool tt = in.framework != train_framework::megatron && in.framework != train_framework::deepspeed;
        if (std::string why = est::runtime_interval_reason(in); !why.empty()) r.interval_reasons.push_back(std::move(why));
        if (in.tp > 1 && in.loss_parallel && tt && !in.chunked_loss)
            r.interval_reasons.push_back(fmt::format(
                "loss-parallel cross-entropy keeps {:g}-{:g} B per token x vocab/TP element depending on the PyTorch "
                "version (DTensor loss_parallel: fp32 input, log-softmax and gradient shards)",
                k.logits_bytes_unfused, k.logits_bytes_loss_parallel_high));
        if (in.compile && in.compile_loss && in.framework == train_framework::torchtitan && !in.chunked_loss &&
            est::build_side(in, est::date_compiled_loss) == 0)
            r.interval_reasons.push_back(fmt::format(
                "torchtitan compiles the loss with the model since 2025-04 (fused cross-entropy, {:g} B per token x vocab "
                "element, low end); builds before it did not (point estimate)", k.logits_bytes_compiled));
        if (in.compile && in.framework == train_framework::torchtitan && in.ac == ac_kind::selective_op &&
            in.model.experts <= 0 && in.lowp != lowp_kind::nvfp4)
            r.interval_reasons.push_back(
                "compiled op-level SAC: the partitioner keeps only what the backward graph reads, so w2's saved output "
                "(read by no backward op) is dropped (low end); the point keeps eager SAC's set (est29)");
        if (in.framework == train_framework::torchtitan && fsdp && in.pp <= 1 &&
            est::build_side(in, est::date_tt_split_root_unit) <= 0)
            r.interval_reasons.push_back(
                "torchtitan before 2025-07-28 keeps the embedding and head in FSDP2's root unit, unsharded from the "
                "first forward op to the end of backward, with the head's unsharded gradient (high end; est29)");
        if (est::tt_sac_on_cudnn_sdpa_device(in) &&
            (est::build_side(in, est::date_tt_cudnn_sdpa_first) == 0 || est::build_side(in, est::date_tt_cudnn_sdpa_saved) == 0))
            r.interval_reasons.push_back(
                "torchtitan builds of 2025-05-14 .. 2025-12-01 run SDPA through cuDNN attention on this device, which the "
                "op-SAC save list did not name: the attention output is recomputed, not saved (low end; est29)");
        if (in.ce_fusion == 1)
            r.interval_reasons.push_back(fmt::format(
                "Megatron's native fused cross-entropy runs through torch.compile: {:g} B per token x vocab/TP element "
                "with one compiled fp32 copy (point), {:g} B when inductor keeps two (high end; PyTorch builds differ)",
                k.logits_bytes_megatron_fused, k.logits_bytes_megatron_fused_high));
        if (in.float8 && fsdp && in.ac != ac_kind::full && in.fp8_force_recompute != 1 &&
            !(in.compile && in.fp8_force_recompute == 0 && est::build_side(in, est::date_torchao_fp8_recompute_noop) < 0))
            r.interval_reasons.push_back(
                "float8 with FSDP: torch.compile may save the unsharded fp8 weights for backward unless "
                "force_recompute_fp8_weight_in_bwd is set (torchao Float8LinearConfig); high end includes them");
        if (in.lowp == lowp_kind::float8_tensorwise && in.ac == ac_kind::none && in.framework != train_framework::megatron &&
            est::build_side(in, est::date_torchao_fp8_recompute_noop) == 0)
            r.interval_reasons.push_back(
                "torchao tensorwise float8 without activation checkpointing: builds before 2025-06-13 save each linear's "
                "fp8 input cast instead of the bf16 input (low end), later builds the bf16 input (point)");
        if (in.lowp == lowp_kind::mxfp8 && fsdp && in.ac != ac_kind::full &&
            est::build_side(in, est::date_mxfp8_saves_dgrad_weight) == 0)
            r.interval_reasons.push_back(
                "MXFP8: torchtitan's own MXFP8 linear (builds since 2026-08-21) keeps each converted linear's quantized "
                "dgrad weight until backward (high end); torchao's mx_mm before it saves only the bf16 input and the "
                "FSDP-managed weight (point)");
        if (in.lowp == lowp_kind::nvfp4 && in.ac == ac_kind::selective_op)
            r.interval_reasons.push_back(
                "NVFP4 under op-level SAC: whether the fp4 copies of the GEMM inputs are kept is not documented "
                "(low end without them)");
        if (in.ft.kind == finetune_kind::lora && !in.compile && in.ac != ac_kind::full &&
            in.framework != train_framework::megatron)
            r.interval_reasons.push_back(
                "eager frozen layers: the point estimate keeps the frozen projections' inputs, as the published LitGPT "
                "LoRA measurements need; a build whose autograd drops them is the low end");
        if (in.accelerate_fsdp2_mp && est::build_side(in, est::date_accelerate_fsdp2_trainable_upcast) == 0)
            r.interval_reasons.push_back(
                "accelerate's FSDP2 with mixed precision: builds before 1.13 (2025-11-26) upcast the whole model to fp32 "
                "before sharding, so the frozen 16-bit weights are stored as fp32 shards (high end); 1.13 upcasts only "
                "trainable parameters (point; set job.framework_date)");
        if (in.ft.kind == finetune_kind::lora && in.ft.base_bits < 16 && in.ft.quant_keeps_input && in.ac != ac_kind::none &&
            (in.ft.base_bits != 4 || in.ft.bnb4_keeps_input_side >= 0))
            r.interval_reasons.push_back(
                "bitsandbytes keeps each quantized linear's input outside saved-tensor hooks: with non-reentrant "
                "gradient checkpointing those inputs stay for every layer (high end)");
        if (in.ft.kind == finetune_kind::lora && in.ft.base_bits == 4 && in.ft.quant_keeps_input && in.ac == ac_kind::none &&
            in.ft.bnb4_keeps_input_side == 0)
            r.interval_reasons.push_back(
                "bitsandbytes before 0.43.2 (2024-07-23) keeps each 4-bit linear's input for backward, later releases the "
                "packed weight only: the point and high end keep them, the low end does not (set job.bitsandbytes_version "
                "or job.framework_date)");
        if (in.ft.kind == finetune_kind::lora && in.ft.quant_head && in.ft.base_bits == 4)
            r.interval_reasons.push_back(
                "Lightning's bitsandbytes plugin stores the 4-bit weights' dtype as fp16, so each dequantization makes "
                "an fp16 copy and then its bf16 cast (4 B per element of the largest quantized linear, the head here, "
                "at the cast): high end; the 2024 LitGPT QLoRA measurements fit it, the 2023 ones do not");
        if (in.ft.kind == finetune_kind::lora && in.ft.base_bits == 4 && !in.ft.quant_keeps_input &&
            in.framework == train_framework::torchtune && est::build_side(in, est::date_torchtune_chunked_nf4) == 0)
            r.interval_reasons.push_back(
                "torchtune builds before 2024-06-26 pin torchao 0.1, which quantizes each frozen weight to NF4 whole "
                "while the model loads (68 B per element of the largest linear); later builds quantize in chunks: "
                "high end includes the load-time peak");
        if (in.framework == train_framework::torchtune && !in.hf_model && !in.chunked_loss &&
            est::build_side(in, in.ft.kind == finetune_kind::lora && in.world > 1 ? est::date_torchtune_lora_dist_del_logits
                                                                                   : est::date_torchtune_del_logits) == 0)
            r.interval_reasons.push_back(fmt::format(
                "torchtune recipes before mid-2024 (no `del logits`) keep the shifted fp32 logits through backward: {:g} B "
                "per token x vocab element instead of {:g} (high end; set job.framework_date)",
                k.logits_bytes_torchtune_kept, k.logits_bytes_unfused));
        if (in.pp > 1 && in.framework == train_framework::torchtitan && est::build_side(in, est::date_pp_drops_outputs) == 0)
            r.interval_reasons.push_back(
                "torch.distributed.pipelining keeps every micro-batch's last-stage output (logits) until step() "
                "merges them, unless torchtitan passes return_outputs=False (since 2025-10-22): high end keeps them");
        if (in.pp > 1 && in.pp_alt_micro_batch > in.micro_batch)
            r.interval_reasons.push_back(fmt::format(
                "pipeline micro-batch size not given: torchtitan's default is 1 now, {} sequences before 2025 "
                "(micro-batches = PP degree)", in.pp_alt_micro_batch));
        if (in.optimizer_foreach < 0 && in.ft.kind == finetune_kind::full && in.framework == train_framework::torchtune)
            r.interval_reasons.push_back(
                "torchtune build not dated: its configs gave torch.optim.AdamW no fused flag before 2024-09-14 (#1575), so "
                "torch's foreach step allocated one second-moment-sized buffer at the step (high end); later configs set "
                "fused: True (point; set job.framework_date or optimizer.implementation)");
        else if (in.optimizer_foreach < 0 && in.ft.kind == finetune_kind::full)  // adapters' moments are small
            r.interval_reasons.push_back(
                "HF Trainer optimizer not named: adamw_torch (torch's foreach AdamW, one second-moment-sized buffer at "
                "the step) was the default before torch 2.8, adamw_torch_fused after; high end includes the buffer");
        if (in.fused_logprob_loss && in.rl_entropy < 0)
            r.interval_reasons.push_back(fmt::format(
                "verl builds before 2025-04-17 take the entropy over the vocabulary in every update (its softmax and "
                "product buffers, the log-prob gradient out of place: {:g} B per token x vocab element instead of {:g}, "
                "high end); later builds only for entropy_coeff != 0 or calculate_entropy (set job.framework_date)",
                k.logits_bytes_rl_logprob_entropy, k.logits_bytes_rl_logprob));
        if (in.hf_model && in.hf_loss_keeps_logits < 0 && !in.chunked_loss && in.framework != train_framework::megatron &&
            !in.fused_logprob_loss)
            r.interval_reasons.push_back(fmt::format(
                "transformers version not given: 4.46-4.48 keep the bf16 logits beside the fp32 and shifted fp32 copies "
                "({:g} B per token x vocab element, high end; set job.transformers_version)", k.logits_bytes_hf_loss_fn));
        if (in.ft.fp32_residual && in.ac != ac_kind::none)
            r.interval_reasons.push_back(
                "PEFT's prepare_model_for_kbit_training upcasts the norms, so the checkpointed layer inputs are fp32 "
                "(point); a script that does not call it keeps them in bf16 (low end)");
        // est42: torchtune's checkpointing is its config's choice; with the config unknown both settings are possible
        if (in.ac_unknown) {
            estimate_input w = in;
            w.ac = ac_kind::full;
            w.ac_unknown = false;
            est::breakdown other;
            r.low_bytes = std::min(r.low_bytes, to_i(est::compute(w, other)));
            r.interval_reasons.push_back(
                "torchtune config not known: the point keeps the recipe's own default, no activation checkpointing; the "
                "configs torchtune ships choose per model (38 of 44 single-device LoRA / QLoRA / DoRA configs turn it on, "
                "v0.1.1 to v0.6.1), so the low end has it on. Name the config (job.recipe_config) or set "
                "activation_checkpoint.mode");
        }

        // est46: the stated length against torchtune's dataset cap of that build (from_facts)
        if (in.tt_dataset_cap > 0 && in.tt_dataset_cap < in.seq_len) {
            estimate_input w = in;
            w.seq_len = in.tt_dataset_cap;
            w.tt_dataset_cap = 0;
            est::breakdown capped;
            r.low_bytes = std::min(r.low_bytes, to_i(est::compute(w, capped)));
            r.interval_reasons.push_back(fmt::format(
                "torchtune builds of 2024-03-30 .. 2024-08-15 cut every sample at the dataset builder's max_seq_len, {} "
                "tokens unless the config sets dataset.max_seq_len; the config was not read, so the stated {} tokens may "
                "not be what the data reached (low end at {}; set training.fixed_length when every input has the length)",
                in.tt_dataset_cap, in.seq_len, in.tt_dataset_cap));
        }

        // est25: varying step lengths through the caching-allocator model (varying_lengths.h)
        r.cache_high_bytes = r.high_bytes;
        r.fixed_high_bytes = r.high_bytes;
        // a job over the budget at fixed length is judged by that already: no replay
        const bool over = in.capacity_bytes > 0 && double(r.device_peak_bytes) > double(in.capacity_bytes) * k.budget_fraction;
        if (const est::length_replay lr = over ? est::length_replay{} : est::replay_job(in, b.logits_bpe, r.device_peak_bytes); lr.applied) {
            const auto& lens = lr.lengths;
            r.varying_lengths = lens;
            r.varying_growth_bytes = lr.growth;
            r.varying_need_bytes = std::max<std::int64_t>(0, lr.varying_need - lr.fixed_need);
            const std::int64_t other_high = r.high_bytes;
            r.high_bytes = std::max(r.high_bytes, r.device_peak_bytes + r.varying_need_bytes);
            std::int64_t cache = other_high + lr.growth;  // what the device figure can read
            if (in.capacity_bytes > 0) cache = std::min(cache, in.capacity_bytes);
            r.cache_high_bytes = std::max(r.high_bytes, cache);
            std::string steps;
            for (std::size_t i = 0; i < lens.size(); ++i) steps += (i ? ", " : "") + std::to_string(lens[i]);
            // rev25: the growth printed and the need the verdict counts come from one replay where they differ,
            // and a sentence says which is which: unlimited (the need within the growth), under the limit the
            // rest of the job leaves (both figures, and the unlimited growth), or past that limit (the need,
            // larger than what the card leaves: the verdict's figure, no "only")
            const std::string head = fmt::format(
                "varying sequence lengths: the caching allocator keeps segments of earlier sizes (no packing: each "
                "batch is padded to its longest sample). Replaying the steps' activation and loss buffers through the "
                "allocator's rules with new maxima at {} tokens (assumed: the maxima {} steps in random order are "
                "expected to set)",
                steps, est::k_assumed_steps);
            const char* tail = ". Packing or PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True avoids the growth";
            if (lr.capped && !lr.completes)
                r.interval_reasons.push_back(head + fmt::format(
                    " shows that they do not complete under the {} the rest of the job leaves of the card: they need {} "
                    "beyond fixed-length steps (the figure the fit verdict counts), more than the {} of cache the card "
                    "has room for, so the device figure reaches the capacity{}",
                    gib(double(lr.limit)), gib(double(r.varying_need_bytes)), gib(double(lr.growth)), tail));
            else if (lr.capped)
                r.interval_reasons.push_back(head + fmt::format(
                    " with no device limit would leave max_memory_reserved {} above fixed-length steps; under the {} the "
                    "rest of the job leaves of the card the allocator frees cached whole segments and retries before it "
                    "raises OOM, so max_memory_reserved stays {} above fixed-length steps and the device figure can read "
                    "up to {}. The fit verdict counts the {} those steps need beyond fixed-length ones (the smallest "
                    "allocator limit they complete under){}",
                    gib(double(lr.unlimited_growth)), gib(double(lr.limit)), gib(double(lr.growth)), gib(double(cache)),
                    gib(double(r.varying_need_bytes)), tail));
            else if (lr.growth > 0 && r.varying_need_bytes > lr.growth)
                r.interval_reasons.push_back(head + fmt::format(
                    " leaves max_memory_reserved {} above fixed-length steps, so the device figure can read up to {} "
                    "(capped at the capacity). The fit verdict counts the {} those steps need beyond fixed-length ones "
                    "(the smallest allocator limit they complete under){}",
                    gib(double(lr.growth)), gib(double(cache)), gib(double(r.varying_need_bytes)), tail));
            else if (lr.growth > 0)
                r.interval_reasons.push_back(fmt::format(
                    "varying sequence lengths: the caching allocator keeps segments of earlier sizes (no packing: each "
                    "batch is padded to its longest sample). Replaying the steps' activation and loss buffers through the "
                    "allocator's rules with new maxima at {} tokens (assumed: the maxima {} steps in random order are "
                    "expected to set) leaves max_memory_reserved {} above fixed-length steps, so the device figure can "
                    "read up to {} (capped at the capacity). The allocator frees cached whole segments and retries before "
                    "it raises OOM: the fit verdict counts only the {} those steps need beyond fixed-length ones. Packing "
                    "or PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True avoids the growth",
                    steps, est::k_assumed_steps, gib(double(lr.growth)), gib(double(cache)),
                    gib(double(r.varying_need_bytes))));
        }
        // est40: a token budget is a cap. The point fills it with sequences at the full configured length (prompt +
        // response caps in RL); when the rank's share of the mini-batch holds fewer tokens (generated responses
        // shorter than their cap), the micro-batch is smaller: the low end is one sequence at the full length
        if (in.dynamic_budget && in.micro_batch > 1 && in.pp <= 1) {
            estimate_input w = in;
            w.micro_batch = 1;
            est::breakdown one;
            const std::int64_t d1 = to_i(est::compute(w, one));
            if (d1 < r.low_bytes) {
                r.low_bytes = d1;
                r.interval_reasons.push_back(fmt::format(
                    "token budget: the point fills it with {} sequences of {} tokens; a micro-batch holds only the "
                    "sequences the rank's share of the mini-batch has, so with shorter sequences (generated responses "
                    "below their cap) it holds fewer tokens, down to one sequence (low end)",
                    in.micro_batch, in.seq_len));
            }
        }
        if (r.high_bytes > r.low_bytes && r.interval_reasons.empty())
            r.interval_reasons.push_back("version-dependent buffers");
    }
    // est65: paged states resident on the device (bitsandbytes optim/optimizer.py prefetch_state, functional.py
    // get_paged / prefetch_tensor): what a device reading can show beside the device peak, capped at the card
    // (0 when the card leaves no room above the device peak)
    if (st.paged > 0) {
        std::int64_t reading = r.device_peak_bytes + to_i(st.paged);
        if (in.capacity_bytes > 0) reading = std::min(reading, in.capacity_bytes);
        if (reading > r.device_peak_bytes) r.paged_reading_high_bytes = reading;
    }
    r.expert_bytes = st.expert_state;
    r.capacity_bytes = in.capacity_bytes;
    r.budget_bytes = to_i(double(in.capacity_bytes) * k.budget_fraction);
    r.margin_bytes = r.budget_bytes - r.device_peak_bytes;
    r.fits = in.capacity_bytes > 0 && r.margin_bytes >= 0;
    r.margin_fraction = in.capacity_bytes > 0 ? double(r.margin_bytes) / double(in.capacity_bytes) : 0.0;
    return r;
}

estimate_result estimate_with(const fact_store& base, const std::vector<estimate_override>& overrides) {
    fact_store copy(nullptr);
    for (const fact* f : base.current()) copy.emit(*f);
    for (const auto& o : overrides) {
        provenance p;
        p.producer = "what-if";
        p.excerpt = o.key + "=" + o.val.to_string();
        copy.emit(o.key, o.val, p);
    }
    estimate_result r = estimate(from_facts(copy));
    r.overrides = overrides;
    return r;
}

void emit_facts(const estimate_result& r, fact_sink& sink) {
    provenance p;
    p.producer = "estimator";
    p.derived_from = {"model.*", "training.*", "parallelism.*", "activation_checkpoint.*", "optimizer.*", "device.capacity_bytes"};
    auto e = [&](const char* n, value v) { sink.emit(n, std::move(v), p); };
    const double peak = std::max<double>(1.0, double(r.peak_bytes));
    e("estimate.peak_bytes", r.peak_bytes);
    e("estimate.reserved_peak_bytes", r.reserved_peak_bytes);
    e("estimate.device_peak_bytes", r.device_peak_bytes);
    if (r.capacity_bytes > 0) {
        e("estimate.capacity_bytes", r.capacity_bytes);
        e("estimate.budget_bytes", r.budget_bytes);
        e("estimate.fits", r.fits);
        e("estimate.margin_bytes", r.margin_bytes);
        e("estimate.peak_fraction", double(r.device_peak_bytes) / double(r.capacity_bytes));
    }
    e("estimate.params_bytes", r.component("params"));
    e("estimate.grads_bytes", r.component("grads"));
    e("estimate.optimizer_bytes", r.component("optimizer"));
    e("estimate.master_weights_bytes", r.component("master_weights"));
    e("estimate.activations_bytes", r.component("activations"));
    e("estimate.logits_bytes", r.component("logits"));
    e("estimate.reference_bytes", r.component("reference"));
    e("estimate.temporaries_bytes", r.component("temporaries"));
    e("estimate.overhead_bytes", r.component("overhead"));
    e("estimate.activation_share", double(r.component("activations")) / peak);
    e("estimate.optimizer_share", double(r.component("optimizer") + r.component("master_weights")) / peak);
    e("estimate.param_grad_share", double(r.component("params") + r.component("grads")) / peak);
    e("estimate.logits_share", double(r.component("logits")) / peak);
    e("estimate.expert_share", std::min(1.0, r.expert_bytes / peak));
    e("estimate.peak_phase", r.peak_phase);
    e("estimate.worst_stage", std::int64_t(r.worst_stage_index));
    e("estimate.complete", r.complete);
    value::list_t a;
    for (const auto& s : r.assumptions) a.emplace_back(s);
    e("estimate.assumptions", value(std::move(a)));
    e("estimate.param_count", r.param_count);
    e("estimate.device_peak_low_bytes", r.low_bytes);
    e("estimate.device_peak_high_bytes", r.high_bytes);
    if (!r.varying_lengths.empty()) {
        e("estimate.cache_high_bytes", r.cache_high_bytes);
        e("estimate.varying_growth_bytes", r.varying_growth_bytes);
    }
    e("estimate.trainable_param_count", r.trainable_params);
    if (r.paged_reading_high_bytes > 0) e("estimate.paged_reading_high_bytes", r.paged_reading_high_bytes);
    if (r.host_offload_bytes > 0) {
        e("estimate.host_offload_bytes", r.host_offload_bytes);
        e("estimate.host_offload_high_bytes", r.host_offload_high_bytes);
    }
    if (r.host_budget_bytes > 0) e("estimate.host_budget_bytes", r.host_budget_bytes);
    if (r.optimizer_step_bytes > 0) e("estimate.optimizer_step_bytes", r.optimizer_step_bytes);
    if (r.forward_peak_bytes > 0) e("estimate.forward_peak_bytes", r.forward_peak_bytes);
    if (r.backward_peak_bytes > 0) e("estimate.backward_peak_bytes", r.backward_peak_bytes);
    if (r.logits_tensor_bytes > 0) {
        e("estimate.logits_tensor_bytes", r.logits_tensor_bytes);
        e("estimate.logits_tensor_fp32_bytes", r.logits_tensor_fp32_bytes);
    }
}

nlohmann::json to_json(const estimate_result& r) {
    nlohmann::json j;
    j["schema"] = "oomdx.estimate/1";
    j["peak_bytes"] = r.peak_bytes;
    j["peak_statistic"] = "allocated (live tensors; torch max_memory_allocated, peak active)";
    j["reserved_peak_bytes"] = r.reserved_peak_bytes;
    j["reserved_statistic"] = "reserved (torch max_memory_reserved)";
    j["device_peak_bytes"] = r.device_peak_bytes;
    j["runtime_bytes"] = r.runtime_bytes;
    j["runtime_note"] = r.runtime_note;
    j["capacity_bytes"] = r.capacity_bytes;
    j["budget_bytes"] = r.budget_bytes;
    j["margin_bytes"] = r.margin_bytes;
    j["margin_fraction"] = r.margin_fraction;
    j["fits"] = r.fits;
    j["peak_phase"] = r.peak_phase;
    j["optimizer_step_bytes"] = r.optimizer_step_bytes;
    j["forward_peak_bytes"] = r.forward_peak_bytes;
    j["backward_peak_bytes"] = r.backward_peak_bytes;
    j["worst_stage"] = r.worst_stage_index;
    j["param_count"] = r.param_count;
    j["complete"] = r.complete;
    j["assumptions"] = r.assumptions;
    auto& comps = j["components"] = nlohmann::json::array();
    for (const auto& c : r.components)
        comps.push_back({{"id", c.id}, {"label", c.label}, {"bytes", c.bytes}, {"formula", c.formula}});
    auto& st = j["stages"] = nlohmann::json::array();
    for (const auto& s : r.stages)
        st.push_back({{"stage", s.stage}, {"layers", s.layers}, {"inflight_layer_microbatches", s.inflight_layer_microbatches},
                      {"peak_bytes", s.peak_bytes}, {"peak_phase", s.peak_phase}});
    j["low_bytes"] = r.low_bytes;
    j["high_bytes"] = r.high_bytes;
    j["interval_reasons"] = r.interval_reasons;
    if (!r.varying_lengths.empty()) {
        j["cache_high_bytes"] = r.cache_high_bytes;
        j["varying_lengths"] = {{"lengths", r.varying_lengths}, {"growth_bytes", r.varying_growth_bytes},
                                {"need_bytes", r.varying_need_bytes}};
    }
    if (r.paged_reading_high_bytes > 0) j["paged_reading_high_bytes"] = r.paged_reading_high_bytes;
    j["trainable_params"] = r.trainable_params;
    if (r.host_offload_bytes > 0)
        j["host_offload"] = {{"bytes_per_node", r.host_offload_bytes}, {"high_bytes_per_node", r.host_offload_high_bytes},
                             {"states", r.host_offload_what}};
    if (r.host_budget_bytes > 0) j["host_budget_bytes"] = r.host_budget_bytes;
    j["reserved_model"] = r.reserved_note;
    if (r.pp_microbatch_size > 0)
        j["pipeline"] = {{"microbatch_size", r.pp_microbatch_size}, {"microbatches", r.pp_microbatches}, {"note", r.pp_microbatch_note}};
    auto& ov = j["overrides"] = nlohmann::json::array();
    for (const auto& o : r.overrides) {
        nlohmann::json v;
        const value& x = o.val;
        if (x.is_integer()) v = x.as_integer();
        else if (x.is_number()) v = x.as_number();
        else if (x.is_bool()) v = x.as_bool();
        else if (x.is_string()) v = x.as_string();
        else v = x.to_string();
        ov.push_back({{"key", o.key}, {"value", v}});
    }
    return j;
}

std::string render_text(const estimate_result& r) {
    std::string s;
    s += fmt::format("Static estimate per device (worst stage {}, peak at {}):\n", r.worst_stage, r.peak_phase);
    for (const auto& c : r.components) {
        if (c.id == "overhead") continue;
        s += fmt::format("  {:<22} {:>12}  {}\n", c.label, format_bytes(c.bytes), c.formula);
    }
    s += fmt::format("  {:<22} {:>12}  (compare with max_memory_allocated / peak active)\n", "= peak live tensors",
                     format_bytes(r.peak_bytes));
    s += fmt::format("  {:<22} {:>12}  (compare with max_memory_reserved)\n", "expected reserved", format_bytes(r.reserved_peak_bytes));
    s += fmt::format("  {:<22} {:>12}  {}\n", "+ runtime (not torch)", format_bytes(r.device_peak_bytes - r.reserved_peak_bytes),
                     r.runtime_note);
    s += fmt::format("  {:<22} {:>12}\n", "= device peak", format_bytes(r.device_peak_bytes));
    if (r.high_bytes > r.low_bytes) {
        s += fmt::format("  {:<22} {:>12} .. {}  (builds differ / evidence disagrees)\n", "interval", format_bytes(r.low_bytes),
                         format_bytes(r.high_bytes));
        for (const auto& why : r.interval_reasons) s += "      - " + why + "\n";
    }
    if (r.cache_high_bytes > r.high_bytes) {
        s += fmt::format("  {:<22} {:>12}  (max_memory_reserved + runtime with varying lengths; cache released before OOM)\n",
                         "reading up to", format_bytes(r.cache_high_bytes));
        if (r.high_bytes <= r.low_bytes)
            for (const auto& why : r.interval_reasons) s += "      - " + why + "\n";
    }
    if (r.paged_reading_high_bytes > r.device_peak_bytes)
        s += fmt::format("  {:<22} {:>12}  (bitsandbytes paged optimizer states resident on the device until evicted; "
                         "not counted in the verdict)\n",
                         "device reading up to", format_bytes(r.paged_reading_high_bytes));
    if (!r.reserved_note.empty()) s += "  allocator model: " + r.reserved_note + "\n";
    if (r.pp_microbatch_size > 0)
        s += fmt::format("Pipeline micro-batch: {} sequence(s), {} micro-batches per step ({})\n", r.pp_microbatch_size,
                         r.pp_microbatches, r.pp_microbatch_note);
    if (r.capacity_bytes > 0) {
        s += fmt::format("Capacity {}, budget (x 0.95) {}: {} with margin {} ({:+.1f}% of capacity)\n",
                         format_bytes(r.capacity_bytes), format_bytes(r.budget_bytes), r.fits ? "FITS" : "DOES NOT FIT",
                         r.margin_bytes < 0 ? "-" + format_bytes(-r.margin_bytes) : format_bytes(r.margin_bytes),
                         100.0 * r.margin_fraction);
    } else {
        s += "Capacity unknown (give --device): fit not checked\n";
    }
    if (r.stages.size() > 1) {
        s += "Per pipeline stage:";
        for (const auto& st : r.stages) s += fmt::format(" [{}: {} at {}]", st.stage, format_bytes(st.peak_bytes), st.peak_phase);
        s += "\n";
    }
    s += fmt::format("Parameters in the model: {:.3f} B{}", double(r.param_count) / 1e9, r.complete ? "" : " (estimate incomplete)");
    if (r.trainable_params > 0 && r.trainable_params < r.param_count)
        s += fmt::format(", trainable {:.2f} M ({:.3f}%)", double(r.trainable_params) / 1e6,
                         100.0 * double(r.trainable_params) / double(std::max<std::int64_t>(1, r.param_count)));
    s += "\n";
    if (r.host_offload_bytes > 0)
        s += fmt::format("Host RAM per node for offloaded states: {} ({}); up to {} with DeepSpeed's buffer factor\n",
                         format_bytes(r.host_offload_bytes), r.host_offload_what, format_bytes(r.host_offload_high_bytes));
    if (!r.assumptions.empty()) {
        s += "Assumed:\n";
        for (const auto& a : r.assumptions) s += "  - " + a + "\n";
    }
    return s;
}

namespace {

// The largest fitting length rounded down to one a job can run and a person would write: a multiple of what the
// parallel layout splits the sequence by (TP with sequence parallelism, 2 x CP for load-balanced context parallel)
// and of a thirty-second of its power of two (12291 -> 12288, 3348 -> 3328, 621 -> 608).
std::int64_t usable_seq_len(const estimate_input& in, std::int64_t s) {
    if (s <= 0) return s;
    const std::int64_t split = (in.tp > 1 && in.sequence_parallel ? in.tp : 1) * (in.cp > 1 ? 2 * in.cp : 1);
    std::int64_t p2 = 1;
    while (p2 * 2 <= s) p2 *= 2;
    const std::int64_t step = std::clamp<std::int64_t>(p2 / 32, 1, 256);
    const std::int64_t g = std::lcm(split, step);
    return s >= g ? s / g * g : s;
}

}  // namespace

fit_limits max_fitting(const estimate_input& base, bool by_high_end) {
    fit_limits f;
    f.seq_len = base.seq_len;
    f.micro_batch = base.micro_batch;
    if (base.capacity_bytes <= 0) return f;
    const double budget = double(base.capacity_bytes) * estimator_k().budget_fraction;
    est::breakdown b;
    estimate_input in = base;
    in.assumptions.clear();
    auto fits = [&](std::int64_t mbs, std::int64_t seq) {
        in.micro_batch = mbs;
        in.seq_len = seq;
        if (in.pp > 1) in.num_microbatches = std::max<std::int64_t>(1, base.num_microbatches * base.micro_batch / mbs);
        in.variant = 0;
        double d = est::compute(in, b);
        if (d > budget) return false;
        if (by_high_end) {
            // varying step lengths: what the replayed steps need beyond fixed-length ones (est25)
            const est::length_replay lr = est::replay_job(in, b.logits_bpe);
            if (lr.applied) d += double(std::max<std::int64_t>(0, lr.varying_need - lr.fixed_need));
            in.variant = 1;
            d = std::max(d, est::compute(in, b));
        }
        return d <= budget;
    };
    // largest value in [1, cap] for which fits() holds (monotone): doubling, then bisection
    auto largest = [](std::int64_t cap, const std::function<bool(std::int64_t)>& ok) -> std::int64_t {
        if (!ok(1)) return 0;
        std::int64_t lo = 1, hi = 2;
        while (hi <= cap && ok(hi)) {
            lo = hi;
            hi *= 2;
        }
        hi = std::min(hi, cap + 1);
        while (hi - lo > 1) {
            const std::int64_t mid = lo + (hi - lo) / 2;
            (ok(mid) ? lo : hi) = mid;
        }
        return lo;
    };
    f.max_micro_batch = largest(std::int64_t(1) << 16, [&](std::int64_t m) { return fits(m, base.seq_len); });
    f.max_seq_len = usable_seq_len(base, largest(std::int64_t(1) << 24, [&](std::int64_t s) { return fits(base.micro_batch, s); }));
    // rev40: the parallel-strategy lever for activations (method Step 4, after checkpointing and before the batch): TP
    // with sequence parallelism divides each layer's activations; degrees that double the job's, within a node
    const std::int64_t node = std::min<std::int64_t>(8, base.node_ranks);
    const std::int64_t others = base.pp * base.cp * base.dp_replicate;
    for (std::int64_t t = base.tp * 2; t <= node; t *= 2) {
        const estimate_model& m = base.model;
        if (base.world % (t * others) != 0 || (m.heads > 0 && m.heads % t != 0) || (m.kv_heads > 0 && m.kv_heads % t != 0) ||
            base.seq_len % t != 0)
            continue;
        in = base;
        in.assumptions.clear();
        in.tp = t;
        in.sequence_parallel = true;
        in.dp_shard = base.world / (t * others);
        if (base.framework == train_framework::megatron && base.etp == base.tp) in.etp = t;
        if (base.framework == train_framework::torchtitan && in.dp_shard * in.cp <= 1) in.zero_stage = 0;
        if (f.min_tp < 0) f.min_tp = 0;
        if (fits(base.micro_batch, base.seq_len)) {
            f.min_tp = t;
            break;
        }
    }
    return f;
}

}  // namespace oomdx
