// Stage `plan` (after `estimate`, before `rules`): when the configuration does not fit (the high
// end of the estimate's interval in preflight, the point estimate in diagnose) or --plan asks,
// the cheapest overrides that fit, or the smallest world size at which some do (make_plan); in
// preflight (and in diagnose when over the budget) also the largest micro-batch and sequence that fit. The answer becomes plan.* facts
// the rules reason with, and a section of the report.
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/report/pipeline.h"
#include "parsers/config/override_syntax.h"

namespace oomdx {

namespace {

// Canonical overrides as one fact value: "key=value, key=value" (rules read it back with set_from).
std::string listed(const std::vector<estimate_override>& ovs) {
    std::string s;
    for (const auto& o : ovs) s += (s.empty() ? "" : ", ") + o.key + "=" + value_key(o.val);
    return s;
}

// rev43: the plan's changes as the plan block writes them (p.rendered, the job's syntax), one item each: a TOML field
// with its section ("activation_checkpoint.mode = \"full\""), a JSON patch on one line, the canonical key=value only
// where the framework has no setting ("# megatron has no setting for K = V"); other comments dropped.
std::string in_job_syntax(const std::vector<std::string>& rendered) {
    std::vector<std::string> items;
    std::string section, json;
    int depth = 0;
    auto push = [&](std::string item) {
        if (std::find(items.begin(), items.end(), item) == items.end()) items.push_back(std::move(item));
    };
    for (const auto& line : rendered) {
        const auto b = line.find_first_not_of(' ');
        if (b == std::string::npos) continue;
        const std::string t = line.substr(b);
        if (depth > 0 || t.front() == '{') {
            json += (json.empty() || json.back() == '{' || t.front() == '}' ? "" : " ") + t;
            for (char c : t) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
            if (depth <= 0) push(std::exchange(json, std::string())), depth = 0;
        } else if (t.front() == '#') {
            const auto at = t.find(" has no setting for ");
            if (at == std::string::npos) continue;
            std::string kv = t.substr(at + 20);
            if (const auto eq = kv.find(" = "); eq != std::string::npos) kv.replace(eq, 3, "=");
            push(kv);
        } else if (t.front() == '[' && t.back() == ']') {
            section = t.substr(1, t.size() - 2);
        } else {
            push(section.empty() || t.find(" = ") == std::string::npos ? t : section + "." + t);
        }
    }
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
}

void emit_plan_facts(const plan_answer& p, fact_store& facts) {
    provenance pr;
    pr.producer = "planner";
    pr.excerpt = fmt::format("plan search: {} candidates over {} world size(s)", p.evaluated, p.worlds_searched.size());
    facts.emit("plan.fits", value(p.fits), pr);
    facts.emit("plan.base_world_size", value(p.base_world_size), pr);
    // An alternative searched at the job's own size: plan.<name>_fits_at_current_size, _device_peak_bytes, _overrides.
    auto alternative = [&](const std::string& name, const plan_alternative& a) {
        if (!a.searched) return;
        facts.emit("plan." + name + "_fits_at_current_size", value(a.fits), pr);
        if (a.expected_device_peak_bytes > 0) facts.emit("plan." + name + "_device_peak_bytes", value(a.expected_device_peak_bytes), pr);
        if (const std::string ov = listed(a.overrides); !ov.empty()) facts.emit("plan." + name + "_overrides", value(ov), pr);
    };
    alternative("quantized_base", p.quantized_base);
    alternative("adapters", p.adapters);
    if (p.adapters.searched) facts.emit("plan.adapters_quantized", value(p.adapters_quantized), pr);
    if (!p.fits) return;
    facts.emit("plan.world_size", value(p.world_size), pr);
    facts.emit("plan.needs_more_devices", value(p.world_size > p.base_world_size), pr);
    facts.emit("plan.expected_device_peak_bytes", value(p.expected_device_peak_bytes), pr);
    const std::string ov = listed(p.overrides);
    facts.emit("plan.overrides", value(ov.empty() ? std::string("none") : ov), pr);
    if (const std::string own = in_job_syntax(p.rendered); !ov.empty() && !own.empty()) facts.emit("plan.changes", value(own), pr);
    facts.emit("plan.tier", value(std::string(plan_tier_name(p.tier))), pr);
    // rev36: a plan at the job's size that only lowers the micro-batch (its accumulation beside it) names the micro-batch
    // the recommendation lowers to, so the two agree (6 -> 4 with accumulation 12, not a halving to 3)
    if (p.world_size == p.base_world_size) {
        std::optional<std::int64_t> micro;
        bool batch_only = true;
        for (const auto& o : p.overrides) {
            if (o.key == "training.local_batch_size" && o.val.is_integer()) micro = o.val.as_integer();
            else if (o.key != "training.gradient_accumulation_steps" && o.key != "training.global_batch_size") batch_only = false;
        }
        if (micro && batch_only) facts.emit("plan.local_batch_size", value(*micro), pr);
    }
    if (p.at_current_size.searched) {
        alternative("offload", p.at_current_size);
        // What that alternative moves to the host: parameter offload (FSDP CPUOffload, ZeRO-3
        // offload_param) takes the gradients and the optimizer step with it.
        bool params = false;
        for (const auto& o : p.at_current_size.overrides)
            if (o.key == "parallelism.offload_params" && value_key(o.val) != "none") params = true;
        if (!p.at_current_size.overrides.empty()) facts.emit("plan.offload_moves_params", value(params), pr);
        if (p.at_current_size.host_bytes > 0) facts.emit("plan.offload_host_bytes", value(p.at_current_size.host_bytes), pr);
        facts.emit("plan.offload_host_limited", value(p.at_current_size.host_limited), pr);
    }
}

// rev36: a plan at the job's size whose micro-batch is below the largest that fits (the limits line) keeps the global
// batch, which that larger one cannot (4 x 2 = 8 sequences a step; 3 fits, 3 divides nothing): the plan says why.
void note_larger_micro_batch(diagnosis_report& rep) {
    if (!rep.limits || !rep.plan || !rep.plan->fits || rep.plan->world_size != rep.plan->base_world_size) return;
    if (rep.facts.get("training.global_batch_size")) return;
    std::optional<std::int64_t> micro;
    for (const auto& o : rep.plan->overrides)
        if (o.key == "training.local_batch_size" && o.val.is_integer()) micro = o.val.as_integer();
    const std::int64_t largest = rep.limits->max_micro_batch;
    if (!micro || *micro >= largest || largest >= rep.limits->micro_batch) return;
    const fact* ga = rep.facts.get("training.gradient_accumulation_steps");
    const std::int64_t seqs = rep.limits->micro_batch * (ga && ga->val.is_integer() ? ga->val.as_integer() : 1);
    if (seqs % largest == 0) return;
    rep.plan->notes.push_back(fmt::format("micro-batch {} fits too (the largest), but no accumulation keeps the {} sequences "
                                          "of a step with it: the plan keeps the global batch at micro-batch {}",
                                          largest, seqs, *micro));
}

}  // namespace

void stage_plan(pipeline_state& s) {
    diagnosis_report& rep = s.rep;
    if (!rep.estimate || rep.estimate->capacity_bytes <= 0 || !s.job) return;
    const estimate_result& e = *rep.estimate;
    const bool preflight = rep.mode == "preflight";
    if (preflight) rep.straddles_budget = e.low_bytes <= e.budget_bytes && e.high_bytes > e.budget_bytes;
    const std::int64_t judged = preflight ? std::max(e.high_bytes, e.device_peak_bytes) : e.device_peak_bytes;
    // rev35: diagnose states the limits too, where its own figure is over the budget (the OOM's job does not fit);
    // where the estimate fits, limits above the job's own sizes would read against the OOM it had
    if (preflight || judged > e.budget_bytes) {
        // rev36: judged as the plan's candidates are (plan.cpp verify: the interval's high end, both modes), so the
        // limits and the plan agree; diagnose's point figure put the limit above what the plan would accept
        rep.limits = max_fitting(from_facts(rep.facts), true);
        rep.micro_batch_key = job_key_name(s.job->syntax, "training.local_batch_size", value(rep.limits->micro_batch));
        rep.seq_len_key = job_key_name(s.job->syntax, "training.seq_len", value(rep.limits->seq_len));
    }
    if (s.req.plan || judged > e.budget_bytes) {
        try {
            rep.plan = make_plan(rep.facts, s.job->syntax, s.req.plan_opts);
        } catch (const usage_error&) {
            rep.plan.reset();  // no capacity or no model: the report says so elsewhere
        }
    }
    // rev38: the longest sequence that fits at the job's micro-batch, the figure the limits line states, so a sequence
    // recommendation caps at it instead of halving (1648 tokens, not 1024, at micro-batch 6); emitted after the plan's
    // search, which reads the facts
    if (rep.limits && rep.limits->max_seq_len > 0) {
        provenance pr;
        pr.producer = "planner";
        pr.excerpt = fmt::format("largest sequence that fits at micro-batch {}: {}", rep.limits->micro_batch, rep.limits->max_seq_len);
        rep.facts.emit("plan.max_seq_len", value(rep.limits->max_seq_len), pr);
    }
    // rev40: the smallest TP (with sequence parallelism, within a node) at which the job fits as it is: the setting of
    // the parallel-strategy lever for activations (step4_increase_tp_activations)
    if (rep.limits && rep.limits->min_tp > 0) {
        provenance pr;
        pr.producer = "planner";
        pr.excerpt = fmt::format("smallest tensor-parallel degree that fits at micro-batch {} and sequence {}: {}",
                                 rep.limits->micro_batch, rep.limits->seq_len, rep.limits->min_tp);
        rep.facts.emit("plan.min_fitting_tp", value(rep.limits->min_tp), pr);
    }
    if (!rep.plan) return;
    note_larger_micro_batch(rep);
    emit_plan_facts(*rep.plan, rep.facts);
}

}  // namespace oomdx
