// Round est62: two Megatron pipeline settings read in megatron/core: --defer-embedding-wgrad-compute keeps the output
// layer's input and logits gradient of the deferred micro-batches on the last stage until the step's last backward
// (tensor_parallel/layers.py), and --microbatch-group-size-per-virtual-pipeline-stage sets how many chunk
// micro-batches the interleaved warmup runs (pipeline_parallel/schedules.py get_pp_rank_microbatches).
#include <doctest/doctest.h>

#include <cstdint>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "tests/unit/estimator/test_util.h"

using namespace oomdx;

namespace {

// Megatron-Core's 12 x 512 CI GPT, 8 ranks, micro-batch 4 x 1024, bf16, Adam
fact_store mcore_ci_facts(std::int64_t tp, std::int64_t pp, std::int64_t global) {
    fact_store f;
    using test_util::emit;
    emit(f, "model.family", "gpt");
    emit(f, "model.gated_mlp", false);
    emit(f, "model.hidden_size", std::int64_t(512));
    emit(f, "model.num_layers", std::int64_t(12));
    emit(f, "model.num_attention_heads", std::int64_t(8));
    emit(f, "model.num_kv_heads", std::int64_t(8));
    emit(f, "model.head_dim", std::int64_t(64));
    emit(f, "model.intermediate_size", std::int64_t(2048));
    emit(f, "model.vocab_size", std::int64_t(50432));
    emit(f, "model.tie_word_embeddings", true);
    test_util::emit_framework(f, "megatron");
    emit(f, "job.world_size", std::int64_t(8));
    emit(f, "parallelism.tensor_parallel_degree", tp);
    emit(f, "parallelism.pipeline_parallel_degree", pp);
    emit(f, "training.local_batch_size", std::int64_t(4));
    emit(f, "training.global_batch_size", global);
    emit(f, "training.seq_len", std::int64_t(1024));
    emit(f, "training.mixed_precision_param", "bfloat16");
    emit(f, "activation_checkpoint.mode", "none");
    return f;
}

}  // namespace

TEST_CASE("est62: Megatron's deferred embedding wgrad keeps the deferred micro-batches' logits gradients") {
    // TP 2, PP 2, DP 2: four micro-batches per step; the limit 2 defers the first two
    fact_store plain = mcore_ci_facts(2, 2, 32);
    fact_store deferred = mcore_ci_facts(2, 2, 32);
    test_util::emit(deferred, "training.defer_embedding_wgrad", true);
    test_util::emit(deferred, "training.wgrad_deferral_limit", std::int64_t(2));
    const double extra = double(estimate(from_facts(deferred)).peak_bytes - estimate(from_facts(plain)).peak_bytes);
    // two micro-batches x 4096 tokens x (512 inputs + 50432 / 2 logits-gradient columns) x 2 B
    CHECK(extra == doctest::Approx(2.0 * 4096.0 * (512.0 + 25216.0) * 2.0).epsilon(0.01));
    // no limit (0): every earlier micro-batch of the step, three here
    fact_store all = mcore_ci_facts(2, 2, 32);
    test_util::emit(all, "training.defer_embedding_wgrad", true);
    const double extra_all = double(estimate(from_facts(all)).peak_bytes - estimate(from_facts(plain)).peak_bytes);
    CHECK(extra_all == doctest::Approx(1.5 * extra).epsilon(0.01));
}

TEST_CASE("est62: a larger interleaved micro-batch group holds more chunk micro-batches on the last stage") {
    // PP 4 with 3 chunks per rank, DP 2, five micro-batches per step: the last rank's warmup is (3 - 1) x group
    fact_store base = mcore_ci_facts(1, 4, 40);
    test_util::emit(base, "parallelism.virtual_pipeline_degree", std::int64_t(3));
    fact_store group5 = base;
    test_util::emit(group5, "parallelism.pipeline_microbatch_group_size", std::int64_t(5));
    fact_store group4 = base;
    test_util::emit(group4, "parallelism.pipeline_microbatch_group_size", std::int64_t(4));
    const estimate_result r_default = estimate(from_facts(base)), r4 = estimate(from_facts(group4)),
                          r5 = estimate(from_facts(group5));
    CHECK(r4.peak_bytes == r_default.peak_bytes);  // the default group is the PP degree
    CHECK(r5.peak_bytes > r4.peak_bytes);          // 11 chunk micro-batches in flight instead of 9
}
