// The plan as JSON ("plan" of oomdx.preflight/1 and oomdx.diagnosis/1) and as a text block.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/bytes.h"
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

std::string layout(const estimate_input& in) {
    return fmt::format("TP {} PP {} CP {} EP {} DP {}x{} | micro-batch {} | AC {} | ZeRO {}{}{}{}", in.tp, in.pp, in.cp, in.ep,
                       in.dp_replicate, in.dp_shard, in.micro_batch, ac_name(in.ac), in.zero_stage,
                       in.swap_optimizer ? " | swap optimizer" : "", in.optimizer_offload ? " | optimizer offload" : "",
                       in.params_offload ? " | param offload" : "");
}

std::string set_args(const std::vector<estimate_override>& ovs) {
    std::string s;
    for (const auto& o : ovs) s += fmt::format(" --set {}={}", o.key, value_key(o.val));
    return s;
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
    j["budget_bytes"] = p.budget_bytes;
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
    if (p.at_current_size.searched) {
        const plan_alternative& a = p.at_current_size;
        j["at_current_size"] = {{"world_size", p.base_world_size},
                                {"fits", a.fits},
                                {"expected_device_peak_bytes", a.expected_device_peak_bytes},
                                {"overrides", overrides_json(a.overrides)},
                                {"rendered", a.rendered},
                                {"cost", a.cost},
                                {"cost_terms", terms_json(a.terms)}};
    }
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

std::string render_plan_text(const plan_answer& p, std::size_t max_candidates) {
    std::string s;
    if (p.base_fits) {
        s += fmt::format("Plan: the job fits as configured ({} of {} budget).\n", format_bytes(p.base_device_peak_bytes),
                         format_bytes(p.budget_bytes));
    } else if (!p.fits) {
        s += fmt::format("Plan: nothing in the searched space fits on {} to {} devices.\n", p.base_world_size,
                         p.worlds_searched.empty() ? p.base_world_size : p.worlds_searched.back());
    } else {
        s += fmt::format("Plan: {} devices, {} device peak of {} budget ({}; {:+.0f}% step time):\n", p.world_size,
                         format_bytes(p.expected_device_peak_bytes), format_bytes(p.budget_bytes), plan_tier_name(p.tier),
                         100.0 * p.cost);
        for (const auto& l : p.rendered) s += "    " + l + "\n";
        for (const auto& t : p.terms) s += fmt::format("    {:+.0f}% {}: {}\n", 100.0 * t.fraction, t.name, t.why);
        s += fmt::format("    check: oomdx estimate ... --world-size {}{}\n", p.world_size, set_args(p.overrides));
    }
    for (const auto& n : p.notes) s += "  " + n + "\n";
    if (p.at_current_size.searched) {
        const plan_alternative& a = p.at_current_size;
        if (a.overrides.empty()) {
            s += fmt::format("  On {} devices the framework offers no offload or swap setting.\n", p.base_world_size);
        } else {
            s += fmt::format("  On {} devices, offload / swap {}: {} ({:+.0f}% step time)\n", p.base_world_size,
                             a.fits ? "fits" : "still does not fit", format_bytes(a.expected_device_peak_bytes),
                             100.0 * a.cost);
            for (const auto& l : a.rendered) s += "    " + l + "\n";
        }
    }
    std::size_t shown = 0;
    for (std::size_t i = p.base_fits ? 0 : 1; i < p.candidates.size() && shown < max_candidates; ++i, ++shown) {
        if (shown == 0) s += "  Next candidates:\n";
        const plan_candidate& c = p.candidates[i].candidate;
        s += fmt::format("   {}. {} -> {} ({}, {:+.0f}%)\n", shown + 1, layout(c.input), format_bytes(c.device_peak_bytes),
                         plan_tier_name(c.tier), 100.0 * c.cost);
    }
    return s;
}

}  // namespace oomdx
