// `oomdx estimate` and `oomdx preflight` end to end through the built binary.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/unit/run_oomdx.h"

namespace {

using oomdx::test::run_result;

run_result run(const std::string& args) { return oomdx::test::run_oomdx(args, oomdx::test::stderr_to::discard); }

const char* k8b = "--model llama3-8b --world-size 8 --set training.seq_len=8192 ";

}  // namespace

TEST_CASE("oomdx estimate without a config: JSON breakdown") {
    const run_result r = run(std::string("estimate ") + k8b +
                             "--device h100-80gb --set training.local_batch_size=1 --set activation_checkpoint.mode=full --format json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["schema"] == "oomdx.estimate/1");
    CHECK(j["peak_bytes"].get<std::int64_t>() > 0);
    CHECK(j["reserved_peak_bytes"].get<std::int64_t>() >= j["peak_bytes"].get<std::int64_t>());
    CHECK(j["capacity_bytes"].get<std::int64_t>() > 70LL * (1LL << 30));
    CHECK(j["fits"].get<bool>());
    CHECK(j["components"].size() == 8);
    CHECK(j["param_count"].get<std::int64_t>() == 8030261248LL);
}

TEST_CASE("oomdx estimate: text output names the statistics") {
    const run_result r = run(std::string("estimate ") + k8b + "--device h100-80gb --set training.local_batch_size=2");
    REQUIRE(r.rc == 0);
    CHECK(r.out.find("max_memory_allocated") != std::string::npos);
    CHECK(r.out.find("max_memory_reserved") != std::string::npos);
}

TEST_CASE("oomdx preflight: exit 1 when it does not fit, 0 when it does") {
    const run_result bad = run(std::string("preflight ") + k8b +
                               "--device h100-80gb --set training.local_batch_size=8 --set activation_checkpoint.mode=none");
    CHECK(bad.rc == 1);
    CHECK(bad.out.find("DOES NOT FIT") != std::string::npos);
    const run_result ok = run(std::string("preflight ") + k8b +
                              "--device h100-80gb --set training.local_batch_size=1 --set activation_checkpoint.mode=full");
    CHECK(ok.rc == 0);
}

TEST_CASE("oomdx preflight --plan lists fitting configurations with overrides") {
    const run_result r = run(std::string("preflight ") + k8b +
                             "--device h100-80gb --set training.local_batch_size=8 --set activation_checkpoint.mode=none "
                             "--plan --top 5 --format json");
    CHECK(r.rc == 1);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["schema"] == "oomdx.preflight/1");
    REQUIRE(j["plan"]["candidates"].size() == 5);
    for (const auto& c : j["plan"]["candidates"]) {
        CHECK(c["margin_bytes"].get<std::int64_t>() >= 0);
        CHECK_FALSE(c["overrides"].empty());
        CHECK_FALSE(c["job_syntax"].empty());
    }
}

TEST_CASE("bad inputs exit 2 with a message") {
    CHECK(run("estimate --model llama3-8b --set training.seq_len=abc").rc == 2);
    CHECK(run("estimate --model llama3-8b --set no.such.key=1").rc == 2);
    CHECK(run("preflight --model llama3-8b --device no-such-device").rc == 2);
    CHECK(run("estimate --model /nonexistent/config.json").rc == 2);
    CHECK(run("estimate").rc == 2);  // no model
}

