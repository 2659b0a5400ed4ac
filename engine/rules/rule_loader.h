// Loads rule packs from YAML into a compiled rule_set, collecting every error with its location.
//
// A rule file is a flat YAML list; the first key of each item names its kind:
//   - step: step1            title, goal, order, always      (rules/steps.yaml)
//   - group: primary_cause   desc                            (exclusive groups)
//   - list: workspace_sources  items: [workspace, hccl]
//   - macro: budget_exceeded   condition: estimate.peak_bytes > estimate.budget_bytes
//   - rule: step1_exceeds_budget
//     desc, step, salience, exclusive_group, condition, exceptions: [cond...], enabled, status,
//     severity (info|low|medium|high|critical), tags, references, rationale,
//     asserts: {fact.name: literal | "= expression"},
//     finding: "template" | {id, text, severity},
//     recommend: [{action, priority, set: {canonical.key: literal | "= expression"}, text, rationale}],
//     route: step_id | {to, why} | [...],  next_steps: [template], uncertain: [template]
#pragma once

#include <string>
#include <vector>

#include "engine/core/vocabulary.h"
#include "engine/rules/rule_set.h"
#include "engine/rules/source_context.h"

namespace oomdx {

struct action_decl {
    std::string id;
    int priority = 50;
    std::string desc;
};

struct load_result {
    rule_set rules;
    std::vector<rule_diagnostic> diagnostics;  // errors and warnings, in file order
    std::vector<std::string> declared_groups;
    std::vector<std::pair<std::string, source_context>> macros_unused;
    std::vector<std::pair<std::string, source_context>> lists_unused;

    bool ok() const;  // no errors (warnings allowed)
    size_t error_count() const;
    size_t warning_count() const;
};

std::vector<action_decl> load_actions(const std::string& path);
const std::vector<action_decl>& shipped_actions();

// When the translations beside the packs are read: with the packs, their diagnostics in the
// result (lint, rule tests), or on first use of a language (rule_set::lazy_i18n; a malformed
// translation file then throws input_error when that language is used).
enum class translation_loading { eager, lazy };

// Loads every *.yaml (not *.test.yaml, nor the translations under i18n/) under each path (files or
// directories, recursively), and the translations beside each pack (engine/rules/rule_translations.h).
load_result load_rules(const std::vector<std::string>& paths, const vocabulary& vocab,
                       const std::vector<action_decl>& actions,
                       translation_loading translations = translation_loading::eager,
                       const std::vector<std::string>& only_steps = {});
// Default: the shipped rules/ with the shipped vocabulary and actions; throws input_error listing
// the diagnostics when they contain errors. Translations are read lazily (`oomdx rules lint` and
// `oomdx i18n lint` check them).
const rule_set& shipped_rules();
// The shipped rules of the `evidence` step alone (with every macro, list and step declaration):
// what `oomdx log` runs (`oomdx snapshot` a subset of it). Rules of other steps are neither compiled nor
// checked here (`oomdx rules lint` checks them); the full set when it is loaded already.
const rule_set& shipped_evidence_rules();
// A fresh load of the shipped packs, all steps or only_steps (what the two above keep); with a
// fact_scope, only the rules that can fire on facts of those name prefixes (rule_scope.h), stored
// apart.
load_result load_shipped_rules(const std::vector<std::string>& only_steps,
                               const std::vector<std::string>& fact_scope = {});

}  // namespace oomdx
