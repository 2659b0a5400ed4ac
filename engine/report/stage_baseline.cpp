// Stage `baseline` (after `estimate`): with --baseline-config, the job's config against one that
// ran fine, through the estimator; the diff goes into the report and its headline figures into
// baseline.* facts for the rules.
#include <cstdlib>

#include "engine/estimator/preflight.h"
#include "engine/report/pipeline.h"

namespace oomdx {

void stage_baseline(pipeline_state& s) {
    diagnosis_report& rep = s.rep;
    if (s.req.baseline_config.empty() || !rep.estimate) return;
    preflight_request r;
    r.config = s.req.baseline_config;
    r.framework = s.req.framework;
    r.model = s.req.model;
    r.device = s.req.device;
    r.world_size = s.req.world_size;
    fact_store base(&vocabulary::shipped());
    gather_facts(r, base);
    rep.baseline_diff = diff_configs(base, rep.facts);
    const config_diff& d = *rep.baseline_diff;
    provenance p;
    p.producer = "estimator";
    p.file = s.req.baseline_config;
    p.excerpt = "--baseline-config " + s.req.baseline_config;
    fact_store& facts = rep.facts;
    facts.emit("baseline.config_file", value(s.req.baseline_config), p);
    facts.emit("baseline.device_peak_bytes", value(d.a.device_peak_bytes), p);
    facts.emit("baseline.device_peak_delta_bytes", value(d.b.device_peak_bytes - d.a.device_peak_bytes), p);
    facts.emit("baseline.changed_keys", value(static_cast<std::int64_t>(d.changed.size())), p);
    const diff_step* top = nullptr;
    for (const auto& st : d.attribution)
        if (!top || std::llabs(st.device_peak_delta) > std::llabs(top->device_peak_delta)) top = &st;
    if (top && top->keys.size() == 1 && top->device_peak_delta != 0) {
        facts.emit("baseline.top_key", value(top->keys[0]), p);
        facts.emit("baseline.top_key_delta_bytes", value(top->device_peak_delta), p);
        for (const auto& c : d.changed)
            if (c.key == top->keys[0]) {
                facts.emit("baseline.top_key_a", value(c.a.is_null() ? "-" : c.a.is_string() ? c.a.as_string() : c.a.to_string()), p);
                facts.emit("baseline.top_key_b", value(c.b.is_null() ? "-" : c.b.is_string() ? c.b.as_string() : c.b.to_string()), p);
            }
    }
}

}  // namespace oomdx
