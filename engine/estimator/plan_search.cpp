#include "engine/estimator/plan_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "engine/estimator/estimate_model.h"
#include "engine/estimator/estimator_constants.h"

namespace oomdx {

namespace {

std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t cap) {
    std::vector<std::int64_t> d;
    for (std::int64_t i = 1; i <= n && i <= cap; ++i)
        if (n % i == 0) d.push_back(i);
    return d;
}

double log2d(double x) { return x > 1 ? std::log2(x) : 0.0; }

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

}  // namespace

std::vector<plan_cost_term> plan_cost(const estimate_input& b, const estimate_input& c) {
    std::vector<plan_cost_term> t;
    auto add = [&](const char* name, double f, std::string why) {
        if (std::fabs(f) > 1e-9) t.push_back({name, f, std::move(why)});
    };
    add("recompute", recompute_fraction(c) - recompute_fraction(b),
        fmt::format("activation checkpointing {} -> {}", ac_name(b.ac), ac_name(c.ac)));
    const double tp = [](const estimate_input& x) {
        return x.tp <= 8 ? 0.04 * log2d(double(x.tp)) : 0.12 + 0.30 * log2d(double(x.tp) / 8.0);
    }(c) - [](const estimate_input& x) { return x.tp <= 8 ? 0.04 * log2d(double(x.tp)) : 0.12 + 0.30 * log2d(double(x.tp) / 8.0); }(b);
    add("tensor_parallel", tp, fmt::format("TP {} -> {}: per-layer collectives{}", b.tp, c.tp, c.tp > 8 ? " across nodes" : ""));
    add("pipeline_bubble", bubble(c) - bubble(b),
        fmt::format("PP {} -> {}: bubble (p-1)/(m*v) with m={} micro-batches", b.pp, c.pp, c.num_microbatches));
    add("context_parallel", 0.05 * (log2d(double(c.cp)) - log2d(double(b.cp))),
        fmt::format("CP {} -> {}: ring attention exchanges", b.cp, c.cp));
    add("expert_parallel", 0.05 * (log2d(double(c.ep)) - log2d(double(b.ep))),
        fmt::format("EP {} -> {}: token all-to-all", b.ep, c.ep));
    add("sharding", shard_fraction(c) - shard_fraction(b),
        fmt::format("ZeRO/FSDP stage {} -> {}: parameter all-gathers", b.zero_stage, c.zero_stage));
    add("offload", offload_fraction(c) - offload_fraction(b), "host transfers of optimizer state / activations");
    add("micro_batch", 0.05 * (log2d(double(b.micro_batch) / double(c.micro_batch))),
        fmt::format("micro-batch {} -> {}: smaller GEMMs, more accumulation steps", b.micro_batch, c.micro_batch));
    return t;
}

std::vector<estimate_override> plan_overrides(const estimate_input& b, const estimate_input& c) {
    std::vector<estimate_override> o;
    auto num = [&](const char* key, std::int64_t bv, std::int64_t cv) {
        if (bv != cv) o.push_back({key, value(cv)});
    };
    num("parallelism.tensor_parallel_degree", b.tp, c.tp);
    num("parallelism.pipeline_parallel_degree", b.pp, c.pp);
    num("parallelism.context_parallel_degree", b.cp, c.cp);
    num("parallelism.expert_parallel_degree", b.ep, c.ep);
    num("parallelism.data_parallel_shard_degree", b.dp_shard, c.dp_shard);
    if (b.micro_batch != c.micro_batch) {
        if (c.pp > 1 && (c.framework == train_framework::torchtitan || c.framework == train_framework::torchtune))
            o.push_back({"parallelism.pipeline_parallel_microbatch_size", value(c.micro_batch)});
        else
            o.push_back({"training.local_batch_size", value(c.micro_batch)});
    }
    if (b.ac != c.ac || (c.ac == ac_kind::selective_layer && b.ac_every != c.ac_every)) {
        o.push_back({"activation_checkpoint.mode",
                     value(c.ac == ac_kind::none ? "none" : c.ac == ac_kind::full ? "full" : "selective")});
        if (c.ac == ac_kind::selective_op) o.push_back({"activation_checkpoint.selective_ac_option", value("op")});
        if (c.ac == ac_kind::selective_layer)
            o.push_back({"activation_checkpoint.selective_ac_option", value(std::to_string(c.ac_every))});
    }
    if (b.zero_stage != c.zero_stage) {
        if (c.framework == train_framework::megatron)
            o.push_back({"optimizer.distributed", value(c.zero_stage >= 1)});
        else
            o.push_back({"parallelism.zero_stage", value(std::int64_t(c.zero_stage))});
    }
    if (b.swap_optimizer != c.swap_optimizer) {
        o.push_back({"optimizer.swap_optimizer", value(c.swap_optimizer)});
        if (c.swap_optimizer) o.push_back({"optimizer.swap_optimizer_times", value(std::int64_t(c.swap_times))});
    }
    if (b.optimizer_offload != c.optimizer_offload)
        o.push_back({"optimizer.offload", value(c.optimizer_offload ? "cpu" : "none")});
    return o;
}

