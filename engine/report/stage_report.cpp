// Stage `report`: the headline, and the ranked recommendations rendered in the job's own syntax
// and re-estimated with their overrides applied.
#include <algorithm>

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/estimator/plan.h"
#include "engine/report/pipeline.h"
#include "engine/report/report_consistency.h"
#include "engine/report/report_evidence.h"
#include "engine/report/report_phrases.h"
#include "parsers/config/framework_adapter.h"
#include "parsers/config/framework_semantics.h"
#include "parsers/config/job_validate.h"

namespace oomdx {

namespace {

int severity_rank(const std::string& s) {
    if (s == "critical") return 0;
    if (s == "high") return 1;
    if (s == "medium") return 2;
    if (s == "low") return 3;
    return 4;
}

std::string adapter_name(const std::string& framework) {
    if (framework.empty() || framework == "unknown") return "torchtitan";
    return framework;
}

// Keys whose change moves memory around or changes why it fails, not the tensor peak: the
// framework's `estimate_ignores` (knowledge/frameworks), torchtitan's when the framework has none.
bool changes_estimate(const std::string& framework, const std::string& key) {
    const framework_semantics* s = find_semantics(framework);
    if (!s || s->estimate_ignores.empty()) s = find_semantics("torchtitan");
    return !s || !s->ignores_for_estimate(key);
}

// Canonical `key = value` lines (allocator and other environment variables as exports), for a job
// whose framework is not known.
std::vector<std::string> canonical_lines(const override_syntax& syntax, const std::vector<canonical_override>& ovs) {
    std::vector<std::string> out;
    std::vector<canonical_override> env;
    for (const auto& o : ovs) {
        if (o.key.rfind("env.", 0) == 0) env.push_back(o);
        else out.push_back(fmt::format("{} = {}", o.key, o.val.is_string() ? o.val.as_string() : o.val.to_string()));
    }
    if (!env.empty()) {
        const auto lines = render_overrides(syntax, env);  // the variable this device and PyTorch read
        out.insert(out.end(), lines.begin(), lines.end());
    }
    return out;
}

void headline(diagnosis_report& rep) {
    const report_finding* best = nullptr;
    for (const auto& f : rep.findings)
        if (!best || severity_rank(f.severity) < severity_rank(best->severity)) best = &f;
    if (best) rep.headline = best->text;
    else if (rep.mode == "preflight" && rep.estimate)
        rep.headline = phrase(rep.lang, rep.estimate->fits ? "report.headline.fits" : "report.headline.does_not_fit");
    else
        rep.headline = phrase(rep.lang, "report.headline.nothing");
}

// rank79: the figure above is the job at its full (configured) length; where the failing request measured the
// length the failing batch was padded to (consistency.request.tokens_per_sample, rules/consistency.yaml), the same
// change is also estimated at that length: whether it gets past the step that failed, which the log shows. The
// full-length figure stays the verdict for the run (longer batches can still come); a change of the length itself
// has no such second figure.
void failing_step_figure(const fact_store& facts, const diagnosis_report& rep, const override_syntax& syntax,
                         const std::vector<canonical_override>& config, report_recommendation& rr) {
    const auto tokens = facts.integer("consistency.request.tokens_per_sample");
    const auto full = facts.integer("training.seq_len");
    if (!tokens || !full || *tokens <= 0 || *tokens >= *full) return;
    std::vector<canonical_override> at = canonical_closure(syntax, config);
    for (const auto& o : at)
        if (o.key == "training.seq_len") return;
    at.push_back({"training.seq_len", value(*tokens)});
    const estimate_result fail = estimate_with(facts, at);
    if (fail.device_peak_bytes <= 0 || fail.budget_bytes <= 0) return;
    rr.expected_note = phrase(rep.lang, fail.fits ? "report.note.failing_step_fits" : "report.note.failing_step_over",
                              {{"tokens", std::to_string(*tokens)}, {"device", format_bytes(fail.device_peak_bytes)},
                               {"full", std::to_string(*full)}});
}

void expected_after(const fact_store& facts, const diagnosis_report& rep, const override_syntax& syntax,
                    const std::vector<canonical_override>& config, const recommendation& r, report_recommendation& rr) {
    const std::string fw = facts.string("job.framework").value_or("torchtitan");
    bool affects = false, measures = !config.empty();
    for (const auto& o : config) {
        affects = affects || changes_estimate(fw, o.key);
        measures = measures && o.key.rfind("profiling.", 0) == 0;
    }
    if (r.expected_device_peak && !affects && !measures) {
        // The rule names the figure: the plan's at its own world size (no settings of its own), or that of
        // the phase a setting the training step's estimate does not read changes (a rollout engine's share).
        rr.expected_device_peak_bytes = r.expected_device_peak;
        if (rep.estimate) rr.expected_fits = *r.expected_device_peak <= rep.estimate->budget_bytes;
        rr.expected_budget_unknown = rep.estimate && rep.estimate->budget_bytes <= 0;
        rr.expected_note = phrase(rep.lang, config.empty() ? "report.note.plan_figure" : "report.note.phase_figure");
        return;
    }
    if (affects && !rep.estimate) {
        // A framework whose networks the estimator does not model (framework.static_estimate false):
        // no --model would give a figure, so the note does not ask for one.
        const fact* est = facts.get("framework.static_estimate");
        const bool modelled = !est || !est->val.is_bool() || est->val.as_bool();
        rr.expected_note = phrase(rep.lang, modelled ? "report.note.no_estimate" : "report.note.no_estimate_model_kind");
        return;
    }
    if (affects) {
        // What the framework reads back from the rendered lines (torchtitan offload moves params too).
        estimate_result after = estimate_with(facts, canonical_closure(syntax, config));
        rr.expected_peak_bytes = after.peak_bytes;
        rr.expected_device_peak_bytes = after.device_peak_bytes;
        rr.expected_fits = after.fits;  // the estimate block's own verdict on these figures
        rr.expected_budget_unknown = after.budget_bytes <= 0;
        // Preflight judges the interval's high end (the estimate block and the headline say so): the change's verdict
        // is that end's too, and its figure is shown (rev42: "device 21.64 GiB - fits" under a headline "does not fit"
        // at 22.59 GiB, for a change that left the figures as they were).
        if (rep.mode == "preflight" && after.capacity_bytes > 0 && after.high_bytes > after.device_peak_bytes) {
            rr.expected_device_high_bytes = after.high_bytes;
            rr.expected_fits = after.fits && after.high_bytes <= after.budget_bytes;
        }
        rr.expected_capped = after.reserved_capped;
        failing_step_figure(facts, rep, syntax, config, rr);
        // what it offloads to the host, where that changes (optimizer or parameter offload added or moved)
        if (after.host_offload_high_bytes > 0 &&
            (!rep.estimate || std::abs(double(after.host_offload_high_bytes - rep.estimate->host_offload_high_bytes)) >
                                  0.01 * double(after.host_offload_high_bytes)))
        {
            rr.expected_host_bytes = after.host_offload_high_bytes;
            rr.expected_host_sizing = after.host_offload_sizing;
        }
        return;
    }
    // A setting the rule changes from the job's value, which is not given ("halve the micro-batch" with no batch
    // stated): no figure, not the job's own figure as if the change left it there.
    if (rep.estimate && config.empty())
        for (const auto& o : r.overrides)
            if (o.val.is_null() && o.key.rfind("code.", 0) != 0) {
                rr.expected_note = phrase(rep.lang, "report.note.value_unknown", {{"key", o.key}});
                return;
            }
    if (rep.estimate) {
        rr.expected_peak_bytes = rep.estimate->peak_bytes;
        rr.expected_device_peak_bytes = rep.estimate->device_peak_bytes;
        rr.expected_fits = rep.estimate->fits;
        rr.expected_budget_unknown = rep.estimate->budget_bytes <= 0;
    }
    if (!rep.estimate && !measures && config.empty()) return;  // a code change and no figure to speak of
    rr.expected_note = phrase(rep.lang, measures         ? "report.note.measurement"
                                        : config.empty() ? "report.note.code_change"
                                                         : "report.note.no_peak_change");
}

// A smaller micro-batch keeps the sequences per optimizer step: the accumulation (or torchtitan's
// global batch) the framework needs beside it, unless the rule set those keys itself.
void complete_batch_change(const fact_store& facts, std::vector<canonical_override>& config,
                           std::vector<override_value>& shown) {
    const canonical_override* micro = nullptr;
    for (const auto& o : config) {
        if (o.key == "training.gradient_accumulation_steps" || o.key == "training.global_batch_size") return;
        if (o.key == "training.local_batch_size" && o.val.is_integer()) micro = &o;
    }
    if (!micro) return;
    for (const auto& o : keep_global_batch(facts, micro->val.as_integer())) {
        config.push_back({o.key, o.val});
        shown.push_back({o.key, o.val});
    }
}

// The job's own keys for a change whose value the inputs do not give ("halve the micro-batch" with no micro-batch
// stated): named, not invented, so the user knows where the change goes. A smaller micro-batch names the
// accumulation beside it, as complete_batch_change writes it when the value is known.
std::vector<std::string> keys_without_value(const override_syntax& syntax, const std::vector<override_value>& overrides) {
    std::vector<canonical_override> wanted;
    for (const auto& o : overrides)
        if (o.val.is_null() && o.key.rfind("code.", 0) != 0) {
            wanted.push_back({o.key, value(std::int64_t{1})});
            if (o.key == "training.local_batch_size") wanted.push_back({"training.gradient_accumulation_steps", value(std::int64_t{2})});
        }
    std::vector<std::string> keys;
    for (const auto& o : wanted)  // a key the framework cannot spell names nothing
        if (const std::string k = job_key_name(syntax, o.key, o.val); !k.empty() && std::find(keys.begin(), keys.end(), k) == keys.end())
            keys.push_back(k);
    return keys;
}

}  // namespace

void stage_report(pipeline_state& s) {
    diagnosis_report& rep = s.rep;
    fact_store& facts = rep.facts;
    headline(rep);
    collect_consistency(rep);
    const std::string fw = facts.string("job.framework").value_or("torchtitan");
    rep.framework = fw;
    const framework_adapter& adapter = framework_adapter::get(adapter_name(fw));
    // Capturing a snapshot is a next step beside real recommendations, not one of them, unless
    // nothing else is supported.
    std::vector<recommendation> ranked = rep.inference.ranked();
    const bool others = std::any_of(ranked.begin(), ranked.end(), [](const recommendation& r) {
        return r.action != "capture_snapshot";
    });
    std::vector<std::string> capture_steps;
    if (others) {
        for (const auto& r : ranked)
            if (r.action == "capture_snapshot")
                capture_steps.push_back(r.text + (r.confirm.empty() ? "" : " " + r.confirm));
        ranked.erase(std::remove_if(ranked.begin(), ranked.end(),
                                    [](const recommendation& r) { return r.action == "capture_snapshot"; }),
                     ranked.end());
    }
    // Without a config or a framework the overrides are given as canonical keys, not in a guessed syntax.
    const bool known_framework = facts.has("job.framework");
    if (!known_framework) rep.framework = "canonical";
    int rank = 0;
    for (const auto& r : ranked) {
        report_recommendation rr;
        rr.rank = ++rank;
        rr.action = r.action;
        rr.rule_id = r.rule_id;
        rr.overrides = r.overrides;
        rr.text = r.text;
        rr.rationale = r.rationale;
        rr.confidence = r.confidence;
        rr.confirm = r.confirm;
        rr.framework = known_framework ? adapter.name() : "canonical";
        for (int id : r.evidence) rr.evidence.push_back(evidence_of(facts, id));
        std::vector<canonical_override> config_overrides, code_overrides;
        // A setting at the job's own value beside real changes (the closure of the rendered keys: ZeRO stage 3 beside
        // FSDP's parameter offload for a job at stage 3) changes nothing: not listed as a change (lead30, LlamaFactory#5977).
        auto current = [&](const override_value& o) {
            const fact* f = o.key.rfind("code.", 0) == 0 ? nullptr : facts.get(o.key);
            return f && !o.val.is_null() && f->val == o.val;
        };
        const bool changes = std::any_of(r.overrides.begin(), r.overrides.end(), [&](const override_value& o) {
            return !o.val.is_null() && o.key.rfind("code.", 0) != 0 && !current(o);
        });
        if (changes) std::erase_if(rr.overrides, current);
        for (const auto& o : r.overrides) {
            if (o.val.is_null() || (changes && current(o))) continue;
            if (o.key.rfind("code.", 0) == 0) code_overrides.push_back({o.key, o.val});
            else config_overrides.push_back({o.key, o.val});
        }
        if (known_framework) complete_batch_change(facts, config_overrides, rr.overrides);
        // Only advice the job can take: what its framework can express, in a layout the checks accept.
        // A rule's `code.fallback` is the same change made in code, for frameworks without the setting.
        auto fallback = std::find_if(code_overrides.begin(), code_overrides.end(),
                                     [](const canonical_override& o) { return o.key == "code.fallback"; });
        if (!config_overrides.empty() && known_framework) {
            if (const expressibility ex = can_express(s.job->syntax, config_overrides); !ex.ok) {
                if (fallback == code_overrides.end()) {
                    rep.not_offered.push_back({r.action, r.rule_id, translated(rep.lang, "adapter.", ex.why)});
                    --rank;
                    continue;
                }
                config_overrides.clear();  // the code change instead of the setting the framework lacks
                fallback = code_overrides.end();
            }
        }
        // With no framework known the canonical keys are no syntax the user can paste: the code change stays beside them.
        if (fallback != code_overrides.end() && !config_overrides.empty() && known_framework) code_overrides.erase(fallback);
        if (!config_overrides.empty() && rep.estimate)
            if (const auto problem = override_problem(facts, config_overrides)) {
                rep.not_offered.push_back({r.action, r.rule_id, translated(rep.lang, "check.", *problem)});
                --rank;
                continue;
            }
        if (!config_overrides.empty()) {
            try {
                rr.rendered = known_framework ? render_overrides(s.job->syntax, config_overrides)  // the job's own syntax
                                              : canonical_lines(s.job->syntax, config_overrides);
            } catch (const std::exception&) {
                for (const auto& o : config_overrides) rr.rendered.push_back(fmt::format("{}={}", o.key, o.val.to_string()));
            }
            // The adapter's comment lines ("# torchtitan has no setting for ...") in the report's language.
            for (auto& line : rr.rendered)
                if (line.find_first_not_of(' ') != std::string::npos && line[line.find_first_not_of(' ')] == '#')
                    line = translated(rep.lang, "adapter.", line);
        }
        if (known_framework && config_overrides.empty() && code_overrides.empty())
            if (const auto keys = keys_without_value(s.job->syntax, r.overrides); !keys.empty()) {
                std::string joined;
                for (const auto& k : keys) joined += (joined.empty() ? "" : ", ") + k;
                rr.rendered.push_back(phrase(rep.lang, "report.rec.keys_without_value", {{"keys", joined}}));
            }
        for (const auto& o : code_overrides) {
            std::string shown = o.val.is_string() ? o.val.as_string() : o.val.to_string();
            for (const auto& [key, text] : r.code_texts)
                if (key == o.key) shown = text;
            // rev28: the label in the report's language ("# 代码：" in Chinese, not "# code:" before Chinese prose)
            rr.rendered.push_back(translated(rep.lang, "adapter.", fmt::format("# code: {}", shown)));
        }
        expected_after(facts, rep, s.job->syntax, config_overrides, r, rr);
        // A change the estimate says would raise the peak past the budget is no fix (bf16 mixed precision beside fp32
        // masters when activations are small): not offered, with both figures. One that still fits may trade device
        // memory for host RAM (a host OOM's states back on the device). One that fits the devices by moving states to
        // a host whose stated RAM cannot take them is no fix either (the plan leaves such offloads out the same way).
        // cases62: nor is one that lowers no live tensor and still raises the device figure, however little, where it
        // is not known to fit (full checkpointing where the estimate's peak holds no activations: lmms-eval#436).
        const bool colocated_rollout = facts.boolean("framework.colocated_rollout").value_or(false) ||
                                       facts.boolean("training.rollout_colocated").value_or(false);
        const bool lowers_nothing = rep.estimate && rr.expected_peak_bytes && rr.expected_device_peak_bytes &&
                                    *rr.expected_peak_bytes >= rep.estimate->peak_bytes &&
                                    *rr.expected_device_peak_bytes > rep.estimate->device_peak_bytes &&
                                    !(rr.expected_fits && *rr.expected_fits);
        std::optional<std::string> why_not;
        if (lowers_nothing || (rep.estimate && rr.expected_device_peak_bytes && rr.expected_fits && !*rr.expected_fits &&
                               double(*rr.expected_device_peak_bytes) > 1.01 * double(rep.estimate->device_peak_bytes)))
            why_not = phrase(rep.lang, "report.rec.raises_peak", {{"after", format_bytes(*rr.expected_device_peak_bytes)},
                                                                  {"now", format_bytes(rep.estimate->device_peak_bytes)}});
        // rev31: nor one the estimate applies that leaves the peak exactly where it is, over the budget (selective
        // checkpointing on a Megatron job with flash attention: nothing it recomputes is held); a setting the
        // estimate does not read carries its note and stays offered, and so does any change beside a colocated
        // rollout engine (the training step's figure does not show the rollout phase such a change is for).
        else if (rep.estimate && !config_overrides.empty() && rr.expected_note.empty() && !colocated_rollout &&
                 rr.expected_peak_bytes &&
                 rr.expected_device_peak_bytes && *rr.expected_peak_bytes == rep.estimate->peak_bytes &&
                 *rr.expected_device_peak_bytes == rep.estimate->device_peak_bytes && rr.expected_fits && !*rr.expected_fits)
            why_not = phrase(rep.lang, "report.rec.no_effect", {{"now", expected_device_text(rr)}});
        else if (rep.estimate && rr.expected_host_bytes && rep.estimate->host_budget_bytes > 0 &&
                 *rr.expected_host_bytes > rep.estimate->host_budget_bytes)
            why_not = phrase(rep.lang, "report.rec.over_host", {{"host", format_bytes(*rr.expected_host_bytes)},
                                                                {"sizing", value_phrase(rep.lang, "host_sizing", rr.expected_host_sizing)},
                                                                {"budget", format_bytes(rep.estimate->host_budget_bytes)}});
        // A change that is no fix goes to not_offered with its reason, and takes no rank.
        if (why_not) {
            rep.not_offered.push_back({r.action, r.rule_id, *why_not});
            --rank;
            continue;
        }
        // The same action offered again, in the same lines or with none (a second rule's wording of a change
        // already listed: "halve the sequence length" after "cap the input length" with the same key): listed once.
        // Another form in other lines (the plan's FSDP offload beside LLaMA-Factory's ZeRO-3 offload file) is listed
        // with its own figure, which the plan's finding quotes.
        if (std::any_of(rep.recommendations.begin(), rep.recommendations.end(), [&](const report_recommendation& e) {
                return e.action == rr.action && (rr.rendered.empty() || rr.rendered == e.rendered);
            })) {
            --rank;
            continue;
        }
        // Anchored only on a measurement that disagrees (rev37): one that agrees leaves the estimate's figures standing,
        // as the consistency line says; its offset would give a second verdict beside the expected one.
        if (rep.anchor && rep.anchor->used && rr.expected_device_peak_bytes && rep.estimate) {
            // A change with a device figure only (more_devices: the plan's peak) scales by that figure (rev42: with
            // 1.0 the whole offset went below zero, "device -1.03 TiB - fits").
            const double left = rr.expected_peak_bytes && rep.estimate->peak_bytes > 0
                                    ? static_cast<double>(*rr.expected_peak_bytes) / static_cast<double>(rep.estimate->peak_bytes)
                                : rep.estimate->device_peak_bytes > 0
                                    ? static_cast<double>(*rr.expected_device_peak_bytes) /
                                          static_cast<double>(rep.estimate->device_peak_bytes)
                                    : 1.0;
            rr.anchored_device_peak_bytes = *rr.expected_device_peak_bytes + rep.anchor->offset_after(left);
            rr.anchored_fits = *rr.anchored_device_peak_bytes <= rep.estimate->budget_bytes;
        }
        rep.recommendations.push_back(std::move(rr));
    }
    // Without an estimate the request for one ("no estimate: give --model ...") is said once, under the first
    // recommendation it concerns, not repeated under every one (rev24).
    for (const char* key : {"report.note.no_estimate", "report.note.no_estimate_model_kind"}) {
        const std::string note = phrase(rep.lang, key);
        bool said = false;
        for (auto& rr : rep.recommendations)
            if (rr.expected_note == note) {
                if (said) rr.expected_note.clear();
                said = true;
            }
    }
    // An action another rule offers in a form the job can take is offered: listing it as not offered too
    // would contradict the report's own list.
    std::erase_if(rep.not_offered, [&](const report_not_offered& n) {
        return std::any_of(rep.recommendations.begin(), rep.recommendations.end(),
                           [&](const report_recommendation& rr) { return rr.action == n.action; });
    });
    rep.next_steps = capture_steps;
    for (const auto& n : rep.inference.next_steps)
        if (std::find(rep.next_steps.begin(), rep.next_steps.end(), n) == rep.next_steps.end()) rep.next_steps.push_back(n);
    rep.contradictions = rep.inference.contradictions;
    rep.uncertain = rep.inference.uncertain;
    if (rep.estimate && !rep.estimate->complete)
        for (const auto& a : rep.estimate->assumptions)
            rep.uncertain.push_back(
                phrase(rep.lang, "report.uncertain.assumption", {{"assumption", translated(rep.lang, "estimate.assumption.", a)}}));
    // Preflight's exit code is the rules' Step 1 verdict (the estimate, or anchored on a measurement).
    // The host's verdict (offloaded states against the node's stated RAM) fails it too.
    if (rep.mode == "preflight" && (facts.string("diagnosis.budget_verdict").value_or("") == "exceeds" ||
                                    facts.string("diagnosis.host_verdict").value_or("") == "exceeds"))
        rep.exit_code = 1;
}

}  // namespace oomdx
