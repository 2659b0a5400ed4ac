// Model dimensions from torchtitan flavor files (read with the Python literal reader) and from
// Megatron / MindSpeed argument scripts (through the megatron adapter's model.* facts).
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "parsers/config/job_config.h"
#include "parsers/config/model_sources.h"
#include "parsers/config/py_expr.h"
#include "parsers/config/raw_entry.h"
#include "parsers/config/tokenizer_vocab.h"

namespace oomdx {

namespace {

std::map<std::string, const py_node*> kwargs_of(const py_node& call) {
    std::map<std::string, const py_node*> out;
    for (const auto& [k, v] : call.kwargs) out[k] = &v;
    return out;
}

std::optional<double> num(const std::map<std::string, const py_node*>& kw, const char* name) {
    auto it = kw.find(name);
    if (it == kw.end() || it->second->k != py_node::kind::literal || !it->second->lit.is_numeric()) return std::nullopt;
    return it->second->lit.as_number();
}

std::optional<bool> flag(const std::map<std::string, const py_node*>& kw, const char* name) {
    auto it = kw.find(name);
    if (it == kw.end() || it->second->k != py_node::kind::literal || !it->second->lit.is_bool()) return std::nullopt;
    return it->second->lit.as_bool();
}

std::int64_t as_int(const std::optional<double>& v, std::int64_t dflt) {
    std::int64_t out = 0;
    if (!v) return dflt;
    if (!whole_number(std::floor(*v), out)) return -1;  // out of range: rejected by the range checks
    return out;
}

}  // namespace

model_dims load_torchtitan_flavor(const std::string& path, const std::string& flavor) {
    const std::string text = read_config_file(path);
    py_source src(text, path);
    auto flavors = src.keyed_calls();
    if (flavors.empty()) throw input_error::in_file(path, "no flavors (\"name\": ModelArgs(...)) in this file");
    const py_node* call = nullptr;
    std::string chosen = flavor;
    std::string names;
    for (const auto& [k, v] : flavors) {
        names += (names.empty() ? "" : ", ") + k;
        if (k == flavor) call = &v;
    }
    if (!call) {
        if (!flavor.empty() || flavors.size() != 1)
            throw input_error::in_file(path, fmt::format("name the flavor as {}:FLAVOR (flavors: {})", path, names));
        call = &flavors[0].second;
        chosen = flavors[0].first;
    }
    auto kw = kwargs_of(*call);
    model_dims m;
    const std::string module = std::filesystem::path(path).parent_path().filename().string();
    m.name = (module.empty() ? std::string("torchtitan") : module) + "/" + chosen;
    m.source.producer = "model.torchtitan_flavor";
    m.source.file = path;
    m.source.line = call->line;
    m.source.excerpt = line_excerpt(text, call->line);
    const std::string& callee = call->callee;
    std::map<std::string, const py_node*> moe;
    if (auto it = kw.find("moe_args"); it != kw.end() && it->second->k == py_node::kind::call) moe = kwargs_of(*it->second);
    m.hidden_size = as_int(num(kw, "dim"), 0);
    m.num_layers = as_int(num(kw, "n_layers"), 0);
    m.num_attention_heads = as_int(num(kw, "n_heads"), 0);
    m.num_kv_heads = as_int(num(kw, "n_kv_heads"), 0);
    m.head_dim = as_int(num(kw, "head_dim"), 0);
    m.max_position_embeddings = as_int(num(kw, "max_seq_len"), 0);
    if (callee.find("DeepSeek") != std::string::npos || callee.find("Deepseek") != std::string::npos) {
        m.family = "deepseek_v3";
        if (auto it = moe.find("score_func"); it != moe.end() && it->second->k == py_node::kind::literal &&
                                              it->second->lit.is_string() && it->second->lit.as_string() == "softmax")
            m.family = "deepseek_v2";
        m.vocab_size = as_int(num(kw, "vocab_size"), 102400);
        m.intermediate_size = as_int(num(kw, "inter_dim"), 0);
        m.moe_intermediate_size = as_int(num(kw, "moe_inter_dim"), 0);
        m.first_k_dense_replace = as_int(num(kw, "n_dense_layers"), 1);
        m.q_lora_rank = as_int(num(kw, "q_lora_rank"), 0);
        m.kv_lora_rank = as_int(num(kw, "kv_lora_rank"), 512);
        m.qk_nope_head_dim = as_int(num(kw, "qk_nope_head_dim"), 128);
        m.qk_rope_head_dim = as_int(num(kw, "qk_rope_head_dim"), 64);
        m.v_head_dim = as_int(num(kw, "v_head_dim"), 128);
        m.num_kv_heads = m.num_attention_heads;
        m.num_experts = as_int(num(moe, "num_experts"), as_int(num(kw, "n_routed_experts"), 64));
        m.num_shared_experts = as_int(num(moe, "num_shared_experts"), as_int(num(kw, "n_shared_experts"), 2));
        m.num_experts_per_tok = as_int(num(moe, "top_k"), as_int(num(kw, "n_activated_experts"), 6));
    } else if (callee.find("Qwen3") != std::string::npos) {
        m.vocab_size = as_int(num(kw, "vocab_size"), 151936);
        m.intermediate_size = as_int(num(kw, "hidden_dim"), 0);
        m.tie_word_embeddings = flag(kw, "enable_weight_tying").value_or(false);
        m.family = "qwen3";
        if (flag(kw, "moe_enabled").value_or(false) || !moe.empty()) {
            m.family = "qwen3_moe";
            m.moe_intermediate_size = as_int(num(kw, "moe_inter_dim"), 0);
            m.num_experts = as_int(num(moe, "num_experts"), 0);
            m.num_shared_experts = as_int(num(moe, "num_shared_experts"), 0);
            m.num_experts_per_tok = as_int(num(moe, "top_k"), 0);
        }
        if (m.head_dim == 0) m.head_dim = 128;
    } else {
        // Llama-style TransformerModelArgs: FFN from dim, ffn_dim_multiplier and multiple_of.
        m.family = "llama";
        m.vocab_size = as_int(num(kw, "vocab_size"), 128256);
        const std::int64_t multiple_of = as_int(num(kw, "multiple_of"), 256);
        std::int64_t hidden = (2 * 4 * m.hidden_size) / 3;
        if (auto mult = num(kw, "ffn_dim_multiplier")) hidden = as_int(*mult * static_cast<double>(hidden), -1);
        if (multiple_of > 0 && hidden > 0 && hidden < (std::int64_t(1) << 40) && multiple_of < (std::int64_t(1) << 20))
            hidden = multiple_of * ((hidden + multiple_of - 1) / multiple_of);
        m.intermediate_size = hidden;
    }
    finish_model_dims(m, fmt::format("{}:{}", path, call->line));
    return m;
}

model_dims load_megatron_model(const std::string& path) {
    job_config job = parse_job_config(path, "mindspeed");  // megatron flags + MindSpeed model flags
    model_dims m;
    m.source.producer = "model.megatron_args";
    m.source.file = path;
    auto get = [&](const char* name, std::int64_t& dst) {
        if (const fact* f = job.find(name); f && f->val.is_integer()) {
            dst = f->val.as_integer();
            if (m.source.line == 0 || f->prov.line < m.source.line) {
                m.source.line = f->prov.line;
                m.source.excerpt = f->prov.excerpt;
            }
            return true;
        }
        return false;
    };
    if (!get("model.num_layers", m.num_layers) || !get("model.hidden_size", m.hidden_size))
        throw input_error::in_file(path, "no --num-layers / --hidden-size in this script");
    get("model.num_attention_heads", m.num_attention_heads);
    get("model.num_kv_heads", m.num_kv_heads);
    get("model.head_dim", m.head_dim);
    if (!get("model.intermediate_size", m.intermediate_size)) m.intermediate_size = 4 * m.hidden_size;
    if (!get("model.vocab_size", m.vocab_size)) {
        // est63: the tokenizer the script names, padded as Megatron pads it at the script's TP
        std::int64_t raw = 0, div = 128, tp = 1;
        if (!get("model.tokenizer_vocab_size", raw))
            throw input_error::in_file(path, "no --vocab-size / --padded-vocab-size in this script and its tokenizer is not "
                                             "a known preset or local HF directory; give the model as a preset or HF config.json");
        get("model.vocab_divisible_by", div);
        get("parallelism.tensor_parallel_degree", tp);
        m.vocab_size = megatron_padded_vocab(raw, div, tp);
    }
    get("model.max_position_embeddings", m.max_position_embeddings);
    get("model.num_experts", m.num_experts);
    get("model.num_experts_per_tok", m.num_experts_per_tok);
    get("model.num_shared_experts", m.num_shared_experts);
    get("model.moe_intermediate_size", m.moe_intermediate_size);
    get("model.first_k_dense_replace", m.first_k_dense_replace);
    get("model.moe_layer_freq", m.moe_layer_freq);
    get("model.q_lora_rank", m.q_lora_rank);
    get("model.kv_lora_rank", m.kv_lora_rank);
    get("model.qk_nope_head_dim", m.qk_nope_head_dim);
    get("model.qk_rope_head_dim", m.qk_rope_head_dim);
    get("model.v_head_dim", m.v_head_dim);
    // Megatron ties embeddings unless told otherwise.
    const fact* untie = job.find("model.tie_word_embeddings");
    m.tie_word_embeddings = !(untie && untie->val.is_bool() && !untie->val.as_bool());
    const fact* qk = job.find("model.qk_norm");  // --qk-layernorm (est63)
    m.qk_norm = qk && qk->val.is_bool() && qk->val.as_bool();
    const fact* swiglu = job.find("model.gated_mlp");
    const bool gated = swiglu && swiglu->val.is_bool() && swiglu->val.as_bool();
    if (m.kv_lora_rank > 0) m.family = "deepseek_v3";
    else if (m.num_experts > 0) m.family = "mixtral";
    else m.family = gated ? "llama" : "gpt";
    if (m.kv_lora_rank > 0 && m.num_kv_heads == 0) m.num_kv_heads = m.num_attention_heads;
    m.name = std::filesystem::path(path).stem().string();
    finish_model_dims(m, path);
    return m;
}

}  // namespace oomdx
