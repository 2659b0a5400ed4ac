// Model dimensions: presets, HF config.json, parameter counts.
#include "parsers/config/model_dims.h"

#include "engine/core/yaml_node.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/yaml_file.h"
#include "parsers/config/model_sources.h"
#include "parsers/config/raw_entry.h"

namespace oomdx {

namespace {

using i128 = __int128;

std::int64_t checked(i128 v) {
    if (v < 0 || v > static_cast<i128>(std::numeric_limits<std::int64_t>::max()))
        throw input_error("model dimensions give a parameter count beyond 2^63");
    return static_cast<std::int64_t>(v);
}

bool is_moe_layer(const model_dims& m, std::int64_t i) {
    if (m.num_experts <= 0) return false;
    const std::int64_t freq = m.moe_layer_freq > 0 ? m.moe_layer_freq : 1;
    return i >= m.first_k_dense_replace && (i % freq) == 0;
}

i128 attention_params(const model_dims& m) {
    const i128 h = m.hidden_size;
    if (m.kv_lora_rank > 0) {  // MLA
        const i128 nh = m.num_attention_heads;
        const i128 qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
        i128 q = m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank + i128(m.q_lora_rank) * nh * qk
                                   : h * nh * qk;
        i128 kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank +
                  i128(m.kv_lora_rank) * nh * (m.qk_nope_head_dim + m.v_head_dim);
        i128 o = nh * m.v_head_dim * h;
        return q + kv + o;
    }
    const i128 nq = m.num_attention_heads, nkv = m.num_kv_heads, hd = m.head_dim;
    i128 p = h * nq * hd + 2 * h * nkv * hd + nq * hd * h;
    if (m.attention_bias) {
        p += nq * hd + 2 * nkv * hd;
        if (m.mlp_bias) p += h;  // output projection bias (GPT-style blocks)
    }
    if (m.qk_norm) p += 2 * hd;
    return p;
}

i128 mlp_params(const model_dims& m, std::int64_t ffn) {
    const i128 h = m.hidden_size;
    i128 p = (m.gated_mlp ? 3 : 2) * h * ffn;
    if (m.mlp_bias) p += ffn + h;
    return p;
}

i128 count(const model_dims& m, bool active) {
    const i128 h = m.hidden_size;
    i128 total = 0;
    const i128 attn = attention_params(m);
    const i128 norms = (m.norm_bias || m.sandwich_norm ? 4 : 2) * h;
    const i128 dense = mlp_params(m, m.intermediate_size);
    const std::int64_t moe_ffn = m.moe_intermediate_size > 0 ? m.moe_intermediate_size : m.intermediate_size;
    const i128 expert = mlp_params(m, moe_ffn);
    const std::int64_t routed = active ? std::min(m.num_experts_per_tok, m.num_experts) : m.num_experts;
    i128 moe = i128(routed) * expert + i128(m.num_shared_experts) * expert + h * m.num_experts;
    if (m.router_bias && !active) moe += m.num_experts;  // correction bias: total only
    std::int64_t n_moe = 0;
    for (std::int64_t i = 0; i < m.num_layers; ++i)
        if (is_moe_layer(m, i)) ++n_moe;
    total += i128(m.num_layers) * (attn + norms);
    total += i128(m.num_layers - n_moe) * dense + i128(n_moe) * moe;
    total += (m.norm_bias ? 2 : 1) * h;  // final norm
    total += i128(m.vocab_size) * h * (m.tie_word_embeddings ? 1 : 2);
    if (m.learned_pos) total += i128(m.max_position_embeddings) * h;
    if (m.family == "bert") total += h * h + h + 2 * h;  // pooler dense and bias, token-type embeddings
    return total;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// "meta-llama/Meta-Llama-3-8B" -> "metallama38b" after the org: "llama38b".
std::string normalize_spelling(std::string s) {
    s = lower(std::move(s));
    std::string out;
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c))) out += c;
    for (const char* p : {"meta", "hf"})
        if (out.rfind(p, 0) == 0 && out.size() > std::string(p).size() + 3 && out.find("llama") == std::string(p).size())
            out.erase(0, std::string(p).size());
    return out;
}

