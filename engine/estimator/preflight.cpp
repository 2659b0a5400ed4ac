#include "engine/estimator/preflight.h"


#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "parsers/config/framework_defaults.h"
#include "parsers/config/framework_semantics.h"
#include "parsers/config/job_inputs.h"

namespace oomdx {

void gather_facts(const preflight_request& req, fact_store& facts, override_syntax* syntax) {
    job_inputs_options o;
    o.config = req.config;
    o.framework = req.framework;
    o.model = req.model;
    o.device = req.device;
    o.sets = req.sets;
    job_inputs inputs = load_job_inputs(o);
    emit_facts(inputs, facts);
    provenance user;
    user.producer = "user";
    if (req.config.empty() && !req.framework.empty() && !facts.has("job.framework")) {
        user.excerpt = "--framework " + req.framework;
        facts.emit("job.framework", value(req.framework), user);
        // without a config file a shipped config named by job.recipe_config, then the framework's defaults, fill
        // what --set does not
        emit_named_config_settings(req.framework, facts);
        emit_framework_defaults(req.framework, facts, [](const std::string&, const value&) { return true; });
    }
    if (req.world_size > 0) {
        user.excerpt = fmt::format("--world-size {}", req.world_size);
        facts.emit("job.world_size", value(req.world_size), user);
    }
    // The framework's semantics (estimator conventions, features), as the diagnose pipeline emits them.
    if (const auto fw = facts.string("job.framework"))
        if (const framework_semantics* sem = find_semantics(*fw)) emit_facts(*sem, facts);
    if (!facts.has("model.hidden_size"))
        throw usage_error("no model: give --model PRESET|config.json (or name the model in the job config)");
    finish_job_inputs(inputs, facts);
    if (syntax) *syntax = inputs.syntax;
}

preflight_result run_preflight(const preflight_request& req) {
    preflight_result r;
    gather_facts(req, r.facts, &r.syntax);
    r.input = from_facts(r.facts);
    r.estimate = estimate(r.input);
    r.framework = r.facts.string("job.framework").value_or("torchtitan");
    if (req.plan) {
        r.planned = true;
        if (r.input.capacity_bytes <= 0) throw usage_error("--plan needs the device capacity (--device)");
        r.plan = make_plan(r.facts, r.syntax, req.plan_opts);
    }
    emit_facts(r.estimate, r.facts);
    // the verdict uses the high end of the interval
    const estimate_result& e = r.estimate;
    r.fits_high = r.input.capacity_bytes > 0 && e.high_bytes <= e.budget_bytes;
    r.straddles = r.input.capacity_bytes > 0 && e.low_bytes <= e.budget_bytes && e.high_bytes > e.budget_bytes;
    r.limits = max_fitting(r.input, true);
    r.exit_code = r.input.capacity_bytes > 0 && !r.fits_high ? exit_does_not_fit : exit_ok;
    return r;
}

nlohmann::json preflight_json(const preflight_result& r) {
    nlohmann::json j;
    j["schema"] = "oomdx.preflight/1";
    j["fits"] = r.input.capacity_bytes > 0 ? r.fits_high : r.estimate.fits;
    j["verdict_basis"] = "high end of the interval (estimate.high_bytes)";
    j["straddles_budget"] = r.straddles;
    if (r.limits.max_micro_batch >= 0)
        j["max_fitting"] = {{"micro_batch", r.limits.max_micro_batch}, {"at_seq_len", r.limits.seq_len},
                            {"seq_len", r.limits.max_seq_len}, {"at_micro_batch", r.limits.micro_batch}};
    j["exit_code"] = r.exit_code;
    j["framework"] = r.framework;
    j["estimate"] = to_json(r.estimate);
    if (r.planned) j["plan"] = plan_json(r.plan);
    return j;
}

}  // namespace oomdx
