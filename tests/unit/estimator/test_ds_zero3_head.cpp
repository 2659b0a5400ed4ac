// Round est74: DeepSpeed ZeRO-3 and the output head. A tied head is the embedding matrix, gathered for the head's
// forward and kept to its backward; prefetch gathers it whole while the last layer runs, and with offload_param the
// host partition is first copied to the device beside the gathered buffer; a trained tied head's gradient is held
// through the backward. knowledge/sources/deepspeed_zero3_residency.md
#include <doctest/doctest.h>

#include <cstdint>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "engine/estimator/estimate_model.h"
#include "tests/unit/estimator/test_util.h"

using namespace oomdx;

namespace {

// A Llama-2-7B-shaped model (h 4096, 32 layers, MHA, SwiGLU 11008) with a chosen vocabulary and tie, under DeepSpeed
// ZeRO-3, bf16, full AC, 1 x 512 per rank
est::stage_figures ds_zero3(std::int64_t vocab, bool tied, bool lora, bool offload, std::int64_t world) {
    fact_store f;
    using test_util::emit;
    emit(f, "model.family", "llama");
    emit(f, "model.hidden_size", std::int64_t(4096));
    emit(f, "model.num_layers", std::int64_t(32));
    emit(f, "model.num_attention_heads", std::int64_t(32));
    emit(f, "model.num_kv_heads", std::int64_t(32));
    emit(f, "model.head_dim", std::int64_t(128));
    emit(f, "model.intermediate_size", std::int64_t(11008));
    emit(f, "model.vocab_size", vocab);
    emit(f, "model.tie_word_embeddings", tied);
    test_util::emit_framework(f, "deepspeed");
    emit(f, "job.world_size", world);
    emit(f, "parallelism.zero_stage", std::int64_t(3));
    emit(f, "parallelism.reduce_bucket_size", std::int64_t(0));
    if (offload) {
        emit(f, "parallelism.offload_params", "cpu");
        emit(f, "optimizer.offload", "cpu");
    }
    emit(f, "training.finetuning_type", lora ? "lora" : "full");
    if (lora) emit(f, "training.lora_rank", std::int64_t(8));
    emit(f, "training.seq_len", std::int64_t(512));
    emit(f, "training.local_batch_size", std::int64_t(1));
    emit(f, "training.mixed_precision_param", "bfloat16");
    emit(f, "activation_checkpoint.mode", "full");
    const estimate_input in = from_facts(f);
    est::breakdown b;
    est::compute(in, b);
    return b.stages[0];
}

constexpr double ds_h = 4096.0;
constexpr double ds_layer = 4.0 * ds_h * ds_h + 3.0 * ds_h * 11008.0 + 2.0 * ds_h;  // 202.4 M elements
constexpr double ds_max_lin = ds_h * 11008.0;

}  // namespace

TEST_CASE("est74: ZeRO-3 offload at one rank gathers a large head beside its staged host copy at the forward's end") {
    const double head = 250880.0 * ds_h;  // 1.03 B elements, bloom's vocabulary
    const auto big = ds_zero3(250880, true, true, true, 1);
    const auto small = ds_zero3(32000, true, true, true, 1);
    // the small head's gather (2 x 0.13 B + one linear) stays inside the four-ds_layer window; the large one replaces it
    CHECK(2.0 * 32000.0 * ds_h + ds_max_lin < 4.0 * ds_layer);
    CHECK(big.temp_forward - small.temp_forward ==
          doctest::Approx(2.0 * (2.0 * head + ds_max_lin) - 2.0 * 4.0 * ds_layer).epsilon(0.01));
    // without offload (two ranks, partitions on the device) nothing is staged: the buffer alone
    const auto resident = ds_zero3(250880, true, true, false, 2);
    const auto resident_small = ds_zero3(32000, true, true, false, 2);
    CHECK(resident.temp_forward - resident_small.temp_forward ==
          doctest::Approx(2.0 * (head + ds_max_lin) - 2.0 * 4.0 * ds_layer).epsilon(0.01));
}

TEST_CASE("est74: a tied head is gathered at the loss under ZeRO-3; its gradient waits through the backward when it trains") {
    const double head = 32000.0 * ds_h;
    // LoRA: the untied head keeps est49's two copies at the loss, the tied one its gathered matrix only
    const auto lora_tied = ds_zero3(32000, true, true, true, 1);
    const auto lora_untied = ds_zero3(32000, false, true, true, 1);
    CHECK(lora_untied.temp_loss - lora_tied.temp_loss == doctest::Approx(2.0 * head).epsilon(0.01));
    CHECK(lora_tied.temp_backward == doctest::Approx(lora_untied.temp_backward).epsilon(0.001));
    // full fine-tuning: gathered + gradient at the loss either way; the tied head's gradient lasts the backward
    const auto full_tied = ds_zero3(32000, true, false, true, 1);
    const auto full_untied = ds_zero3(32000, false, false, true, 1);
    CHECK(full_tied.temp_loss == doctest::Approx(full_untied.temp_loss).epsilon(0.001));
    CHECK(full_tied.temp_backward - full_untied.temp_backward == doctest::Approx(2.0 * head).epsilon(0.01));
}