struct preset_table {
    std::vector<model_dims> presets;
    std::map<std::string, std::size_t> by_spelling;
};

std::int64_t yaml_int(const YAML::Node& n, const std::string& file) {
    try {
        if (n.IsNull()) return 0;
        return n.as<std::int64_t>();
    } catch (const YAML::Exception&) {
        throw input_error::at_line(file, n.Mark().line + 1, "expected an integer");
    }
}

preset_table load_presets() {
    preset_table t;
    std::error_code ec;  // a missing presets directory leaves the table empty
    for (const auto& file : yaml_files_in(data_path("knowledge/models"), ec)) {
        const YAML::Node root = load_yaml_file(file);
        if (!root.IsSequence()) throw input_error::in_file(file, "expected a list of model presets");
        for (const auto& n : root) {
            const std::int64_t line = n.Mark().line + 1;
            if (!n.IsMap() || !n["id"] || !n["dims"])
                throw input_error::at_line(file, line, "a preset needs id and dims");
            model_dims m;
            m.name = n["id"].as<std::string>();
            m.family = n["family"] ? n["family"].as<std::string>() : "llama";
            const YAML::Node d = n["dims"];
            std::map<std::string, std::int64_t*> ints{
                {"hidden_size", &m.hidden_size}, {"num_layers", &m.num_layers},
                {"num_attention_heads", &m.num_attention_heads}, {"num_kv_heads", &m.num_kv_heads},
                {"head_dim", &m.head_dim}, {"intermediate_size", &m.intermediate_size},
                {"vocab_size", &m.vocab_size}, {"num_experts", &m.num_experts},
                {"num_experts_per_tok", &m.num_experts_per_tok},
                {"num_shared_experts", &m.num_shared_experts},
                {"moe_intermediate_size", &m.moe_intermediate_size},
                {"first_k_dense_replace", &m.first_k_dense_replace},
                {"moe_layer_freq", &m.moe_layer_freq}, {"q_lora_rank", &m.q_lora_rank},
                {"kv_lora_rank", &m.kv_lora_rank}, {"qk_nope_head_dim", &m.qk_nope_head_dim},
                {"qk_rope_head_dim", &m.qk_rope_head_dim}, {"v_head_dim", &m.v_head_dim},
                {"max_position_embeddings", &m.max_position_embeddings}};
            for (auto it = d.begin(); it != d.end(); ++it) {
                const std::string k = it->first.as<std::string>();
                if (k == "tie_word_embeddings") m.tie_word_embeddings = it->second.as<bool>();
                else if (auto f = ints.find(k); f != ints.end()) *f->second = yaml_int(it->second, file);
                else throw input_error::at_line(file, it->first.Mark().line + 1, "unknown dimension '" + k + "'");
            }
            if (n["published_param_count"]) m.published_param_count = yaml_int(n["published_param_count"], file);
            if (n["vision_params"]) m.vision_params = yaml_int(n["vision_params"], file);
            if (m.vision_params < 0) throw input_error::at_line(file, line, "vision_params must not be negative");
            m.source.producer = "model.preset";
            m.source.file = file;
            m.source.line = line;
            m.source.excerpt = n["source"] ? n["source"].as<std::string>() : "";
            finish_model_dims(m, fmt::format("{}:{}", file, line));
            const std::size_t idx = t.presets.size();
            std::vector<std::string> spellings{m.name};
            if (n["name"]) spellings.push_back(n["name"].as<std::string>());
            if (n["aliases"])
                for (const auto& a : n["aliases"]) spellings.push_back(a.as<std::string>());
            if (n["torchtitan"] && n["torchtitan"]["module"] && n["torchtitan"]["flavor"])
                spellings.push_back(n["torchtitan"]["module"].as<std::string>() + "/" +
                                    n["torchtitan"]["flavor"].as<std::string>());
            for (const auto& s : spellings) {
                t.by_spelling.emplace(normalize_spelling(s), idx);
                // "org/Model" also answers to "Model".
                if (auto slash = s.rfind('/'); slash != std::string::npos)
                    t.by_spelling.emplace(normalize_spelling(s.substr(slash + 1)), idx);
            }
            t.presets.push_back(std::move(m));
        }
    }
    return t;
}

