// Megatron tokenizer -> vocabulary size (est63).
#include "parsers/config/tokenizer_vocab.h"

#include <filesystem>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "parsers/config/model_dims.h"
#include "parsers/config/model_sources.h"

namespace oomdx {

namespace {

// The HF config.json of a tokenizer directory, or of the directory holding a tokenizer file.
std::optional<tokenizer_vocab> from_local(const std::string& spelling) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path p(spelling);
    if (!fs::exists(p, ec)) return std::nullopt;
    const fs::path dir = fs::is_directory(p, ec) ? p : p.parent_path();
    const fs::path cfg = dir / "config.json";
    if (!fs::exists(cfg, ec)) return std::nullopt;
    try {
        const model_dims m = load_hf_config(cfg.string());
        if (m.vocab_size > 0) return tokenizer_vocab{m.vocab_size, cfg.string()};
    } catch (const input_error&) {
    }
    return std::nullopt;
}

}  // namespace

std::optional<tokenizer_vocab> resolve_tokenizer_vocab(const std::string& spelling, const std::string& tokenizer_type) {
    // GPT2BPETokenizer reads --vocab-file (GPT-2's 50,257 BPE entries, the file every Megatron GPT
    // example downloads), not --tokenizer-model
    if (tokenizer_type == "GPT2BPETokenizer") return tokenizer_vocab{50257, "GPT-2 BPE vocab file"};
    if (spelling.empty()) return std::nullopt;
    if (auto v = from_local(spelling)) return v;
    if (const model_dims* p = find_model_preset(spelling); p && p->vocab_size > 0)
        return tokenizer_vocab{p->vocab_size, "preset " + p->name};
    return std::nullopt;
}

void derive_tokenizer_vocab(job_config& job) {
    if (job.find("model.vocab_size")) return;
    const fact* tok = job.find("model.tokenizer");
    const fact* type = job.find("model.tokenizer_type");
    const std::string name = tok && tok->val.is_string() ? tok->val.as_string() : "";
    const std::string kind = type && type->val.is_string() ? type->val.as_string() : "";
    if (name.empty() && kind.empty()) return;
    const auto v = resolve_tokenizer_vocab(name, kind);
    if (!v) return;
    provenance p;
    p.producer = "config.derived";
    p.file = job.file;
    const fact* at = tok ? tok : type;
    p.line = at->prov.line;
    p.excerpt = fmt::format("tokenizer {}: {} tokens ({})", name.empty() ? kind : name, v->size, v->source);
    p.derived_from = {"model.tokenizer", "model.tokenizer_type"};
    job.facts.push_back(fact{"model.tokenizer_vocab_size", value(v->size), p});
    job.facts.push_back(fact{"model.tokenizer_vocab_source", value(v->source), p});
}

}  // namespace oomdx
