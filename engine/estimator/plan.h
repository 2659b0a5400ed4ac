// One answer to "what makes this job fit?": the cheapest combination of overrides, in the
// method's priority order, that fits the budget at the job's world size; when none does, the
// smallest world size (powers of two and multiples of the node size) at which one fits, and
// whether CPU offload or optimizer swap would fit at the job's own size. Every plan is
// verified the way `oomdx estimate --world-size W --set k=v ...` computes it (facts + checks +
// estimate), so its stated device peak round-trips, and rendered in the job's own syntax.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/estimator/plan_search.h"
#include "parsers/config/override_syntax.h"

namespace oomdx {

class fact_store;

struct plan_choice {
    plan_candidate candidate;            // overrides = canonical closure; device_peak verified
    std::vector<std::string> rendered;   // in the job's syntax
    std::vector<std::string> batch_notes;  // how its global batch was kept or changed (larger world sizes)
    std::int64_t host_bytes = 0;         // host RAM per node for what it offloads (0: none)
    std::string host_sizing;             // whose layout that figure follows (host_memory.h)
};

// Offload / swap at the job's own world size (searched when the plan needs more devices).
struct plan_alternative {
    bool searched = false;
    bool fits = false;
    std::int64_t expected_device_peak_bytes = 0;  // the cheapest that fits, else the lowest found
    std::vector<estimate_override> overrides;
    std::vector<std::string> rendered;
    double cost = 0;
    std::vector<plan_cost_term> terms;
    std::int64_t host_bytes = 0;        // host RAM per node for what it offloads (0: none)
    std::string host_sizing;            // whose layout that figure follows (host_memory.h)
    bool host_limited = false;          // an offload that fits the devices was left out: over the host's RAM
    bool between_phases = false;        // the framework's offload only empties the device between phases (verl)
};

struct plan_answer {
    bool base_fits = false;                        // the job fits as configured (high end within budget)
    bool fits = false;                             // a plan was found (false: none up to max_world)
    std::int64_t base_world_size = 0;
    std::int64_t world_size = 0;                   // devices the plan runs on
    std::int64_t base_device_peak_bytes = 0;
    std::int64_t base_high_bytes = 0;              // the interval's high end, which the fit verdict uses
    std::int64_t expected_device_peak_bytes = 0;   // the plan's, verified (the estimate's point figure)
    std::int64_t expected_device_peak_high_bytes = 0;  // high end of its interval, also within budget
    std::int64_t budget_bytes = 0;                 // capacity x 0.95
    std::int64_t host_memory_bytes = 0;            // host RAM of a node (job.host_memory_bytes; 0: not stated)
    std::int64_t host_budget_bytes = 0;            // what offloaded states may take of it (host_budget_fraction)
    std::vector<estimate_override> overrides;      // canonical: `--world-size W --set k=v` each
    std::vector<std::string> rendered;             // in the job's syntax
    int tier = tier_none;                          // most drastic change (plan_tier_name)
    double cost = 0;                               // step-time overhead vs the job
    std::vector<plan_cost_term> terms;
    std::vector<std::string> notes;                // global batch kept / grown, worlds searched
    std::vector<plan_choice> candidates;           // ranked, verified, at world_size
    plan_alternative at_current_size;              // when world_size > base_world_size
    // A LoRA / DoRA job on a 16- or 8-bit base, when nothing fits at its own size: the plan search at that
    // size with the frozen base loaded in 4 bits (QLoRA), the job's adapters unchanged.
    plan_alternative quantized_base;
    // A job that states full fine-tuning, when nothing fits at its own size: the search there with LoRA adapters
    // on the frozen base instead (and the base in 4 bits where LoRA alone does not fit: `adapters_quantized`).
    plan_alternative adapters;
    bool adapters_quantized = false;
    std::vector<std::int64_t> worlds_searched;
    std::size_t evaluated = 0, fitting = 0;
    double seconds = 0;                            // all of make_plan
    double search_seconds = 0;                     // the enumeration alone (plan_search)
    std::string syntax;                            // toml | cli | registry | json | yaml | dotlist
    std::string framework;
};

struct plan_request {
    plan_options search;                           // top, bounds, progress
    std::int64_t max_world = std::int64_t(1) << 16;
    std::int64_t node_size = 0;                    // devices per node (0: job.nproc_per_node, else 8)
};

// `facts`: every input of the job (config, model, device, --set, world size), as gathered for
// an estimate. Throws usage_error when the device capacity is unknown.
plan_answer make_plan(const fact_store& facts, const override_syntax& syntax, const plan_request& req = {});

// The overrides that go with a new per-device micro-batch so that the sequences per optimizer step
// stay: torchtitan's global batch, or the gradient accumulation (Megatron, and DeepSpeed given only
// train_batch_size, derive it themselves). Empty where the facts do not say the batch layout.
std::vector<estimate_override> keep_global_batch(const fact_store& facts, std::int64_t micro_batch);

// "plan" of oomdx.preflight/1 and oomdx.diagnosis/1.
nlohmann::json plan_json(const plan_answer& p);
// Text block for reports: the plan, its peak, the lines to paste, the alternatives.

}  // namespace oomdx
