// The one pipeline that `diagnose` and `preflight` both run, as named stages in order:
//   inputs   read the log, config, model, device and snapshots (parsers)
//   facts    emit them as facts and derive the job.* facts (world size, framework, device kind)
//   estimate the static estimate (estimate.* facts)
//   baseline with --baseline-config: what the job's config changed against one that ran (baseline.*)
//   plan     a combination of overrides that fits, when the configuration does not (plan.* facts)
//   rules    forward chaining through the evidence step and Steps 0-4
//   report   headline, ranked recommendations rendered in the job's syntax and re-estimated
// Each stage reads and writes the pipeline_state; diagnosis.cpp runs them and records timings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/report/diagnosis.h"
#include "parsers/config/job_inputs.h"
#include "engine/rules/rule_loader.h"

namespace oomdx {

struct pipeline_state {
    const diagnosis_request& req;
    diagnosis_report& rep;
    std::optional<job_inputs> job;            // from the inputs stage
    const rule_set* rules = nullptr;          // shipped, or shipped + --rules packs
    std::optional<load_result> extra;       // holds the rule_set when --rules was given
};

void stage_inputs(pipeline_state& s);
void stage_facts(pipeline_state& s);
void stage_estimate(pipeline_state& s);
void stage_baseline(pipeline_state& s);
void stage_rules(pipeline_state& s);
// The rule packs the run uses (shipped, or shipped + --rules), loaded once: stages before `rules` may ask them.
const rule_set& select_rules(pipeline_state& s);
void stage_plan(pipeline_state& s);
void stage_report(pipeline_state& s);

}  // namespace oomdx
