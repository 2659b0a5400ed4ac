// Shared helpers for rule-engine tests: a small vocabulary and temporary rule directories.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/vocabulary.h"
#include "engine/rules/rule_loader.h"

namespace oomdx::test {

inline vocabulary small_vocab() {
    vocabulary v;
    v.add({"a", fact_kind::integer});
    v.add({"b", fact_kind::integer});
    v.add({"x.n", fact_kind::number});
    v.add({"mem.bytes", fact_kind::bytes});
    v.add({"cap.bytes", fact_kind::bytes});
    v.add({"flag", fact_kind::boolean});
    fact_decl src{"src", fact_kind::string};
    src.values = {"workspace", "hccl", "caching_allocator", "none"};
    v.add(src);
    v.add({"name", fact_kind::string});
    v.add({"out.level", fact_kind::integer});
    v.add({"out.tag", fact_kind::string});
    fact_decl key{"training.local_batch_size", fact_kind::integer};
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
