#include "engine/estimator/plan_search.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "engine/core/dynamic_batch.h"
#include "engine/estimator/estimate_model.h"
#include "engine/estimator/estimator_constants.h"

namespace oomdx {

const char* plan_tier_name(int tier) {
    switch (tier) {
        case tier_ac: return "activation checkpointing";
        case tier_optimizer: return "optimizer sharding / swap / offload";
        case tier_parallelism: return "parallelism";
        case tier_batch: return "micro-batch";
        case tier_global_batch: return "global batch";
        default: return "no change";
    }
}

namespace {

std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t cap) {
    std::vector<std::int64_t> d;
    for (std::int64_t i = 1; i <= n && i <= cap; ++i)
        if (n % i == 0) d.push_back(i);
    return d;
}

double log2d(double x) { return x > 1 ? std::log2(x) : 0.0; }

int ac_rank(ac_kind a) {
    switch (a) {
        case ac_kind::none: return 0;
        case ac_kind::selective_layer: return 1;
        case ac_kind::selective_op: return 2;
        case ac_kind::full: return 3;
    }
    return 0;
}

double recompute_fraction(const estimate_input& in) {
    switch (in.ac) {
        case ac_kind::none: return 0.0;
        case ac_kind::selective_op: return 0.10;
        case ac_kind::selective_layer: return 0.33 / double(std::max(1, in.ac_every));
        case ac_kind::full: return 0.33;
    }
    return 0.0;
}

double shard_fraction(const estimate_input& in) {
    if (in.zero_stage >= 3) return 0.05;
    if (in.zero_stage == 2) return 0.02;
    return 0.0;
}

double bubble(const estimate_input& in) {
    if (in.pp <= 1) return 0.0;
    const double v = in.schedule == pp_schedule_kind::interleaved ? double(std::max<std::int64_t>(1, in.vpp)) : 1.0;
    const double m = double(std::max<std::int64_t>(1, in.num_microbatches));
    return double(in.pp - 1) / (m * v);
}

double offload_fraction(const estimate_input& in) {
    double f = 0;
    if (in.swap_optimizer) f += 0.08;
    if (in.optimizer_offload) f += 0.25;
    if (in.params_offload) f += 0.30;
    if (in.activation_offload) f += 0.10;
    return f;
}

double tp_fraction(const estimate_input& x) {
    return x.tp <= 8 ? 0.04 * log2d(double(x.tp)) : 0.12 + 0.30 * log2d(double(x.tp) / 8.0);
}

// The overheads of a layout over its bare compute, as fractions of that compute.
double overhead(const estimate_input& x) {
    return recompute_fraction(x) + tp_fraction(x) + bubble(x) + 0.05 * log2d(double(x.cp)) + 0.05 * log2d(double(x.ep)) +
           shard_fraction(x) + offload_fraction(x);
}

// The cost terms as numbers, in plan_cost's order (no strings: the search's hot path): each the
// change of one overhead, as a fraction of the base's step time (its compute and its overheads),
// so that they add up to the relative change of the step time (never below -100%: a job whose
// pipeline bubble dominates gets faster by at most its whole step).
enum term_id { t_recompute, t_tp, t_bubble, t_cp, t_ep, t_shard, t_offload, t_micro, t_loss, t_count };
std::array<double, t_count> cost_terms(const estimate_input& b, const estimate_input& c) {
    std::array<double, t_count> t{};
    t[t_recompute] = recompute_fraction(c) - recompute_fraction(b);
    t[t_tp] = tp_fraction(c) - tp_fraction(b);
    t[t_bubble] = bubble(c) - bubble(b);
    t[t_cp] = 0.05 * (log2d(double(c.cp)) - log2d(double(b.cp)));
    t[t_ep] = 0.05 * (log2d(double(c.ep)) - log2d(double(b.ep)));
    t[t_shard] = shard_fraction(c) - shard_fraction(b);
    t[t_offload] = offload_fraction(c) - offload_fraction(b);
    t[t_micro] = 0.05 * (log2d(double(b.micro_batch) / double(c.micro_batch)));
    // Fused linear cross-entropy (Liger) runs the projection in chunks: about the same step time,
    // a small cost so that a plan without it wins a tie.
    t[t_loss] = c.chunked_loss == b.chunked_loss ? 0.0 : c.chunked_loss ? 0.01 : -0.01;
    const double per_base_step = 1.0 / (1.0 + overhead(b));
    for (double& x : t) x *= per_base_step;
    return t;
}

double cost_value(const estimate_input& b, const estimate_input& c) {
    double s = 0;
    for (double x : cost_terms(b, c)) s += x;
    return s;
}

bool titan_like(const estimate_input& in) {
    return in.framework == train_framework::torchtitan || in.framework == train_framework::torchtune;
}

// The layout rules job_validate.cpp enforces, so that the kept candidates re-estimate.
bool layout_ok(const estimate_input& in, std::int64_t local) {
    const estimate_model& m = in.model;
    if (m.heads % in.tp != 0 || (m.kv_heads > 0 && m.kv_heads % in.tp != 0)) return false;
    if (in.pp > m.layers) return false;
    if (in.framework == train_framework::megatron && in.pp > 1 &&
        m.layers % (in.pp * (in.schedule == pp_schedule_kind::interleaved ? std::max<std::int64_t>(1, in.vpp) : 1)) != 0)
        return false;
    if (in.cp > 1 && in.seq_len % (2 * in.cp) != 0) return false;
    if (in.sequence_parallel && in.tp > 1 && in.seq_len % in.tp != 0) return false;
    if (titan_like(in) && in.pp > 1 && local % in.micro_batch != 0) return false;
    if (in.ep > 1) {
        if (m.experts <= 0 || m.experts % in.ep != 0) return false;
        const std::int64_t dp = in.dp_shard * in.dp_replicate;
        if (titan_like(in)) {
            const std::int64_t group = in.etp == in.tp ? in.dp_shard * in.cp : in.dp_shard * in.cp * in.tp;
            const std::int64_t unit = in.etp == in.tp ? in.cp : in.cp * in.tp;
            if (group % in.ep != 0 || in.ep % unit != 0) return false;
        } else if (in.framework == train_framework::megatron) {
            if ((in.world / in.pp) % (in.ep * std::max<std::int64_t>(1, in.etp)) != 0) return false;
        } else if (dp % in.ep != 0) {
            return false;
        }
    }
    return true;
}

struct ranked {
    bool operator()(const plan_candidate& a, const plan_candidate& b) const {
        if (a.tier != b.tier) return a.tier < b.tier;
        if (a.cost != b.cost) return a.cost < b.cost;
        return a.margin_bytes > b.margin_bytes;
    }
};

bool allowed(const plan_options& opt, const char* key, const value& v) { return !opt.can_express || opt.can_express(key, v); }

std::vector<std::int64_t> halvings(std::int64_t from) {
    std::vector<std::int64_t> v;
    for (std::int64_t m = from; m >= 1; m /= 2) {
        v.push_back(m);
        if (m % 2 != 0) break;
    }
    return v;
}

// rev36: the halvings, and every micro-batch below `from` that divides the sequences of a step (`from` x `accum`), so
// the largest that fits keeps the global batch (6 x 8: 4 x 12), not only the halvings (6 -> 3)
std::vector<std::int64_t> micro_batches(std::int64_t from, std::int64_t accum) {
    std::vector<std::int64_t> v = halvings(from);
    const std::int64_t seqs = from * std::max<std::int64_t>(1, accum);
    for (std::int64_t m = from - 1; m >= 2; --m)
        if (seqs % m == 0 && std::find(v.begin(), v.end(), m) == v.end()) v.push_back(m);
    if (std::find(v.begin(), v.end(), 1) == v.end()) v.push_back(1);
    return v;
}

std::int64_t round_up(std::int64_t n, std::int64_t unit) { return unit <= 0 ? n : (n + unit - 1) / unit * unit; }

// The sequences one optimizer step trains at micro-batch `mb`, `p` stages and `dp` data-parallel ranks, as
// plan_overrides sets the batch keys (the job's own at its own layout): a global batch the keys state is kept where the
// per-rank batch x DP divides it and rounded up where it cannot; torchtitan without one trains its local batch x DP;
// the others keep their sequences through the accumulation, except where more data-parallel ranks let them grow.
// 0: not known (a token budget per device).
std::int64_t global_batch_of(const estimate_input& base, const plan_batch& batch, std::int64_t local, std::int64_t dp_b,
                             std::int64_t mb, std::int64_t p, std::int64_t dp, std::int64_t& unit_batch) {
    if (batch.dynamic_tokens || local <= 0) return 0;
    const bool torchtitan = base.framework == train_framework::torchtitan;
    const bool pipe = titan_like(base) && p > 1;  // torchtitan's pipeline splits the local batch into micro-batches
    unit_batch = pipe ? local : std::max<std::int64_t>(1, mb);
    const std::int64_t unit = unit_batch * std::max<std::int64_t>(1, dp);
    const std::int64_t titan_gb = batch.global_batch.value_or(local * dp_b);
    const bool keys_change = pipe ? dp < dp_b : (mb != local || dp < dp_b);
    if (torchtitan) return batch.global_batch || keys_change ? round_up(titan_gb, unit) : unit;
    if (batch.global_batch) return round_up(*batch.global_batch, unit);
    if (base.framework == train_framework::megatron) return unit;
    const std::int64_t ga = batch.grad_accum.value_or(1);
    if (keys_change && !pipe) return round_up(ga * local * (dp < dp_b ? dp_b : dp), unit);
    return local * ga * std::max<std::int64_t>(1, dp);
}

}  // namespace

