// Round est71: an optimizer built on parameters that parallelisation then replaced (optimizer.stale_params; Lightning
// Fabric's tensor-parallel example at 0c8a193d3c) allocates no state, and nothing frees the live gradients.
// knowledge/sources/stale_optimizer_params.md
#include <doctest/doctest.h>

#include <cstdint>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "tests/unit/estimator/test_util.h"

using namespace oomdx;

namespace {

// Llama 3 8B pre-training under FSDP2 over four GPUs (torchtitan): fp32 sharded parameters, bf16 compute, full AC,
// foreach AdamW, 1 x 2048 per rank
estimate_result stale_optimizer_job(bool stale) {
    fact_store f;
    using test_util::emit;
    test_util::emit_llama8b(f);
    test_util::emit_framework(f, "torchtitan");
    emit(f, "job.world_size", std::int64_t(4));
    emit(f, "parallelism.data_parallel_shard_degree", std::int64_t(4));
    emit(f, "parallelism.zero_stage", std::int64_t(3));
    emit(f, "training.seq_len", std::int64_t(2048));
    emit(f, "training.local_batch_size", std::int64_t(1));
    emit(f, "training.mixed_precision_param", "bfloat16");
    emit(f, "activation_checkpoint.mode", "full");
    emit(f, "optimizer.name", "adamw");
    emit(f, "optimizer.implementation", "foreach");
    if (stale) emit(f, "optimizer.stale_params", true);
    return estimate(from_facts(f));
}

std::int64_t stale_component(const estimate_result& r, const char* id) {
    for (const estimate_component& c : r.components)
        if (c.id == id) return c.bytes;
    return -1;
}

}  // namespace

TEST_CASE("est71: a stale optimizer allocates no AdamW state and no foreach step buffer") {
    const estimate_result live = stale_optimizer_job(false);
    const estimate_result stale = stale_optimizer_job(true);
    // Llama 3 8B: 8,030,261,248 parameters; fp32 exp_avg + exp_avg_sq sharded over 4 ranks: 2 x 4 B x N / 4
    const double states = 2.0 * 4.0 * 8030261248.0 / 4.0;  // 16.06 GB
    CHECK(stale_component(stale, "optimizer") == 0);
    // the step loses the states and the foreach sqrt(exp_avg_sq) buffer (half the states) unless an end-of-backward
    // buffer was larger than that buffer: between the states and 1.5 x the states
    const double drop = double(live.optimizer_step_bytes - stale.optimizer_step_bytes);
    CHECK(drop >= states - 1.0);
    CHECK(drop <= 1.5 * states + 1.0);
    CHECK(live.peak_phase == "optimizer_step");
    CHECK(stale.peak_phase != "optimizer_step");
}

TEST_CASE("est71: a stale optimizer's zero_grad never frees the live gradients: they stay through the forward") {
    const estimate_result live = stale_optimizer_job(false);
    const estimate_result stale = stale_optimizer_job(true);
    // forward and backward: the AdamW states go (2 x 4 B x N / 4 = 16.06 GB, resident in both phases of the live
    // job) and the fp32 gradient shards (4 B x N / 4 = 8.03 GB), never freed, are live from the first op of the
    // forward; the live job's backward high water comes before its gradients exist (torchtitan's zero_grad frees
    // them after each step)
    const double states = 2.0 * 4.0 * 8030261248.0 / 4.0;
    const double grads = 4.0 * 8030261248.0 / 4.0;
    CHECK(double(stale.forward_peak_bytes - live.forward_peak_bytes) == doctest::Approx(grads - states).epsilon(0.001));
    CHECK(double(stale.backward_peak_bytes - live.backward_peak_bytes) == doctest::Approx(grads - states).epsilon(0.001));
}
