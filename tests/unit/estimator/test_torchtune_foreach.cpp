// Round est73: torchtune builds torch.optim.AdamW from its config; the shipped configs gave it no `fused` until #1575
// (cca50f02e, 2024-09-14), so older jobs step with torch's foreach AdamW, which allocates sqrt(exp_avg_sq) for the
// whole parameter group at once (torch optim/adamw.py _multi_tensor_adamw). knowledge/frameworks/torchtune.yaml maps
// the config's optimizer.fused / optimizer.foreach.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "tests/unit/estimator/test_util.h"

using namespace oomdx;

namespace {

// Llama 3 8B full fine-tuning on one GPU (torchtune, dtype bf16: weights, gradients and AdamW states in bf16), full
// AC, 1 x 2048; `date` empty leaves the build undated
estimate_result tt_full_job(const std::string& date, const char* implementation = nullptr) {
    fact_store f;
    using test_util::emit;
    test_util::emit_llama8b(f);
    test_util::emit_framework(f, "torchtune");
    if (!date.empty()) emit(f, "job.framework_date", date);
    emit(f, "job.world_size", std::int64_t(1));
    emit(f, "training.finetuning_type", "full");
    emit(f, "training.seq_len", std::int64_t(2048));
    emit(f, "training.local_batch_size", std::int64_t(1));
    emit(f, "training.mixed_precision_param", "bfloat16");
    emit(f, "training.pure_bf16", true);
    emit(f, "activation_checkpoint.mode", "full");
    emit(f, "optimizer.name", "AdamW");
    if (implementation) emit(f, "optimizer.implementation", implementation);
    return estimate(from_facts(f));
}

}  // namespace

TEST_CASE("est73: torchtune AdamW before #1575 steps with the foreach buffer, after it fused in place") {
    const estimate_result before = tt_full_job("2024-05-09");
    const estimate_result after = tt_full_job("2024-09-14");
    // Llama 3 8B: 8,030,261,248 parameters; bf16 exp_avg_sq: sqrt of it is one 2 B x N buffer (16.06 GB)
    const double buffer = 2.0 * 8030261248.0;
    const double extra = double(before.optimizer_step_bytes - after.optimizer_step_bytes);
    CHECK(extra >= 0.99 * buffer);
    CHECK(extra <= 1.01 * buffer);
    // the config's flag wins over the date, either way
    CHECK(tt_full_job("2024-05-09", "fused").optimizer_step_bytes == after.optimizer_step_bytes);
    CHECK(tt_full_job("2024-09-14", "foreach").optimizer_step_bytes == before.optimizer_step_bytes);
}

TEST_CASE("est73: an undated torchtune AdamW job keeps the foreach buffer at the interval's high end only") {
    const estimate_result undated = tt_full_job("");
    const estimate_result after = tt_full_job("2024-09-14");
    const estimate_result before = tt_full_job("2024-05-09");
    CHECK(undated.optimizer_step_bytes == after.optimizer_step_bytes);
    CHECK(undated.high_bytes >= before.device_peak_bytes);
    bool named = false;
    for (const std::string& s : undated.interval_reasons) named = named || s.find("#1575") != std::string::npos;
    CHECK(named);
    for (const std::string& s : after.interval_reasons) CHECK(s.find("#1575") == std::string::npos);
}
