// Memory-efficient full-parameter training (issue 16, est52): BAdam, GaLore, APOLLO and LISA as the
// frameworks implement them (knowledge/sources/memory_efficient_full_training.md). Each keeps every
// weight but changes which parameters hold gradients and optimizer states, and how large the states are.
#pragma once
#include <cstdint>
#include <string>

namespace oomdx {

struct estimate_input;

enum class me_kind { none, badam, galore, apollo, lisa };

struct memory_efficient_spec {
    me_kind kind = me_kind::none;
    // BAdam: "layer" trains one block (a decoder layer) at a time; "ratio" a masked share of every layer
    bool badam_ratio = false;
    double badam_update_ratio = 0.05;
    // GaLore / APOLLO: projection rank and the linear modules projected (lora_target bits)
    std::int64_t rank = 16;
    unsigned targets = 127;
    bool layerwise = false;  // one optimizer per parameter, stepped in a post-accumulate-grad hook
    // est53: Q-GaLore --weight_quant stores each targeted linear weight as uint8 with an fp32 scale and zero per group
    // of 256 (q_galore_torch/utils/quantization.py); 0: the weights keep the parameter dtype
    int weight_bits = 0;
    // LISA: decoder layers sampled to train at a time (the embedding and the head always train)
    std::int64_t lisa_layers = 2;
};

const char* me_name(me_kind k);

namespace est {

// One pipeline stage's parameter layout, as compute() sees it.
struct me_stage {
    double layers = 0;           // decoder layers on this rank
    double layer_params = 0;     // parameters of one (the largest) decoder layer on this rank
    double layer_linear = 0;     // of which in linear weights
    double params_rank = 0;      // every parameter on this rank
    double embed_head = 0;       // embedding + untied head on this rank
    double largest_linear = 0;   // the largest linear weight of a layer on this rank
    double g_rate = 0, m_rate = 0, o_rate = 0;  // bytes per parameter the plain path would keep
    double o_rate_fp32 = 0;      // optimizer bytes per parameter over an fp32 copy (BAdam's base optimizer)
};
struct me_states {
    double grads = 0, master = 0, optimizer = 0;
    double trainable = 0;        // parameters holding gradients / states
    double params_saved = 0;     // weight bytes the method's storage saves against the parameter dtype
};
// Gradients, master copy and optimizer states of the stage under the method; `in.me.kind` != none.
me_states memory_efficient_states(const estimate_input& in, const me_stage& s);

}  // namespace est
}  // namespace oomdx