const preset_table& presets() {
    static const preset_table t = load_presets();
    return t;
}

}  // namespace

std::int64_t param_count(const model_dims& m) { return checked(count(m, false)); }
std::int64_t active_param_count(const model_dims& m) { return checked(count(m, true)); }

void finish_model_dims(model_dims& m, const std::string& where,
                       const std::map<std::string, std::int64_t>* field_lines) {
    if (m.family.empty()) m.family = "llama";
    if (m.num_kv_heads <= 0) m.num_kv_heads = m.num_attention_heads;
    if (m.head_dim <= 0 && m.num_attention_heads > 0) m.head_dim = m.hidden_size / m.num_attention_heads;
    if (m.moe_layer_freq <= 0) m.moe_layer_freq = 1;
    if (m.num_experts > 0 && m.moe_intermediate_size <= 0) m.moe_intermediate_size = m.intermediate_size;
    const std::string& f = m.family;
    if (f == "qwen2" || f == "qwen2_moe") m.attention_bias = true;
    if (f == "chatglm") m.attention_bias = true;  // ChatGLM3 / GLM-4: QKV bias
    // QKV bias: Seed-OSS, StableLM 2 (use_qkv_bias), GLM-4.5 MoE, gpt-oss (whose o bias, expert biases and
    // attention sinks, under 0.05 % of its count, are left out)
    if (f == "seed_oss" || f == "stablelm" || f == "glm4_moe" || f == "gpt_oss") m.attention_bias = true;
    if (f == "qwen3" || f == "qwen3_moe" || f == "gemma3" || f == "olmo2" || f == "olmo3") m.qk_norm = true;
    // est41: HunYuan dense V1 normalizes q and k (use_qk_norm); Arcee AFM's MLP is ReLU^2 over up_proj /
    // down_proj only (transformers models/arcee: no gate in its TP plan)
    if (f == "hunyuan_v1_dense") m.qk_norm = true;
    // Gemma 2 and 3 decoder layers hold input_layernorm, post_attention_layernorm, pre_feedforward_layernorm and
    // post_feedforward_layernorm (transformers models/gemma2/modeling_gemma2.py Gemma2DecoderLayer): Gemma 2 2B's
    // published 2,614,341,888 parameters is the two-norm count plus 26 x 2 x 2304
    if (f == "gemma2" || f == "gemma3") m.sandwich_norm = true;
    if (f == "arcee") m.gated_mlp = false;
    // router correction bias (DeepSeek-V3, GLM-4.5 / 4.7 e_score_correction_bias), gpt-oss router bias
    if (f == "deepseek_v3" || f == "glm4_moe" || f == "glm4_moe_lite" || f == "gpt_oss") m.router_bias = true;
    if (f == "stablelm") m.norm_bias = true;  // nn.LayerNorm, SwiGLU MLP
    // GPT-style blocks: LayerNorm with bias, biased linears, 2-matrix MLP (GELU/ReLU).
    if (f == "gpt" || f == "gpt2" || f == "opt" || f == "bert") {
        m.attention_bias = m.mlp_bias = m.norm_bias = m.learned_pos = true;
        m.gated_mlp = false;
    }
    if (f == "bloom" || f == "phi" || f == "gpt_neox" || f == "starcoder2") {  // ALiBi / rotary: no position table
        m.attention_bias = m.mlp_bias = m.norm_bias = true;
        m.gated_mlp = false;
    }
    if (f == "gptj") {  // GPT-J: biased GELU MLP, no attention biases, rotary
        m.mlp_bias = m.norm_bias = true;
        m.gated_mlp = false;
    }
    if (f == "falcon") {  // no linear biases
        m.norm_bias = true;
        m.gated_mlp = false;
    }
    struct check { const char* name; std::int64_t v, lo, hi; };
    const std::int64_t big = std::int64_t(1) << 24;
    for (const check& c : {check{"hidden_size", m.hidden_size, 1, big},
                           check{"num_layers", m.num_layers, 1, 100000},
                           check{"num_attention_heads", m.num_attention_heads, 1, 65536},
                           check{"num_kv_heads", m.num_kv_heads, 1, 65536},
                           check{"head_dim", m.head_dim, 0, big},
                           check{"intermediate_size", m.intermediate_size, 0, big},
                           check{"vocab_size", m.vocab_size, 1, std::int64_t(1) << 28},
                           check{"num_experts", m.num_experts, 0, 1 << 20},
                           check{"num_experts_per_tok", m.num_experts_per_tok, 0, 1 << 20},
                           check{"num_shared_experts", m.num_shared_experts, 0, 1 << 20},
                           check{"moe_intermediate_size", m.moe_intermediate_size, 0, big},
                           check{"first_k_dense_replace", m.first_k_dense_replace, 0, 100000},
                           check{"moe_layer_freq", m.moe_layer_freq, 1, 100000},
                           check{"q_lora_rank", m.q_lora_rank, 0, big},
                           check{"kv_lora_rank", m.kv_lora_rank, 0, big},
                           check{"qk_nope_head_dim", m.qk_nope_head_dim, 0, big},
                           check{"qk_rope_head_dim", m.qk_rope_head_dim, 0, big},
                           check{"v_head_dim", m.v_head_dim, 0, big},
                           check{"max_position_embeddings", m.max_position_embeddings, 0, std::int64_t(1) << 32}}) {
        if (c.v < c.lo || c.v > c.hi) {
            std::string at = where;
            if (field_lines)
                if (auto it = field_lines->find(c.name); it != field_lines->end()) at = fmt::format("{}:{}", where, it->second);
            throw input_error(fmt::format("{}: model dimension {} = {} is outside [{}, {}]", at, c.name, c.v, c.lo, c.hi));
        }
    }
    (void)param_count(m);  // throws when the product overflows
}

