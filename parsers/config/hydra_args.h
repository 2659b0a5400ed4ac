// Hydra's own command-line words (https://hydra.cc/docs/advanced/hydra-command-line-flags/ and the override
// grammar, https://hydra.cc/docs/advanced/override_grammar/basic/): `--config-path` / `-cp` and `--config-name` /
// `-cn` name the primary config, `+key=value` adds a key, `++key=value` adds or overrides it, `~key` (or
// `~key=value`) deletes it. NeMo 1.x, verl and other Hydra scripts are launched this way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parsers/config/shell_args.h"

namespace oomdx {

struct hydra_config_ref {
    std::string dir;         // --config-path as written ("" when the line does not give it)
    std::string name;        // --config-name with ".yaml" added when it has no extension
    std::int64_t line = 0;   // line of --config-name
    std::string excerpt;     // "--config-path=conf --config-name=megatron_llama_config"
};

// The primary config the line names (`--config-name` is required; `--config-path` optional). `found` false
// when the line names none.
hydra_config_ref hydra_config_of(const std::vector<shell_word>& words, bool& found);

// Candidate files, in Hydra's order: the path relative to the script's directory (Hydra resolves a relative
// --config-path against the Python file declaring @hydra.main), then as written (relative to the directory the
// line runs in). `script` is the `.py` word of the line ("" when none).
std::vector<std::string> hydra_config_candidates(const hydra_config_ref& ref, const std::string& script);

// One override operand: the key with `+` / `++` removed, and whether it deletes (`~key`). Returns false for a word
// that is no override (no `=`, and not `~key`).
bool hydra_override(const std::string& word, std::string& key, std::string& val, bool& removes);

}  // namespace oomdx
