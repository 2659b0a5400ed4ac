// Round est67: an MoE layer's dispatch copies above its saved set (engine/estimator/moe_dispatch.h) and the staging
// of an offloaded FSDP shard (engine/estimator/fsdp_offload_staging.h), each hand-computed on a small config.
#include <doctest/doctest.h>

#include "engine/estimator/estimate.h"
#include "engine/estimator/fsdp_offload_staging.h"
#include "engine/estimator/moe_dispatch.h"

using namespace oomdx;

namespace {

// hidden 1024, 8 experts of 512, top-2, bf16 compute; 4096 tokens per micro-batch on a rank
estimate_input moe67_input(train_framework fw, std::int64_t tp, std::int64_t ep, std::int64_t etp) {
    estimate_input in;
    in.framework = fw;
    in.model.hidden = 1024;
    in.model.layers = 4;
    in.model.heads = 8;
    in.model.kv_heads = 8;
    in.model.head_dim = 128;
    in.model.ffn = 4096;
    in.model.vocab = 32000;
    in.model.experts = 8;
    in.model.top_k = 2;
    in.model.expert_ffn = 512;
    in.tp = tp;
    in.ep = ep;
    in.etp = etp;
    in.sequence_parallel = true;
    in.param_bytes = 2;
    in.ac = ac_kind::full;
    return in;
}

constexpr double k_tokens67 = 4096.0;
constexpr double k_h67 = 1024.0;

}  // namespace

TEST_CASE("est67: Megatron alltoall combine holds the fc2 output, its sorted copy and the all-to-all output") {
    estimate_input in = moe67_input(train_framework::megatron, 1, 2, 1);
    in.moe_dispatcher = moe_dispatcher_kind::alltoall;
    in.moe_router_bytes = 4;
    // T 4096, R = 8192 rows; 4 local experts (sorted copies), EP 2 (an all-to-all output):
    // combine = fc2 2R + sorted-back 2R + a2a 2R = 6R B per hidden element; the saved set holds one 2R: 4R above it
    const est::moe_dispatch_bytes d = est::moe_dispatch_temporaries(in, k_tokens67);
    CHECK(d.rows == doctest::Approx(8192.0));
    CHECK(d.forward == doctest::Approx(4.0 * 8192.0 * k_h67));
    CHECK(d.backward == doctest::Approx(d.forward));
    // one EP rank holding every expert: no all-to-all output (Megatron's all_to_all returns its input), the sort stays
    in.ep = 1;
    CHECK(est::moe_dispatch_temporaries(in, k_tokens67).forward == doctest::Approx(2.0 * 8192.0 * k_h67));
}

TEST_CASE("est67: under expert TP the fp32 router casts the expert output before the reduce-scatter") {
    estimate_input in = moe67_input(train_framework::megatron, 2, 2, 2);
    in.moe_dispatcher = moe_dispatcher_kind::alltoall;
    in.moe_router_bytes = 4;
    // SP over TP 2: T 2048, R 4096; fc2 output etp x R x 2 = 4R, sorted 4R, fp32 cast etp x R x 4 = 8R, reduce-scatter
    // output R x 4 = 4R: 20R at combine_preprocess, 18R above the saved 2R
    CHECK(est::moe_dispatch_temporaries(in, k_tokens67).forward == doctest::Approx(18.0 * 4096.0 * k_h67));
    // router in the compute dtype: no cast, a bf16 reduce-scatter output (2R): 4R + 4R + 2R = 10R, 8R above
    in.moe_router_bytes = 0;
    CHECK(est::moe_dispatch_temporaries(in, k_tokens67).forward == doctest::Approx(8.0 * 4096.0 * k_h67));
}

