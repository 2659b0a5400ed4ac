// Host RAM for offloaded states (engine/estimator/host_memory.h), pinned to DeepSpeed's own sizing.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/estimator/estimate.h"
#include "engine/estimator/host_memory.h"

using namespace oomdx;

namespace {

// DeepSpeed ZeRO-3, bf16 weights with fp32 masters and fp32 Adam moments, one rank on one node.
estimate_input zero3_offload_input() {
    estimate_input in;
    in.framework = train_framework::deepspeed;
    in.zero_stage = 3;
    in.world = 1;
    in.node_ranks = 1;
    in.param_bytes = 2;
    in.master_weights = true;
    in.master_bytes = 4;
    in.state_dtype_bytes = 4;
    in.optimizer = "adamw";
    in.optimizer_offload = true;
    in.params_offload = true;
    return in;
}

}  // namespace

TEST_CASE("host offload: DeepSpeed's printed sizing for t5-small (60.5 M parameters, one node, one GPU)") {
    // estimate_zero3_model_states_mem_needs_all_live(t5-small) prints 1.52 GB per CPU with both offloads and
    // 1.35 GB with the optimizer's alone: 60,506,624 x 18 (or 16) B x 1.5, in GiB.
    const double p = 60506624.0;
    estimate_input in = zero3_offload_input();
    host_offload_need both = host_offload(in, p, p);
    CHECK(both.bytes == doctest::Approx(p * 18.0));
    CHECK(both.high_bytes / double(1 << 30) == doctest::Approx(1.52).epsilon(0.01));
    in.params_offload = false;
    host_offload_need opt = host_offload(in, p, p);
    CHECK(opt.bytes == doctest::Approx(p * 16.0));
    CHECK(opt.high_bytes / double(1 << 30) == doctest::Approx(1.35).epsilon(0.01));
    CHECK(opt.what.find("fp32 gradients") != std::string::npos);
}

TEST_CASE("host offload: a node holds its ranks' shares; NVMe and no offload take no RAM") {
    const double p = 70e9;
    estimate_input in = zero3_offload_input();
    in.world = 16;
    in.node_ranks = 8;  // two nodes of eight: each holds half of the states
    CHECK(host_offload(in, p, p).bytes == doctest::Approx(p * 18.0 / 2.0));
    in.optimizer_nvme = in.params_nvme = true;  // ZeRO-Infinity to NVMe
    CHECK(host_offload(in, p, p).bytes == 0.0);
    in.optimizer_nvme = in.params_nvme = false;
    in.optimizer_offload = in.params_offload = false;
    CHECK(host_offload(in, p, p).bytes == 0.0);
}

TEST_CASE("host offload: torch FSDP CPU offload keeps the sharded fp32 parameters, their gradients and the moments") {
    estimate_input in = zero3_offload_input();
    in.framework = train_framework::generic;  // HF Trainer / accelerate FSDP
    in.optimizer_offload = false;
    const double p = 8e9;
    const host_offload_need n = host_offload(in, p, p);
    CHECK(n.bytes == doctest::Approx(p * 16.0));  // 4 parameter + 4 gradient + 8 moments
    CHECK(n.what.find("torch FSDP CPU offload") != std::string::npos);
}

TEST_CASE("host offload: LoRA under ZeRO-3 parameter offload puts the frozen base on the host in its load dtype") {
    estimate_input in = zero3_offload_input();
    in.ft.kind = finetune_kind::lora;
    in.ft.load_bytes = 2;
    in.ft.trainable_bytes = 4;
    const double p = 8e9, trainable = 4e7;
    const host_offload_need n = host_offload(in, p, trainable);
    CHECK(n.bytes == doctest::Approx(p * 2.0 + trainable * 16.0));
}

TEST_CASE("host offload: without zero.Init (ZeRO-2) every rank of the node first loads the whole model") {
    estimate_input in = zero3_offload_input();
    in.zero_stage = 2;
    in.params_offload = false;
    in.world = 8;
    in.node_ranks = 8;
    const double p = 7e9;
    const host_offload_need n = host_offload(in, p, p);
    CHECK(n.bytes == doctest::Approx(p * 16.0));                    // the shares of eight ranks: all of it
    CHECK(n.high_bytes == doctest::Approx(std::max(p * 16.0 * 1.5, p * 2.0 * 8.0)));
}

// rev32: the report named "DeepSpeed's sizing" on every framework's figure; each now says whose layout it follows.
TEST_CASE("host offload: the figure names the framework whose layout it follows (rev32)") {
    const double p = 8e9;
    estimate_input in = zero3_offload_input();
    CHECK(host_offload(in, p, p).sizing == "deepspeed");
    in.framework = train_framework::torchtitan;  // FSDP2 CPU offload
    in.optimizer_offload = false;
    CHECK(host_offload(in, p, p).sizing == "fsdp");
    in = zero3_offload_input();
    in.framework = train_framework::megatron;  // --optimizer-cpu-offload
    in.zero_stage = 1;
    in.params_offload = false;
    CHECK(host_offload(in, p, p).sizing == "megatron");
    in.optimizer_offload = false;
    in.swap_optimizer = true;  // MindSpeed --swap-optimizer
    CHECK(host_offload(in, p, p).sizing == "mindspeed");
    in.swap_optimizer = false;
    CHECK(host_offload(in, p, p).sizing.empty());  // nothing offloaded
}
