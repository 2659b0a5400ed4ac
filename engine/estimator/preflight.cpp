#include "engine/estimator/preflight.h"


#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "parsers/config/framework_adapter.h"
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
    }
    if (req.world_size > 0) {
        user.excerpt = fmt::format("--world-size {}", req.world_size);
        facts.emit("job.world_size", value(req.world_size), user);
    }
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
    r.exit_code = r.input.capacity_bytes > 0 && !r.estimate.fits ? exit_does_not_fit : exit_ok;
    return r;
}

std::string render_preflight_text(const preflight_result& r) {
    std::string s = render_text(r.estimate);
    if (r.input.capacity_bytes > 0)
        s = fmt::format("Preflight: {} ({} of {} budget)\n", r.estimate.fits ? "fits" : "DOES NOT FIT",
                        format_bytes(r.estimate.device_peak_bytes), format_bytes(r.estimate.budget_bytes)) + s;
    if (r.planned) {
        const plan_answer& p = r.plan;
        s += fmt::format("\nPlan search: {} configurations evaluated over {} world size(s), {} fit ({:.0f} candidates/s); "
                         "overrides in {} {} syntax.\n",
                         p.evaluated, p.worlds_searched.size(), p.fitting,
                         p.seconds > 0 ? double(p.evaluated) / p.seconds : 0.0, p.framework, p.syntax);
        s += render_plan_text(p, 5);
    }
    return s;
}

nlohmann::json preflight_json(const preflight_result& r) {
    nlohmann::json j;
    j["schema"] = "oomdx.preflight/1";
    j["fits"] = r.estimate.fits;
    j["exit_code"] = r.exit_code;
    j["framework"] = r.framework;
    j["estimate"] = to_json(r.estimate);
    if (r.planned) j["plan"] = plan_json(r.plan);
    return j;
}

}  // namespace oomdx