TEST_CASE("est67: Megatron allgather gathers the expert-TP x EP group's tokens and scatters the output back") {
    estimate_input in = moe67_input(train_framework::megatron, 1, 2, 1);
    // the dispatcher Megatron-LM defaults to
    CHECK(est::moe_dispatcher(in) == moe_dispatcher_kind::allgather);
    // G = 2 x 4096 rows: fc2 2R + unpermuted G-row buffer 2G + reduce-scatter output 2T, less the saved 2R
    CHECK(est::moe_dispatch_temporaries(in, k_tokens67).forward == doctest::Approx((2.0 * 8192.0 + 2.0 * 4096.0) * k_h67));
    // a one-rank group gathers nothing
    in.ep = 1;
    CHECK(est::moe_dispatch_temporaries(in, k_tokens67).forward == doctest::Approx(0.0));
}

TEST_CASE("est67: a capacity factor with padding sizes the routed rows; dropping alone never adds rows") {
    estimate_input in = moe67_input(train_framework::megatron, 1, 2, 1);
    in.moe_dispatcher = moe_dispatcher_kind::alltoall;
    in.moe_capacity_factor = 1.5;
    in.moe_pad_to_capacity = true;
    CHECK(est::moe_rows_per_token(in) == doctest::Approx(3.0));
    CHECK(est::moe_dispatch_temporaries(in, k_tokens67).forward == doctest::Approx(4.0 * 12288.0 * k_h67));
    in.moe_pad_to_capacity = false;
    CHECK(est::moe_rows_per_token(in) == doctest::Approx(2.0));
    in.moe_capacity_factor = 0.5;
    CHECK(est::moe_rows_per_token(in) == doctest::Approx(1.0));
}

TEST_CASE("est67: the HF per-expert loop holds its int64 one-hot mask; torchtitan its fp32 scored output") {
    estimate_input in = moe67_input(train_framework::generic, 1, 1, 1);
    in.hf_model = true;
    // T x k x E x 8 B
    const est::moe_dispatch_bytes hf = est::moe_dispatch_temporaries(in, k_tokens67);
    CHECK(hf.forward == doctest::Approx(4096.0 * 2.0 * 8.0 * 8.0));
    CHECK(hf.backward == doctest::Approx(hf.forward));  // rebuilt by the checkpointed layer's recompute
    in.ac = ac_kind::none;
    CHECK(est::moe_dispatch_temporaries(in, k_tokens67).backward == doctest::Approx(0.0));
    // torchtitan's local combine: routed_output.to(float32) * scores (4 B) and its bf16 cast (2 B), less the saved 2R
    estimate_input tt = moe67_input(train_framework::torchtitan, 1, 1, 1);
    CHECK(est::moe_dispatcher(tt) == moe_dispatcher_kind::local);
    CHECK(est::moe_dispatch_temporaries(tt, k_tokens67).forward == doctest::Approx(4.0 * 8192.0 * k_h67));
    tt.ep = 2;
    CHECK(est::moe_dispatcher(tt) == moe_dispatcher_kind::alltoall);
    CHECK(est::moe_dispatch_temporaries(tt, k_tokens67).forward == doctest::Approx(6.0 * 8192.0 * k_h67));
    // a dense model has none
    in.model.experts = 0;
    CHECK(est::moe_dispatch_temporaries(in, k_tokens67).forward == doctest::Approx(0.0));
}

TEST_CASE("est67: an offloaded FSDP shard is staged on the device in its stored dtype, then cast to the gather dtype") {
    // 1e9-element unit over 2 ranks: fp32 shards under bf16 mixed precision, 0.5e9 x (4 + 2) B
    CHECK(est::fsdp_offload_staging_bytes(1e9, 2.0, 4.0, 2.0) == doctest::Approx(3e9));
    // stored in the gather dtype (pure bf16, a packed 4-bit base): the copy alone
    CHECK(est::fsdp_offload_staging_bytes(1e9, 2.0, 2.0, 2.0) == doctest::Approx(1e9));
    CHECK(est::fsdp_offload_staging_bytes(1e9, 2.0, 0.53, 0.53) == doctest::Approx(0.265e9));
}
