// A framework's defaults (knowledge/frameworks/<name>.yaml `defaults:`) as facts, for a job whose
// config file is absent: each key the store does not hold yet, marked as that framework's default.
#pragma once

#include <functional>
#include <string>

namespace oomdx {

class fact_store;

// Emits the defaults of `framework` that `keep(key)` accepts and `facts` lacks; an unknown or
// unreadable adapter emits nothing.
void emit_framework_defaults(const std::string& framework, fact_store& facts,
                             const std::function<bool(const std::string& key)>& keep);

// Whether the framework's default activation checkpointing is on (false when unknown).
bool framework_checkpoints_by_default(const std::string& framework);

}  // namespace oomdx
