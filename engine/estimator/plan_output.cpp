// The plan as JSON ("plan" of oomdx.preflight/1 and oomdx.diagnosis/1); the text block is the
// report's (engine/report/render_plan.h).
#include <nlohmann/json.hpp>

#include "engine/estimator/plan.h"

namespace oomdx {

namespace {

nlohmann::json value_json(const value& x) {
    if (x.is_integer()) return x.as_integer();
    if (x.is_number()) return x.as_number();
    if (x.is_bool()) return x.as_bool();
    if (x.is_string()) return x.as_string();
    if (x.is_null()) return nullptr;
    return x.to_string();
}

nlohmann::json overrides_json(const std::vector<estimate_override>& ovs) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& o : ovs) a.push_back({{"key", o.key}, {"value", value_json(o.val)}});
    return a;
}

nlohmann::json terms_json(const std::vector<plan_cost_term>& terms) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& t : terms) a.push_back({{"name", t.name}, {"fraction", t.fraction}, {"why", t.why}});
    return a;
}

}  // namespace

nlohmann::json plan_json(const plan_answer& p) {
    nlohmann::json j;
    j["fits"] = p.fits;
    j["base_fits"] = p.base_fits;
    j["world_size"] = p.world_size;
    j["base_world_size"] = p.base_world_size;
    j["overrides"] = overrides_json(p.overrides);
    j["expected_device_peak_bytes"] = p.expected_device_peak_bytes;
    j["expected_device_peak_high_bytes"] = p.expected_device_peak_high_bytes;
    j["base_device_peak_bytes"] = p.base_device_peak_bytes;
    j["base_high_bytes"] = p.base_high_bytes;
    j["budget_bytes"] = p.budget_bytes;
    if (p.host_memory_bytes > 0) {
        j["host_memory_bytes"] = p.host_memory_bytes;
        j["host_budget_bytes"] = p.host_budget_bytes;
    }
    j["rendered"] = p.rendered;
    j["framework"] = p.framework;
    j["syntax"] = p.syntax;
    j["tier"] = plan_tier_name(p.tier);
    j["cost"] = p.cost;
    j["cost_terms"] = terms_json(p.terms);
    j["notes"] = p.notes;
    j["worlds_searched"] = p.worlds_searched;
    j["evaluated"] = p.evaluated;
    j["fitting"] = p.fitting;
    j["seconds"] = p.seconds;
    j["search_seconds"] = p.search_seconds;
    // An alternative searched at the job's own size: offload, a 4-bit base, adapters instead of every weight.
    auto alternative = [&](const char* name, const plan_alternative& a) {
        if (!a.searched) return;
        j[name] = {{"world_size", p.base_world_size},
                   {"fits", a.fits},
                   {"expected_device_peak_bytes", a.expected_device_peak_bytes},
                   {"overrides", overrides_json(a.overrides)},
                   {"rendered", a.rendered},
                   {"cost", a.cost},
                   {"cost_terms", terms_json(a.terms)}};
        if (a.host_bytes > 0) j[name]["host_bytes_per_node"] = a.host_bytes;
        if (a.host_limited) j[name]["host_limited"] = true;
        if (a.between_phases) j[name]["offload_between_phases"] = true;
    };
    alternative("at_current_size", p.at_current_size);
    alternative("quantized_base", p.quantized_base);
    alternative("adapters", p.adapters);
    if (p.adapters.searched) j["adapters"]["quantized_base"] = p.adapters_quantized;
    auto& arr = j["candidates"] = nlohmann::json::array();
    for (const auto& c : p.candidates) {
        const plan_candidate& k = c.candidate;
        arr.push_back({{"world_size", k.world_size},
                       {"device_peak_bytes", k.device_peak_bytes},
                       {"device_peak_high_bytes", k.device_peak_high_bytes},
                       {"margin_bytes", k.margin_bytes},
                       {"tier", plan_tier_name(k.tier)},
                       {"cost", k.cost},
                       {"cost_terms", terms_json(k.terms)},
                       {"overrides", overrides_json(k.overrides)},
                       {"job_syntax", c.rendered}});
    }
    return j;
}

}  // namespace oomdx
