// cases77: two launch lines whose settings were not read. DeepSpeed-Chat's step scripts take their own flags
// (--max_seq_len, --zero_stage, --lora_dim) beside the HF-named ones; verl's actor strategy decides the sharding (FSDP
// shards everything, the Megatron actor its optimizer states through the distributed optimizer).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "parsers/config/framework_adapter.h"
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

TEST_CASE("verl's Megatron actor: a plan writes its own parallel, offload and recomputation keys, not the FSDP actor's") {
    const framework_adapter& v = framework_adapter::get("verl");
    // "key=value" of each framework setting a translation writes ('#key' where the framework has none)
    const auto lines = [&](const std::vector<canonical_override>& ovs, const render_context& ctx) {
        std::vector<std::string> out;
        for (const auto& it : v.translate(ovs, {}, ctx)) out.push_back(it.key + "=" + value_key(it.val));
        return out;
    };
    const render_context megatron{{"training.actor_strategy", "megatron"}};
    const render_context fsdp{{"training.actor_strategy", "fsdp"}};
    const std::vector<canonical_override> tp{{"parallelism.tensor_parallel_degree", value(std::int64_t{2})}};
    CHECK(lines(tp, megatron) == std::vector<std::string>{"actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2"});
    const std::vector<canonical_override> offload{{"optimizer.offload", "cpu"}};
    CHECK(lines(offload, megatron) == std::vector<std::string>{"actor_rollout_ref.actor.megatron.optimizer_offload=true"});
    const auto full = lines({{"activation_checkpoint.mode", "full"}}, megatron);
    CHECK(full.size() == 3);
    CHECK(std::find(full.begin(), full.end(),
                    "+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=full") != full.end());
    // the FSDP actor, or no actor named: the FSDP keys, and no tensor-parallel setting
    CHECK(lines(offload, fsdp) == std::vector<std::string>{"actor_rollout_ref.actor.fsdp_config.optimizer_offload=true"});
    CHECK(lines(offload, {}) == std::vector<std::string>{"actor_rollout_ref.actor.fsdp_config.optimizer_offload=true"});
    CHECK(lines({{"activation_checkpoint.mode", "full"}}, fsdp) ==
          std::vector<std::string>{"actor_rollout_ref.model.enable_gradient_checkpointing=true"});
    for (const auto& l : lines(tp, fsdp)) CHECK(l.find("tensor_model_parallel_size") == std::string::npos);
    // the strategy read from the job's own line
    const job_config j = test::parsed_as("verl", "verl_render", "run_m.sh",
        "python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
        "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 actor_rollout_ref.actor.strategy=megatron trainer.n_gpus_per_node=8\n");
    test::check_fact(j, "training.actor_strategy", std::string("megatron"));
    std::error_code ec;
    std::filesystem::remove_all(test::script_folder("verl_render"), ec);
}
