#include "engine/estimator/preflight.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/core/vocabulary.h"
#include "parsers/config/device_catalog.h"
#include "parsers/config/framework_adapter.h"
#include "parsers/config/job_config.h"
#include "parsers/config/model_dims.h"

namespace oomdx {

namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t");
    return s.substr(b, e - b + 1);
}

std::optional<std::int64_t> parse_int(const std::string& s) {
    if (s.empty() || s.size() > 24) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
    return v;
}

}  // namespace

estimate_override parse_set(const std::string& kv) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
        throw usage_error(fmt::format("--set expects key=value, got '{}'", kv.substr(0, 200)));
    std::string key = trim(kv.substr(0, eq));
    if (key.rfind("--", 0) == 0) key = key.substr(2);
    const std::string raw = trim(kv.substr(eq + 1));
    const fact_decl* d = vocabulary::shipped().find(key);
    if (!d) throw usage_error(fmt::format("--set: unknown key '{}' (see `oomdx facts --list`)", key.substr(0, 200)));
    auto bad = [&](const char* what) {
        return usage_error(fmt::format("--set {}: '{}' is not {}", key, raw.substr(0, 200), what));
    };
    switch (d->kind) {
        case fact_kind::bytes: {
            if (auto i = parse_int(raw)) return {key, value(*i)};
            if (auto b = parse_size(raw)) return {key, value(*b)};
            throw bad("a size in bytes");
        }
        case fact_kind::integer: {
            if (auto i = parse_int(raw)) return {key, value(*i)};
            throw bad("an integer");
        }
        case fact_kind::number: {
            char* end = nullptr;
            const double v = std::strtod(raw.c_str(), &end);
            if (raw.empty() || end != raw.c_str() + raw.size() || !std::isfinite(v)) throw bad("a number");
            return {key, value(v)};
        }
        case fact_kind::boolean: {
            if (raw == "true" || raw == "1" || raw == "True" || raw == "yes" || raw == "on") return {key, value(true)};
            if (raw == "false" || raw == "0" || raw == "False" || raw == "no" || raw == "off") return {key, value(false)};
            throw bad("true or false");
        }
        case fact_kind::string: {
            if (!d->values.empty() && std::find(d->values.begin(), d->values.end(), raw) == d->values.end()) {
                std::string allowed;
                for (const auto& v : d->values) allowed += (allowed.empty() ? "" : "|") + v;
                throw bad(("one of " + allowed).c_str());
            }
            return {key, value(raw)};
        }
        case fact_kind::list: throw bad("settable (list facts cannot be set)");
        case fact_kind::any: break;
    }
    if (auto i = parse_int(raw)) return {key, value(*i)};
    return {key, value(raw)};
}

void gather_facts(const preflight_request& req, fact_store& facts) {
    provenance user;
    user.producer = "user";
    if (!req.config.empty()) {
        const job_config job = parse_job_config(req.config, req.framework);
        emit_facts(job, facts);
    } else if (!req.framework.empty()) {
        user.excerpt = "--framework " + req.framework;
        facts.emit("job.framework", value(req.framework), user);
    }
    if (!req.model.empty()) {
        const model_dims m = load_model(req.model);
        emit_facts(m, facts);
    }
    if (!req.device.empty()) {
        auto d = lookup_device(req.device);
        if (!d) {
            // a bare size ("80GiB") is accepted as a capacity
            if (auto bytes = parse_size(req.device); bytes && *bytes > 0) {
                user.excerpt = "--device " + req.device;
                facts.emit("device.capacity_bytes", value(*bytes), user);
            } else {
                throw usage_error(fmt::format("unknown device '{}' (see knowledge/devices.yaml, or give a size like 80GiB)",
                                              req.device.substr(0, 100)));
            }
        } else {
            emit_facts(*d, facts, "catalog");
        }
    }
    if (req.world_size > 0) {
        user.excerpt = fmt::format("--world-size {}", req.world_size);
        facts.emit("job.world_size", value(req.world_size), user);
    }
    for (const auto& s : req.sets) {
        const estimate_override o = parse_set(s);
        user.excerpt = "--set " + s;
        facts.emit(o.key, o.val, user);
    }
    if (!facts.has("model.hidden_size") && !facts.has("model.num_layers"))
        throw usage_error("no model: give --model PRESET|config.json (or the model in the job config)");
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
    r.exit_code = r.input.capacity_bytes > 0 && !r.estimate.fits ? exit_does_not_fit : exit_ok;
    return r;
}

std::string render_preflight_text(const preflight_result& r) {
    std::string s = render_text(r.estimate);
    if (r.input.capacity_bytes > 0)
        s = fmt::format("Preflight: {} ({} of {} budget)\n", r.estimate.fits ? "fits" : "DOES NOT FIT",
                        format_bytes(r.estimate.device_peak_bytes), format_bytes(r.estimate.budget_bytes)) + s;
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
    j["fits"] = r.estimate.fits;
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