const std::vector<model_dims>& model_presets() { return presets().presets; }

std::vector<std::string> model_preset_ids() {
    std::vector<std::string> ids;
    for (const auto& m : presets().presets) ids.push_back(m.name);
    return ids;
}

checkpoint_quant checkpoint_quantization(const std::string& hub_id) {
    const std::string name = lower(hub_id.substr(hub_id.rfind('/') == std::string::npos ? 0 : hub_id.rfind('/') + 1));
    // Marker (as a "-" separated part of the name), bits (0: not one the estimator models), method.
    struct marker { const char* text; int bits; const char* method; };
    static const marker markers[] = {
        {"-bnb-4bit", 4, "bitsandbytes"}, {"-bnb-nf4", 4, "bitsandbytes"}, {"-bnb-8bit", 8, "bitsandbytes"},
        {"-gptq-int4", 4, "gptq"},
        {"-gptq-int8", 8, "gptq"},         {"-gptq", 4, "gptq"},              {"-awq", 4, "awq"},
        {"-int4", 4, ""},                  {"-int8", 8, ""},                  {"-4bit", 4, ""},
        {"-8bit", 8, ""},                  {"-aqlm", 0, "aqlm"},              {"-hqq", 0, "hqq"}};
    checkpoint_quant best;
    for (const auto& m : markers) {
        const std::size_t at = name.find(m.text);
        if (at == std::string::npos || at == 0) continue;
        const std::size_t end = at + std::string(m.text).size();
        if (end < name.size() && name[end] != '-' && name[end] != '_') continue;  // a whole part only
        if (at < best.cut) best = {at, m.bits, m.method};
    }
    return best;
}