plan_result plan_search(const estimate_input& base, const plan_options& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    plan_result res;
    const estimator_constants& k = estimator_k();
    const double budget = double(base.capacity_bytes) * k.budget_fraction;
    const std::int64_t world = std::max<std::int64_t>(1, base.world);
    const std::int64_t rep = world % base.dp_replicate == 0 ? base.dp_replicate : 1;
    const bool moe = base.model.experts > 0;

    std::vector<std::int64_t> tps{base.tp}, pps{base.pp}, cps{base.cp}, eps{base.ep};
    if (opt.vary_parallelism) {
        tps.clear();
        for (auto t : divisors(world / rep, opt.max_tp))
            if (base.model.heads % t == 0) tps.push_back(t);
        pps = divisors(world / rep, std::min<std::int64_t>(opt.max_pp, base.model.layers));
        cps.clear();
        for (auto c : divisors(world / rep, opt.max_cp))
            if (base.seq_len % (2 * c) == 0 || c == 1) cps.push_back(c);
        eps = moe ? divisors(std::max<std::int64_t>(1, base.model.experts), world) : std::vector<std::int64_t>{1};
    }
    std::vector<ac_kind> acs{base.ac};
    if (opt.vary_ac) acs = {ac_kind::none, ac_kind::selective_op, ac_kind::full};
    std::vector<std::int64_t> mbs{base.micro_batch};
    if (opt.vary_micro_batch)
        for (std::int64_t m = base.micro_batch / 2; m >= 1; m /= 2) mbs.push_back(m);
    std::vector<int> zeros{base.zero_stage};
    if (opt.vary_sharding) {
        if (base.framework == train_framework::megatron) zeros = {0, 1};
        else if (base.framework == train_framework::deepspeed) zeros = {0, 1, 2, 3};
        else zeros = {base.zero_stage, 3};
        std::sort(zeros.begin(), zeros.end());
        zeros.erase(std::unique(zeros.begin(), zeros.end()), zeros.end());
    }
    std::vector<bool> swaps{base.swap_optimizer};
    if (opt.vary_swap && !base.swap_optimizer) swaps = {false, true};

    const std::int64_t tokens_per_rank_step = base.micro_batch * base.num_microbatches;  // sequences per step per DP rank
    est::breakdown scratch;
    std::vector<plan_candidate> keep;
    for (auto t : tps)
        for (auto p : pps) {
            if (world % (rep * t * p) != 0) continue;
            for (auto c : cps) {
                if ((world / rep) % (t * p * c) != 0) continue;
                const std::int64_t shard = world / (rep * t * p * c);
                for (auto e : eps) {
                    if (moe && (shard * c * t) % e != 0) continue;
                    for (auto mb : mbs)
                        for (auto ac : acs)
                            for (int z : zeros)
                                for (bool sw : swaps) {
                                    estimate_input in = base;
                                    in.assumptions.clear();
                                    in.tp = t;
                                    in.pp = p;
                                    in.cp = c;
                                    in.ep = e;
                                    in.dp_replicate = rep;
                                    in.dp_shard = shard;
                                    in.micro_batch = mb;
                                    in.num_microbatches = std::max<std::int64_t>(1, tokens_per_rank_step / mb);
                                    if (p > 1 && in.schedule == pp_schedule_kind::interleaved &&
                                        base.model.layers % (p * std::max<std::int64_t>(1, in.vpp)) != 0)
                                        in.schedule = pp_schedule_kind::one_f_one_b;
                                    in.ac = ac;
                                    in.zero_stage = z;
                                    in.swap_optimizer = sw;
                                    if (sw && in.swap_times <= 1) in.swap_times = 16;
                                    ++res.evaluated;
                                    if (opt.progress && (res.evaluated & 0xffff) == 0) opt.progress(res.evaluated);
                                    const double dev = est::compute(in, scratch);
                                    if (budget <= 0 || dev > budget) continue;
                                    ++res.fitting;
                                    plan_candidate pc;
                                    pc.terms = plan_cost(base, in);
                                    for (const auto& term : pc.terms) pc.cost += term.fraction;
                                    pc.device_peak_bytes = std::int64_t(dev);
                                    pc.margin_bytes = std::int64_t(budget - dev);
                                    pc.input = std::move(in);
                                    keep.push_back(std::move(pc));
                                    // bound memory: keep the best 4*top seen so far
                                    if (keep.size() > std::max<std::size_t>(64, opt.top * 8)) {
                                        std::nth_element(keep.begin(), keep.begin() + std::ptrdiff_t(opt.top * 4), keep.end(),
                                                         [](const plan_candidate& a, const plan_candidate& b) {
                                                             return a.cost < b.cost;
                                                         });
                                        keep.resize(opt.top * 4);
                                    }
                                }
                }
            }
        }
    std::sort(keep.begin(), keep.end(), [](const plan_candidate& a, const plan_candidate& b) {
        if (a.cost != b.cost) return a.cost < b.cost;
        return a.margin_bytes > b.margin_bytes;
    });
    if (keep.size() > opt.top) keep.resize(opt.top);
    for (auto& pc : keep) pc.overrides = plan_overrides(base, pc.input);
    res.candidates = std::move(keep);
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

}  // namespace oomdx
