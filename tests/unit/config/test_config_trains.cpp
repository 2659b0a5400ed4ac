// A LLaMA-Factory config that asks for evaluation or prediction and not for training has no
// training step to estimate (job.trains = false); any other config keeps its estimate (end to end;
// skips when the binary is not built).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/unit/run_oomdx.h"

namespace {

struct outcome {
    bool trains_fact = false;  // job.trains present (it is only ever false)
    std::string trains_source;
    bool has_estimate = false;
    std::string summary;  // the headline
};

// preflight --config (a YAML file with `text`) --format json --explain
outcome preflight_of(const std::string& text, const std::string& extra = "") {
    // one file per process and call: ctest runs the test cases of this file in parallel
    static int calls = 0;
    const auto path = std::filesystem::temp_directory_path() /
                      ("oomdx_config_trains_" + std::to_string(::getpid()) + "_" + std::to_string(++calls) + ".yaml");
    std::ofstream(path) << text;
    const auto r = oomdx::test::run_oomdx("preflight --config " + path.string() + " --device a100-80gb " + extra +
                                              " --format json --explain",
                                          oomdx::test::stderr_to::discard);
    std::filesystem::remove(path);
    REQUIRE(r.rc <= 1);
    const auto j = nlohmann::json::parse(r.out);
    outcome o;
    for (const auto& f : j["explain"]["facts"])
        if (f["name"] == "job.trains") {
            o.trains_fact = true;
            o.trains_source = f["source"].get<std::string>();
            CHECK(f["value"] == false);
        }
    o.has_estimate = j.contains("estimate") && !j["estimate"].is_null();
    o.summary = j["headline"].is_string() ? j["headline"].get<std::string>() : j["headline"].dump();
    return o;
}

const std::string k_model = "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nfinetuning_type: lora\ntemplate: llama3\n";

}  // namespace

TEST_CASE("an evaluation- or prediction-only LLaMA-Factory config gets no training estimate") {
    if (!std::filesystem::exists(OOMDX_BINARY)) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    auto o = preflight_of(k_model + "stage: sft\ndo_predict: true\npredict_with_generate: true\n");
    CHECK(o.trains_fact);
    CHECK(o.trains_source.ends_with(".yaml:5"));  // the do_predict line
    CHECK_FALSE(o.has_estimate);
    CHECK(o.summary.find("does not train: do_predict") != std::string::npos);

    o = preflight_of(k_model + "stage: sft\ndo_eval: true\n");
    CHECK(o.trains_fact);
    CHECK(o.summary.find("do_eval is set") != std::string::npos);

    o = preflight_of(k_model + "stage: sft\ndo_train: false\n");
    CHECK(o.trains_fact);
    CHECK_FALSE(o.has_estimate);

    // do_train with do_predict trains (and predicts afterwards): the estimate stands
    o = preflight_of(k_model + "stage: sft\ndo_train: true\ndo_predict: true\n");
    CHECK_FALSE(o.trains_fact);
    CHECK(o.has_estimate);

    // a config that names no phase is taken as training (partial copies leave do_train out)
    o = preflight_of(k_model + "stage: sft\ncutoff_len: 1024\n");
    CHECK_FALSE(o.trains_fact);
    CHECK(o.has_estimate);

    // --set training.do_train=true asks for the training estimate of a prediction config
    o = preflight_of(k_model + "stage: sft\ndo_predict: true\n", "--set training.do_train=true");
    CHECK_FALSE(o.trains_fact);
    CHECK(o.has_estimate);
}

TEST_CASE("an HF Trainer config with do_predict keeps its estimate (the script, not the framework, decides)") {
    if (!std::filesystem::exists(OOMDX_BINARY)) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    const auto o = preflight_of("model_name_or_path: meta-llama/Meta-Llama-3-8B\nper_device_train_batch_size: 2\n"
                                "gradient_checkpointing: true\ndo_predict: true\n",
                                "--framework hf_trainer");
    CHECK_FALSE(o.trains_fact);
    CHECK(o.has_estimate);
}

