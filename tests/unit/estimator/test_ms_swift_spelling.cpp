// Round est69: an ms-swift command line in the 1.x / 2.x spellings (--sft_type, --dtype, ...) trains LoRA on the
// model's q/k/v by default (lora_target_modules DEFAULT), a 3.x one on every linear (knowledge/frameworks/ms_swift.yaml,
// knowledge/sources/ms_swift_runs_and_readings.md); the estimate says which default it took.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "parsers/config/job_config.h"
#include "parsers/config/model_dims.h"

using namespace oomdx;

namespace {

estimate_input est69_swift_job(const std::string& name, const std::string& line) {
    const auto path = std::filesystem::temp_directory_path() / ("oomdx_est69_" + name + ".sh");
    std::ofstream(path) << line << "\n";
    fact_store f;
    emit_facts(load_model("qwen2.5-7b"), f);
    emit_facts(parse_job_config(path.string()), f);
    return from_facts(f);
}

bool est69_assumes(const estimate_input& in, const std::string& part) {
    return std::any_of(in.assumptions.begin(), in.assumptions.end(),
                       [&](const std::string& a) { return a.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("est69: ms-swift 2.x spelling keeps LoRA on q/k/v; the 3.x one on every linear") {
    const estimate_input v2 = est69_swift_job("v2", "swift sft --model_type qwen2_5-7b-instruct --sft_type lora --max_length 2048");
    const estimate_input v2_named = est69_swift_job(
        "v2_named", "swift sft --model_type qwen2_5-7b-instruct --sft_type lora --lora_target_modules q_proj k_proj v_proj "
                    "--max_length 2048");
    const estimate_input v3 = est69_swift_job("v3", "swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type lora --max_length 2048");
    using namespace lora_target;
    CHECK(v2.ft.targets == (q | k | v));
    CHECK(v2_named.ft.targets == (q | k | v));
    CHECK(v3.ft.targets == all);
    CHECK(est69_assumes(v2, "default of the builds that read"));
    CHECK_FALSE(est69_assumes(v2_named, "default of the builds that read"));
    CHECK_FALSE(est69_assumes(v3, "default of the builds that read"));

    // Qwen2.5-7B (hidden 3584, 28 layers, 4 KV heads x 128, MLP 18944), rank 8: A is 3584 x 8 per projection, B is
    // 8 x its output. q/k/v: 3 x 28672 + 8 x (3584 + 512 + 512) = 122880 a layer, 3 440 640 in all; every linear adds
    // o (57344), gate and up (2 x 180224) and down (180224): 720896 a layer, 20 185 088 in all.
    const estimate_result r2 = estimate(v2), r3 = estimate(v3);
    CHECK(r2.trainable_params == 3440640);
    CHECK(r3.trainable_params == 20185088);
    CHECK(r2.trainable_params == estimate(v2_named).trainable_params);
    CHECK(r2.peak_bytes < r3.peak_bytes);
}

TEST_CASE("est69: ms-swift's own loss (a weighted loss scale) keeps full logits even with --use_liger_kernel") {
    const std::string head = "swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type lora --use_liger_kernel true --max_length 2048";
    const estimate_input liger = est69_swift_job("liger", head);
    const estimate_input hermes = est69_swift_job("hermes", head + " --loss_scale hermes");
    const estimate_input binary = est69_swift_job("binary", head + " --loss_scale ignore_empty_think");
    CHECK(liger.chunked_loss);
    CHECK(binary.chunked_loss);  // 0 / 1 weights: folded into the labels, Liger runs
    CHECK_FALSE(hermes.chunked_loss);
    CHECK(est69_assumes(hermes, "computes the loss itself"));
    CHECK_FALSE(est69_assumes(liger, "computes the loss itself"));
    // one micro-batch's bf16 logits (the helper's Qwen2.5-7B dims: 152064 words), 2048 tokens x 152064 x 2 B =
    // 622 854 144 B, written only without the fusion
    CHECK(estimate(hermes).logits_tensor_bytes == 622854144);
    CHECK(estimate(liger).logits_tensor_bytes == 0);
}
