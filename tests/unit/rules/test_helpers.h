// Shared helpers for rule-engine tests: a small vocabulary and temporary rule directories.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/vocabulary.h"
#include "engine/rules/rule_loader.h"

namespace oomdx::test {

// A declaration with a name and a kind, the other fields at their defaults.
inline fact_decl decl(const std::string& name, fact_kind kind) {
    fact_decl d;
    d.name = name;
    d.kind = kind;
    return d;
}

inline vocabulary small_vocab() {
    vocabulary v;
    v.add(decl("a", fact_kind::integer));
    v.add(decl("b", fact_kind::integer));
    v.add(decl("x.n", fact_kind::number));
    v.add(decl("mem.bytes", fact_kind::bytes));
    v.add(decl("cap.bytes", fact_kind::bytes));
    v.add(decl("flag", fact_kind::boolean));
    fact_decl src = decl("src", fact_kind::string);
    src.values = {"workspace", "hccl", "caching_allocator", "none"};
    v.add(src);
    v.add(decl("name", fact_kind::string));
    v.add(decl("out.level", fact_kind::integer));
    v.add(decl("out.tag", fact_kind::string));
    fact_decl key = decl("training.local_batch_size", fact_kind::integer);
    key.is_override = true;
    v.add(key);
    return v;
}

inline std::vector<action_decl> small_actions() {
    return {{"reduce_micro_batch", 70, ""}, {"enable_full_ac", 30, ""}, {"other", 90, ""}};
}

// A fresh directory under the system temp dir holding the given files.
struct temp_rules {
    std::filesystem::path dir;
    explicit temp_rules(const std::string& tag) {
        dir = std::filesystem::temp_directory_path() / ("oomdx_rules_" + tag + "_" + std::to_string(::getpid()));
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        write("steps.yaml",
              "- step: s0\n  order: 0\n  always: true\n- step: s1\n  order: 1\n- step: s2\n  order: 2\n"
              "- group: g\n");
    }
    ~temp_rules() { std::filesystem::remove_all(dir); }
    std::string write(const std::string& name, const std::string& text) {
        const auto p = dir / name;
        std::ofstream(p) << text;
        return p.string();
    }
};

}  // namespace oomdx::test