int plan_tier_of(const estimate_input& b, const estimate_input& c) {
    int t = tier_none;
    if (c.ac != b.ac || c.ac_every != b.ac_every || c.chunked_loss != b.chunked_loss) t = std::max<int>(t, tier_ac);
    if (c.zero_stage != b.zero_stage || c.dp_replicate != b.dp_replicate || c.swap_optimizer != b.swap_optimizer ||
        c.optimizer_offload != b.optimizer_offload || c.params_offload != b.params_offload)
        t = std::max<int>(t, tier_optimizer);
    if (c.tp != b.tp || c.pp != b.pp || c.cp != b.cp || c.ep != b.ep) t = std::max<int>(t, tier_parallelism);
    if (c.micro_batch < b.micro_batch) t = std::max<int>(t, tier_batch);
    return t;
}

std::string micro_batch_term(std::int64_t from, std::int64_t to, std::int64_t accum_from, std::int64_t accum_to) {
    if (accum_to > accum_from) return fmt::format("micro-batch {} -> {}: smaller GEMMs, more accumulation steps", from, to);
    if (accum_to == accum_from)
        return fmt::format("micro-batch {} -> {}: smaller GEMMs (gradient accumulation stays {})", from, to, accum_to);
    return fmt::format("micro-batch {} -> {}: smaller GEMMs, gradient accumulation {} -> {}", from, to, accum_from, accum_to);
}