namespace {

// preflight of a shell script `text`: (framework, job.entry_script, job.trains present, estimate made)
std::tuple<std::string, std::string, bool, bool> script_preflight(const std::string& text,
                                                                 const std::string& device = "a100-80gb") {
    static int calls = 0;
    const auto path = std::filesystem::temp_directory_path() /
                      ("oomdx_console_script_" + std::to_string(::getpid()) + "_" + std::to_string(++calls) + ".sh");
    std::ofstream(path) << text;
    const auto r = oomdx::test::run_oomdx("preflight --config " + path.string() + " --device " + device + " --format json --explain",
                                          oomdx::test::stderr_to::discard);
    std::filesystem::remove(path);
    REQUIRE(r.rc <= 1);
    const auto j = nlohmann::json::parse(r.out);
    std::string framework, script;
    bool trains_fact = false;
    for (const auto& f : j["explain"]["facts"]) {
        if (f["name"] == "job.framework") framework = f["value"].get<std::string>();
        if (f["name"] == "job.entry_script") script = f["value"].get<std::string>();
        if (f["name"] == "job.trains") trains_fact = true;
    }
    return {framework, script, trains_fact, j.contains("estimate") && !j["estimate"].is_null()};
}


// preflight of a Megatron launch script with `launch` as its command: (job.entry_script, job.trains present, estimate made)
std::tuple<std::string, bool, bool> megatron_launch(const std::string& launch) {
    auto [framework, script, trains_fact, estimate] = script_preflight(
        "#!/bin/bash\n" + launch +
            " --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32"
            " --seq-length 4096 --micro-batch-size 1 --tensor-model-parallel-size 1 --bf16 --swiglu"
            " --vocab-size 128256\n",
        "h100-80gb");
    return {script, trains_fact, estimate};
}

}  // namespace

TEST_CASE("a launch line that runs a generation or inference script gets no training estimate") {
    if (!std::filesystem::exists(OOMDX_BINARY)) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    auto [script, trains_fact, estimate] = megatron_launch("torchrun --nproc_per_node 8 tools/run_text_generation_server.py");
    CHECK(script == "run_text_generation_server.py");
    CHECK(trains_fact);
    CHECK_FALSE(estimate);

    std::tie(script, trains_fact, estimate) =
        megatron_launch("python -m torch.distributed.run --nproc_per_node 8 -m examples.inference.offline_inference");
    CHECK(script == "offline_inference.py");  // the launcher module is skipped
    CHECK(trains_fact);

    std::tie(script, trains_fact, estimate) = megatron_launch("torchrun --nproc_per_node 8 pretrain_gpt.py");
    CHECK(script == "pretrain_gpt.py");
    CHECK_FALSE(trains_fact);
    CHECK(estimate);
}

namespace {

// A torchtune config's top: the model builder, tokenizer and checkpointer every recipe has.
const std::string k_torchtune =
    "model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n"
    "tokenizer:\n  _component_: torchtune.models.llama3.llama3_tokenizer\n  path: /tmp/tokenizer.model\n"
    "checkpointer:\n  _component_: torchtune.training.FullModelHFCheckpointer\n  checkpoint_dir: /tmp/ckpt\n"
    "  checkpoint_files: [model-00001-of-00004.safetensors]\n  model_type: LLAMA3\n"
    "device: cuda\ndtype: bf16\nbatch_size: 4\n";

}  // namespace

TEST_CASE("a torchtune config without an optimizer (eval, generation, quantization recipes) gets no training estimate") {
    if (!std::filesystem::exists(OOMDX_BINARY)) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    // eleuther_eval recipe config
    auto o = preflight_of(k_torchtune + "tasks: [truthfulqa_mc2]\nlimit: null\nmax_seq_length: 4096\n");
    CHECK(o.trains_fact);
    CHECK_FALSE(o.has_estimate);
    CHECK(o.summary.find("none of the keys that mark a torchtune training config (optimizer, training.optimizer)") != std::string::npos);
    // generate recipe config
    o = preflight_of(k_torchtune + "prompt:\n  user: Tell me a joke.\nmax_new_tokens: 300\ntemperature: 0.6\ntop_k: 300\n");
    CHECK(o.trains_fact);
    CHECK_FALSE(o.has_estimate);

    // the same config with an optimizer is a training config: estimated
    o = preflight_of(k_torchtune + "optimizer:\n  _component_: torch.optim.AdamW\n  lr: 2e-5\n"
                                   "loss:\n  _component_: torchtune.modules.loss.LinearCrossEntropyLoss\n"
                                   "tokenizer.max_seq_len: 2048\nenable_activation_checkpointing: true\n");
    CHECK_FALSE(o.trains_fact);
    CHECK(o.has_estimate);
    // the async GRPO recipe nests its optimizer under `training:`
    o = preflight_of(k_torchtune + "training:\n  optimizer:\n    _component_: torch.optim.AdamW\n    lr: 1e-5\n");
    CHECK_FALSE(o.trains_fact);
    // an optimizer given with --set asks for the training estimate
    o = preflight_of(k_torchtune + "tasks: [truthfulqa_mc2]\n", "--set optimizer.name=adamw");
    CHECK_FALSE(o.trains_fact);
    CHECK(o.has_estimate);
}

