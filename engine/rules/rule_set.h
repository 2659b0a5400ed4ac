// Compiled rule packs: steps, macros, lists and rules. Knows nothing about YAML.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/core/translations.h"
#include "engine/core/value.h"
#include "engine/rules/expression.h"
#include "engine/rules/source_context.h"

namespace oomdx {

struct step_def {
    std::string id;     // "step0" ...
    std::string title;  // "Step 0: log analysis"
    std::string goal;   // why this step exists (the WHY explanation)
    int order = 0;
    bool always = false;  // runs without being routed to
    bool listed = true;   // shown in the report's route (false: the evidence pre-step)
    source_context where;
};

// A value set by an action: a literal, or an expression evaluated when the rule fires.
struct action_value {
    value literal;
    std::unique_ptr<expr_node> expr;  // when set, overrides literal
    std::string text;
};

struct recommendation_def {
    std::string action;  // design.md vocabulary
    int priority = 50;   // lower ranks first (the method's order)
    // "= expression" giving the rank where it depends on the facts (a lever whose premise is unstated ranks later);
    // unset (null literal): `priority`
    action_value priority_expr;
    std::vector<std::pair<std::string, action_value>> overrides;  // canonical key -> value
    // A string fact listing overrides as "key=value, key=value" (the planner's verified alternative): they follow
    // `overrides`, so the change is rendered in the job's syntax and re-estimated like any other.
    std::string set_from;
    std::string text;       // template
    std::string rationale;  // human-written reason
    action_value confidence;  // high | medium | low (literal or "= expression"); default medium
    std::string confirm;    // template: what would confirm it or rule it out
    // The device peak after the change when no override states it (a plan's figure): bytes,
    // literal or "= expression"; unset (null literal) when the estimate of the overrides decides.
    action_value expect_device_peak;
    source_context where;
};

struct route_def {
    std::string to;   // step id
    std::string why;  // template
    source_context where;
};

struct rule_def {
    std::string id;
    std::string desc;
    std::string step;
    int salience = 0;
    std::string exclusive_group;
    std::string condition_text;
    std::unique_ptr<expr_node> condition;
    int specificity = 0;  // number of leaf clauses
    std::vector<std::string> facts;  // facts the condition and its exceptions read (refraction key)
    std::vector<std::string> evidence_facts;  // facts the condition reads, exceptions left out (a firing's evidence)
    std::vector<std::pair<std::string, action_value>> asserts;
    std::string finding;  // template, empty when none
    std::string finding_id;
    std::string severity = "info";
    std::string rationale;
    std::vector<recommendation_def> recommendations;
    std::vector<route_def> routes;
    std::vector<std::string> next_steps;  // templates
    std::vector<std::string> uncertain;   // templates
    std::vector<std::string> tags;
    std::vector<std::string> claims;  // conclusions the finding states (checked against contradictions)
    std::string status = "stable";
    bool enabled = true;
    int file_order = 0;  // global load order
    source_context where;
};

// Translations read on first use of a language (shipped_rules: an English run reads none).
struct lazy_translations {
    std::function<translation_table(const std::string& lang)> load;  // throws input_error
    std::mutex mu;
    std::map<std::string, translation_table> loaded;
};

struct rule_set {
    std::vector<step_def> steps;  // sorted by order
    std::vector<std::unique_ptr<rule_def>> rules;
    std::map<std::string, std::string> macro_text;
    std::map<std::string, std::vector<value>> lists;
    std::map<std::string, std::vector<std::string>> contradicts;  // claim -> claims it cannot stand beside
    std::vector<std::string> files;  // rule files loaded
    // Translations of the rule and step texts by language (rules/i18n/<lang>/<pack>.yaml), read
    // with the packs (load_rules, eager), or else through `lazy_i18n` when a language is first used.
    std::map<std::string, translation_table> i18n;
    std::shared_ptr<lazy_translations> lazy_i18n;

    const step_def* step(const std::string& id) const;
    const rule_def* rule(const std::string& id) const;
    // The text under `key` (engine/rules/rule_translations.h) in `lang`, or `en` when the
    // translation is missing or stale.
    std::string text(const std::string& lang, const std::string& key, const std::string& en) const;
    // The translations into `lang` (read now when lazy and not read yet), or nullptr when none.
    const translation_table* translations(const std::string& lang) const;
};

}  // namespace oomdx
