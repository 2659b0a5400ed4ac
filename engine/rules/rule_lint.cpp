#include "engine/rules/rule_lint.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "engine/rules/rule_tests.h"
#include "engine/rules/rule_translations.h"

namespace oomdx {

namespace fs = std::filesystem;

size_t lint_report::errors() const {
    return std::count_if(diagnostics.begin(), diagnostics.end(),
                         [](const rule_diagnostic& d) { return !rule_error_is_warning(d.code); });
}

size_t lint_report::warnings() const { return diagnostics.size() - errors(); }

std::vector<rule_diagnostic> lint_rule_translations(const rule_set& rules) {
    std::vector<rule_diagnostic> out;
    for (const auto& lang : report_languages()) {
        static const translation_table none;
        auto it = rules.i18n.find(lang);
        const translation_table& table = it == rules.i18n.end() ? none : it->second;
        std::set<std::string> expected;
        auto check = [&](const std::vector<rule_text>& texts, const std::string& pack) {
            for (const auto& t : texts) {
                expected.insert(t.key);
                check_translation(t, table, lang, translation_file(pack, lang), out);
            }
        };
        for (const auto& s : rules.steps) check(step_texts(s), s.where.file);
        for (const auto& r : rules.rules) check(rule_texts(*r), r->where.file);
        for (const auto& key : table.keys())
            if (!expected.count(key)) {
                const translation* t = table.find(key);
                out.push_back({rule_error_code::orphan_translation, {t->file, t->line, 1},
                               fmt::format("'{}' translates a text no rule or step has (remove it)", key), "", {}});
            }
    }
    return out;
}

lint_report lint_rules(const std::string& dir, const vocabulary& vocab, const std::vector<action_decl>& actions) {
    lint_report rep;
    load_result lr = load_rules({dir}, vocab, actions);
    rep.diagnostics = lr.diagnostics;
    rep.rules = lr.rules.rules.size();
    rep.macros = lr.rules.macro_text.size();
    rep.files = lr.rules.files.size();
    // Every rule file that holds rules has a test file beside it.
    std::set<std::string> files_with_rules;
    for (const auto& r : lr.rules.rules) files_with_rules.insert(r->where.file);
    for (const auto& f : files_with_rules) {
        const std::string test = f.substr(0, f.size() - 5) + ".test.yaml";
        if (!fs::exists(test))
            rep.diagnostics.push_back({rule_error_code::missing_test, {f, 1, 1},
                                       fmt::format("no rule tests: expected {}", fs::path(test).filename().string()), "", {}});
    }
    // Every rule is expected to fire in at least one test case (`rules test` runs them).
    if (lr.ok()) {
        const std::vector<std::string> named = rules_named_in_tests(dir);
        std::set<std::string> covered(named.begin(), named.end());
        for (const auto& r : lr.rules.rules)
            if (r->enabled && !covered.count(r->id))
                rep.diagnostics.push_back({rule_error_code::missing_test, r->where,
                                           fmt::format("rule '{}' is never expected to fire in a test case", r->id), "", {}});
    }
    // Every text a report shows has a current translation in every report language.
    for (auto& d : lint_rule_translations(lr.rules)) rep.diagnostics.push_back(std::move(d));
    // No two rules share a condition.
    std::map<std::string, const rule_def*> by_cond;
    for (const auto& r : lr.rules.rules) {
        std::string norm;
        for (char c : r->condition_text)
            if (!std::isspace(static_cast<unsigned char>(c))) norm += c;
        auto [it, inserted] = by_cond.emplace(norm, r.get());
        if (!inserted)
            rep.diagnostics.push_back({rule_error_code::duplicate_condition, r->where,
                                       fmt::format("rule '{}' has the same condition as rule '{}'", r->id, it->second->id), "", {}});
    }
    return rep;
}

}  // namespace oomdx
