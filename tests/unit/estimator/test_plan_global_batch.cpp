// The plan search ranks a layout that changes the sequences per optimizer step (the global batch) after every
// layout that keeps them (lead35).
#include <doctest/doctest.h>

#include "engine/estimator/plan_search.h"
#include "test_util.h"

using namespace oomdx;

namespace {

// torchtitan, Llama 3 8B on 8 devices as PP 2 x FSDP 4, local batch 2 split into pipeline micro-batches of 1, at
// 16384 tokens with no checkpointing: over the budget of an 80 GiB device.
estimate_input pp2_job() {
    estimate_input in;
    in.framework = train_framework::torchtitan;
    in.model = test_util::llama8b();
    in.model.vocab = 32000;  // a small vocabulary: the logits do not decide the layout
    in.world = 8;
    in.pp = 2;
    in.dp_shard = 4;
    in.zero_stage = 3;
    in.micro_batch = 1;
    in.num_microbatches = 2;
    in.seq_len = 16384;
    in.ac = ac_kind::none;
    in.capacity_bytes = std::int64_t(85899345920);
    return in;
}

// Only the layout and checkpointing vary, and every fitting candidate is kept, so none is cut from the pool.
plan_options layout_only() {
    plan_options o;
    o.vary_micro_batch = false;
    o.vary_sharding = false;
    o.vary_swap = false;
    o.vary_loss = false;
    return o;
}

}  // namespace

TEST_CASE("plan search: pipeline ranks given back to data parallel grow torchtitan's derived global batch; ranked last") {
    const estimate_input in = pp2_job();
    REQUIRE(estimate_device_peak(in) > std::int64_t(0.95 * 85899345920.0));
    plan_batch batch;
    batch.local_batch = 2;  // no global_batch_size: torchtitan trains local x DP = 8 sequences a step
    const plan_result p = plan_search(in, layout_only(), batch, 100000);
    REQUIRE_FALSE(p.candidates.empty());
    int kept = 0, grown = 0;
    bool seen_grown = false;
    for (const auto& c : p.candidates) {
        CHECK(c.base_global_batch == 8);
        const std::int64_t dp = c.input.dp_shard * c.input.dp_replicate;
        if (c.tier == tier_global_batch) {
            ++grown;
            seen_grown = true;
            CHECK(c.global_batch > 8);
            CHECK(c.global_batch == c.global_unit_batch * c.global_unit_dp);  // local x DP: nothing states the batch
            CHECK(dp > 4);
        } else {
            ++kept;
            CHECK_FALSE(seen_grown);  // every layout that keeps the batch ranks first
            CHECK(c.global_batch == 8);
        }
    }
    CHECK(kept > 0);
    CHECK(grown > 0);
}

TEST_CASE("plan search: a stated global batch is kept where the per-rank batch x DP divides it, rounded up where not") {
    const estimate_input in = pp2_job();
    plan_batch batch;
    batch.local_batch = 2;
    batch.global_batch = 8;
    const plan_result p = plan_search(in, layout_only(), batch, 100000);
    REQUIRE_FALSE(p.candidates.empty());
    bool divides = false, rounds = false;
    for (const auto& c : p.candidates) {
        const std::int64_t unit = 2 * c.input.dp_shard * c.input.dp_replicate;  // the local batch stays 2
        if (8 % unit == 0) {
            divides = true;
            CHECK(c.global_batch == 8);
            CHECK(c.tier != tier_global_batch);
        } else {
            rounds = true;
            CHECK(c.global_batch == (8 + unit - 1) / unit * unit);
            CHECK(c.tier == tier_global_batch);
        }
    }
    CHECK(divides);
    CHECK(rounds);
}
