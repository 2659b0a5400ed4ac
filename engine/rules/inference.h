// Forward chaining over a rule_set to a fixpoint, with refraction, a deterministic agenda and
// built-in explanation (how / why / why not).
//
// Agenda order: step order, then salience (high first), then specificity (more clauses first),
// then rule file order, then id. Only rules of active steps are eligible; a step is active when it
// is declared `always` or a fired rule routes to it. A rule fires at most once per combination of
// the fact versions its condition reads (refraction). In an exclusive group the first rule to fire
// wins and the others are blocked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/fact_store.h"
#include "engine/rules/rule_set.h"

namespace oomdx {

struct firing {
    int seq = 0;
    std::string rule_id;
    std::string step;
    std::vector<int> fact_ids;  // facts the condition read, as they were when it fired
};

struct finding {
    std::string id;
    std::string rule_id;
    std::string step;
    std::string severity;
    std::string text;
    std::string rationale;
    std::vector<int> evidence;  // fact ids (condition and text)
    int firing = 0;
};

struct override_value {
    std::string key;
    value val;
};

struct recommendation {
    std::string rule_id;
    std::string action;
    int priority = 50;
    std::vector<override_value> overrides;
    std::string text;
    std::string rationale;
    std::string confidence = "medium";  // high | medium | low
    std::string confirm;                // what would confirm it or rule it out
    std::optional<std::int64_t> expected_device_peak;  // the rule's expect_device_peak, when it gives bytes
    // code.* overrides as the report shows them (`# code: ...`), in the report's language.
    std::vector<std::pair<std::string, std::string>> code_texts;
    std::vector<int> evidence;
    int firing = 0;
};

struct route_entry {
    std::string to;
    std::string from_rule;  // empty for steps that always run
    std::string why;
    int firing = -1;
};

struct near_miss {
    std::string rule_id;
    std::string step;
    std::string reason;
};

struct inference_options {
    int max_cycles = 1000;
    // When not empty, only rules of these steps are eligible and routes to other steps are not
    // followed (`oomdx log` / `oomdx snapshot` run the `evidence` step alone for their verdicts).
    std::vector<std::string> only_steps;
    // The language of the texts (findings, recommendations, route, next steps): "en", or one of
    // report_languages() rendered from the translations beside the packs (English when missing or stale).
    std::string lang = "en";
    // WHY NOT for every rule that did not fire (`near_misses`). Rule tests turn it off and ask again
    // only when a case fails: it is a quarter of their time.
    bool explain_misses = true;
};

struct inference_result {
    std::vector<firing> firings;
    std::vector<finding> findings;
    std::vector<recommendation> recommendations;  // in firing order; rank with ranked()
    std::vector<route_entry> route;                // steps entered, in order, with why
    std::vector<std::string> steps_run;
    std::vector<near_miss> near_misses;            // rules that did not fire, with the first failing clause
    std::vector<std::string> next_steps;
    std::vector<std::string> uncertain;
    // Pairs of fired rules whose findings claim conclusions declared to contradict each other.
    std::vector<std::pair<std::string, std::string>> contradictions;

    bool fired(const std::string& rule_id) const;
    // Recommendations sorted by (confidence, priority, firing order): the method's priority order
    // among what the evidence supports equally well; duplicates of the same action and overrides removed.
    std::vector<recommendation> ranked() const;
};

class inference_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Runs the rules over `facts`, adding derived facts to it. Throws inference_error on the cycle limit.
inference_result run_inference(const rule_set& rules, fact_store& facts, const inference_options& opts = {});

// A macro of the rule set evaluated on the facts as they stand (a stage that runs before the rules asks the packs'
// own definition, e.g. whether the inputs show an inference process); unknown when the macro is missing or a fact
// it needs is.
truth evaluate_macro(const rule_set& rules, const std::string& name, const fact_store& facts);

// HOW: the derivation tree of a fact, down to input provenance, as indented lines.
std::vector<std::string> explain_fact(const fact_store& facts, int fact_id, int depth = 0);

}  // namespace oomdx