// Length of the variant tail ending a hub name ("-Instruct", "-2507", "-v0.3", "-BF16"), with its
// dash, or 0. A version tail is cut only from a name that still states a size ("Mistral-7B-v0.2"),
// so that "DeepSeek-V3" keeps its version. Other tails ("-1M" long-context, "-GGUF") stay.
static std::size_t variant_tail(const std::string& low) {
    const std::size_t dash = low.rfind('-');
    if (dash == std::string::npos || dash < 3) return 0;
    const std::string part = low.substr(dash + 1), head = low.substr(0, dash);
    const std::size_t n = part.size() + 1;
    for (const char* w : {"instruct", "chat", "it", "base", "hf", "bf16", "fp16"})
        if (part == w) return n;
    auto digits = [](const std::string& x) {
        return !x.empty() && std::all_of(x.begin(), x.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    };
    if (digits(part) && (part.size() == 4 || part.size() == 6 || part.size() == 8)) return n;  // 2507, 240715, 20240715
    if (part.size() >= 2 && part[0] == 'v' && std::isdigit(static_cast<unsigned char>(part[1]))) {
        for (char c : part.substr(1))
            if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return 0;
        for (std::size_t i = 0; i + 1 < head.size(); ++i)  // a size such as 7b, 0.5b, 135m
            if (std::isdigit(static_cast<unsigned char>(head[i])) && (head[i + 1] == 'b' || head[i + 1] == 'm') &&
                (i + 2 == head.size() || !std::isalpha(static_cast<unsigned char>(head[i + 2]))))
                return n;
    }
    return 0;
}

std::vector<const model_dims*> presets_with_param_count(double billions, double tolerance) {
    std::vector<const model_dims*> out;
    if (!(billions > 0)) return out;
    auto same_dims = [](const model_dims& a, const model_dims& b) {
        return a.hidden_size == b.hidden_size && a.num_layers == b.num_layers && a.num_attention_heads == b.num_attention_heads &&
               a.num_kv_heads == b.num_kv_heads && a.intermediate_size == b.intermediate_size && a.vocab_size == b.vocab_size &&
               a.num_experts == b.num_experts && a.tie_word_embeddings == b.tie_word_embeddings;
    };
    for (const auto& m : model_presets()) {
        const double b = static_cast<double>(param_count(m)) / 1e9;
        if (std::abs(b - billions) > tolerance) continue;
        if (std::none_of(out.begin(), out.end(), [&](const model_dims* o) { return same_dims(*o, m); })) out.push_back(&m);
    }
    return out;
}

const model_dims* find_model_preset(const std::string& spelling) {
    const auto& t = presets();
    auto find = [&](const std::string& s) -> const model_dims* {
        auto it = t.by_spelling.find(normalize_spelling(s));
        return it == t.by_spelling.end() ? nullptr : &t.presets[it->second];
    };
    if (const model_dims* m = find(spelling)) return m;
    // A hub id ("org/Name-7B-Instruct"): the name alone, then without the suffixes of tuned
    // variants, which keep their base model's architecture.
    std::string tail = spelling.substr(spelling.rfind('/') == std::string::npos ? 0 : spelling.rfind('/') + 1);
    if (const model_dims* m = find(tail)) return m;
    // A pre-quantized checkpoint ("...-bnb-4bit", "...-GPTQ-Int4", "...-AWQ") keeps its base
    // model's architecture; the weights' width is checkpoint_quantization()'s business.
    if (const auto q = checkpoint_quantization(tail); q.cut != std::string::npos) {
        tail.resize(q.cut);
        if (const model_dims* m = find(tail)) return m;
    }
    // Then without the tails of tuned or re-released variants, which keep their base model's
    // architecture, one at a time from the end.
    while (const std::size_t n = variant_tail(lower(tail))) {
        tail.resize(tail.size() - n);
        if (const model_dims* m = find(tail)) return m;
    }
    return nullptr;
}

model_dims load_model(const std::string& spec) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // "file.py:8B" names a flavor inside a torchtitan flavor file.
    std::string path = spec, selector;
    if (!fs::exists(path, ec)) {
        if (auto c = spec.rfind(':'); c != std::string::npos && c > 0 && fs::exists(spec.substr(0, c), ec)) {
            path = spec.substr(0, c);
            selector = spec.substr(c + 1);
        }
    }
    if (fs::exists(path, ec) && !fs::is_directory(path, ec)) {
        const std::string ext = lower(fs::path(path).extension().string());
        if (ext == ".py") return load_torchtitan_flavor(path, selector);
        if (ext == ".sh" || ext == ".bash" || ext == ".txt") return load_megatron_model(path);
        return load_hf_config(path);
    }
    if (fs::is_directory(path, ec) && fs::exists(fs::path(path) / "config.json", ec))
        return load_hf_config((fs::path(path) / "config.json").string());
    if (const model_dims* p = find_model_preset(spec)) return *p;
    std::string ids;
    for (const auto& id : model_preset_ids()) ids += (ids.empty() ? "" : ", ") + id;
    throw input_error(fmt::format("unknown model '{}': not a file and not a preset (presets: {})", spec, ids));
}

