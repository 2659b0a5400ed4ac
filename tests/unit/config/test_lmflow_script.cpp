// cases76: LMFlow's examples/finetune.py command is its own adapter over the HF Trainer's flags: --use_lora decides
// full fine-tuning or LoRA (full by default), and the shipped DeepSpeed configs it names offload the optimizer.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "parsers/config/job_config.h"

using namespace oomdx;

namespace {

std::string lmflow_script_file(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::temp_directory_path() / ("oomdx_lmflow_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto p = dir / name;
    std::ofstream(p) << text;
    return p.string();
}

}  // namespace

TEST_CASE("cases76: LMFlow's finetune.py without --use_lora is full fine-tuning with the optimizer offloaded") {
    // OptimalScale/LMFlow#563: the full fine-tuning command of Vicuna-7B with configs/ds_config_zero2.json
    const job_config full = parse_job_config(lmflow_script_file(
        "run_finetune.sh", "deepspeed ${deepspeed_args} \\\n  examples/finetune.py \\\n"
                           "    --deepspeed configs/ds_config_zero2.json --bf16 \\\n"
                           "    --model_name_or_path lmsys/vicuna-7b-v1.1 --dataset_path data/taoli_data/ \\\n"
                           "    --per_device_train_batch_size 1 --block_size 512 --do_train\n"));
    CHECK(full.framework == "lmflow");
    // no --use_lora: the adapter's default (full) is applied with the other framework defaults, not read from a flag
    CHECK_FALSE(full.find("training.finetuning_type"));
    REQUIRE(full.find("optimizer.offload"));
    CHECK(full.find("optimizer.offload")->val.as_string() == "cpu");
    REQUIRE(full.find("training.seq_len"));
    CHECK(full.find("training.seq_len")->val.as_integer() == 512);
    // the other side: --use_lora 1 and a DeepSpeed config of the user's own (its offload is not assumed)
    const job_config lora = parse_job_config(lmflow_script_file(
        "run_finetune_with_lora.sh", "deepspeed examples/finetune.py --model_name_or_path facebook/galactica-1.3b \\\n"
                                     "    --dataset_path data/alpaca/train --block_size 512 --use_lora 1 --lora_r 8 \\\n"
                                     "    --deepspeed my_ds_config.json --per_device_train_batch_size 1\n"));
    CHECK(lora.framework == "lmflow");
    REQUIRE(lora.find("training.finetuning_type"));
    CHECK(lora.find("training.finetuning_type")->val.as_string() == "lora");
    CHECK_FALSE(lora.find("optimizer.offload"));
    const job_config off = parse_job_config(lmflow_script_file(
        "run_full.sh", "deepspeed examples/finetune.py --model_name_or_path gpt2 --dataset_path data/x --use_lora 0\n"));
    REQUIRE(off.find("training.finetuning_type"));
    CHECK(off.find("training.finetuning_type")->val.as_string() == "full");
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(lmflow_script_file("x", "")).parent_path(), ec);
}
