// A framework's defaults (knowledge/frameworks/<name>.yaml `defaults:`) as facts, for a job whose
// config file is absent: each key the store does not hold yet, marked as that framework's default.
#pragma once

#include <functional>
#include <string>

#include "engine/core/value.h"

namespace oomdx {

class fact_store;

// Emits the defaults of `framework` that `keep(key, value)` accepts and `facts` lacks; an unknown
// or unreadable adapter emits nothing.
void emit_framework_defaults(const std::string& framework, fact_store& facts,
                             const std::function<bool(const std::string& key, const value& v)>& keep);

// For a job seen without its config: only the defaults that withdraw a lever (checkpointing that is
// on, 16-bit mixed precision, a base loaded quantized), never one that would add one (HF Trainer's fp32 or no checkpointing
// would make bf16 or checkpointing look certain, while a job's config usually sets them).
void emit_lever_withdrawing_defaults(const std::string& framework, fact_store& facts);

// A config the framework ships, named without its file (job.recipe_config: torchtune's `tune run <recipe>
// --config llama3_1/8B_qlora_single_device`): the settings of the adapter's `shipped_files` entry of that name
// fill each key the store leaves open or holds only as a default, marked as that config's. The same for a DeepSpeed
// file named without the file at hand (job.deepspeed_config from a log: LLaMA-Factory's
// examples/deepspeed/ds_z3_offload_config.json). False when neither is named or the adapter ships none of that name.
bool emit_named_config_settings(const std::string& framework, fact_store& facts);

}  // namespace oomdx