std::vector<plan_cost_term> plan_cost(const estimate_input& b, const estimate_input& c) {
    const auto f = cost_terms(b, c);
    std::vector<plan_cost_term> t;
    auto add = [&](const char* name, double x, std::string why) {
        if (std::fabs(x) > 1e-9) t.push_back({name, x, std::move(why)});
    };
    add("recompute", f[t_recompute], fmt::format("activation checkpointing {} -> {}", ac_name(b.ac), ac_name(c.ac)));
    add("tensor_parallel", f[t_tp], fmt::format("TP {} -> {}: per-layer collectives{}", b.tp, c.tp, c.tp > 8 ? " across nodes" : ""));
    // rev31: at the same PP the bubble moves with the micro-batch count (fewer data-parallel ranks share the batch)
    add("pipeline_bubble", f[t_bubble],
        b.pp == c.pp ? fmt::format("PP {}: bubble (p-1)/(m*v) with m {} -> {} micro-batches", c.pp, b.num_microbatches,
                                   c.num_microbatches)
                     : fmt::format("PP {} -> {}: bubble (p-1)/(m*v) with m={} micro-batches", b.pp, c.pp, c.num_microbatches));
    add("context_parallel", f[t_cp], fmt::format("CP {} -> {}: ring attention exchanges", b.cp, c.cp));
    add("expert_parallel", f[t_ep], fmt::format("EP {} -> {}: token all-to-all", b.ep, c.ep));
    add("sharding", f[t_shard], fmt::format("ZeRO/FSDP stage {} -> {}: parameter all-gathers", b.zero_stage, c.zero_stage));
    add("offload", f[t_offload], "host transfers of optimizer state / parameters");
    // (under a pipeline the micro-batches of one step grow in number: the search keeps no accumulation there)
    add("micro_batch", f[t_micro],
        micro_batch_term(b.micro_batch, c.micro_batch, b.grad_accum, c.pp > 1 ? b.grad_accum + 1 : c.grad_accum));
    add("chunked_loss", f[t_loss], "chunked (fused linear) cross-entropy: the logits are never materialized whole");
    return t;
}

