// `oomdx preflight` / `oomdx estimate` as library calls: gather facts from a job config, a model
// spec, a device id, a world size and canonical key=value pairs; estimate; optionally search
// plans. The CLI only parses options and renders; the lead extends run_preflight with rules.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "engine/estimator/plan.h"

namespace oomdx {

struct preflight_request {
    std::string config;                 // job config path (optional for estimate)
    std::string framework;              // adapter hint, "" = detect
    std::string model;                  // preset id or config.json / flavor / script path
    std::string device;                 // catalog id or spelling
    std::int64_t world_size = 0;        // 0 = from config
    std::vector<std::string> sets;      // canonical "key=value" pairs, applied last
    bool plan = false;
    plan_request plan_opts;
};

struct preflight_result {
    fact_store facts;                   // inputs plus estimate.* facts
    estimate_input input;
    estimate_result estimate;
    bool planned = false;
    plan_answer plan;                   // make_plan(): the plan, its world size, ranked candidates
    override_syntax syntax;             // how overrides are written for this job
    std::string framework;              // adapter used to render overrides
    int exit_code = 0;                  // 0 fits, 1 does not fit (capacity known)
    bool fits_high = false;             // the verdict: the high end of the interval within budget
    bool straddles = false;             // the interval straddles the budget
    fit_limits limits;                  // largest micro-batch / sequence length that fit
};

// Fills `facts` from the request (config, model, device, --set pairs via the config parsers'
// load_job_inputs, then --world-size), then derives and checks them (finish_job_inputs).
// Throws input_error / usage_error with one-line messages. `syntax`, when given, receives how
// overrides are written for this job.
void gather_facts(const preflight_request& req, fact_store& facts, override_syntax* syntax = nullptr);
preflight_result run_preflight(const preflight_request& req);

nlohmann::json preflight_json(const preflight_result& r);  // "schema": "oomdx.preflight/1"

}  // namespace oomdx
