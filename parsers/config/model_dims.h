// Model dimensions: presets in knowledge/models/, HF config.json, torchtitan flavor files,
// Megatron argument scripts. Parameter counts follow knowledge.md §3's formulas.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/core/fact.h"

namespace oomdx {

struct model_dims {
    std::string name, family;
    std::int64_t hidden_size = 0, num_layers = 0, num_attention_heads = 0, num_kv_heads = 0,
                 head_dim = 0, intermediate_size = 0, vocab_size = 0;
    bool tie_word_embeddings = false;
    std::int64_t num_experts = 0, num_experts_per_tok = 0, num_shared_experts = 0,
                 moe_intermediate_size = 0, first_k_dense_replace = 0, moe_layer_freq = 1,
                 q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0,
                 v_head_dim = 0, max_position_embeddings = 0, published_param_count = 0;
    // Vision-language presets: the vision tower's parameters (encoder and projector), beside the
    // language model the dimensions describe; param_count() counts the language model only.
    std::int64_t vision_params = 0;
    provenance source;
    // Architecture details that change the count (derived from the family when not given).
    bool attention_bias = false;   // Qwen2: bias on q/k/v; GPT: on q/k/v/o
    bool qk_norm = false;          // Qwen3: RMSNorm on q and k per head
    bool gated_mlp = true;         // SwiGLU (3 matrices) vs GeLU MLP (2 matrices)
    bool mlp_bias = false;         // GPT-style biases in the MLP
    bool norm_bias = false;        // LayerNorm (weight + bias) instead of RMSNorm
    bool learned_pos = false;      // learned positional embeddings (max_position_embeddings x h)
    bool router_bias = false;      // DeepSeek-V3 e_score_correction_bias
    bool sandwich_norm = false;    // Gemma 2 / 3: RMSNorm before and after both attention and MLP (4 a layer)
};

std::int64_t param_count(const model_dims&);          // total parameters
std::int64_t active_param_count(const model_dims&);   // per token (MoE)
// Preset id (any common spelling: "llama3-8b", "Llama-3-8B", "meta-llama/Meta-Llama-3-8B",
// "llama3/8B") or a path: HF config.json, torchtitan flavor file ("__init__.py:8B"),
// Megatron script (.sh). Throws input_error.
model_dims load_model(const std::string& spec);
std::vector<std::string> model_preset_ids();
// All presets (knowledge/models/*.yaml), loaded once.
const std::vector<model_dims>& model_presets();
// Preset by spelling, nullptr when none matches.
// What a hub id says about a pre-quantized checkpoint: where its quantization suffix starts
// (npos: none), the weights' bits (4, 8; 0 when the format is not one the estimator models) and
// the method ("" when the name does not say).
struct checkpoint_quant {
    std::size_t cut = std::string::npos;
    int bits = 0;
    std::string method;
};
checkpoint_quant checkpoint_quantization(const std::string& hub_id);
const model_dims* find_model_preset(const std::string& spelling);
// Presets whose parameter count (param_count) is `billions` within `tolerance` billions (a count a log printed to
// four significant digits: half a unit of the last digit), one per distinct set of dimensions (a fine-tune shares
// its base's).
std::vector<const model_dims*> presets_with_param_count(double billions, double tolerance);
// Fills head_dim, kv heads and family-specific flags; checks ranges (throws input_error
// naming `where`).
void finish_model_dims(model_dims&, const std::string& where,
                       const std::map<std::string, std::int64_t>* field_lines = nullptr);
void emit_facts(const model_dims&, fact_sink&);       // model.* facts (knowledge/facts/model.yaml)

}  // namespace oomdx
