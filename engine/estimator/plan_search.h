// Plan search: enumerate checkpointing modes, micro-batch sizes, TP/PP/CP/EP splits of the
// world size, sharding and optimizer swap; keep the configurations that fit, ranked by an
// explained cost (recompute, communication, pipeline bubble, offload) relative to the base job.
#pragma once

#include <functional>

#include <cstddef>
#include <cstdint>
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
    // Called every 65,536 candidates with the number evaluated so far (empty: silent).
    std::function<void(std::int64_t)> progress;
};

struct plan_cost_term {
    std::string name;                  // recompute, tensor_parallel, pipeline_bubble, ...
    double fraction = 0;               // step-time overhead as a fraction of the base step
    std::string why;
};

struct plan_candidate {
    estimate_input input;
    std::int64_t device_peak_bytes = 0;
    std::int64_t margin_bytes = 0;     // against capacity x 0.95
    double cost = 0;                   // sum of the terms
    std::vector<plan_cost_term> terms;
    std::vector<estimate_override> overrides;  // canonical keys that differ from the base
};

struct plan_result {
    std::vector<plan_candidate> candidates;  // fitting, cheapest first
    std::size_t evaluated = 0;
    std::size_t fitting = 0;
    double seconds = 0;
};

plan_result plan_search(const estimate_input& base, const plan_options& opt = {});
// Cost of one input relative to the base (also used to explain a recommendation).
std::vector<plan_cost_term> plan_cost(const estimate_input& base, const estimate_input& cand);
// Canonical overrides that turn `base` into `cand`.
std::vector<estimate_override> plan_overrides(const estimate_input& base, const estimate_input& cand);

}  // namespace oomdx
