// rev36: report lines a user of a fine-tuning config read wrong, end to end through the built binary (docs/cases.md
// "rev36"): a torchtune single-device config, the plan against the limits line, the micro-batch term on more devices,
// a user's own script's flags, axolotl's quantization defaults, and the HTML report's limits and defaults lines.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "tests/unit/run_oomdx.h"

namespace {

using oomdx::test::run_result;

run_result rev36_run(const std::string& args) { return oomdx::test::run_oomdx(args, oomdx::test::stderr_to::discard); }

std::filesystem::path rev36_file(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::temp_directory_path() / ("oomdx_rev36_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / name) << text;
    return dir / name;
}

bool rev36_has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

// The shipped QLoRA config of Llama 3.1 8B (recipes/configs/llama3_1/8B_qlora_single_device.yaml), unpacked 2048 tokens.
std::string rev36_torchtune(int batch, int accum) {
    return "model:\n  _component_: torchtune.models.llama3_1.qlora_llama3_1_8b\n  lora_attn_modules: ['q_proj', 'v_proj', "
           "'output_proj']\n  apply_lora_to_mlp: True\n  lora_rank: 8\n  lora_alpha: 16\n"
           "tokenizer:\n  _component_: torchtune.models.llama3.llama3_tokenizer\n  path: /m/tokenizer.model\n  max_seq_len: 2048\n"
           "dataset:\n  _component_: torchtune.datasets.alpaca_cleaned_dataset\n  packed: False\n"
           "batch_size: " + std::to_string(batch) + "\ngradient_accumulation_steps: " + std::to_string(accum) + "\n"
           "optimizer:\n  _component_: torch.optim.AdamW\n  lr: 3e-4\nloss:\n  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss\n"
           "device: cuda\ndtype: bf16\nenable_activation_checkpointing: True\n";
}

}  // namespace

TEST_CASE("rev36: a torchtune single-device config runs on one device; nothing is split over devices") {
    const auto single = rev36_file("8B_qlora_single_device.yaml", rev36_torchtune(6, 8));
    const run_result r = rev36_run("preflight --config " + single.string() + " --device a10g --plan");
    CHECK_FALSE(rev36_has(r.out, "splits the model over its devices"));
    CHECK_FALSE(rev36_has(r.out, "Give the world size"));
    CHECK(rev36_has(r.out, "The configuration does not fit"));
    const run_result f = rev36_run("facts --config " + single.string());
    CHECK(rev36_has(f.out, "job.world_size"));
    CHECK(rev36_has(f.out, "config file name 8B_qlora_single_device.yaml"));
    // look-alike: the same settings under a name that says no recipe keep the one-device verdict and its caveat
    const auto other = rev36_file("my_qlora.yaml", rev36_torchtune(6, 8));
    CHECK(rev36_has(rev36_run("preflight --config " + other.string() + " --device a10g").out, "Give the world size"));
}

TEST_CASE("rev36: the plan takes the largest micro-batch that fits and keeps the global batch, as the limits line says") {
    // 6 x 8 = 48 sequences a step; 4 fits (the limits line), and 4 x 12 keeps 48: the plan no longer halves to 3
    const auto cfg = rev36_file("8B_qlora_single_device.yaml", rev36_torchtune(6, 8));
    const run_result r = rev36_run("preflight --config " + cfg.string() + " --device a10g --plan");
    REQUIRE(rev36_has(r.out, "largest that fit: batch_size=4 at tokenizer.max_seq_len=2048"));
    const auto plan = r.out.substr(r.out.find("A PLAN THAT FITS"));
    CHECK(rev36_has(plan, "batch_size: 4\n"));
    CHECK(rev36_has(plan, "gradient_accumulation_steps: 12\n"));
    // diagnose judges the limits on the figure the plan is verified on (the interval's high end): the same 4, not 5
    const auto log = rev36_file("oom.log", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has "
                                           "a total capacity of 22.07 GiB of which 1.02 GiB is free. Of the allocated memory "
                                           "19.90 GiB is allocated by PyTorch, and 612.50 MiB is reserved by PyTorch but "
                                           "unallocated.\n");
    const run_result d = rev36_run("diagnose --log " + log.string() + " --config " + cfg.string() + " --device a10g");
    CHECK(rev36_has(d.out, "largest that fit: batch_size=4 at"));
    // look-alike: 4 x 2 = 8 sequences; 3 fits but divides nothing, so the plan keeps the global batch at 2 x 4
    const auto small = rev36_file("8B_qlora_single_device.yaml", rev36_torchtune(4, 2));
    const run_result s = rev36_run("preflight --config " + small.string() + " --device a10g --plan --set training.seq_len=3072");
    const auto splan = s.out.substr(s.out.find("A PLAN THAT FITS"));
    CHECK(rev36_has(splan, "gradient_accumulation_steps: 4\n"));
    CHECK(rev36_has(splan, "micro-batch 3 fits too (the largest), but no accumulation keeps the 8 sequences of a step"));
}

TEST_CASE("rev36: the micro-batch term says what the plan does to the accumulation") {
    const auto cfg = rev36_file("lf_full.yaml",
                                "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nstage: sft\ndo_train: true\nfinetuning_type: full\n"
                                "deepspeed: examples/deepspeed/ds_z3_config.json\n"
                                "dataset: alpaca_en_demo\ntemplate: qwen\ncutoff_len: 2048\nper_device_train_batch_size: 8\n"
                                "gradient_accumulation_steps: 4\nbf16: true\n");
    const run_result r = rev36_run("preflight --config " + cfg.string() + " --device a100-80gb --world-size 1 --plan");
    // on 2 devices at micro-batch 4 the 32 sequences of a step need accumulation 4, as before
    REQUIRE(rev36_has(r.out, "(gradient accumulation stays 4)"));
    CHECK(rev36_has(r.out, "micro-batch 8 -> 4: smaller GEMMs (gradient accumulation stays 4)"));
    CHECK_FALSE(rev36_has(r.out, "micro-batch 8 -> 4: smaller GEMMs, more accumulation steps"));
    const run_result z = rev36_run("preflight --lang zh --config " + cfg.string() + " --device a100-80gb --world-size 1 --plan");
    CHECK(rev36_has(z.out, "micro-batch 8 -> 4，GEMM 变小（梯度累积仍为 4）"));
}

TEST_CASE("rev36: a user's own script is read and answered in the flags it wrote") {
    const auto sh = rev36_file("run.sh", "#!/bin/bash\ntorchrun --nproc_per_node=4 finetune.py \\\n"
                                         "    --model=meta-llama/Meta-Llama-3-8B \\\n    --batch_size=16 \\\n"
                                         "    --grad_accum_steps=2 \\\n    --max_seq_len=4096 \\\n    --lr=2e-5\n");
    const run_result r = rev36_run("preflight --config " + sh.string() + " --device a100-80gb --plan");
    // before: no model read, canonical keys, Megatron's flags for a script that has none
    for (const char* before : {"names no model", "no framework known", "--tensor-model-parallel-size", "training.local_batch_size ="})
        CHECK_MESSAGE(!rev36_has(r.out, before), before);
    CHECK(rev36_has(r.out, "--batch_size 8\n"));
    // look-alike: a script whose flags name none of these settings stays unrecognized
    const auto bare = rev36_file("bare.sh", "torchrun --nproc_per_node=4 train.py --config_path=cfg.json --lr=1e-4\n");
    CHECK(rev36_has(rev36_run("facts --config " + bare.string()).out, "no framework recognized"));
}

TEST_CASE("rev36: axolotl's 4-bit defaults in axolotl's keys; text and HTML print the limits and the defaults") {
    const std::string ex = std::string(OOMDX_SOURCE_DIR) + "/examples/axolotl_qlora/qlora.yml";
    const run_result t = rev36_run("preflight --config " + ex + " --device rtx4090 --plan");
    CHECK(rev36_has(t.out, "bnb_config_kwargs.bnb_4bit_quant_type=nf4"));
    CHECK(rev36_has(t.out, "bnb_config_kwargs.bnb_4bit_use_double_quant=true"));
    CHECK_FALSE(rev36_has(t.out, "training.quantization_type=nf4"));
    const run_result h = rev36_run("preflight --config " + ex + " --device rtx4090 --plan --format html");
    CHECK(rev36_has(h.out, "axolotl defaults applied where the config is silent: "));
    CHECK(rev36_has(h.out, "largest that fit: micro_batch_size="));
    const run_result hz = rev36_run("preflight --lang zh --config " + ex + " --device rtx4090 --plan --format html");
    CHECK(rev36_has(hz.out, "其余设置不变时放得下的上限："));
}