std::vector<estimate_override> plan_overrides(const estimate_input& b, const estimate_input& c, const plan_batch& batch) {
    std::vector<estimate_override> o;
    const bool titan = titan_like(c);
    auto num = [&](const char* key, std::int64_t bv, std::int64_t cv) {
        if (bv != cv) o.push_back({key, value(cv)});
    };
    num("parallelism.tensor_parallel_degree", b.tp, c.tp);
    num("parallelism.pipeline_parallel_degree", b.pp, c.pp);
    num("parallelism.context_parallel_degree", b.cp, c.cp);
    num("parallelism.expert_parallel_degree", b.ep, c.ep);
    if (c.sequence_parallel && !b.sequence_parallel && c.tp > 1) o.push_back({"parallelism.sequence_parallel", value(true)});
    if (titan) {
        // Sharding is the mesh: dp_replicate ranks go to dp_shard (FSDP over dp_shard x cp).
        if (b.dp_replicate != c.dp_replicate) {
            o.push_back({"parallelism.data_parallel_shard_degree", value(c.dp_shard)});
            o.push_back({"parallelism.data_parallel_replicate_degree", value(c.dp_replicate)});
        } else if (batch.dp_shard && *batch.dp_shard > 0 && *batch.dp_shard != c.dp_shard) {
            o.push_back({"parallelism.data_parallel_shard_degree", value(c.dp_shard)});
        }
        if (c.schedule != b.schedule && c.pp > 1)
            o.push_back({"parallelism.pipeline_parallel_schedule", value(c.schedule == pp_schedule_kind::gpipe ? "GPipe" : "1F1B")});
    } else if (b.zero_stage != c.zero_stage) {
        if (c.framework == train_framework::megatron) o.push_back({"optimizer.distributed", value(c.zero_stage >= 1)});
        else o.push_back({"parallelism.zero_stage", value(std::int64_t(c.zero_stage))});
    }
    if (b.ac != c.ac || (c.ac == ac_kind::selective_layer && b.ac_every != c.ac_every)) {
        o.push_back({"activation_checkpoint.mode",
                     value(c.ac == ac_kind::none ? "none" : c.ac == ac_kind::full ? "full" : "selective")});
        if (titan && c.ac == ac_kind::selective_op) o.push_back({"activation_checkpoint.selective_ac_option", value("op")});
        if (titan && c.ac == ac_kind::selective_layer)
            o.push_back({"activation_checkpoint.selective_ac_option", value(std::to_string(c.ac_every))});
    }
    // Micro-batch: torchtitan's pipeline micro-batch, or the per-device batch with the
    // accumulation (or global batch) that keeps the sequences per step.
    const std::int64_t local = batch.local_batch > 0 ? batch.local_batch : b.micro_batch;
    const std::int64_t dp_b = std::max<std::int64_t>(1, b.dp_shard * b.dp_replicate);
    const std::int64_t dp_c = std::max<std::int64_t>(1, c.dp_shard * c.dp_replicate);
    const std::int64_t titan_gb = batch.global_batch.value_or(local * dp_b);
    if (batch.dynamic_tokens) {
        // dynamic batching: the micro-batch is the token budget per device (after the sequence-parallel split)
        const std::int64_t tokens = dynamic_batch_tokens(c.micro_batch, c.cp, c.seq_len);
        if ((c.micro_batch != b.micro_batch || c.cp != b.cp) && tokens != *batch.dynamic_tokens)
            o.push_back({"training.max_tokens_per_device", value(tokens)});
    } else if (titan && c.pp > 1) {
        if (c.micro_batch != batch.pp_microbatch.value_or(1))
            o.push_back({"parallelism.pipeline_parallel_microbatch_size", value(c.micro_batch)});
    } else if (c.micro_batch != local || dp_c < dp_b) {
        // rev31: TP/CP/PP taking ranks from data parallel at the same world size shrinks the global batch as much
        // as a smaller micro-batch does: the same keys keep it (torchtitan's default global batch is local x DP).
        // More data-parallel ranks (PP given back) let the batch grow as before: local x DP cannot divide the old one.
        if (c.micro_batch != local) o.push_back({"training.local_batch_size", value(c.micro_batch)});
        if (c.framework == train_framework::torchtitan) {
            // torchtitan states the global batch; torchtune keeps it through the accumulation
            if (c.micro_batch != local || !batch.global_batch) o.push_back({"training.global_batch_size", value(titan_gb)});
        } else if (c.framework != train_framework::megatron &&
                   !(c.framework == train_framework::deepspeed && batch.global_batch && !batch.grad_accum)) {
            // (DeepSpeed derives the accumulation from train_batch_size when only that is given.)
            const std::int64_t from = dp_c < dp_b ? dp_b : dp_c;  // fewer data-parallel ranks: more accumulation
            // sequences per step over (micro-batch x ranks), upward: 6 x 8 at micro-batch 4 is 12 steps
            const std::int64_t seqs = batch.grad_accum.value_or(1) * local * from;
            const std::int64_t unit = std::max<std::int64_t>(1, c.micro_batch) * dp_c;
            o.push_back({"training.gradient_accumulation_steps", value(std::max<std::int64_t>(1, (seqs + unit - 1) / unit))});
        }
    }
    // torchtitan's pipeline micro-batch path: a smaller DP still needs the global batch stated
    if (titan && c.pp > 1 && dp_c < dp_b && !batch.global_batch && c.framework == train_framework::torchtitan)
        o.push_back({"training.global_batch_size", value(titan_gb)});
    if (b.swap_optimizer != c.swap_optimizer) {
        o.push_back({"optimizer.swap_optimizer", value(c.swap_optimizer)});
        if (c.swap_optimizer) o.push_back({"optimizer.swap_optimizer_times", value(std::int64_t(c.swap_times))});
    }
    if (b.optimizer_offload != c.optimizer_offload)
        o.push_back({"optimizer.offload", value(c.optimizer_offload ? "cpu" : "none")});
    if (b.params_offload != c.params_offload)
        o.push_back({"parallelism.offload_params", value(c.params_offload ? "cpu" : "none")});
    if (b.chunked_loss != c.chunked_loss) o.push_back({"training.chunked_loss", value(c.chunked_loss)});
    return o;
}

