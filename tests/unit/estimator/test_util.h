// Helpers for estimator tests: YAML maps of canonical keys to facts, short summaries.
#pragma once

#include "engine/core/yaml_node.h"

#include <string>

#include <fmt/format.h>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "parsers/config/framework_semantics.h"

namespace test_util {

inline oomdx::value scalar(const YAML::Node& n) {
    const std::string s = n.as<std::string>();
    if (s == "true") return true;
    if (s == "false") return false;
    try {
        std::size_t pos = 0;
        const long long i = std::stoll(s, &pos);
        if (pos == s.size()) return oomdx::value(i);
        const double d = std::stod(s, &pos);
        if (pos == s.size()) return d;
    } catch (...) {
    }
    return s;
}

// Llama 3 8B's dimensions (its published config).
inline oomdx::estimate_model llama8b() {
    oomdx::estimate_model m;
    m.family = "llama";
    m.hidden = 4096;
    m.layers = 32;
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.ffn = 14336;
    m.vocab = 128256;
    return m;
}

// One fact from the test itself.
inline void emit(oomdx::fact_store& f, const char* name, oomdx::value v) {
    oomdx::provenance p;
    p.producer = "test";
    f.emit(name, std::move(v), p);
}

// Llama 3 8B's dimensions as model.* facts.
inline void emit_llama8b(oomdx::fact_store& f) {
    emit(f, "model.family", "llama");
    emit(f, "model.hidden_size", std::int64_t(4096));
    emit(f, "model.num_layers", std::int64_t(32));
    emit(f, "model.num_attention_heads", std::int64_t(32));
    emit(f, "model.num_kv_heads", std::int64_t(8));
    emit(f, "model.head_dim", std::int64_t(128));
    emit(f, "model.intermediate_size", std::int64_t(14336));
    emit(f, "model.vocab_size", std::int64_t(128256));
}

// The facts of a framework's adapter semantics (framework.*), as the facts stage emits them for job.framework.
inline void emit_semantics(oomdx::fact_store& f, const std::string& framework) {
    if (const oomdx::framework_semantics* s = oomdx::find_semantics(framework)) oomdx::emit_facts(*s, f);
}

// job.framework and its semantics.
inline void emit_framework(oomdx::fact_store& f, const std::string& framework) {
    emit(f, "job.framework", framework);
    emit_semantics(f, framework);
}

inline void emit_map(oomdx::fact_store& f, const YAML::Node& m) {
    oomdx::provenance p;
    p.producer = "test";
    for (const auto& kv : m) f.emit(kv.first.as<std::string>(), scalar(kv.second), p);
}

inline std::string brief(const oomdx::estimate_result& r) {
    std::string s;
    for (const auto& c : r.components) {
        if (c.id == "overhead" || c.bytes == 0) continue;
        if (!s.empty()) s += " ";
        s += fmt::format("{}={:.1f}", c.id.substr(0, 4), double(c.bytes) / 1073741824.0);
    }
    return s;
}

}  // namespace test_util
