// Training job configs of every supported framework -> canonical facts (torchtitan names).
// Formats: torchtitan TOML (all eras), --section.field CLI overrides, torchtitan config
// registry functions (Python, read without executing), Megatron/MindSpeed launch scripts and
// argument lists, DeepSpeed JSON, HF TrainingArguments / accelerate / LLaMA-Factory YAML or JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/fact.h"
#include "parsers/config/framework_adapter.h"
#include "parsers/config/raw_entry.h"

namespace oomdx {

struct job_config {
    std::string framework;                 // adapter name: torchtitan, megatron, deepspeed, ...
    std::string file;
    std::string format;                    // toml | registry | shell | cli | json | yaml
    std::string function;                  // registry: the config function read
    std::vector<fact> facts;               // canonical facts with provenance
    std::vector<std::string> unknown_keys;     // "key (file:line)": read, not mapped
    std::vector<std::string> non_literal;      // "key = text (file:line)": not evaluated
    std::vector<raw_entry> entries;        // everything read, before mapping
    bool framework_guessed = false;        // no adapter recognized a key: `framework` is the format's fallback
    std::vector<std::string> removed_keys; // Hydra `~key` operands: deleted from the base config the line names

    // The fact of that name, or nullptr.
    const fact* find(const std::string& name) const;
};

// Detects the format and the framework (framework_hint names an adapter and wins).
// A registry function is named as "config_registry.py:llama3_8b" (or "#llama3_8b").
// Throws input_error naming file:line.
job_config parse_job_config(const std::string& path, const std::string& framework_hint = "");
// Same with a given adapter (one loaded from outside the shipped set, for example).
job_config parse_job_config(const std::string& path, const framework_adapter& adapter);
// Argument words (torchtitan --section.field=value, Megatron flags, HF --key value, or
// LLaMA-Factory key=value), e.g. from a launch line found in a log.
// entry_script: the script the line runs (job.entry_script), read with the flags (rev28).
job_config parse_cli_args(const std::vector<std::string>& args, const std::string& framework_hint,
                          const std::string& origin_file, std::int64_t origin_line, const std::string& entry_script = "");
// Splits a command line into words (quotes respected) for parse_cli_args.
std::vector<std::string> split_command_line(const std::string& line);
// Later facts override earlier ones of the same name (CLI overrides on top of a file).
void merge_job_config(job_config& base, const job_config& overrides);
void emit_facts(const job_config&, fact_sink&);
// What the framework reads back from rendered items (framework key = value), mapped as a
// config file would be: the canonical values a job sees once an override is applied.
// Removals, comments and environment variables give nothing.
std::vector<canonical_override> read_back(const framework_adapter&, const std::vector<render_item>&);

}  // namespace oomdx
