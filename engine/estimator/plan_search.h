// Plan search at one world size: enumerate activation checkpointing, a chunked loss, sharding,
// optimizer swap and offload, TP/PP/CP/EP splits and micro-batch sizes; keep the configurations
// that fit the budget (capacity x 0.95), ranked first by the method's priority tier of the most
// drastic change they need (0 checkpointing or the loss kernel, 1 optimizer: sharding / swap /
// offload, 2 parallelism, 3 micro-batch, 4 a global batch the layout changes), then by an explained
// step-time cost relative to the base job.
// make_plan (plan.h) turns this into one answer, over world sizes, verified through the facts.
#pragma once

#include <functional>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/estimator/estimate.h"

namespace oomdx {

struct plan_options {
    std::size_t top = 10;              // best candidates returned
    std::int64_t max_tp = 8;           // TP stays inside one node
    std::int64_t max_pp = 64;
    std::int64_t max_cp = 8;
    bool vary_parallelism = true;
    bool vary_ac = true;
    bool vary_micro_batch = true;
    bool vary_sharding = true;
    bool vary_swap = true;
    bool vary_loss = true;             // chunked / fused cross-entropy where the framework has a switch
    bool vary_offload = false;         // CPU offload of optimizer states / parameters (the fallback)
    // Can the job's framework express this canonical override? (empty: everything)
    std::function<bool(const std::string& key, const value& v)> can_express;
    // Called every 65,536 candidates with the number evaluated so far (empty: silent).
    std::function<void(std::int64_t)> progress;
};

// How the job counts micro-batches; make_plan reads it from the facts (defaults: from the base).
struct plan_batch {
    std::int64_t local_batch = 0;                  // training.local_batch_size (0: from the base input)
    std::optional<std::int64_t> pp_microbatch;     // parallelism.pipeline_parallel_microbatch_size
    std::optional<std::int64_t> global_batch;      // training.global_batch_size
    std::optional<std::int64_t> grad_accum;        // training.gradient_accumulation_steps
    std::optional<std::int64_t> dp_shard;          // parallelism.data_parallel_shard_degree when explicit (> 0)
    std::optional<std::int64_t> expert_tp;         // parallelism.expert_tensor_parallel_degree when set
    std::optional<std::int64_t> dynamic_tokens;    // training.max_tokens_per_device when training.dynamic_batch
};

struct plan_cost_term {
    std::string name;                  // recompute, tensor_parallel, pipeline_bubble, ...
    double fraction = 0;               // step-time overhead as a fraction of the base step
    std::string why;
};

// tier_global_batch: the layout trains more (or fewer) sequences per optimizer step than the job, a change to the
// training itself, ranked after every layout that keeps them
enum plan_tier : int { tier_none = -1, tier_ac = 0, tier_optimizer = 1, tier_parallelism = 2, tier_batch = 3, tier_global_batch = 4 };
const char* plan_tier_name(int tier);

struct plan_candidate {
    estimate_input input;
    std::int64_t world_size = 0;
    std::int64_t device_peak_bytes = 0;
    std::int64_t device_peak_high_bytes = 0;  // high end of the estimate's interval (verified plans)
    std::int64_t margin_bytes = 0;     // against capacity x 0.95
    int tier = tier_none;              // most drastic change needed (method's priority order)
    double cost = 0;                   // sum of the terms
    std::vector<plan_cost_term> terms;
    std::vector<estimate_override> overrides;  // canonical keys that differ from the base
    // sequences per optimizer step of the job and of this layout, as the framework derives them from its batch keys
    // (0: not known), and the per-rank batch and data-parallel degree the layout's global batch is a multiple of
    std::int64_t base_global_batch = 0, global_batch = 0, global_unit_batch = 0, global_unit_dp = 0;
};

struct plan_result {
    std::vector<plan_candidate> candidates;  // fitting, best first (`pool` of them, default opt.top)
    std::size_t evaluated = 0;
    std::size_t fitting = 0;
    double seconds = 0;
};

// `pool`: how many ranked candidates to keep (0: opt.top).
plan_result plan_search(const estimate_input& base, const plan_options& opt = {}, const plan_batch& batch = {},
                        std::size_t pool = 0);
// Cost of one input relative to the base (also used to explain a recommendation).
std::vector<plan_cost_term> plan_cost(const estimate_input& base, const estimate_input& cand);
// The micro-batch term's words, saying what the plan does to the gradient accumulation (rev36).
std::string micro_batch_term(std::int64_t from, std::int64_t to, std::int64_t accum_from, std::int64_t accum_to);
int plan_tier_of(const estimate_input& base, const estimate_input& cand);
// Canonical overrides that turn `base` into `cand`.
std::vector<estimate_override> plan_overrides(const estimate_input& base, const estimate_input& cand,
                                              const plan_batch& batch = {});

}  // namespace oomdx