void emit_facts(const model_dims& m, fact_sink& sink) {
    auto emit = [&](const char* name, value v) { sink.emit(std::string("model.") + name, std::move(v), m.source); };
    if (!m.name.empty()) emit("name", m.name);
    emit("family", m.family);
    emit("hidden_size", m.hidden_size);
    emit("num_layers", m.num_layers);
    emit("num_attention_heads", m.num_attention_heads);
    emit("num_kv_heads", m.num_kv_heads);
    emit("head_dim", m.head_dim);
    emit("intermediate_size", m.intermediate_size);
    emit("vocab_size", m.vocab_size);
    emit("tie_word_embeddings", m.tie_word_embeddings);
    emit("num_experts", m.num_experts);
    if (m.num_experts > 0) {
        emit("num_experts_per_tok", m.num_experts_per_tok);
        emit("num_shared_experts", m.num_shared_experts);
        emit("moe_intermediate_size", m.moe_intermediate_size);
        emit("first_k_dense_replace", m.first_k_dense_replace);
        emit("moe_layer_freq", m.moe_layer_freq);
    }
    if (m.kv_lora_rank > 0) {
        emit("q_lora_rank", m.q_lora_rank);
        emit("kv_lora_rank", m.kv_lora_rank);
        emit("qk_nope_head_dim", m.qk_nope_head_dim);
        emit("qk_rope_head_dim", m.qk_rope_head_dim);
        emit("v_head_dim", m.v_head_dim);
    }
    if (m.max_position_embeddings > 0) emit("max_position_embeddings", m.max_position_embeddings);
    emit("attention_bias", m.attention_bias);
    emit("qk_norm", m.qk_norm);
    emit("gated_mlp", m.gated_mlp);
    provenance derived;
    derived.producer = "model.param_count";
    derived.file = m.source.file;
    derived.line = m.source.line;
    derived.excerpt = "computed from the dimensions (knowledge.md §3 formulas)";
    derived.derived_from = {"model.hidden_size", "model.num_layers", "model.intermediate_size",
                            "model.vocab_size", "model.num_experts"};
    sink.emit("model.param_count", param_count(m), derived);
    sink.emit("model.active_param_count", active_param_count(m), derived);
    if (m.published_param_count > 0) emit("published_param_count", m.published_param_count);
    if (m.vision_params > 0) emit("vision_params", m.vision_params);
}

}  // namespace oomdx
