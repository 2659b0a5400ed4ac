// The plan search ranks a layout that changes the sequences per optimizer step (the global batch) after every
// layout that keeps them, and says how it changes (lead35).
#include <doctest/doctest.h>

#include "engine/estimator/plan_search.h"
#include "test_util.h"

using namespace oomdx;

namespace {

// torchtitan, Llama 3 8B on 8 devices as TP 2 x FSDP 4, local batch 2 at 8192 tokens, no checkpointing: over 80 GiB.
estimate_input tp2_job() {
    estimate_input in;
    in.framework = train_framework::torchtitan;
    in.model = test_util::llama8b();
    in.world = 8;
    in.tp = 2;
    in.sequence_parallel = true;
    in.dp_shard = 4;
    in.zero_stage = 3;
    in.micro_batch = 2;
    in.seq_len = 8192;
    in.ac = ac_kind::none;
    in.capacity_bytes = std::int64_t(85899345920);
    return in;
}

}  // namespace

TEST_CASE("plan search: TP given back to data parallel grows torchtitan's derived global batch; ranked last, stated") {
    const estimate_input in = tp2_job();
    REQUIRE(estimate_device_peak(in) > std::int64_t(0.95 * 85899345920.0));
    plan_batch batch;
    batch.local_batch = 2;  // no global_batch_size: torchtitan trains local x DP = 8 sequences a step
    const plan_result p = plan_search(in, {}, batch, 256);
    REQUIRE_FALSE(p.candidates.empty());
    int kept = 0, grown = 0;
    bool seen_grown = false;
    for (const auto& c : p.candidates) {
        CHECK(c.base_global_batch == 8);
        const std::int64_t dp = c.input.dp_shard * c.input.dp_replicate;
        if (c.tier == tier_global_batch) {
            ++grown;
            seen_grown = true;
            CHECK(c.global_batch != 8);
            CHECK(c.global_batch == c.global_unit_batch * c.global_unit_dp);  // local x DP, nothing states it
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

TEST_CASE("plan search: a stated global batch is kept where micro-batch x DP divides it, and rounded up where not") {
    const estimate_input in = tp2_job();
    plan_batch batch;
    batch.local_batch = 2;
    batch.global_batch = 8;
    const plan_result p = plan_search(in, {}, batch, 256);
    REQUIRE_FALSE(p.candidates.empty());
    bool divides = false, rounds = false;
    for (const auto& c : p.candidates) {
        const std::int64_t unit = c.input.micro_batch * c.input.dp_shard * c.input.dp_replicate;
        if (c.input.pp > 1) continue;  // the pipeline's micro-batch splits the local batch instead
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
