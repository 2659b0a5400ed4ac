#include "engine/report/snapshot_verdicts.h"

#include "parsers/snapshot/file_relation.h"

#include <string>

#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "parsers/snapshot/fact_prefixes.h"

namespace oomdx {

const rule_set& shipped_snapshot_rules() {
    // Never destroyed, like the other shipped sets (rule_loader.cpp).
    static const load_result& r = *new load_result(load_shipped_rules({"evidence"}, snap::fact_prefixes()));
    return r.rules;
}

const rule_set& rules_with(const std::vector<std::string>& dirs, std::optional<load_result>& holder) {
    if (dirs.empty()) return shipped_snapshot_rules();
    std::vector<std::string> all = {data_path("rules")};
    all.insert(all.end(), dirs.begin(), dirs.end());
    holder = load_rules(all, vocabulary::shipped(), shipped_actions());
    if (!holder->ok()) {
        std::string msg = "the rule packs do not load:";
        for (const auto& d : holder->diagnostics)
            if (!rule_error_is_warning(d.code)) msg += "\n" + d.render();
        throw input_error(msg);
    }
    return holder->rules;
}

inference_result run_evidence(const rule_set& rules, fact_store& facts) {
    inference_options o;
    o.only_steps = {"evidence"};
    o.explain_misses = false;  // no report shows the WHY NOT of evidence verdicts
    return run_inference(rules, facts, o);
}

namespace {

// The candidate the rules chose for `name`: its variant, or the plain text.
const snap::pattern_candidate* chosen(const snap::device_analysis& d, const std::string& name,
                                      const std::string& variant) {
    const snap::pattern_candidate* plain = nullptr;
    for (const auto& c : d.pattern_candidates) {
        if (c.p.name != name) continue;
        if (c.variant == variant) return &c;
        if (c.variant.empty()) plain = &c;
    }
    return plain;
}

void apply_device(snap::device_analysis& d, const fact_store& facts) {
    d.fragmentation_level = facts.string("snapshot.fragmentation_level").value_or("");
    d.patterns.clear();
    // Candidates in the analysis order; each pattern once, with the variant the rules chose.
    for (const auto& c : d.pattern_candidates) {
        const std::string& name = c.p.name;
        if (!facts.boolean("snapshot.pattern." + name).value_or(false)) continue;
        bool seen = false;
        for (const auto& p : d.patterns) seen = seen || p.name == name;
        if (seen) continue;
        const snap::pattern_candidate* pick = chosen(d, name, facts.string("snapshot.variant." + name).value_or(""));
        if (!pick) continue;
        snap::pattern p = pick->p;
        p.confidence = facts.string("snapshot.confidence." + name).value_or("");
        if (name == "fragmentation") {
            const auto at = p.summary.find("{level}");
            if (at != std::string::npos) p.summary.replace(at, 7, d.fragmentation_level);
        }
        d.patterns.push_back(std::move(p));
    }
    d.leak_suspected = facts.boolean("snapshot.leak_suspected").value_or(false);
    d.headline_at_peak = facts.boolean("snapshot.headline_at_peak").value_or(false);
}

}  // namespace

void apply_snapshot_verdicts(snap::snapshot_analysis& a, const rule_set& rules) {
    for (std::size_t i = 0; i < a.devices.size(); ++i) {
        fact_store facts;
        snap::emit_device_facts(a, i, facts);
        run_evidence(rules, facts);
        apply_device(a.devices[i], facts);
    }
}

void apply_snapshot_verdicts(std::vector<snap::snapshot_analysis>& v, const rule_set& rules) {
    for (auto& a : v) apply_snapshot_verdicts(a, rules);
}

void apply_snapshot_verdicts(snap::trend_result& t, const rule_set& rules) {
    fact_store facts;
    snap::emit_facts(t, facts);
    run_evidence(rules, facts);
    t.monotonic_growth = facts.boolean("snapshot.trend.monotonic_growth").value_or(false);
    t.verdict = facts.string("snapshot.trend.verdict").value_or("");
    t.explanation = snap::trend_explanation(t);
}

void apply_snapshot_verdicts(snap::rank_table& t, const rule_set& rules) {
    fact_store facts;
    snap::emit_facts(t, facts);
    run_evidence(rules, facts);
    t.outlier = -1;
    if (auto r = facts.integer("snapshot.rank_outlier"))
        for (std::size_t i = 0; i < t.rows.size(); ++i)
            if (t.rows[i].rank == *r && static_cast<int>(i) == t.farthest) t.outlier = static_cast<int>(i);
}

std::string snapshot_files_relation(const std::vector<snap::snapshot_analysis>& v, const rule_set& rules) {
    fact_store facts;
    snap::emit_relation_facts(v, facts);
    run_evidence(rules, facts);
    return facts.string("snapshot.files.relation").value_or("timeline");
}

}  // namespace oomdx