TEST_CASE("oomdx estimate JSON: interval, trainable parameters, reserved model (fields added, none removed)") {
    const run_result r = run("estimate --model llama3-8b --device rtx4090 --world-size 1 --framework llama_factory "
                             "--set training.finetuning_type=lora --set training.lora_rank=16 --set training.seq_len=2048 "
                             "--set training.local_batch_size=2 --format json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["schema"] == "oomdx.estimate/1");
    CHECK(j["trainable_params"].get<std::int64_t>() == 41943040);
    CHECK(j["low_bytes"].get<std::int64_t>() <= j["device_peak_bytes"].get<std::int64_t>());
    CHECK(j["high_bytes"].get<std::int64_t>() >= j["device_peak_bytes"].get<std::int64_t>());
    CHECK(j["interval_reasons"].is_array());
    CHECK(j["reserved_model"].get<std::string>().find("reserved") != std::string::npos);
    // LoRA on a bf16 base with gradient checkpointing: far below the 121 GiB of full training
    CHECK(j["peak_bytes"].get<std::int64_t>() < (std::int64_t(25) << 30));
    CHECK(j["components"].size() == 8);
}

TEST_CASE("oomdx preflight --plan JSON: verdict on the high end, largest micro-batch and sequence that fit") {
    const run_result r = run(std::string("preflight ") + k8b +
                             "--device h100-80gb --set training.local_batch_size=1 --set activation_checkpoint.mode=full "
                             "--plan --top 2 --format json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["verdict_basis"].get<std::string>().find("high end") != std::string::npos);
    CHECK(j["straddles_budget"].is_boolean());
    REQUIRE(j.contains("max_fitting"));
    CHECK(j["max_fitting"]["micro_batch"].get<std::int64_t>() >= 1);
    CHECK(j["max_fitting"]["seq_len"].get<std::int64_t>() >= 8192);
    CHECK(j["max_fitting"]["at_seq_len"].get<std::int64_t>() == 8192);
}

TEST_CASE("oomdx estimate: pipeline micro-batch stated with the default assumed") {
    const run_result r = run("estimate --model llama3-70b --device h100-80gb --world-size 64 --framework torchtitan "
                             "--set parallelism.pipeline_parallel_degree=4 --set parallelism.tensor_parallel_degree=8 "
                             "--set training.local_batch_size=8 --set training.seq_len=8192");
    REQUIRE(r.rc == 0);
    CHECK(r.out.find("Pipeline micro-batch: 1 sequence(s), 8 micro-batches per step (assumed") != std::string::npos);
}

TEST_CASE("oomdx estimate: Megatron --cross-entropy-loss-fusion reaches the loss figure from the launch script") {
    const auto path = std::filesystem::temp_directory_path() / "oomdx_test_ce_fusion.sh";
    const std::string base =
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 12 --hidden-size 512 --num-attention-heads 8 "
        "--seq-length 1024 --micro-batch-size 4 --global-batch-size 32 --tensor-model-parallel-size 2 "
        "--pipeline-model-parallel-size 2 --vocab-size 50432 --bf16";
    auto logits = [&](const std::string& extra) {
        std::ofstream(path) << base << extra << "\n";
        const run_result r = run("estimate -c " + path.string() + " -w 8 --format json");
        REQUIRE(r.rc == 0);
        const auto j = nlohmann::json::parse(r.out);
        for (const auto& c : j["components"])
            if (c["id"] == "logits") return c["formula"].get<std::string>();
        return std::string();
    };
    CHECK(logits("").find("6.0 B/element") != std::string::npos);
    CHECK(logits(" --cross-entropy-loss-fusion").find("10.0 B/element") != std::string::npos);
    CHECK(logits(" --cross-entropy-loss-fusion --cross-entropy-fusion-impl te").find("6.0 B/element") != std::string::npos);
    std::filesystem::remove(path);
}

TEST_CASE("oomdx preflight: the largest micro-batch and sequence that fit, or why none does") {
    // LoRA on a 4 B model fits a 24 GB card: the limits are numbers above the job's own.
    const run_result lora = run("preflight --model qwen3-4b --device rtx4090 --world-size 1 --framework llama_factory "
                                "--set training.finetuning_type=lora --set training.seq_len=2048 "
                                "--set training.local_batch_size=1");
    CHECK(lora.rc == 0);
    // rev35: in the job's own keys (LLaMA-Factory's) where the framework names them
    CHECK(lora.out.find("largest that fit: per_device_train_batch_size=") != std::string::npos);
    // Full fine-tuning of the same model on one card: not even micro-batch 1 at any length; at micro-batch 4 the
    // same words, never "sequence length 0 at micro-batch 4".
    for (const int mb : {1, 4}) {
        CAPTURE(mb);
        const run_result full = run("preflight --model qwen3-4b --device rtx4090 --world-size 1 --framework llama_factory "
                                    "--set training.finetuning_type=full --set training.seq_len=2048 "
                                    "--set training.local_batch_size=" + std::to_string(mb));
        CHECK(full.rc == 1);
        CHECK(full.out.find("largest that fit: per_device_train_batch_size=0") == std::string::npos);
        CHECK(full.out.find("cutoff_len=0") == std::string::npos);
        CHECK(full.out.find("no micro-batch fits at cutoff_len=2048, and no sequence length at per_device_train_batch_size=" +
                            std::to_string(mb)) != std::string::npos);
    }
}

TEST_CASE("oomdx preflight: the estimate block and the verdict agree when the interval straddles the budget") {
    // QLoRA (bitsandbytes keeps the quantized linears' inputs: a high end) on a 24 GB card, one
    // sequence of growing length: wherever the verdict (the high end) says it does not fit, the
    // estimate block says so too, and at least one length lands between the two ends.
    int straddled = 0;
    for (int seq = 6000; seq <= 8000; seq += 400) {  // fits at 6000, straddles at 6400 and 6800 (2026-12-04)
        CAPTURE(seq);
        const run_result r = run("preflight --model llama3-8b --device rtx4090 --world-size 1 --framework llama_factory "
                                 "--set training.finetuning_type=lora --set training.quantization_bit=4 "
                                 "--set training.local_batch_size=1 --set training.seq_len=" + std::to_string(seq));
        REQUIRE((r.rc == 0 || r.rc == 1));
        const bool verdict_over = r.rc == 1;
        const bool block_over = r.out.find("DOES NOT FIT") != std::string::npos;
        CHECK(verdict_over == block_over);
        if (r.out.find("the interval straddles the budget") != std::string::npos) {
            ++straddled;
            CHECK(verdict_over);
            CHECK(r.out.find(": fits by") != std::string::npos);  // the point estimate fits
        }
    }
    CHECK(straddled >= 1);
}

TEST_CASE("oomdx preflight JSON: fits is null when there is no verdict, a boolean when there is one") {
    const auto cfg = std::filesystem::temp_directory_path() / ("oomdx_fits_" + std::to_string(::getpid()) + ".yaml");
    std::ofstream(cfg) << "model_name_or_path: someorg/NoSuchModel-7B\nstage: sft\ndo_train: true\n"
                          "finetuning_type: lora\ncutoff_len: 1024\n";
    // an unknown model: "cannot say", so no fits/does-not-fit claim beside it
    const run_result unknown = run("preflight --config " + cfg.string() + " --device h100-80gb --format json");
    // the same config with a model: a verdict
    const run_result known = run("preflight --config " + cfg.string() + " --model llama3-8b --device h100-80gb --format json");
    std::filesystem::remove(cfg);
    REQUIRE(unknown.rc == 0);
    const auto ju = nlohmann::json::parse(unknown.out);
    CHECK(ju["fits"].is_null());
    CHECK(ju["headline"].get<std::string>().find("cannot say") != std::string::npos);
    REQUIRE(known.rc == 0);
    const auto jk = nlohmann::json::parse(known.out);
    REQUIRE(jk["fits"].is_boolean());
    CHECK(jk["fits"].get<bool>());
}

TEST_CASE("oomdx diagnose: a launch command the paste cut gives no framework defaults for the flags after the cut") {
    const auto path = std::filesystem::temp_directory_path() / ("oomdx_cut_" + std::to_string(::getpid()) + ".log");
    auto checkpointing_default = [&](const std::string& log) {
        std::ofstream(path) << log;
        const run_result r = run("diagnose -l " + path.string() + " -d a100-40gb -w 4 --format json");
        REQUIRE(r.rc == 0);
        return r.out.find("hf_trainer default when the config does not set it") != std::string::npos;
    };
    const std::string head =
        "even at per_device_train_batch_size 1, I still got CUDA Out of memory.\n"
        "deepspeed llava/train/train_mem.py \\\n"
        "    --deepspeed ./scripts/zero2.json \\\n"
        "    --model_name_or_path lmsys/vicuna-7b-v1.5";
    // the last line still ends in a continuation: the flags after it are not in the log
    CHECK_FALSE(checkpointing_default(head + " \\\n"));
    // the command ends in the log: what it does not set is the trainer's default
    CHECK(checkpointing_default(head + "\n"));
    std::filesystem::remove(path);
}

// rev35: "largest that fit" in the job's own keys, and in diagnose too where the job's own figure is over the budget.
TEST_CASE("rev35: the largest micro-batch and length that fit, in the job's keys, in preflight and diagnose") {
    const std::string ex = std::string(OOMDX_SOURCE_DIR) + "/examples/";
    // torchtune: batch_size and the tokenizer's max_seq_len, nested key spelled with its section
    const run_result tt = run("preflight --config " + ex + "torchtune_qlora/8B_qlora_single_device.yaml --device rtx4090");
    CHECK(tt.out.find("largest that fit: batch_size=") != std::string::npos);
    CHECK(tt.out.find(" at tokenizer.max_seq_len=4096;") != std::string::npos);
    // diagnose of a LLaMA-Factory job whose own figure is over the budget (48.46 GiB on a 4090): the line, in its keys
    const run_result lf = run("diagnose --log " + ex + "lora_long_batch/train.log --config " + ex +
                              "lora_long_batch/qwen3_8b_lora.yaml --device rtx4090");
    // (at 4096 tokens not even one sequence fits: the 151936-token vocabulary's logits; shorter ones do)
    CHECK(lf.out.find("largest that fit: no micro-batch at cutoff_len=4096; cutoff_len=") != std::string::npos);
    CHECK(lf.out.find(" at per_device_train_batch_size=4 (the other settings as they are)") != std::string::npos);
    const run_result lfz = run("diagnose --lang zh --log " + ex + "lora_long_batch/train.log --config " + ex +
                               "lora_long_batch/qwen3_8b_lora.yaml --device rtx4090");
    CHECK(lfz.out.find("其余设置不变时放得下的上限：cutoff_len=4096 时任何 micro-batch 都放不下；per_device_train_batch_size=4 时最大为 cutoff_len=") != std::string::npos);
    // look-alike: a diagnose whose estimate fits (the OOM came from growth) states no limits above the job's sizes
    const run_result fit = run("diagnose --log " + ex + "late_oom_growing_memory/train.log --config " + ex +
                               "late_oom_growing_memory/llama3_8b.toml --model llama3-8b --device h100-80gb --world-size 8");
    CHECK(fit.out.find("largest that fit") == std::string::npos);
    // torchtitan without a config (full training of 8B on one 4090 fits nothing): its TOML keys, section and field
    const run_result tt2 = run("preflight --model llama3-8b --device rtx4090 --world-size 1 --framework torchtitan "
                               "--set training.seq_len=2048");
    CHECK(tt2.out.find("no micro-batch fits at training.seq_len=2048, and no sequence length at "
                       "training.local_batch_size=") != std::string::npos);
}

// rev35: the framework defaults the estimate applied (LLaMA-Factory checkpoints by default; a 4-bit load is NF4 with
// double quantization) are stated in the job's keys; a key the config sets, or a quantization default without a
// 4-bit load, is not.
TEST_CASE("rev35: framework defaults the estimate applied are stated in the job's keys") {
    const auto cfg = std::filesystem::temp_directory_path() / ("oomdx_rev35_" + std::to_string(::getpid()) + ".yaml");
    auto preflight = [&](const std::string& extra) {
        std::ofstream(cfg) << "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\ndo_train: true\n"
                              "finetuning_type: lora\nlora_target: all\ndataset: alpaca_en_demo\ncutoff_len: 4096\n"
                              "per_device_train_batch_size: 8\nbf16: true\n" << extra;
        return run("preflight --config " + cfg.string() + " --device rtx3090");
    };
    const run_result q = preflight("quantization_bit: 4\n");
    CHECK(q.out.find("llama_factory defaults applied where the config is silent: disable_gradient_checkpointing=false") !=
          std::string::npos);
    CHECK(q.out.find("quantization_type=nf4, double_quantization=true") != std::string::npos);
    CHECK(q.out.find("lora_target=") == std::string::npos);  // the config sets it
    // look-alikes: no 4-bit load, no quantization defaults; checkpointing set off, not listed as a default
    const run_result plain = preflight("disable_gradient_checkpointing: true\n");
    CHECK(plain.out.find("quantization_type=") == std::string::npos);
    CHECK(plain.out.find("disable_gradient_checkpointing=false") == std::string::npos);
    // rev40: no `optim`: HF TrainingArguments' default (adamw_torch) is a framework default, not a missing value
    const run_result js = run("preflight --format json --config " + cfg.string() + " --device rtx3090");
    CHECK(plain.out.find("optim=adamw_torch") != std::string::npos);
    CHECK(js.out.find("optimizer missing") == std::string::npos);
    CHECK(js.out.find("\"optim=adamw_torch\"") != std::string::npos);
    // look-alike: an optimizer the config names is the config's, not listed as a default
    const run_result named = preflight("optim: adamw_bnb_8bit\n");
    CHECK(named.out.find("optim=adamw_torch") == std::string::npos);
    std::filesystem::remove(cfg);
}