plan_result plan_search(const estimate_input& base, const plan_options& opt, const plan_batch& batch_in, std::size_t pool) {
    const auto t0 = std::chrono::steady_clock::now();
    plan_result res;
    const estimator_constants& k = estimator_k();
    const double budget = double(base.capacity_bytes) * k.budget_fraction;
    const std::int64_t world = std::max<std::int64_t>(1, base.world);
    const bool titan = titan_like(base);
    const bool moe = base.model.experts > 0;
    const std::size_t keep_n = std::max<std::size_t>(pool ? pool : opt.top, 1);
    plan_batch batch = batch_in;
    if (batch.local_batch <= 0)
        batch.local_batch = titan && base.pp > 1 ? base.micro_batch * base.num_microbatches : base.micro_batch;
    const std::int64_t local = batch.local_batch;
    const std::int64_t dp_base = std::max<std::int64_t>(1, base.dp_shard * base.dp_replicate);
    std::int64_t unit_batch = 0;
    const std::int64_t base_gb = global_batch_of(base, batch, local, dp_base, titan && base.pp > 1 ? base.micro_batch : local,
                                                 base.pp, dp_base, unit_batch);

    // Settings the framework can express, in the method's order.
    // A plan adds memory savings; it never gives back one the job already has (less
    // checkpointing, less sharding, no swap / offload): that is a speed-up, not a fit.
    std::vector<ac_kind> acs{base.ac};
    if (opt.vary_ac) {
        if (allowed(opt, "activation_checkpoint.mode", value("selective"))) acs.push_back(ac_kind::selective_op);
        if (allowed(opt, "activation_checkpoint.mode", value("full"))) acs.push_back(ac_kind::full);
        std::erase_if(acs, [&](ac_kind a) { return ac_rank(a) < ac_rank(base.ac); });
        std::sort(acs.begin(), acs.end());
        acs.erase(std::unique(acs.begin(), acs.end()), acs.end());
    }
    // Sharding: torchtitan gives dp_replicate ranks to dp_shard; Megatron's distributed
    // optimizer; DeepSpeed ZeRO stages; FSDP under HF / accelerate.
    std::vector<std::int64_t> reps{base.dp_replicate};
    std::vector<int> zeros{base.zero_stage};
    if (opt.vary_sharding) {
        if (titan) {
            if (allowed(opt, "parallelism.data_parallel_replicate_degree", value(std::int64_t(1)))) reps.push_back(1);
        } else if (base.framework == train_framework::megatron) {
            if (allowed(opt, "optimizer.distributed", value(true))) zeros.push_back(1);
        } else {
            for (int z = 1; z <= 3; ++z)
                if (allowed(opt, "parallelism.zero_stage", value(std::int64_t(z)))) zeros.push_back(z);
        }
        std::sort(reps.begin(), reps.end());
        reps.erase(std::unique(reps.begin(), reps.end()), reps.end());
        std::erase_if(zeros, [&](int z) { return z < base.zero_stage; });
        std::sort(zeros.begin(), zeros.end());
        zeros.erase(std::unique(zeros.begin(), zeros.end()), zeros.end());
    }
    // A chunked (fused linear) cross-entropy never materializes the full-vocabulary logits.
    std::vector<bool> losses{base.chunked_loss};
    if (opt.vary_loss && !base.chunked_loss && allowed(opt, "training.chunked_loss", value(true))) losses.push_back(true);
    std::vector<bool> swaps{base.swap_optimizer};
    if (opt.vary_swap && !base.swap_optimizer && allowed(opt, "optimizer.swap_optimizer", value(true))) swaps.push_back(true);
    std::vector<std::pair<bool, bool>> offloads{{base.optimizer_offload, base.params_offload}};
    if (opt.vary_offload) {
        const bool o = allowed(opt, "optimizer.offload", value("cpu")), p = allowed(opt, "parallelism.offload_params", value("cpu"));
        if (o) offloads.push_back({true, base.params_offload});
        if (p) offloads.push_back({base.optimizer_offload, true});
        if (o && p) offloads.push_back({true, true});
    }
    const bool par = opt.vary_parallelism;
    const bool can_tp = par && allowed(opt, "parallelism.tensor_parallel_degree", value(std::int64_t(2)));
    const bool can_pp = par && allowed(opt, "parallelism.pipeline_parallel_degree", value(std::int64_t(2)));
    const bool can_cp = par && allowed(opt, "parallelism.context_parallel_degree", value(std::int64_t(2)));
    const bool can_ep = par && moe && allowed(opt, "parallelism.expert_parallel_degree", value(std::int64_t(2)));
    // torchtitan varies its pipeline micro-batch; torchtune (no pipeline) its per-device batch_size
    const bool can_mb = opt.vary_micro_batch &&
                        allowed(opt, batch.dynamic_tokens ? "training.max_tokens_per_device"
                                     : base.framework == train_framework::torchtitan ? "parallelism.pipeline_parallel_microbatch_size"
                                                                                     : "training.local_batch_size",
                                value(std::int64_t(1)));

    est::breakdown scratch;
    std::vector<plan_candidate> keep;
    auto push = [&](plan_candidate&& pc) {
        keep.push_back(std::move(pc));
        if (keep.size() > std::max<std::size_t>(64, keep_n * 4)) {
            std::nth_element(keep.begin(), keep.begin() + std::ptrdiff_t(keep_n), keep.end(), ranked{});
            keep.resize(keep_n);
        }
    };
    for (std::int64_t rep : reps) {
        if (world % rep != 0) continue;
        const std::int64_t inner = world / rep;
        std::vector<std::int64_t> tps{base.tp}, pps{base.pp}, cps{base.cp}, eps{base.ep};
        if (can_tp) tps = divisors(inner, opt.max_tp);
        if (can_pp) pps = divisors(inner, std::min<std::int64_t>(opt.max_pp, base.model.layers));
        if (can_cp) cps = divisors(inner, opt.max_cp);
        if (can_ep) eps = divisors(std::max<std::int64_t>(1, base.model.experts), world);
        for (auto t : tps)
            for (auto p : pps) {
                if (inner % (t * p) != 0) continue;
                for (auto c : cps) {
                    if (inner % (t * p * c) != 0) continue;
                    const std::int64_t shard = inner / (t * p * c);
                    const std::int64_t mb0 = titan && p > 1 ? batch.pp_microbatch.value_or(1) : local;
                    // accumulation keeps the global batch (not torchtitan's pipeline micro-batch, nor Megatron's
                    // or a stated global batch, where the micro-batch must divide it per rank: halvings there)
                    const bool by_accum = !(titan && p > 1) && !batch.global_batch && base.framework != train_framework::megatron;
                    const std::vector<std::int64_t> mbs = !can_mb   ? std::vector<std::int64_t>{mb0}
                                                          : by_accum ? micro_batches(mb0, batch.grad_accum.value_or(1))
                                                                     : halvings(mb0);
                    for (auto e : eps)
                        for (auto mb : mbs)
                            for (auto ac : acs)
                                for (int z : zeros)
                                    for (bool sw : swaps)
                                        for (const auto& [oo, po] : offloads)
                                        for (bool cl : losses) {
                                            // sharding over one data-parallel rank changes nothing but the cost,
                                            // unless it carries an offload (ZeRO-Offload / -Infinity on one GPU)
                                            if (!titan && z != base.zero_stage && shard * rep <= 1 && !oo && !po) continue;
                                            estimate_input in = base;
                                            in.assumptions.clear();
                                            in.tp = t;
                                            in.pp = p;
                                            in.cp = c;
                                            in.ep = e;
                                            if (!batch.expert_tp && base.framework == train_framework::megatron) in.etp = t;
                                            // lead32: Megatron-family jobs raise TP with sequence parallelism (the
                                            // rev40 TP lever's setting), which divides the activations as well
                                            if (base.framework == train_framework::megatron && t > base.tp && t > 1)
                                                in.sequence_parallel = true;
                                            in.dp_replicate = rep;
                                            in.dp_shard = shard;
                                            in.micro_batch = mb;
                                            if (p > 1) {
                                                if (titan) in.num_microbatches = std::max<std::int64_t>(1, local / mb);
                                                else if (batch.grad_accum) in.num_microbatches = *batch.grad_accum * std::max<std::int64_t>(1, local / mb);
                                                else if (batch.global_batch)
                                                    in.num_microbatches = std::max<std::int64_t>(1, *batch.global_batch / (mb * shard * rep));
                                                else in.num_microbatches = p;
                                            } else {
                                                in.num_microbatches = 1;
                                            }
                                            // a smaller micro-batch at the same global batch accumulates more
                                            // micro-batches (gradients alive through the later forwards)
                                            in.grad_accum = p > 1 ? 1 : std::max<std::int64_t>(1, (base.grad_accum * local + mb - 1) / mb);
                                            if (p > 1 && in.schedule == pp_schedule_kind::interleaved &&
                                                base.model.layers % (p * std::max<std::int64_t>(1, in.vpp)) != 0)
                                                in.schedule = pp_schedule_kind::one_f_one_b;
                                            in.ac = ac;
                                            if (ac != ac_kind::selective_layer) in.ac_every = base.ac_every;
                                            in.zero_stage = titan ? (shard * c > 1 ? 3 : 0) : z;
                                            in.swap_optimizer = sw;
                                            if (sw && !base.swap_optimizer) in.swap_times = 16;
                                            in.optimizer_offload = oo;
                                            in.params_offload = po;
                                            in.chunked_loss = cl;
                                            if (!layout_ok(in, local)) continue;
                                            ++res.evaluated;
                                            if (opt.progress && (res.evaluated & 0xffff) == 0) opt.progress(std::int64_t(res.evaluated));
                                            const double dev = est::compute(in, scratch);
                                            if (budget <= 0 || dev > budget) continue;
                                            ++res.fitting;
                                            plan_candidate pc;
                                            pc.world_size = world;
                                            pc.tier = plan_tier_of(base, in);
                                            pc.base_global_batch = base_gb;
                                            pc.global_batch = global_batch_of(base, batch, local, dp_base, mb, p, shard * rep,
                                                                              pc.global_unit_batch);
                                            pc.global_unit_dp = shard * rep;
                                            if (base_gb > 0 && pc.global_batch != base_gb) pc.tier = tier_global_batch;
                                            pc.cost = cost_value(base, in);
                                            pc.device_peak_bytes = std::int64_t(dev);
                                            pc.margin_bytes = std::int64_t(budget - dev);
                                            pc.input = std::move(in);
                                            push(std::move(pc));
                                        }
                }
            }
    }
    std::sort(keep.begin(), keep.end(), ranked{});
    if (keep.size() > keep_n) keep.resize(keep_n);
    for (auto& pc : keep) {
        pc.terms = plan_cost(base, pc.input);
        pc.overrides = plan_overrides(base, pc.input, batch);
    }
    res.candidates = std::move(keep);
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

}  // namespace oomdx
