// cases74: Alpaca-CoT's uniform_finetune.py is its own adapter (argparse flags), not Alpaca-LoRA's finetune.py; and a
// smaller Alpaca-LoRA micro-batch needs no accumulation flag (the script divides --batch_size by it).
#include <doctest/doctest.h>

#include <filesystem>

#include "parsers/config/job_config.h"
#include "script_file.h"
#include "parsers/config/override_syntax.h"

using namespace oomdx;

TEST_CASE("cases74: Alpaca-CoT's uniform_finetune.py reads --per_gpu_train_batch_size, not Alpaca-LoRA's defaults") {
    // PhoebusSi/Alpaca-CoT#118: `python3 uniform_finetune.py --model_type chatglm ... --lora_target_modules
    // query_key_value --lora_r 32 ... --per_gpu_train_batch_size 2` was taken for Alpaca-LoRA (micro-batch 4 assumed).
    const job_config cot = test::parsed_as("alpaca_cot", "alpaca",
        "finetune.sh", "python3 uniform_finetune.py   --model_type chatglm --model_name_or_path THUDM/chatglm-6b \\\n"
                       "    --data alpaca-belle-cot --lora_target_modules query_key_value \\\n"
                       "    --lora_r 32 --lora_alpha 32 --lora_dropout 0.1 --per_gpu_train_batch_size 2 \\\n"
                       "    --learning_rate 2e-5 --epochs 1\n");
    test::check_fact(cot, "training.local_batch_size", 2);
    test::check_fact(cot, "training.lora_rank", 32);
    // the other side: Alpaca-LoRA's own flags still choose Alpaca-LoRA
    const job_config lora = test::parsed_as("alpaca_lora", "alpaca",
        "alpaca_lora.sh", "python finetune.py --base_model decapoda-research/llama-7b-hf --data_path ./data.json \\\n"
                          "    --micro_batch_size 4 --batch_size 128 --cutoff_len 256 --lora_r 8 \\\n"
                          "    --lora_target_modules '[q_proj,v_proj]'\n");
    test::check_fact(lora, "training.local_batch_size", 4);
    std::error_code ec;
    std::filesystem::remove_all(test::script_folder("alpaca"), ec);
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
