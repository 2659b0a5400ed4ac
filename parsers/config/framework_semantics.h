// What a framework means beyond its keys, from the `semantics:` section of its adapter file
// (knowledge/frameworks/<name>.yaml), inherited through `extends`: the device family its jobs run
// on, the estimator conventions that apply, the log.framework names that select it, which canonical
// keys do not change the estimate, and the features the rules ask about. A new framework is a YAML
// file; nothing here names one.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/fact.h"

namespace oomdx {

struct framework_semantics {
    std::string name;
    std::string file;
    std::string device_kind;                    // cuda | npu | "" (any)
    std::string estimator;                      // torchtitan | megatron | deepspeed | torchtune | generic
    std::vector<std::string> log_names;         // log.framework values that select this adapter
    std::map<std::string, std::string> device_variants;  // device kind -> adapter used on it
    std::vector<std::string> estimate_ignores;  // canonical key patterns ("env.*") that leave the peak unchanged
    std::map<std::string, value> features;      // framework.<feature> facts: selective_ac, eval_without_grad, ...
    // Globs of launched Python scripts that do not train (generation servers, inference, conversion)
    std::vector<std::string> not_training_scripts;
    // Globs of raw config keys of which a training config holds at least one (torchtune: its optimizer);
    // a config file of this framework that holds none of them evaluates, generates or quantizes
    std::vector<std::string> training_keys;

    bool script_does_not_train(const std::string& script) const;  // basename against not_training_scripts
    bool is_training_key(const std::string& raw_key) const;       // the key against training_keys

    bool ignores_for_estimate(const std::string& canonical_key) const;
};

// Shipped semantics (data_path("knowledge/frameworks")); throws input_error naming file:line.
const std::vector<framework_semantics>& shipped_semantics();
const framework_semantics* find_semantics(const std::string& framework);
// The adapter a log's framework name selects (through log_names), on the given device kind.
std::optional<std::string> framework_for_log(const std::string& log_framework, const std::string& device_kind);
// framework.* facts of one framework (estimator, device_kind, features), with the adapter file as provenance.
void emit_facts(const framework_semantics& s, fact_sink& sink);

}  // namespace oomdx
