// cases74: Alpaca-CoT's uniform_finetune.py is its own adapter (argparse flags), not Alpaca-LoRA's finetune.py; and a
// smaller Alpaca-LoRA micro-batch needs no accumulation flag (the script divides --batch_size by it).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "parsers/config/job_config.h"
#include "parsers/config/override_syntax.h"

using namespace oomdx;

namespace {

std::string alpaca_script_file(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::temp_directory_path() / ("oomdx_alpaca_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto p = dir / name;
    std::ofstream(p) << text;
    return p.string();
}

}  // namespace

TEST_CASE("cases74: Alpaca-CoT's uniform_finetune.py reads --per_gpu_train_batch_size, not Alpaca-LoRA's defaults") {
    // PhoebusSi/Alpaca-CoT#118: `python3 uniform_finetune.py --model_type chatglm ... --lora_target_modules
    // query_key_value --lora_r 32 ... --per_gpu_train_batch_size 2` was taken for Alpaca-LoRA (micro-batch 4 assumed).
    const job_config cot = parse_job_config(alpaca_script_file(
        "finetune.sh", "python3 uniform_finetune.py   --model_type chatglm --model_name_or_path THUDM/chatglm-6b \\\n"
                       "    --data alpaca-belle-cot --lora_target_modules query_key_value \\\n"
                       "    --lora_r 32 --lora_alpha 32 --lora_dropout 0.1 --per_gpu_train_batch_size 2 \\\n"
                       "    --learning_rate 2e-5 --epochs 1\n"));
    CHECK(cot.framework == "alpaca_cot");
    REQUIRE(cot.find("training.local_batch_size"));
    CHECK(cot.find("training.local_batch_size")->val.as_integer() == 2);
    REQUIRE(cot.find("training.lora_rank"));
    CHECK(cot.find("training.lora_rank")->val.as_integer() == 32);
    // the other side: Alpaca-LoRA's own flags still choose Alpaca-LoRA
    const job_config lora = parse_job_config(alpaca_script_file(
        "alpaca_lora.sh", "python finetune.py --base_model decapoda-research/llama-7b-hf --data_path ./data.json \\\n"
                          "    --micro_batch_size 4 --batch_size 128 --cutoff_len 256 --lora_r 8 \\\n"
                          "    --lora_target_modules '[q_proj,v_proj]'\n"));
    CHECK(lora.framework == "alpaca_lora");
    REQUIRE(lora.find("training.local_batch_size"));
    CHECK(lora.find("training.local_batch_size")->val.as_integer() == 4);
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(alpaca_script_file("x", "")).parent_path(), ec);
}

TEST_CASE("cases74: a smaller Alpaca-LoRA micro-batch is one flag; Alpaca-CoT writes the accumulation beside it") {
    // finetune.py derives gradient_accumulation_steps = batch_size // micro_batch_size: the global batch stays.
    const override_syntax lora = override_syntax_for("alpaca_lora");
    CHECK(can_express(lora, "training.gradient_accumulation_steps", value(64)).ok);
    CHECK(render_overrides(lora, {{"training.local_batch_size", 2}, {"training.gradient_accumulation_steps", 64}}) ==
          std::vector<std::string>{"--micro_batch_size 2"});
    const override_syntax cot = override_syntax_for("alpaca_cot");
    CHECK(render_overrides(cot, {{"training.local_batch_size", 1}, {"training.gradient_accumulation_steps", 64}}) ==
          std::vector<std::string>{"--per_gpu_train_batch_size 1", "--gradient_accumulation_steps 64"});
}
