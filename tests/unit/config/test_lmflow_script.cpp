// cases76: LMFlow's examples/finetune.py command is its own adapter over the HF Trainer's flags: --use_lora decides
// full fine-tuning or LoRA (full by default), and the shipped DeepSpeed configs it names offload the optimizer.
#include <doctest/doctest.h>

#include <filesystem>

#include "parsers/config/job_config.h"
#include "script_file.h"

using namespace oomdx;

TEST_CASE("cases76: LMFlow's finetune.py without --use_lora is full fine-tuning with the optimizer offloaded") {
    // OptimalScale/LMFlow#563: the full fine-tuning command of Vicuna-7B with configs/ds_config_zero2.json
    const job_config full = test::parsed_as("lmflow", "lmflow",
        "run_finetune.sh", "deepspeed ${deepspeed_args} \\\n  examples/finetune.py \\\n"
                           "    --deepspeed configs/ds_config_zero2.json --bf16 \\\n"
                           "    --model_name_or_path lmsys/vicuna-7b-v1.1 --dataset_path data/taoli_data/ \\\n"
                           "    --per_device_train_batch_size 1 --block_size 512 --do_train\n");
    // no --use_lora: the adapter's default, full fine-tuning
    test::check_fact(full, "training.finetuning_type", std::string("full"));
    test::check_fact(full, "optimizer.offload", std::string("cpu"));
    test::check_fact(full, "training.seq_len", 512);
    // the other side: --use_lora 1 and a DeepSpeed config of the user's own (its offload is not assumed)
    const job_config lora = test::parsed_as("lmflow", "lmflow",
        "run_finetune_with_lora.sh", "deepspeed examples/finetune.py --model_name_or_path facebook/galactica-1.3b \\\n"
                                     "    --dataset_path data/alpaca/train --block_size 512 --use_lora 1 --lora_r 8 \\\n"
                                     "    --deepspeed my_ds_config.json --per_device_train_batch_size 1\n");
    test::check_fact(lora, "training.finetuning_type", std::string("lora"));
    CHECK_FALSE(lora.find("optimizer.offload"));
    std::error_code ec;
    std::filesystem::remove_all(test::script_folder("lmflow"), ec);
}
