#include "engine/estimator/preflight.h"


#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "parsers/config/framework_adapter.h"
#include "parsers/config/framework_semantics.h"
#include "parsers/config/job_inputs.h"

namespace oomdx {

void gather_facts(const preflight_request& req, fact_store& facts) {
    job_inputs_options o;
    o.config = req.config;
    o.framework = req.framework;
    o.model = req.model;
    o.device = req.device;
    o.sets = req.sets;
    const job_inputs inputs = load_job_inputs(o);
    emit_facts(inputs, facts);
    provenance user;
    user.producer = "user";
    if (req.config.empty() && !req.framework.empty() && !facts.has("job.framework")) {
        user.excerpt = "--framework " + req.framework;
        facts.emit("job.framework", value(req.framework), user);
        // without a config file the framework's defaults fill what --set does not
        try {
            const framework_adapter& ad = framework_adapter::get(req.framework);
            for (const auto& [key, v] : ad.defaults()) {
                if (facts.has(key)) continue;
                provenance p;
                p.producer = "config." + ad.name() + ".default";
                p.file = ad.file();
                p.excerpt = fmt::format("{} default when the job does not set it", ad.name());
                facts.emit(key, v, p);
            }
        } catch (const std::exception&) {
        }
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
}

preflight_result run_preflight(const preflight_request& req) {
    preflight_result r;
    gather_facts(req, r.facts);
    r.input = from_facts(r.facts);
    r.estimate = estimate(r.input);
    emit_facts(r.estimate, r.facts);
    r.framework = r.facts.string("job.framework").value_or("torchtitan");
    if (req.plan) {
        r.planned = true;
        if (r.input.capacity_bytes <= 0) throw usage_error("--plan needs the device capacity (--device)");
        r.plan = plan_search(r.input, req.plan_opts);
        const framework_adapter* ad = nullptr;
        try {
            ad = &framework_adapter::get(r.framework);
        } catch (const std::exception&) {
            ad = nullptr;
        }
        for (const auto& c : r.plan.candidates) {
            rendered_plan rp;
            rp.candidate = c;
            bool done = false;
            if (ad) {
                try {
                    rp.job_syntax = ad->render_lines(c.overrides);
                    done = true;
                } catch (const std::exception&) {
                    done = false;
                }
            }
            if (!done)
                for (const auto& o : c.overrides) rp.job_syntax.push_back(fmt::format("--{}={}", o.key, value_key(o.val)));
            r.plans.push_back(std::move(rp));
        }
    }
    // the verdict uses the high end of the interval
    const estimate_result& e = r.estimate;
    r.fits_high = r.input.capacity_bytes > 0 && e.high_bytes <= e.budget_bytes;
    r.straddles = r.input.capacity_bytes > 0 && e.low_bytes <= e.budget_bytes && e.high_bytes > e.budget_bytes;
    r.limits = max_fitting(r.input, true);
    r.exit_code = r.input.capacity_bytes > 0 && !r.fits_high ? exit_does_not_fit : exit_ok;
    return r;
}

std::string render_preflight_text(const preflight_result& r) {
    std::string s = render_text(r.estimate);
    if (r.input.capacity_bytes > 0) {
        const estimate_result& e = r.estimate;
        std::string head = fmt::format("Preflight: {} ({} of {} budget{})\n", r.fits_high ? "fits" : "DOES NOT FIT",
                                       format_bytes(e.high_bytes), format_bytes(e.budget_bytes),
                                       e.high_bytes > e.low_bytes ? ", high end of the interval" : "");
        if (r.straddles)
            head += fmt::format("  the interval {} .. {} straddles the budget: it may fit on some builds\n", format_bytes(e.low_bytes),
                                format_bytes(e.high_bytes));
        const fit_limits& l = r.limits;
        if (l.max_micro_batch >= 0)
            head += fmt::format("  largest that fit: micro-batch {} at sequence length {}; sequence length {} at micro-batch {}\n",
                                l.max_micro_batch, l.seq_len, l.max_seq_len, l.micro_batch);
        s = head + s;
    }
    if (r.planned) {
        s += fmt::format("\nPlan search: {} configurations evaluated, {} fit; best {} by cost ({:.0f} candidates/s):\n",
                         r.plan.evaluated, r.plan.fitting, r.plans.size(),
                         r.plan.seconds > 0 ? double(r.plan.evaluated) / r.plan.seconds : 0.0);
        int i = 0;
        for (const auto& p : r.plans) {
            const plan_candidate& c = p.candidate;
            const estimate_input& in = c.input;
            s += fmt::format(" {}. TP {} PP {} CP {} EP {} DP-shard {} | micro-batch {} | AC {} | ZeRO {}{} -> {} (margin {}), cost {:+.0f}%\n",
                             ++i, in.tp, in.pp, in.cp, in.ep, in.dp_shard, in.micro_batch, ac_name(in.ac), in.zero_stage,
                             in.swap_optimizer ? " | swap optimizer" : "", format_bytes(c.device_peak_bytes),
                             format_bytes(c.margin_bytes), 100.0 * c.cost);
            for (const auto& t : c.terms) s += fmt::format("      {:+.0f}% {}: {}\n", 100.0 * t.fraction, t.name, t.why);
            if (c.overrides.empty()) s += "      (no change: the job as configured)\n";
            for (const auto& l : p.job_syntax) s += "      " + l + "\n";
        }
        if (r.plans.empty()) s += "  nothing in the searched space fits; more devices or a smaller model are needed\n";
    }
    return s;
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
    if (r.planned) {
        nlohmann::json p;
        p["evaluated"] = r.plan.evaluated;
        p["fitting"] = r.plan.fitting;
        p["seconds"] = r.plan.seconds;
        auto& arr = p["candidates"] = nlohmann::json::array();
        for (const auto& rp : r.plans) {
            const plan_candidate& c = rp.candidate;
            nlohmann::json o;
            o["device_peak_bytes"] = c.device_peak_bytes;
            o["margin_bytes"] = c.margin_bytes;
            o["cost"] = c.cost;
            auto& terms = o["cost_terms"] = nlohmann::json::array();
            for (const auto& t : c.terms) terms.push_back({{"name", t.name}, {"fraction", t.fraction}, {"why", t.why}});
            auto& ov = o["overrides"] = nlohmann::json::array();
            for (const auto& x : c.overrides) ov.push_back({{"key", x.key}, {"value", value_key(x.val)}});
            o["job_syntax"] = rp.job_syntax;
            arr.push_back(std::move(o));
        }
        j["plan"] = std::move(p);
    }
    return j;
}

}  // namespace oomdx
