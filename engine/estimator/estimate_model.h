// The numeric core of the estimator: per-stage, per-phase byte figures, no strings.
// estimate.cpp turns a `breakdown` into components with formulas; plan search uses it directly.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/estimator/estimate.h"

namespace oomdx::est {

// Parameter counts of one transformer layer, split by how they shard.
struct layer_params {
    double tp_sharded = 0;   // attention, dense MLP, shared experts: / TP
    double replicated = 0;   // norms, router, MLA latent norms
    double routed = 0;       // routed experts: / (EP * ETP)
};

layer_params dense_layer_params(const estimate_model& m);
layer_params moe_layer_params(const estimate_model& m);
bool is_moe_layer(const estimate_model& m, std::int64_t i);
double total_params(const estimate_model& m);

// Activation bytes per token of one layer in the current AC mode, after TP/SP division.
struct layer_act {
    double saved = 0;        // kept until backward
    double working = 0;      // one layer without AC (recompute / forward working set)
};
layer_act layer_activation(const estimate_input& in, bool moe);

struct stage_figures {
    int stage = 0;
    std::int64_t layers = 0, moe_layers = 0;
    double params_rank = 0, expert_params_rank = 0;     // parameter counts on one rank
    double inflight = 0;                                 // layer x micro-batch activations held
    // bytes
    double params = 0, grads = 0, master = 0, optimizer = 0;
    double expert_state = 0;                             // routed-expert share of the four above
    double activations = 0, logits = 0;
    double temp_forward = 0, temp_backward = 0, temp_step = 0, temp_loss = 0;
    double grads_in_forward = 0;                         // grads resident while activations live
    double phase_forward = 0, phase_loss = 0, phase_backward = 0, phase_step = 0;
    double peak = 0;
    int phase = 0;                                       // 0 forward, 1 loss, 2 backward, 3 step
};

struct breakdown {
    std::vector<stage_figures> stages;
    int worst = 0;
    double peak = 0, reserved = 0, runtime = 0, device = 0;
    double reserved_factor = 1;
    double tokens = 0;               // tokens per micro-batch per rank
    double shard_n = 1, expert_shard_n = 1;
    double state_bytes_per_param = 0;
};

// Fills `out` (reusing its storage); returns the device peak in bytes.
double compute(const estimate_input& in, breakdown& out);

}  // namespace oomdx::est
