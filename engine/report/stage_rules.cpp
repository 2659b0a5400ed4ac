// Stage `rules`: the shipped rule packs (plus --rules packs) by forward chaining, then the route
// and the findings as the report shows them, each with its evidence down to input lines.
#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/report/log_verdicts.h"
#include "engine/report/pipeline.h"
#include "engine/report/report_evidence.h"
#include "engine/report/snapshot_verdicts.h"

namespace oomdx {

const rule_set& select_rules(pipeline_state& s) {
    if (s.rules) return *s.rules;
    s.rules = &shipped_rules();
    if (!s.req.rule_dirs.empty()) {
        std::vector<std::string> dirs = {data_path("rules")};
        dirs.insert(dirs.end(), s.req.rule_dirs.begin(), s.req.rule_dirs.end());
        s.extra = load_rules(dirs, vocabulary::shipped(), shipped_actions());
        if (!s.extra->ok()) {
            std::string msg = "the rule packs do not load:";
            for (const auto& d : s.extra->diagnostics)
                if (!rule_error_is_warning(d.code)) msg += "\n" + d.render();
            throw input_error(msg);
        }
        s.rules = &s.extra->rules;
    }
    return *s.rules;
}

void stage_rules(pipeline_state& s) {
    diagnosis_report& rep = s.rep;
    select_rules(s);
    inference_options io;
    io.lang = s.req.lang;
    rep.inference = run_inference(*s.rules, rep.facts, io);
    if (rep.log) apply_log_verdicts(*rep.log, rep.facts);  // the evidence step's timing and leak signal
    // The snapshot sections show each file's verdicts, decided by the same packs.
    apply_snapshot_verdicts(rep.snapshots, *s.rules);
    if (rep.trend) apply_snapshot_verdicts(*rep.trend, *s.rules);
    if (rep.ranks) apply_snapshot_verdicts(*rep.ranks, *s.rules);

    for (const auto& r : rep.inference.route) {
        report_step st;
        st.step = r.to;
        if (const step_def* sd = s.rules->step(r.to)) st.title = s.rules->text(s.req.lang, "step." + sd->id + ".title", sd->title);
        st.why = r.why;
        st.from_rule = r.from_rule;
        rep.route.push_back(std::move(st));
    }
    for (const auto& f : rep.inference.findings) {
        report_finding rf;
        rf.id = f.id;
        rf.rule_id = f.rule_id;
        rf.step = f.step;
        rf.severity = f.severity;
        rf.text = f.text;
        rf.rationale = f.rationale;
        for (int id : f.evidence) {
            rf.evidence.push_back(evidence_of(rep.facts, id));
            auto how = explain_fact(rep.facts, id, 1);
            rf.how.insert(rf.how.end(), how.begin(), how.end());
        }
        rep.findings.push_back(std::move(rf));
    }
}

}  // namespace oomdx