TEST_CASE("LLaMA-Factory inference and export configs (no stage, data or schedule) get no training estimate") {
    if (!std::filesystem::exists(OOMDX_BINARY)) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    const std::string base = "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nadapter_name_or_path: saves/qwen/lora/sft\n"
                             "template: qwen\ntrust_remote_code: true\n";
    // llamafactory-cli chat / webchat / api
    auto o = preflight_of(base + "infer_backend: huggingface\n");
    CHECK(o.trains_fact);
    CHECK_FALSE(o.has_estimate);
    CHECK(o.summary.find("none of the keys that mark a llama_factory training config (stage, do_train") != std::string::npos);
    // llamafactory-cli export (an adapter merge)
    o = preflight_of(base + "export_dir: saves/merged\nexport_size: 5\nexport_device: cpu\n");
    CHECK(o.trains_fact);
    CHECK_FALSE(o.has_estimate);
    // older inference examples also say finetuning_type: lora; still not a training config
    o = preflight_of(base + "finetuning_type: lora\n");
    CHECK(o.trains_fact);
    // any key of a training config makes it one (a partial copy that keeps only the data)
    o = preflight_of(base + "dataset: alpaca_en_demo\n");
    CHECK_FALSE(o.trains_fact);
    CHECK(o.has_estimate);
    // a training setting given with --set asks for the training estimate
    o = preflight_of(base + "export_dir: saves/merged\n", "--set training.local_batch_size=2");
    CHECK_FALSE(o.trains_fact);
    CHECK(o.has_estimate);
    // LLaMA-Factory v1: an adapter export names neither train_dataset nor a schedule
    o = preflight_of("model: Qwen/Qwen3-4B\npeft_config:\n  name: lora\n  adapter_name_or_path: ./outputs/test_lora\n"
                     "  export_dir: ./merge_lora_model\n");
    CHECK(o.trains_fact);
    CHECK_FALSE(o.has_estimate);
}


TEST_CASE("a framework's console command that serves, infers or exports gets no training estimate") {
    if (!std::filesystem::exists(OOMDX_BINARY)) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    // `swift infer` was read as a Megatron-LM line (no adapter's launcher), naming no model.
    auto [fw, script, trains_fact, estimate] = script_preflight(
        "CUDA_VISIBLE_DEVICES=0 swift infer \\\n  --model Qwen/Qwen2.5-7B-Instruct \\\n  --stream true --max_new_tokens 2048\n");
    CHECK(fw == "ms_swift");
    CHECK(script == "infer.py");
    CHECK(trains_fact);
    CHECK_FALSE(estimate);
    std::tie(fw, script, trains_fact, estimate) =
        script_preflight("swift merge-lora --model Qwen/Qwen2.5-7B-Instruct --adapters output/checkpoint-100\n");
    CHECK(fw == "ms_swift");
    CHECK(script == "merge_lora.py");  // '-' is '_' in the module's name
    CHECK(trains_fact);
    std::tie(fw, script, trains_fact, estimate) =
        script_preflight("NPROC_PER_NODE=2 megatron export --model Qwen/Qwen2.5-7B-Instruct --to_mcore true\n");
    CHECK(fw == "ms_swift_megatron");
    CHECK(script == "export.py");
    CHECK(trains_fact);
    // the training subcommands keep their estimate
    std::tie(fw, script, trains_fact, estimate) = script_preflight(
        "swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type lora --max_length 2048 --per_device_train_batch_size 1\n");
    CHECK(fw == "ms_swift");
    CHECK(script == "sft.py");
    CHECK_FALSE(trains_fact);
    CHECK(estimate);
    // TRL: `trl dpo` is still its DPO script; `trl vllm-serve` is GRPO's generation server
    std::tie(fw, script, trains_fact, estimate) =
        script_preflight("trl vllm-serve --model Qwen/Qwen2.5-7B-Instruct --tensor_parallel_size 1\n");
    CHECK(script == "vllm_serve.py");
    std::tie(fw, script, trains_fact, estimate) = script_preflight(
        "trl dpo --model_name_or_path Qwen/Qwen2.5-0.5B-Instruct --dataset_name x --per_device_train_batch_size 2\n");
    CHECK(script == "dpo.py");
    CHECK_FALSE(trains_fact);
}
