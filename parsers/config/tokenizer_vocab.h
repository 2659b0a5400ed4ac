// The vocabulary a Megatron job's tokenizer gives when the script states none (est63):
// --tokenizer-model (MindSpeed-LLM --tokenizer-name-or-path) names a local HF directory or a hub id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/core/padded_vocab.h"
#include "parsers/config/job_config.h"

namespace oomdx {

struct tokenizer_vocab {
    std::int64_t size = 0;  // tokens before Megatron's padding
    std::string source;     // "preset llama3-8b", "/models/x/config.json", "GPT-2 BPE vocab file"
};

// A local directory (or a file inside one) with config.json, else a model preset by its spelling.
std::optional<tokenizer_vocab> resolve_tokenizer_vocab(const std::string& spelling, const std::string& tokenizer_type);
// Adds model.tokenizer_vocab_size and model.tokenizer_vocab_source when the job names a tokenizer
// that resolves and gives no model.vocab_size.
void derive_tokenizer_vocab(job_config& job);

}  // namespace oomdx
