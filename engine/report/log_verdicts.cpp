#include "engine/report/log_verdicts.h"

#include "engine/core/vocabulary.h"
#include "engine/rules/inference.h"
#include "engine/rules/rule_loader.h"
#include "parsers/log/log_analyzer.h"
#include "parsers/log/memory_forecast.h"

namespace oomdx {

void apply_log_verdicts(log_analysis& a, const fact_store& facts) {
    a.timing = facts.string("oom.timing").value_or("unknown");
    a.timing_reason = facts.string("oom.timing_reason").value_or("");
    a.leak_signal = facts.boolean("log.memory_leak_signal").value_or(false);
    a.series_monotonic = facts.boolean("log.memory_series_monotonic");
    // evidence_oom_caught: the job caught this OOM and went on; the newest counter is how far it got
    if (facts.string("oom.step_basis") == std::optional<std::string>("oom_caught") && a.step_basis != "oom_caught") {
        a.step_basis = "oom_caught";
        a.step.reset();
        a.step_stride.reset();
        if (a.newest_step && a.newest_progress) {
            a.last_logged_step = a.newest_step;
            if (a.newest_total) a.last_logged_total = a.newest_total;
            a.evidence.push_back(*a.newest_progress);
        }
    }
    if (a.forecast) {
        memory_forecast& f = *a.forecast;
        f.available = f.projected && facts.boolean("log.forecast.available").value_or(false);
        if (facts.boolean("log.forecast.flat").value_or(false)) f.reason = flat_reason(f);
    }
}

fact_store judge_log(log_analysis& a, const rule_set* rules) {
    fact_store facts(&vocabulary::shipped());
    emit_facts(a, facts);
    inference_options opts;
    opts.only_steps = {"evidence"};
    opts.explain_misses = false;  // no report shows the WHY NOT of evidence verdicts
    run_inference(rules ? *rules : shipped_evidence_rules(), facts, opts);
    apply_log_verdicts(a, facts);
    return facts;
}

}  // namespace oomdx
