// Helpers for estimator tests: YAML maps of canonical keys to facts, short summaries.
#pragma once

#include "engine/core/yaml_node.h"

#include <string>

#include <fmt/format.h>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"

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
