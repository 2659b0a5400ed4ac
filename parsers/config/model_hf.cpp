// Hugging Face config.json -> model_dims (Llama, Qwen2/3, Qwen3-MoE, Mixtral, DeepSeek-V2/V3).
#include <map>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "parsers/config/model_sources.h"
#include "parsers/config/raw_entry.h"

namespace oomdx {

model_dims load_hf_config(const std::string& path) { return hf_config_from_text(read_config_file(path), path); }

// `path` names the text in errors and provenance (a file, or "log:line" for a printed config).
model_dims hf_config_from_text(const std::string& text, const std::string& path) {
    std::vector<raw_entry> entries = flatten_json(text, path);
    // Multimodal configs nest the language model under text_config / llm_config.
    std::string prefix;
    for (const auto& e : entries)
        if (e.container && (e.key == "text_config" || e.key == "llm_config")) prefix = e.key + ".";
    std::map<std::string, const raw_entry*> top;
    for (const auto& e : entries) {
        if (e.container) continue;
        if (!prefix.empty() && e.key.rfind(prefix, 0) == 0) top[e.key.substr(prefix.size())] = &e;
        else if (e.key.find('.') == std::string::npos && !top.count(e.key)) top[e.key] = &e;
    }
    model_dims m;
    m.source.producer = "model.hf_config";
    m.source.file = path;
    m.source.line = 1;
    std::map<std::string, std::int64_t> field_lines;  // model_dims field -> line it was read from
    auto get_int = [&](std::initializer_list<const char*> names, std::int64_t& dst) {
        for (const char* n : names) {
            auto it = top.find(n);
            if (it == top.end() || it->second->val.is_null()) continue;
            const value& v = it->second->val;
            std::int64_t whole = 0;
            if (v.is_integer()) dst = v.as_integer();
            else if (v.is_number() && whole_number(v.as_number(), whole)) dst = whole;
            else
                throw input_error::at_line(path, it->second->line, fmt::format("'{}' must be an integer", n));
            field_lines[*names.begin()] = it->second->line;
            return true;
        }
        return false;
    };
    if (auto it = top.find("model_type"); it != top.end() && it->second->val.is_string())
        m.family = it->second->val.as_string();
    if (auto it = top.find("_name_or_path"); it != top.end() && it->second->val.is_string())
        m.name = it->second->val.as_string();
    if (m.family == "gpt2") m.tie_word_embeddings = true;
    if (!get_int({"hidden_size", "n_embd", "d_model"}, m.hidden_size))
        throw input_error::in_file(path, "not a model config: no hidden_size");
    if (!get_int({"num_hidden_layers", "n_layer", "num_layers"}, m.num_layers))
        throw input_error::in_file(path, "not a model config: no num_hidden_layers");
    get_int({"num_attention_heads", "n_head"}, m.num_attention_heads);
    get_int({"num_key_value_heads", "num_kv_heads"}, m.num_kv_heads);
    get_int({"head_dim"}, m.head_dim);
    get_int({"intermediate_size", "n_inner", "ffn_dim"}, m.intermediate_size);
    if (m.intermediate_size == 0 && m.family == "gpt2") m.intermediate_size = 4 * m.hidden_size;
    get_int({"vocab_size"}, m.vocab_size);
    get_int({"max_position_embeddings", "n_positions"}, m.max_position_embeddings);
    get_int({"num_experts", "num_local_experts", "n_routed_experts"}, m.num_experts);
    get_int({"num_experts_per_tok", "moe_topk"}, m.num_experts_per_tok);
    get_int({"n_shared_experts", "num_shared_experts"}, m.num_shared_experts);
    get_int({"moe_intermediate_size"}, m.moe_intermediate_size);
    get_int({"first_k_dense_replace"}, m.first_k_dense_replace);
    if (!get_int({"moe_layer_freq"}, m.moe_layer_freq)) get_int({"decoder_sparse_step"}, m.moe_layer_freq);
    get_int({"q_lora_rank"}, m.q_lora_rank);
    get_int({"kv_lora_rank"}, m.kv_lora_rank);
    get_int({"qk_nope_head_dim"}, m.qk_nope_head_dim);
    get_int({"qk_rope_head_dim"}, m.qk_rope_head_dim);
    get_int({"v_head_dim"}, m.v_head_dim);
    if (auto it = top.find("tie_word_embeddings"); it != top.end() && it->second->val.is_bool())
        m.tie_word_embeddings = it->second->val.as_bool();
    if (m.family == "mixtral" && m.moe_intermediate_size == 0) m.moe_intermediate_size = m.intermediate_size;
    if (m.family == "gpt2") m.family = "gpt";
    if (m.name.empty()) m.name = m.family;
    if (auto it = top.find("hidden_size"); it != top.end()) {
        m.source.line = it->second->line;
        m.source.excerpt = it->second->excerpt;
    }
    // Range errors name the line of the key: field_lines is keyed by the first spelling passed
    // to get_int; these differ from the model_dims field names finish_model_dims checks.
    static const std::pair<const char*, const char*> field_of[] = {{"num_hidden_layers", "num_layers"},
                                                                   {"num_key_value_heads", "num_kv_heads"},
                                                                   {"n_shared_experts", "num_shared_experts"},
                                                                   {"decoder_sparse_step", "moe_layer_freq"}};
    for (const auto& [spelling, field] : field_of)
        if (auto it = field_lines.find(spelling); it != field_lines.end()) field_lines.emplace(field, it->second);
    finish_model_dims(m, path, &field_lines);
    if (auto it = top.find("attention_bias"); it != top.end() && it->second->val.is_bool())
        m.attention_bias = it->second->val.as_bool();
    if (auto it = top.find("use_qk_norm"); it != top.end() && it->second->val.is_bool())
        m.qk_norm = it->second->val.as_bool();
    return m;
}

}  // namespace oomdx
