// make_plan: the plan search at the job's world size, then at larger ones, each candidate
// verified through the facts exactly as `oomdx estimate --world-size W --set ...` would.
#include "engine/estimator/plan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/fact_store.h"
#include "engine/estimator/estimator_constants.h"
#include "parsers/config/framework_adapter.h"
#include "parsers/config/job_validate.h"

namespace oomdx {

namespace {

bool titan_fw(const estimate_input& in) {
    return in.framework == train_framework::torchtitan || in.framework == train_framework::torchtune;
}

// torchtitan states its global batch (default local x DP); torchtune, like HF, keeps it through
// gradient_accumulation_steps (it has no global batch setting)
bool global_batch_key(const estimate_input& in) { return in.framework == train_framework::torchtitan; }

std::optional<std::int64_t> positive(const fact_store& f, const char* n) {
    if (auto v = f.integer(n); v && *v > 0) return v;
    return std::nullopt;
}

plan_batch batch_from(const fact_store& f) {
    plan_batch b;
    b.local_batch = positive(f, "training.local_batch_size").value_or(0);
    b.pp_microbatch = positive(f, "parallelism.pipeline_parallel_microbatch_size");
    b.global_batch = positive(f, "training.global_batch_size");
    b.grad_accum = positive(f, "training.gradient_accumulation_steps");
    b.dp_shard = positive(f, "parallelism.data_parallel_shard_degree");
    b.expert_tp = positive(f, "parallelism.expert_tensor_parallel_degree");
    if (auto d = f.boolean("training.dynamic_batch"); d && *d) b.dynamic_tokens = positive(f, "training.max_tokens_per_device");
    return b;
}

// The base facts with a world size and overrides on top, checked as the CLI would.
void copy_with(const fact_store& base, fact_store& out, std::int64_t world, const std::vector<estimate_override>& ovs) {
    for (const fact* f : base.current())
        if (f->name != "job.assumptions") out.emit(*f);
    provenance p;
    p.producer = "user";
    p.excerpt = fmt::format("--world-size {}", world);
    out.emit("job.world_size", value(world), p);
    for (const auto& o : ovs) {
        p.excerpt = fmt::format("--set {}={}", o.key, value_key(o.val));
        out.emit(o.key, o.val, p);
    }
}

std::optional<estimate_result> verify(const fact_store& base, std::int64_t world, const std::vector<estimate_override>& ovs) {
    fact_store copy(base.vocab());
    try {
        copy_with(base, copy, world, ovs);
        finish_job_facts(copy);
    } catch (const std::exception&) {
        return std::nullopt;  // the layout breaks a framework rule (or a value is out of range)
    }
    return estimate(from_facts(copy));
}

// Later overrides win; order of first appearance kept.
std::vector<estimate_override> merged(std::vector<estimate_override> a, const std::vector<estimate_override>& b) {
    for (const auto& o : b) {
        bool done = false;
        for (auto& x : a)
            if (x.key == o.key) { x.val = o.val; done = true; }
        if (!done) a.push_back(o);
    }
    return a;
}

// World sizes above `from`: powers of two and multiples of the node size, ascending.
std::vector<std::int64_t> larger_worlds(std::int64_t from, std::int64_t node, std::int64_t max_world) {
    std::set<std::int64_t> s;
    for (std::int64_t p = 1; p <= max_world; p *= 2)
        if (p > from) s.insert(p);
    for (std::int64_t k = 1; k <= 256 && node * k <= max_world; ++k)
        if (node * k > from) s.insert(node * k);
    return {s.begin(), s.end()};
}

// "...: gradient accumulation 4 -> 2", or that it stays where the new world size and micro-batch keep it.
std::string accumulation_note(const std::string& head, std::int64_t from, std::int64_t to) {
    if (from == to) return fmt::format("{} (gradient accumulation stays {})", head, from);
    return fmt::format("{}: gradient accumulation {} -> {}", head, from, to);
}

// Keeps the job's global batch on more devices where the layout allows it. `at_w` is the layout
// at `w` devices and `local_w` its per-device batch (nullopt: the job's own). The global batch
// stays where micro-batch x data parallel divides it (the accumulation absorbs the change), and
// grows to the next multiple only where it must.
std::vector<estimate_override> world_overrides(const fact_store& job, const estimate_input& at_w,
                                               std::optional<std::int64_t> local_w, std::int64_t dp0, std::int64_t w,
                                               std::vector<std::string>& notes) {
    std::vector<estimate_override> o;
    const auto local0 = positive(job, "training.local_batch_size");
    const auto local = local_w ? local_w : local0;
    const auto ga = positive(job, "training.gradient_accumulation_steps");
    const bool explicit_gb = positive(job, "training.global_batch_size").has_value();
    auto gb = positive(job, "training.global_batch_size");
    // torchtitan's default global batch (-1) is local x DP: the job's own stays the reference.
    if (!gb && local0 && global_batch_key(at_w)) gb = *local0 * std::max<std::int64_t>(1, dp0);
    const std::int64_t dp = std::max<std::int64_t>(1, w / std::max<std::int64_t>(1, at_w.tp * at_w.pp * at_w.cp));
    if (gb && local) {
        const std::int64_t unit = *local * dp;
        if (ga && at_w.framework == train_framework::deepspeed) {
            if (*gb % unit == 0) {
                if (*gb / unit != *ga) o.push_back({"training.gradient_accumulation_steps", value(*gb / unit)});
                notes.push_back(accumulation_note(fmt::format("global batch kept at {} on {} devices", *gb, w), *ga, *gb / unit));
            } else {
                const std::int64_t steps = (*gb + unit - 1) / unit;
                o.push_back({"training.gradient_accumulation_steps", value(steps)});
                o.push_back({"training.global_batch_size", value(unit * steps)});
                notes.push_back(fmt::format("global batch {} -> {} on {} devices (micro-batch x accumulation x data parallel)",
                                            *gb, unit * steps, w));
            }
        } else if (*gb % unit != 0) {
            const std::int64_t g = (*gb + unit - 1) / unit * unit;
            o.push_back({"training.global_batch_size", value(g)});
            notes.push_back(fmt::format("global batch {} -> {} on {} devices (a multiple of micro-batch {} x data parallel {})",
                                        *gb, g, w, *local, dp));
        } else {
            if (!explicit_gb) o.push_back({"training.global_batch_size", value(*gb)});
            notes.push_back(fmt::format("global batch kept at {} on {} devices", *gb, w));
        }
    } else if (ga && local && local0 && at_w.framework != train_framework::megatron && !global_batch_key(at_w)) {
        // The global batch is local x accumulation x data parallel: the accumulation keeps it.
        const std::int64_t g0 = *local0 * *ga * std::max<std::int64_t>(1, dp0);
        const std::int64_t unit = *local * dp;
        if (g0 % unit == 0) {
            if (g0 / unit != *ga) o.push_back({"training.gradient_accumulation_steps", value(g0 / unit)});
            notes.push_back(accumulation_note(fmt::format("global batch kept on {} devices", w), *ga, g0 / unit));
        } else {
            const std::int64_t steps = std::max<std::int64_t>(1, (g0 + unit - 1) / unit);
            o.push_back({"training.gradient_accumulation_steps", value(steps)});
            notes.push_back(fmt::format("global batch {} -> {} on {} devices (gradient accumulation {})", g0, steps * unit, w,
                                        steps));
        }
    } else if (local) {
        notes.push_back(fmt::format("global batch follows local batch x data parallel on {} devices", w));
    }
    return o;
}

// world_overrides for one candidate at `w` devices: its overrides with the batch keys set anew
// for its own layout (the search ran with the batch fitted to the job's layout at `w`).
std::vector<estimate_override> rebatched(const fact_store& job, std::int64_t dp0, std::int64_t w,
                                         std::vector<estimate_override> ovs, std::vector<std::string>& notes) {
    fact_store at(job.vocab());
    copy_with(job, at, w, ovs);
    try {
        derive_job_facts(at);
    } catch (const std::exception&) {
    }
    const auto batch_key = [](const estimate_override& o) {
        return o.key == "training.global_batch_size" || o.key == "training.gradient_accumulation_steps";
    };
    ovs.erase(std::remove_if(ovs.begin(), ovs.end(), batch_key), ovs.end());
    return merged(std::move(ovs), world_overrides(job, from_facts(at), positive(at, "training.local_batch_size"), dp0, w, notes));
}

struct world_search {
    std::vector<plan_choice> choices;
    std::size_t evaluated = 0, fitting = 0;
    double seconds = 0;
    bool host_limited = false;  // a candidate that fits the devices offloads more than the host's RAM takes
};

// Offloaded states over the node's RAM (job.host_memory_bytes, when the job states it), judged by DeepSpeed's
// sizing like the device fit is judged by the interval's high end.
bool over_host(const estimate_result& e) { return e.host_budget_bytes > 0 && e.host_offload_high_bytes > e.host_budget_bytes; }

// The search at one world size; candidates verified in rank order until `top` fit.
// rev33: lines for a candidate at `world` devices follow what the job runs there (torchtune: a single-device recipe
// reads no FSDP key, a distributed one does), not the job's own world: the adapter's conditional renders read it.
std::optional<std::string> distributed_recipe(const fact_store& facts) {
    const auto type = facts.string("training.finetuning_type").value_or("full");
    if (type == "lora" || type == "qlora")
        if (auto r = facts.string("framework.distributed_recipe_lora")) return r;
    return facts.string("framework.distributed_recipe");
}

// rev36: on more devices the batch keys are set anew after the search (rebatched): the micro-batch term says the
// accumulation the plan renders, not the one the search assumed ("more accumulation steps" beside "stays 4").
// Only where the accumulation is a key of its own: a stated global batch (torchtitan, Megatron, DeepSpeed's
// train_batch_size) or a pipeline derives it, and the search's term already follows that.
void restate_micro_batch_term(const fact_store& job, const plan_candidate& c, const std::vector<estimate_override>& ovs,
                              std::vector<plan_cost_term>& terms) {
    if (c.input.pp > 1 || positive(job, "training.global_batch_size")) return;
    for (const auto& o : ovs)
        if (o.key == "training.global_batch_size") return;
    const auto local0 = positive(job, "training.local_batch_size");
    const std::int64_t ga0 = positive(job, "training.gradient_accumulation_steps").value_or(1);
    std::int64_t local = local0.value_or(0), ga = ga0;
    for (const auto& o : ovs) {
        if (o.key == "training.local_batch_size" && o.val.is_integer()) local = o.val.as_integer();
        if (o.key == "training.gradient_accumulation_steps" && o.val.is_integer()) ga = o.val.as_integer();
    }
    for (auto& t : terms)
        if (t.name == "micro_batch" && local0 && local > 0) t.why = micro_batch_term(*local0, local, ga0, ga);
}

override_syntax syntax_at(const override_syntax& s, std::int64_t world) {
    override_syntax out = s;
    const auto keys = framework_adapter::get(s.framework).context_keys();
    if (std::find(keys.begin(), keys.end(), "job.world_size") != keys.end()) out.context["job.world_size"] = std::to_string(world);
    return out;
}

world_search search_world(const fact_store& base_facts, const override_syntax& job_syntax, const plan_options& opt,
                          std::int64_t world, const std::vector<estimate_override>& world_ovs,
                          bool need_offload_or_swap = false, const std::optional<std::int64_t>& rebatch_dp0 = std::nullopt) {
    world_search ws;
    const override_syntax syntax = syntax_at(job_syntax, world);
    fact_store at(base_facts.vocab());
    copy_with(base_facts, at, world, world_ovs);
    try {
        derive_job_facts(at);
    } catch (const std::exception&) {
    }
    const estimate_input base = from_facts(at);
    const plan_batch batch = batch_from(at);
    const plan_result r = plan_search(base, opt, batch, std::max<std::size_t>(64, opt.top * 8));
    ws.evaluated = r.evaluated;
    ws.fitting = r.fitting;
    ws.seconds = r.seconds;
    std::set<std::string> seen;
    for (const auto& c : r.candidates) {
        if (ws.choices.size() >= opt.top) break;
        if (need_offload_or_swap && !(c.input.optimizer_offload || c.input.params_offload || c.input.swap_optimizer)) continue;
        std::vector<estimate_override> ovs = merged(world_ovs, c.overrides);
        std::vector<std::string> batch_notes;
        if (rebatch_dp0) ovs = rebatched(base_facts, *rebatch_dp0, world, std::move(ovs), batch_notes);
        else if (c.base_global_batch > 0 && c.global_batch != c.base_global_batch)
            batch_notes.push_back(fmt::format("global batch {} -> {} on {} devices (a multiple of micro-batch {} x data parallel {})",
                                              c.base_global_batch, c.global_batch, world, c.global_unit_batch, c.global_unit_dp));
        ovs = canonical_closure(syntax, ovs);
        std::string key;
        for (const auto& o : ovs) key += o.key + "=" + value_key(o.val) + ";";
        if (!seen.insert(key).second) continue;
        // Fits as preflight judges it: the high end of the estimate's interval within budget.
        const auto e = verify(base_facts, world, ovs);
        if (!e || !e->fits || std::max(e->high_bytes, e->device_peak_bytes) > e->budget_bytes) continue;
        if (over_host(*e)) {
            ws.host_limited = true;
            continue;
        }
        plan_choice ch;
        ch.candidate = c;
        ch.candidate.overrides = ovs;
        ch.candidate.device_peak_bytes = e->device_peak_bytes;
        ch.candidate.device_peak_high_bytes = std::max(e->high_bytes, e->device_peak_bytes);
        ch.candidate.margin_bytes = e->margin_bytes;
        ch.rendered = render_overrides(syntax, ovs);
        ch.batch_notes = std::move(batch_notes);
        if (rebatch_dp0) restate_micro_batch_term(base_facts, c, ovs, ch.candidate.terms);
        ch.host_bytes = e->host_offload_high_bytes;
        ch.host_sizing = e->host_offload_sizing;
        ws.choices.push_back(std::move(ch));
    }
    return ws;
}

// The search's cheapest fit, as an alternative at the job's size.
plan_alternative fitting_alternative(const plan_choice& c) {
    plan_alternative alt;
    alt.searched = true;
    alt.fits = true;
    alt.expected_device_peak_bytes = c.candidate.device_peak_bytes;
    alt.overrides = c.candidate.overrides;
    alt.rendered = c.rendered;
    alt.cost = c.candidate.cost;
    alt.terms = c.candidate.terms;
    alt.host_bytes = c.host_bytes;
    alt.host_sizing = c.host_sizing;
    return alt;
}

// No fit: how close `ovs` alone comes (its verified peak, overrides and lines; nothing where it cannot be estimated).
plan_alternative closest_alternative(const fact_store& facts, const override_syntax& job_syntax, std::int64_t world,
                                     const std::vector<estimate_override>& ovs) {
    const override_syntax syntax = syntax_at(job_syntax, world);
    plan_alternative alt;
    alt.searched = true;
    if (const auto e = verify(facts, world, ovs)) {
        alt.expected_device_peak_bytes = e->device_peak_bytes;
        alt.overrides = ovs;
        alt.rendered = render_overrides(syntax, ovs);
        alt.host_bytes = e->host_offload_high_bytes;
        alt.host_sizing = e->host_offload_sizing;
    }
    return alt;
}

// The most memory-saving offload / swap configuration at the job's size, when nothing fits.
plan_alternative offload_alternative(const fact_store& facts, const override_syntax& syntax, const plan_options& opt,
                                     std::int64_t world) {
    plan_alternative alt;
    alt.searched = true;
    plan_options o = opt;
    // an offload between phases (verl) does not lower the update's peak: nothing to offer for it
    const bool phase_offload = facts.boolean("framework.offload_between_phases").value_or(false);
    o.vary_offload = !phase_offload;
    o.top = 1;
    const world_search ws = search_world(facts, syntax, o, world, {}, true);
    if (!ws.choices.empty()) return fitting_alternative(ws.choices.front());
    // Nothing fits: how close does the most the framework can offload come?
    const estimate_input base = from_facts(facts);
    std::vector<estimate_override> ovs;
    const override_syntax here = syntax_at(syntax, world);
    auto can = [&](const char* k, const value& v) { return can_express(here, k, v).ok; };
    // rev31: not a line for checkpointing the job already has (torchtune's `enable_activation_checkpointing: true` again)
    if (base.ac != ac_kind::full && can("activation_checkpoint.mode", value("full")))
        ovs.push_back({"activation_checkpoint.mode", value("full")});
    if (!phase_offload && can("optimizer.offload", value("cpu"))) ovs.push_back({"optimizer.offload", value("cpu")});
    if (!phase_offload && can("parallelism.offload_params", value("cpu")))
        ovs.push_back({"parallelism.offload_params", value("cpu")});
    if (!base.swap_optimizer && can("optimizer.swap_optimizer", value(true))) ovs.push_back({"optimizer.swap_optimizer", value(true)});
    if (base.framework == train_framework::megatron && can("optimizer.distributed", value(true)))
        ovs.push_back({"optimizer.distributed", value(true)});
    else if (base.framework == train_framework::deepspeed && can("parallelism.zero_stage", value(std::int64_t(3))))
        ovs.push_back({"parallelism.zero_stage", value(std::int64_t(3))});
    alt.host_limited = ws.host_limited;
    alt.between_phases = phase_offload;
    if (ovs.empty()) return alt;
    ovs = canonical_closure(here, ovs);
    alt = closest_alternative(facts, syntax, world, ovs);
    if (!alt.overrides.empty()) {
        fact_store copy(facts.vocab());
        copy_with(facts, copy, world, ovs);
        const estimate_input after = from_facts(copy);
        alt.terms = plan_cost(base, after);
        for (const auto& t : alt.terms) alt.cost += t.fraction;
    }
    alt.host_limited = ws.host_limited;
    return alt;
}

// The search at the job's size with `change` on top and no host offload: its cheapest fit, else the peak of
// `change` alone (how close it comes).
plan_alternative alternative_with(const fact_store& facts, const override_syntax& syntax, const plan_options& opt,
                                  std::int64_t world, const std::vector<estimate_override>& change) {
    plan_options o = opt;
    o.vary_offload = false;
    o.top = 1;
    const world_search ws = search_world(facts, syntax, o, world, change);
    if (ws.choices.empty()) return closest_alternative(facts, syntax, world, canonical_closure(syntax, change));
    return fitting_alternative(ws.choices.front());
}

const estimate_override four_bit_base{"training.quantization_bit", value(std::int64_t(4))};

// The frozen base in 4 bits (QLoRA) at the job's size, for adapters trained on a wider base, when the
// framework can say it.
plan_alternative quantized_alternative(const fact_store& facts, const override_syntax& syntax, const plan_options& opt,
                                       std::int64_t world) {
    const estimate_input base = from_facts(facts);
    if (base.ft.kind != finetune_kind::lora || base.ft.base_bits <= 4 || base.ft.group_quant) return {};
    if (!can_express(syntax, four_bit_base.key, four_bit_base.val).ok) return {};
    return alternative_with(facts, syntax, opt, world, {four_bit_base});
}

// LoRA adapters instead of every weight, for a job that states full fine-tuning (pretraining states no
// fine-tuning type), when the framework can say it; with a 4-bit base where LoRA alone does not fit.
plan_alternative adapters_alternative(const fact_store& facts, const override_syntax& syntax, const plan_options& opt,
                                      std::int64_t world, bool& quantized) {
    quantized = false;
    const auto type = facts.string("training.finetuning_type");
    const estimate_override lora{"training.finetuning_type", value("lora")};
    if (!type || *type != "full" || !can_express(syntax, lora.key, lora.val).ok) return {};
    plan_alternative alt = alternative_with(facts, syntax, opt, world, {lora});
    if (alt.fits || !can_express(syntax, four_bit_base.key, four_bit_base.val).ok) return alt;
    plan_alternative q = alternative_with(facts, syntax, opt, world, {lora, four_bit_base});
    if (!q.fits) return alt;
    quantized = true;
    return q;
}

void take(plan_answer& a, const plan_choice& best) {
    a.fits = true;
    a.overrides = best.candidate.overrides;
    a.rendered = best.rendered;
    a.expected_device_peak_bytes = best.candidate.device_peak_bytes;
    a.expected_device_peak_high_bytes = best.candidate.device_peak_high_bytes;
    a.tier = best.candidate.tier;
    a.cost = best.candidate.cost;
    a.terms = best.candidate.terms;
}

// A rollout engine on the trainer's GPUs (training.rollout_colocated: TRL's vllm_mode colocate; else
// framework.colocated_rollout: verl's hybrid engine) wakes into its share of each device beside what the trainer keeps
// between updates (parameters, optimizer states, master weights): the plan fits only when that phase does too, so the
// share is lowered to the largest twentieth that keeps the phase under the budget, as step1_rollout_share_beside_trainer
// (rules/step2_engine_pool.yaml) advises for the job as configured.
void fit_rollout_phase(const fact_store& facts, const override_syntax& syntax, plan_answer& a) {
    auto colocated = facts.boolean("training.rollout_colocated");  // the job's own setting (TRL vllm_mode)
    if (!colocated) colocated = facts.boolean("framework.colocated_rollout");
    const auto share = facts.number("training.rollout_memory_fraction");
    if (!colocated || !*colocated || !share) return;
    const auto est = verify(facts, a.world_size, a.overrides);
    if (!est || est->capacity_bytes <= 0) return;
    const double capacity = static_cast<double>(est->capacity_bytes), budget = static_cast<double>(est->budget_bytes);
    // An engine that sleeps through the update meets the trainer's states; one that keeps its pool, the whole update.
    const auto sleeps = facts.boolean("training.rollout_sleeps");
    // states that the framework offloads between phases (verl's param_offload / optimizer_offload) are on the host
    // while the engine generates, though the update holds them
    const bool phase_offload = facts.boolean("framework.offload_between_phases").value_or(false);
    const auto is_cpu = [&](const char* key) {
        const auto v = facts.string(key);
        return phase_offload && v && (*v == "cpu" || *v == "nvme");
    };
    const double params_resident = is_cpu("parallelism.offload_params") ? 0.0 : static_cast<double>(est->component("params"));
    const double states_resident = is_cpu("optimizer.offload")
                                       ? 0.0
                                       : static_cast<double>(est->component("optimizer") + est->component("master_weights"));
    const double resident = sleeps && !*sleeps ? static_cast<double>(est->device_peak_bytes) : params_resident + states_resident;
    if (*share * capacity + resident <= budget) return;
    const double fit = std::floor((budget - resident) / capacity * 20) / 20;
    if (fit < 0.05) {
        a.notes.push_back("the engine's pool does not fit beside the trainer at any share: offload the trainer's states or let the engine sleep");
        return;
    }
    const estimate_override o{"training.rollout_memory_fraction", value(fit)};
    a.overrides.push_back(o);
    for (const auto& l : render_overrides(syntax, {o})) a.rendered.push_back(l);
    a.notes.push_back(fmt::format("the rollout engine's share lowered from {} to {}: {:.2f} GiB beside the trainer's {}, "
                                  "within the budget", value_key(value(*share)), value_key(value(fit)),
                                  (fit * capacity + resident) / (1024.0 * 1024 * 1024), sleeps && !*sleeps ? "update" : "states"));
}

}  // namespace

plan_answer make_plan(const fact_store& all_facts, const override_syntax& syntax, const plan_request& req) {
    const auto t0 = std::chrono::steady_clock::now();
    fact_store facts(all_facts.vocab());
    copy_job_facts(all_facts, facts);  // a diagnosis store also holds thousands of log and snapshot facts
    plan_answer a;
    a.framework = syntax.framework;
    a.syntax = syntax.syntax;
    const estimate_input base = from_facts(facts);
    if (base.capacity_bytes <= 0) throw usage_error("a plan needs the device capacity (--device)");
    const estimate_result est = estimate(base);
    a.base_fits = est.fits && std::max(est.high_bytes, est.device_peak_bytes) <= est.budget_bytes;
    a.base_world_size = a.world_size = base.world;
    a.base_device_peak_bytes = est.device_peak_bytes;
    a.base_high_bytes = std::max(est.high_bytes, est.device_peak_bytes);
    a.budget_bytes = est.budget_bytes;
    if (est.host_budget_bytes > 0) {
        a.host_memory_bytes = facts.integer("job.host_memory_bytes").value_or(0);
        a.host_budget_bytes = est.host_budget_bytes;
    }
    plan_options opt = req.search;
    // verl's offload (framework.offload_between_phases) loads the states back for the update: no lever for its peak
    if (facts.boolean("framework.offload_between_phases").value_or(false)) opt.vary_offload = false;
    if (!opt.can_express) opt.can_express = [&syntax](const std::string& k, const value& v) { return can_express(syntax, k, v).ok; };
    const std::int64_t node = req.node_size > 0 ? req.node_size : positive(facts, "job.nproc_per_node").value_or(8);
    opt.max_tp = std::min(opt.max_tp, node);

    auto finish = [&]() {
        a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return a;
    };
    world_search here = search_world(facts, syntax, opt, base.world, {});
    a.worlds_searched.push_back(base.world);
    a.evaluated += here.evaluated;
    a.fitting += here.fitting;
    a.search_seconds += here.seconds;
    if (est.fits && std::max(est.high_bytes, est.device_peak_bytes) <= est.budget_bytes) {
        a.fits = true;
        a.expected_device_peak_bytes = est.device_peak_bytes;
        a.expected_device_peak_high_bytes = std::max(est.high_bytes, est.device_peak_bytes);
        a.candidates = std::move(here.choices);
        a.notes.push_back("the job fits as configured; the candidates are alternatives");
        return finish();
    }
    if (!here.choices.empty()) {
        take(a, here.choices.front());
        a.notes = here.choices.front().batch_notes;  // a layout that changes the sequences per step says so
        a.candidates = std::move(here.choices);
        fit_rollout_phase(facts, syntax, a);
        return finish();
    }
    a.at_current_size = offload_alternative(facts, syntax, opt, base.world);
    a.quantized_base = quantized_alternative(facts, syntax, opt, base.world);
    a.adapters = adapters_alternative(facts, syntax, opt, base.world, a.adapters_quantized);
    for (std::int64_t w : larger_worlds(base.world, node, req.max_world)) {
        a.worlds_searched.push_back(w);
        fact_store at(facts.vocab());
        copy_with(facts, at, w, {});
        const std::int64_t dp0 = base.dp_shard * base.dp_replicate;
        std::vector<std::string> search_notes;  // for the job's layout at w: each candidate has its own
        const std::vector<estimate_override> wov = world_overrides(facts, from_facts(at), std::nullopt, dp0, w, search_notes);
        world_search ws = search_world(facts, syntax, opt, w, wov, false, dp0);
        a.evaluated += ws.evaluated;
        a.fitting += ws.fitting;
        a.search_seconds += ws.seconds;
        if (ws.choices.empty()) continue;
        a.world_size = w;
        take(a, ws.choices.front());
        a.rendered.insert(a.rendered.begin(), fmt::format("# run on {} devices (the job has {})", w, base.world));
        // rev33: a job started on one device runs another recipe on several (torchtune's distributed recipes)
        if (base.world == 1)
            if (const auto recipe = distributed_recipe(facts))
                a.rendered.insert(a.rendered.begin() + 1, fmt::format("# run {} in place of the single-device recipe", *recipe));
        a.notes = ws.choices.front().batch_notes;
        a.candidates = std::move(ws.choices);
        // Where offload fits at the job's size (the alternative shown below the plan), "nothing fits" would contradict it.
        a.notes.insert(a.notes.begin(),
                       fmt::format("nothing fits at world size {}{}; the smallest world size searched that fits is {}", base.world,
                                   a.at_current_size.fits && a.quantized_base.fits
                                       ? " without moving states to the host or quantizing the frozen base"
                                   : a.at_current_size.fits && a.adapters.fits
                                       ? " without moving states to the host or training adapters instead of every weight"
                                   : a.at_current_size.fits ? " without moving states to the host"
                                   : a.quantized_base.fits  ? " without quantizing the frozen base"
                                   : a.adapters.fits        ? " without training adapters instead of every weight"
                                                            : "",
                                   w));
        fit_rollout_phase(facts, syntax, a);
        return finish();
    }
    a.fits = false;
    a.notes.push_back(fmt::format("nothing in the searched space fits on up to {} devices", req.max_world));
    return finish();
}

std::vector<estimate_override> keep_global_batch(const fact_store& facts, std::int64_t micro_batch) {
    estimate_input base;
    try {
        base = from_facts(facts);
    } catch (const std::exception&) {
        return {};
    }
    const plan_batch batch = batch_from(facts);
    if (batch.local_batch <= 0 || micro_batch <= 0 || micro_batch == batch.local_batch) return {};
    if (titan_fw(base) && base.pp > 1) return {};  // the pipeline micro-batch is its own key
    estimate_input cand = base;
    cand.micro_batch = micro_batch;
    std::vector<estimate_override> out;
    for (auto& o : plan_overrides(base, cand, batch))
        if (o.key == "training.global_batch_size" || o.key == "training.gradient_accumulation_steps") out.push_back(o);
    return out;
}

}  // namespace oomdx
