// cases77: two launch lines whose settings were not read. DeepSpeed-Chat's step scripts take their own flags
// (--max_seq_len, --zero_stage, --lora_dim) beside the HF-named ones; verl's actor strategy decides the sharding (FSDP
// shards everything, the Megatron actor its optimizer states through the distributed optimizer).
#include <doctest/doctest.h>

#include <filesystem>

#include "parsers/config/job_config.h"
#include "script_file.h"

using namespace oomdx;

TEST_CASE("cases77: DeepSpeed-Chat's step-1 command reads its sequence length, ZeRO stage and LoRA rank") {
    // deepspeedai/DeepSpeed#4002: the tutorial's OPT-1.3B SFT command
    const job_config full = test::parsed_as("deepspeed_chat", "dschat",
        "run_1.3b.sh", "deepspeed main.py --data_path Dahoas/rm-static --data_split 2,4,4 \\\n"
                       "   --model_name_or_path facebook/opt-1.3b --per_device_train_batch_size 8 \\\n"
                       "   --max_seq_len 512 --zero_stage 2 --deepspeed --output_dir ./output\n");
    test::check_fact(full, "training.seq_len", 512);
    test::check_fact(full, "training.local_batch_size", 8);
    test::check_fact(full, "parallelism.zero_stage", 2);
    test::check_fact(full, "training.finetuning_type", std::string("full"));
    // the other side: --lora_dim 128 is LoRA of that rank
    const job_config lora = test::parsed_as("deepspeed_chat", "dschat",
        "run_lora.sh", "deepspeed main.py --data_split 2,4,4 --model_name_or_path facebook/opt-1.3b \\\n"
                       "   --per_device_train_batch_size 4 --max_seq_len 256 --lora_dim 128 --zero_stage 0 --deepspeed\n");
    test::check_fact(lora, "training.finetuning_type", std::string("lora"));
    test::check_fact(lora, "training.lora_rank", 128);
    // look-alike: --max_seq_len is also a script's own flag (an HF-style script with it is not DeepSpeed-Chat's)
    const job_config other = parse_job_config(test::script_file("dschat", "run_own.sh",
        "torchrun --nproc_per_node 2 train.py --per_device_train_batch_size 4 --max_seq_len 1024 --output_dir out\n"));
    CHECK(other.framework != "deepspeed_chat");
    std::error_code ec;
    std::filesystem::remove_all(test::script_folder("dschat"), ec);
}

TEST_CASE("cases77: verl's actor strategy decides its sharding: FSDP 3, the Megatron actor's distributed optimizer 1") {
    const auto run = [](const std::string& strategy, const std::string& extra) {
        return test::parsed_as("verl", "verl_strategy", "run_" + strategy + ".sh",
            "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \\\n"
            "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
            "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \\\n"
            "    actor_rollout_ref.actor.strategy=" + strategy + extra + " trainer.n_gpus_per_node=8\n");
    };
    test::check_fact(run("fsdp", ""), "parallelism.zero_stage", 3);
    test::check_fact(run("megatron", ""), "parallelism.zero_stage", 1);
    // the distributed optimizer turned off: nothing sharded
    test::check_fact(run("megatron", " actor_rollout_ref.actor.megatron.use_distributed_optimizer=False"),
                     "parallelism.zero_stage", 0);
    std::error_code ec;
    std::filesystem::remove_all(test::script_folder("verl_strategy"), ec);
}
