// Job configs of every framework parse to the expected canonical facts.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

#include "engine/core/errors.h"
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "parsers/config/job_config.h"
#include "parsers/config/py_expr.h"

using namespace oomdx;

namespace {

const std::string dir = std::string(OOMDX_TEST_DIR) + "/fixtures/configs/";

struct expect_case {
    const char* file;
    const char* framework;
    std::map<std::string, value> facts;
    std::vector<std::string> unknown;      // substrings expected in job.unknown_keys
    std::vector<std::string> non_literal;  // substrings expected in job.non_literal_keys
};

bool contains_item(const std::vector<std::string>& items, const std::string& needle) {
    for (const auto& i : items)
        if (i.find(needle) != std::string::npos) return true;
    return false;
}

void check_case(const expect_case& c) {
    CAPTURE(c.file);
    job_config j = parse_job_config(dir + c.file);
    CHECK(j.framework == c.framework);
    // Through a vocabulary-checking store: every name and type is declared.
    fact_store store(&vocabulary::shipped());
    emit_facts(j, store);
    for (const auto& [name, v] : c.facts) {
        CAPTURE(name);
        const fact* f = store.get(name);
        REQUIRE(f != nullptr);
        CHECK(f->val == v);
        CHECK_FALSE(f->prov.file.empty());
        CHECK(f->prov.producer.rfind("config.", 0) == 0);
    }
    for (const auto& u : c.unknown) {
        CAPTURE(u);
        CHECK(contains_item(j.unknown_keys, u));
    }
    if (c.unknown.empty()) CHECK(j.unknown_keys.empty());
    for (const auto& n : c.non_literal) {
        CAPTURE(n);
        CHECK(contains_item(j.non_literal, n));
    }
    CHECK(store.get("job.unknown_keys")->val.as_list().size() == j.unknown_keys.size());
}

}  // namespace

TEST_CASE("torchtitan TOML of every era, registry and CLI overrides") {
    check_case({"torchtitan/llama3_8b_2024.toml", "torchtitan",
                {{"training.local_batch_size", 1}, {"training.seq_len", 8192},
                 {"parallelism.data_parallel_shard_degree", -1}, {"parallelism.tensor_parallel_degree", 1},
                 {"parallelism.pipeline_parallel_degree", 1}, {"activation_checkpoint.mode", "selective"},
                 {"activation_checkpoint.selective_ac_option", "op"}, {"optimizer.offload", "none"},
                 {"job.model_name", "llama3"}, {"job.model_flavor", "8B"}},
                {}, {}});
    // parallelism.zero_stage follows the mesh once the world size is known (job_validate.h).
    check_case({"torchtitan/llama3_70b_2025_04.toml", "torchtitan",
                {{"training.local_batch_size", 8}, {"parallelism.tensor_parallel_degree", 8},
                 {"activation_checkpoint.mode", "full"}, {"quantize.linear.float8", true},
                 {"parallelism.fsdp_reshard_after_forward", "default"}},
                {}, {}});
    check_case({"torchtitan/llama3_8b_2025_10.toml", "torchtitan",
                {{"training.local_batch_size", 2}, {"training.global_batch_size", 64},
                 {"parallelism.tensor_parallel_degree", 2}, {"parallelism.pipeline_parallel_degree", 2},
                 {"parallelism.pipeline_parallel_schedule", "Interleaved1F1B"}, {"compile.enable", true},
                 {"profiling.enable_memory_snapshot", true}, {"activation_checkpoint.selective_ac_option", "2"}},
                {"training.local_batchsize"}, {}});
    // the shipped form: a [quantize.linear.float8] section of options and no converters list is bf16 training
    // (torchtitan's llama3_70b.toml at 8a2686c4; build_model_converters reads model.converters only)
    CHECK(parse_job_config(dir + "torchtitan/llama3_8b_2025_10.toml").find("quantize.linear.float8") == nullptr);
    check_case({"torchtitan/config_registry.py:llama3_8b", "torchtitan",
                {{"training.local_batch_size", 1}, {"training.seq_len", 8192}, {"activation_checkpoint.mode", "selective"},
                 {"optimizer.name", "AdamW"}, {"job.model_flavor", "8B"}, {"parallelism.data_parallel_shard_degree", -1}},
                {}, {"training.steps = STEPS"}});
    check_case({"torchtitan/config_registry.py:llama3_70b", "torchtitan",
                {{"training.local_batch_size", 4}, {"parallelism.tensor_parallel_degree", 8},
                 {"parallelism.pipeline_parallel_degree", 4}, {"activation_checkpoint.mode", "full"},
                 {"job.model_flavor", "70B"}, {"optimizer.name", "AdamW"}, {"training.seq_len", 16384}},
                {}, {}});  // `8192 * 2`: integer arithmetic of literals is folded
    check_case({"torchtitan/config_registry.py:llama3_405b", "torchtitan",
                {{"training.local_batch_size", 2}, {"parallelism.pipeline_parallel_degree", 8},
                 {"activation_checkpoint.mode", "full"}, {"compile.enable", true}},
                {}, {}});
    check_case({"torchtitan/config_registry_2026_09.py", "torchtitan",
                {{"training.tokens_per_microbatch", 16384}, {"training.seq_len", 4096}, {"training.local_batch_size", 4},
                 {"parallelism.expert_parallel_degree", 8}, {"quantize.linear.float8", true}},
                {}, {}});
    // 2026-08 style: a local model spec of the file's own package, the chunked loss, products, a
    // derived function with a docstring
    check_case({"torchtitan/llama3/config_registry.py:llama3_8b", "torchtitan",
                {{"job.model_name", "llama3"}, {"job.model_flavor", "8B"}, {"training.chunked_loss", true},
                 {"training.tokens_per_microbatch", 8192}, {"training.seq_len", 8192}, {"training.local_batch_size", 1},
                 {"activation_checkpoint.mode", "selective"}},
                {}, {}});
    check_case({"torchtitan/llama3/config_registry.py:llama3_8b_compiled", "torchtitan",
                {{"job.model_name", "llama3"}, {"job.model_flavor", "8B"}, {"compile.enable", true},
                 {"training.seq_len", 4096}, {"training.local_batch_size", 2}, {"training.chunked_loss", true}},
                {}, {}});
    check_case({"torchtitan/llama3/config_registry.py:llama3_debugmodel", "torchtitan",
                {{"job.model_name", "llama3"}, {"job.model_flavor", "debugmodel"}, {"training.local_batch_size", 8}},
                {}, {}});
    check_case({"torchtitan/launch_overrides.sh", "torchtitan",
                {{"training.local_batch_size", 4}, {"training.seq_len", 4096}, {"parallelism.tensor_parallel_degree", 2},
                 {"activation_checkpoint.mode", "full"}, {"env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"},
                 {"job.nproc_per_node", 8}, {"job.world_size", 8}},
                {}, {}});
}

TEST_CASE("a registry file with several functions needs the function named") {
    CHECK_THROWS_AS(parse_job_config(dir + "torchtitan/config_registry.py"), input_error);
    try {
        parse_job_config(dir + "torchtitan/config_registry.py:nope");
        FAIL("expected an error");
    } catch (const input_error& e) {
        CHECK(std::string(e.what()).find("llama3_8b") != std::string::npos);
    }
}

TEST_CASE("torchtitan-npu") {
    check_case({"torchtitan_npu/deepseek_v3_671b_4k.toml", "torchtitan_npu",
                {{"optimizer.swap_optimizer", true}, {"optimizer.swap_optimizer_times", 16},
                 {"training.torch_npu_memory_ratio", 1.0}, {"parallelism.expert_parallel_degree", 128},
                 {"parallelism.tensor_parallel_degree", 4}, {"activation_checkpoint.mode", "full"},
                 {"training.global_batch_size", 1024}, {"parallelism.fsdp_reshard_after_forward", "always"}},
                {}, {}});
    check_case({"torchtitan_npu/qwen3_32b.toml", "torchtitan_npu",
                {{"training.torch_npu_memory_ratio", 0.9}, {"optimizer.swap_optimizer", false},
                 {"parallelism.context_parallel_degree", 2}, {"parallelism.data_parallel_shard_degree", 8}},
                {}, {}});
    check_case({"torchtitan_npu/config_registry.py:deepseek_v3_16b", "torchtitan_npu",
                {{"optimizer.swap_optimizer", true}, {"optimizer.swap_optimizer_times", 8},
                 {"training.torch_npu_memory_ratio", 0.95}, {"training.local_batch_size", 4},
                 {"activation_checkpoint.mode", "full"}},
                {}, {}});
    check_case({"torchtitan_npu/config_registry.py:deepseek_v3_16b_long", "torchtitan_npu",
                {{"training.seq_len", 16384}, {"optimizer.swap_optimizer", true}},
                {}, {"parallelism.context_parallel_degree"}});
}

TEST_CASE("Megatron-LM launch scripts") {
    check_case({"megatron/pretrain_llama3_8b.sh", "megatron",
                {{"training.local_batch_size", 1}, {"training.global_batch_size", 128}, {"training.seq_len", 8192},
                 {"parallelism.tensor_parallel_degree", 2}, {"parallelism.pipeline_parallel_degree", 2},
                 {"parallelism.sequence_parallel", true}, {"optimizer.distributed", true},
                 {"activation_checkpoint.mode", "full"}, {"activation_checkpoint.recompute_method", "uniform"},
                 {"activation_checkpoint.recompute_num_layers", 1}, {"training.mixed_precision_param", "bfloat16"},
                 {"model.num_layers", 32}, {"model.num_kv_heads", 8}, {"model.tie_word_embeddings", false},
                 {"job.world_size", 16}},
                {}, {}});
    check_case({"megatron/train_gpt3_175b.sh", "megatron",
                {{"training.local_batch_size", 1}, {"training.global_batch_size", 1536},
                 {"parallelism.tensor_parallel_degree", 8}, {"parallelism.pipeline_parallel_degree", 16},
                 {"activation_checkpoint.mode", "selective"}, {"training.mixed_precision_param", "float16"},
                 {"env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}, {"job.world_size", 512},
                 {"model.hidden_size", 12288}},
                {}, {}});
    check_case({"megatron/train_mixtral_8x7b.sh", "megatron",
                {{"parallelism.expert_parallel_degree", 8}, {"parallelism.pipeline_parallel_degree", 4},
                 {"model.num_experts", 8}, {"model.num_experts_per_tok", 2}, {"activation_checkpoint.mode", "selective"},
                 {"job.world_size", 32}},
                {"bogus-memory-flag"}, {"micro-batch-size = $MBS"}});
    // one unresolved element of an unquoted array expansion taints its own words only
    check_case({"megatron/array_one_unresolved.sh", "megatron",
                {{"model.vocab_size", 128256}, {"model.num_layers", 32}, {"job.entry_script", "pretrain_gpt.py"}},
                {}, {"data-cache-path = ${PWD}/benchmark_cache"}});
}

TEST_CASE("MindSpeed launch scripts") {
    check_case({"mindspeed/pretrain_deepseek3_671b_4k.sh", "mindspeed",
                {{"optimizer.swap_optimizer", true}, {"activation_checkpoint.mode", "full"},
                 {"activation_checkpoint.recompute_method", "block"}, {"activation_checkpoint.recompute_num_layers", 8},
                 {"parallelism.tensor_parallel_degree", 2}, {"parallelism.pipeline_parallel_degree", 8},
                 {"parallelism.expert_parallel_degree", 32}, {"training.global_batch_size", 4096},
                 {"env.PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True"}, {"env.HCCL_BUFFSIZE", 400},
                 {"model.first_k_dense_replace", 3}, {"model.kv_lora_rank", 512}, {"job.world_size", 512}},
                {}, {}});
    check_case({"mindspeed/pretrain_qwen25_72b_32k.sh", "mindspeed",
                {{"activation_checkpoint.swap_attention", true}, {"optimizer.reuse_fp32_param", true},
                 {"training.seq_len", 32768}, {"parallelism.context_parallel_degree", 2}, {"job.world_size", 64}},
                {}, {}});
    check_case({"mindspeed/tune_llama2_7b.sh", "mindspeed",
                {{"optimizer.swap_optimizer_times", 8}, {"training.local_batch_size", 4},
                 {"training.mixed_precision_param", "float16"}},
                {}, {}});
}

TEST_CASE("DeepSpeed JSON") {
    check_case({"deepspeed/ds_z3_offload.json", "deepspeed",
                {{"parallelism.zero_stage", 3}, {"optimizer.offload", "cpu"}, {"parallelism.offload_params", "cpu"},
                 {"training.local_batch_size", 2}, {"training.gradient_accumulation_steps", 8},
                 {"training.mixed_precision_param", "bfloat16"}, {"optimizer.name", "AdamW"}},
                {}, {}});
    check_case({"deepspeed/ds_z2_fp16.json", "deepspeed",
                {{"parallelism.zero_stage", 2}, {"training.global_batch_size", 256},
                 {"training.mixed_precision_param", "float16"}, {"optimizer.offload", "none"}},
                {"zero_force_ds_cpu_optimizer"}, {}});
    check_case({"deepspeed/ds_z3_auto.json", "deepspeed", {{"parallelism.zero_stage", 3}}, {},
                {"train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "bf16.enabled"}});
}

TEST_CASE("HF TrainingArguments and accelerate") {
    check_case({"hf_trainer/training_args.yaml", "hf_trainer",
                {{"training.local_batch_size", 4}, {"training.gradient_accumulation_steps", 4},
                 {"activation_checkpoint.mode", "full"}, {"training.mixed_precision_param", "bfloat16"},
                 {"optimizer.name", "adamw_torch_fused"}, {"parallelism.zero_stage", 3}, {"training.seq_len", 4096}},
                {}, {}});
    // Points at a DeepSpeed JSON: its ZeRO stage is read, the trainer's own values win.
    check_case({"hf_trainer/training_args.json", "hf_trainer",
                {{"training.local_batch_size", 8}, {"activation_checkpoint.mode", "none"}, {"compile.enable", true},
                 {"parallelism.zero_stage", 2}, {"training.mixed_precision_param", "float16"}},
                {"per_device_train_batch "}, {}});
    check_case({"hf_trainer/accelerate_fsdp.yaml", "hf_trainer",
                {{"parallelism.zero_stage", 3}, {"parallelism.offload_params", "cpu"}, {"activation_checkpoint.mode", "full"},
                 {"training.mixed_precision_param", "bfloat16"}, {"job.world_size", 16}},
                {}, {}});
    check_case({"hf_trainer/run_clm.sh", "hf_trainer",
                {{"training.local_batch_size", 2}, {"training.gradient_accumulation_steps", 16},
                 {"activation_checkpoint.mode", "full"}, {"training.mixed_precision_param", "bfloat16"},
                 {"parallelism.zero_stage", 3}, {"training.seq_len", 2048},
                 {"env.PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:512"}},
                {}, {}});
}

TEST_CASE("LLaMA-Factory") {
    check_case({"llama_factory/qwen3_full_sft_ds3.yaml", "llama_factory",
                {{"training.finetuning_type", "full"}, {"training.seq_len", 2048}, {"training.local_batch_size", 1},
                 {"activation_checkpoint.mode", "full"}, {"job.deepspeed_config", "examples/deepspeed/ds_z3_config.json"},
                 // the file is not beside the fixture: the stage of LLaMA-Factory's own ds_z3_config.json
                 {"parallelism.zero_stage", 3}},
                {}, {}});
    check_case({"llama_factory/llama3_lora_sft.yaml", "llama_factory",
                {{"training.finetuning_type", "lora"}, {"training.lora_rank", 8}, {"activation_checkpoint.mode", "none"},
                 {"model.attn_impl", "flash"}, {"training.seq_len", 4096}},
                {"enable_liger_kernl"}, {}});
    // key=value overrides on top of the YAML the launch line names.
    check_case({"llama_factory/train_cli.sh", "llama_factory",
                {{"training.local_batch_size", 2}, {"training.seq_len", 8192}, {"training.finetuning_type", "freeze"},
                 {"job.model_name", "Qwen/Qwen3-8B"}, {"training.gradient_accumulation_steps", 2},
                 {"training.packing", true}},
                {}, {}});
}

TEST_CASE("CLI arguments from a log's launch line") {
    auto words = split_command_line(
        "torchrun --nproc_per_node=8 -m torchtitan.train --job.config_file x.toml "
        "--training.local_batch_size 2 --parallelism.tensor_parallel_degree=4 --activation_checkpoint.mode 'full'");
    job_config j = parse_cli_args(words, "", "train.log", 12);
    CHECK(j.framework == "torchtitan");
    REQUIRE(j.find("training.local_batch_size"));
    CHECK(j.find("training.local_batch_size")->val == value(2));
    CHECK(j.find("training.local_batch_size")->prov.file == "train.log");
    CHECK(j.find("training.local_batch_size")->prov.line == 12);
    CHECK(j.find("parallelism.tensor_parallel_degree")->val == value(4));
    CHECK(j.find("activation_checkpoint.mode")->val == value("full"));
    CHECK(j.find("job.world_size")->val == value(8));

    job_config m = parse_cli_args(split_command_line("pretrain_gpt.py --micro-batch-size 2 --tensor-model-parallel-size 4 "
                                                     "--sequence-parallel --recompute-activations --bf16"),
                                  "", "log.txt", 3);
    CHECK(m.framework == "megatron");
    CHECK(m.find("parallelism.sequence_parallel")->val == value(true));
    CHECK(m.find("activation_checkpoint.mode")->val == value("selective"));

    // CLI overrides merged on top of a file.
    job_config base = parse_job_config(dir + "torchtitan/llama3_8b_2025_10.toml");
    merge_job_config(base, parse_cli_args({"--training.local_batch_size", "1"}, "torchtitan", "cmd", 0));
    fact_store store(&vocabulary::shipped());
    emit_facts(base, store);
    CHECK(store.integer("training.local_batch_size") == 1);
    CHECK(store.integer("training.global_batch_size") == 64);
}

TEST_CASE("framework hint wins; unknown hint is a usage error") {
    job_config j = parse_job_config(dir + "megatron/pretrain_llama3_8b.sh", "mindspeed");
    CHECK(j.framework == "mindspeed");
    CHECK_THROWS_AS(parse_job_config(dir + "megatron/pretrain_llama3_8b.sh", "nosuch"), usage_error);
}

TEST_CASE("a DeepSpeed JSON named relative to the launch directory is found under the config's parents") {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("oomdx_test_dsref_" + std::to_string(::getpid()));
    fs::create_directories(root / "examples/train_full");
    fs::create_directories(root / "examples/deepspeed");
    {
        std::ofstream(root / "examples/deepspeed/site_ds.json") << R"({"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}})";
        std::ofstream(root / "examples/train_full/sft.yaml")
            << "model_name_or_path: Qwen/Qwen3-4B\nstage: sft\nfinetuning_type: full\ncutoff_len: 2048\n"
               "deepspeed: examples/deepspeed/site_ds.json\n";
        std::ofstream(root / "examples/train_full/gone.yaml")
            << "model_name_or_path: Qwen/Qwen3-4B\nstage: sft\nfinetuning_type: full\ncutoff_len: 2048\n"
               "deepspeed: examples/deepspeed/not_there.json\n";
    }
    const job_config found = parse_job_config((root / "examples/train_full/sft.yaml").string());
    REQUIRE(found.find("parallelism.zero_stage"));
    CHECK(found.find("parallelism.zero_stage")->val.as_integer() == 2);
    REQUIRE(found.find("optimizer.offload"));
    CHECK(found.find("optimizer.offload")->val.as_string() == "cpu");
    CHECK_FALSE(found.find("job.missing_files"));
    // Not found anywhere and not a file the framework ships: named as missing, defaults stand.
    const job_config gone = parse_job_config((root / "examples/train_full/gone.yaml").string());
    REQUIRE(gone.find("job.missing_files"));
    CHECK(gone.find("job.missing_files")->val.as_list().at(0).as_string() == "examples/deepspeed/not_there.json");
    REQUIRE(gone.find("parallelism.zero_stage"));
    CHECK(gone.find("parallelism.zero_stage")->val.as_integer() == 0);
    std::error_code ec;
    fs::remove_all(root, ec);
}

TEST_CASE("a launch script's --deepspeed JSON is read beside the script, or named as missing") {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("oomdx_test_dsshell_" + std::to_string(::getpid()));
    fs::create_directories(root);
    {
        std::ofstream(root / "ds_config_zero2.json") << R"({"zero_optimization": {"stage": 2, "overlap_comm": true}})";
        std::ofstream(root / "run.sh") << "torchrun --nproc_per_node 8 train.py \\\n  --model_name_or_path meta-llama/Llama-2-13b-hf \\\n"
                                          "  --model_max_length 4096 --deepspeed ds_config_zero2.json --output_dir out\n";
        std::ofstream(root / "gone.sh") << "torchrun --nproc_per_node 8 train.py --model_name_or_path meta-llama/Llama-2-13b-hf "
                                           "--deepspeed not_there.json --output_dir out\n";
    }
    const job_config found = parse_job_config((root / "run.sh").string());
    REQUIRE(found.find("parallelism.zero_stage"));
    CHECK(found.find("parallelism.zero_stage")->val.as_integer() == 2);
    CHECK_FALSE(found.find("job.missing_files"));
    REQUIRE(found.find("training.seq_len"));  // the training script's own --model_max_length
    CHECK(found.find("training.seq_len")->val.as_integer() == 4096);
    const job_config gone = parse_job_config((root / "gone.sh").string());
    REQUIRE(gone.find("job.missing_files"));
    CHECK(gone.find("job.missing_files")->val.as_list().at(0).as_string() == "not_there.json");
    std::error_code ec;
    fs::remove_all(root, ec);
}

TEST_CASE("the DeepSpeed launcher's and accelerate's process counts in a launch script give the world size") {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("oomdx_test_dslaunch_" + std::to_string(::getpid()));
    fs::create_directories(root);
    {
        std::ofstream(root / "ds.json") << R"({"zero_optimization": {"stage": 3}})";
        std::ofstream(root / "ds.sh") << "deepspeed --num_gpus 8 --num_nodes 2 train.py \\\n  --model_name_or_path meta-llama/Llama-2-70b-hf "
                                         "--deepspeed ds.json --bf16 True --per_device_train_batch_size 4 --output_dir out\n";
        std::ofstream(root / "acc.sh") << "accelerate launch --num_processes 16 train.py --model_name_or_path meta-llama/Llama-2-7b-hf "
                                          "--per_device_train_batch_size 4 --output_dir out\n";
    }
    const job_config ds = parse_job_config((root / "ds.sh").string());
    REQUIRE(ds.find("job.world_size"));
    CHECK(ds.find("job.world_size")->val.as_integer() == 16);
    const job_config acc = parse_job_config((root / "acc.sh").string());
    REQUIRE(acc.find("job.world_size"));
    CHECK(acc.find("job.world_size")->val.as_integer() == 16);
    std::error_code ec;
    fs::remove_all(root, ec);
}

TEST_CASE("keys that only newer builds read bound the build date from below (adapter 'since')") {
    // the 2024 spelling ([training] batch_size, data_parallel_*): no bound
    CHECK(parse_job_config(dir + "torchtitan/llama3_8b_2024.toml").find("job.framework_date_min") == nullptr);
    // [parallelism] (2025-03-18), local_batch_size (2025-06-05), [quantize.linear.float8] (2025-09-30): the newest wins
    const job_config j = parse_job_config(dir + "torchtitan/llama3_8b_2025_10.toml");
    const fact* f = j.find("job.framework_date_min");
    REQUIRE(f != nullptr);
    CHECK(f->val.as_string() == "2025-09-30");
    CHECK(f->prov.line > 0);
    CHECK(f->prov.excerpt.find("quantize.linear.float8") != std::string::npos);
}

TEST_CASE("torchtitan low precision: the converters list turns a recipe on, a section of options does not") {
    auto parse = [&](const std::string& name, const std::string& text) {
        const std::string p = std::filesystem::temp_directory_path().string() + "/" + name;
        std::ofstream(p) << text;
        return parse_job_config(p, "torchtitan");
    };
    // Llama 4's shipped TOML: [quantize.linear.mx] holds filter_fqns, converters commented out
    const job_config off = parse("tt_mx_section.toml",
                                 "[model]\nname = \"llama4\"\n# converters = [\"float8\"]\n[training]\nlocal_batch_size = 1\n"
                                 "[quantize.linear.mx]\nfilter_fqns = [\"output\", \"router.gate\"]\n"
                                 "[quantize.linear.float8]\nenable_fsdp_float8_all_gather = false\n");
    CHECK(off.find("quantize.linear.float8") == nullptr);
    CHECK(off.find("quantize.linear.recipe") == nullptr);
    CHECK(off.find("quantize.linear.mx") == nullptr);
    for (const std::string name : {"float8", "quantize.linear.float8"}) {
        CAPTURE(name);
        const job_config on = parse("tt_fp8_on.toml", "[model]\nname = \"llama3\"\nconverters = [\"" + name +
                                                          "\"]\n[training]\nlocal_batch_size = 1\n");
        REQUIRE(on.find("quantize.linear.float8") != nullptr);
        CHECK(on.find("quantize.linear.float8")->val.as_bool());
    }
    const job_config mx = parse("tt_mx_on.toml", "[model]\nname = \"llama3\"\nconverters = [\"quantize.linear.mx\"]\n"
                                                 "[training]\nlocal_batch_size = 1\n");
    REQUIRE(mx.find("quantize.linear.recipe") != nullptr);
    CHECK(mx.find("quantize.linear.recipe")->val.as_string() == "mxfp8");
}

TEST_CASE("torchtitan compile: the old [training] compile key, and whether the loss is compiled") {
    auto write = [&](const std::string& name, const std::string& text) {
        const std::string p = std::filesystem::temp_directory_path().string() + "/" + name;
        std::ofstream(p) << text;
        return p;
    };
    const job_config old = parse_job_config(write("tt_old_compile.toml", "[training]\nbatch_size = 2\ncompile = true\n"), "torchtitan");
    REQUIRE(old.find("compile.enable") != nullptr);
    CHECK(old.find("compile.enable")->val.as_bool());
    const job_config model_only = parse_job_config(
        write("tt_components.toml", "[training]\nlocal_batch_size = 2\n[compile]\nenable = true\ncomponents = [\"model\"]\n"), "torchtitan");
    REQUIRE(model_only.find("compile.loss") != nullptr);
    CHECK_FALSE(model_only.find("compile.loss")->val.as_bool());
    const job_config both = parse_job_config(
        write("tt_components2.toml", "[training]\nlocal_batch_size = 2\n[compile]\nenable = true\ncomponents = [\"model\", \"loss\"]\n"), "torchtitan");
    REQUIRE(both.find("compile.loss") != nullptr);
    CHECK(both.find("compile.loss")->val.as_bool());
}

TEST_CASE("YAML numbers with underscores read as PyYAML reads them") {
    const std::string p = std::filesystem::temp_directory_path().string() + "/ax_underscore.yml";
    std::ofstream(p) << "base_model: meta-llama/Meta-Llama-3-8B\nadapter: lora\nsequence_len: 16_384\n"
                        "micro_batch_size: 1\nlora_r: 1__6\n";
    const job_config j = parse_job_config(p, "axolotl");
    REQUIRE(j.find("training.seq_len") != nullptr);
    CHECK(j.find("training.seq_len")->val.as_integer() == 16384);
    CHECK(j.find("training.lora_rank") == nullptr);  // "1__6" is not a number: reported, not read
    CHECK_FALSE(j.unknown_keys.empty());
}

TEST_CASE("integer arithmetic of literals in a registry is folded; anything else stays non-literal") {
    const py_source src("def f():\n"
                        "    return X(a=2 ** 70, b=-3 * 4, c=7 // 2, d=-7 // 2, e=(1 + 2) * 3, f=1 * x, g=8 * 2048,\n"
                        "             h=1.5 * 2, i=4 // 0)\n",
                        "t.py");
    std::map<std::string, raw_entry> by;
    for (auto& e : src.function_result("f")) by[e.key] = e;
    CHECK_FALSE(by["a"].literal);  // overflows int64
    CHECK(by["b"].val == value(-12));
    CHECK(by["c"].val == value(3));
    CHECK(by["d"].val == value(-4));  // Python floors
    CHECK(by["e"].val == value(9));
    CHECK_FALSE(by["f"].literal);  // a name
    CHECK(by["g"].val == value(16384));
    CHECK_FALSE(by["h"].literal);  // floats are not folded
    CHECK_FALSE(by["i"].literal);  // division by zero
    // long chains of unary minus or right-nested powers stay non-literal without deep recursion
    const py_source deep("def f():\n    return X(a=1 * " + std::string(300000, '-') + "1, b=2" +
                             [] { std::string t; for (int k = 0; k < 100000; ++k) t += " ** 2"; return t; }() + ")\n",
                         "t.py");
    std::map<std::string, raw_entry> d;
    for (auto& e : deep.function_result("f")) d[e.key] = e;
    CHECK_FALSE(d["a"].literal);
    CHECK_FALSE(d["b"].literal);
}

TEST_CASE("a function body that opens with a docstring is read") {
    const py_source src("def base():\n    return X(a=1)\n\n\ndef f():\n    \"\"\"Doc.\n\n    More.\n    \"\"\"\n"
                        "    c = base()\n    c.b = 2\n    return c\n",
                        "t.py");
    std::map<std::string, raw_entry> by;
    for (auto& e : src.function_result("f")) by[e.key] = e;
    CHECK(by["a"].val == value(1));
    CHECK(by["b"].val == value(2));
}

TEST_CASE("cases69: an accelerate config the launch line names and that is not here is named as missing") {
    // open-r1#506: `accelerate launch --config_file=recipes/accelerate_configs/zero3.yaml src/open_r1/sft.py ...` posted
    // without the recipe; the report planned from ZeRO stage 0 without saying the accelerate config was not read.
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("oomdx_test_accmiss_" + std::to_string(::getpid()));
    fs::create_directories(root / "recipes");
    {
        std::ofstream(root / "recipes/zero2.yaml") << "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\nnum_processes: 8\n";
        std::ofstream(root / "here.sh") << "accelerate launch --config_file=recipes/zero2.yaml src/open_r1/sft.py "
                                           "--model_name_or_path Qwen2.5-1.5B-Instruct --per_device_train_batch_size 16 --bf16\n";
        std::ofstream(root / "gone.sh") << "accelerate launch --config_file=recipes/zero3.yaml src/open_r1/sft.py "
                                           "--model_name_or_path Qwen2.5-1.5B-Instruct --per_device_train_batch_size 16 --bf16\n";
        std::ofstream(root / "none.sh") << "accelerate launch src/open_r1/sft.py --model_name_or_path Qwen2.5-1.5B-Instruct "
                                           "--per_device_train_batch_size 16 --bf16\n";
    }
    const job_config here = parse_job_config((root / "here.sh").string());
    CHECK_FALSE(here.find("job.missing_files"));
    const job_config gone = parse_job_config((root / "gone.sh").string());
    REQUIRE(gone.find("job.missing_files"));
    CHECK(gone.find("job.missing_files")->val.as_list().size() == 1);
    CHECK(gone.find("job.missing_files")->val.as_list().at(0).as_string() == "recipes/zero3.yaml");
    REQUIRE(gone.find("training.local_batch_size"));  // the line's own flags still read
    CHECK(gone.find("training.local_batch_size")->val.as_integer() == 16);
    const job_config none = parse_job_config((root / "none.sh").string());
    CHECK_FALSE(none.find("job.missing_files"));
    std::error_code ec;
    fs::remove_all(root, ec);
}

TEST_CASE("cases69: LLaMA-Efficient-Tuning's max_source_length + max_target_length are the sequence, and a training config") {
    // hiyouga/LlamaFactory#24 (June 2023): `quantization_bit: 4, max_source_length: 512, max_target_length: 512` was
    // taken for an export config (no training key) and got no estimate.
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("oomdx_test_srctgt_" + std::to_string(::getpid()));
    fs::create_directories(root);
    std::ofstream(root / "train_args.yaml") << "quantization_bit: 4\nmax_source_length: 512\nmax_target_length: 256\n";
    const job_config j = parse_job_config((root / "train_args.yaml").string(), "llama_factory");
    REQUIRE(j.find("training.seq_len"));
    CHECK(j.find("training.seq_len")->val.as_integer() == 768);
    if (const fact* t = j.find("job.trains")) CHECK(t->val.as_bool());
    std::error_code ec;
    fs::remove_all(root, ec);
}

TEST_CASE("a launch script's quoted argument block with one unset variable: only that flag is unevaluated") {
    // MindSpeed-LLM's shape: GPT_ARGS="... --tokenizer-model ${TOKENIZER_MODEL} ... --micro-batch-size 4 ..." where the
    // tokenizer path comes from the caller's environment. Every other flag of the block is a literal the script states.
    const std::string p = std::filesystem::temp_directory_path().string() + "/ms_unset_var.sh";
    std::ofstream(p) << "#!/bin/bash\nNPUS_PER_NODE=8\nTP=1\nPP=2\n"
                        "GPT_ARGS=\"\n    --tensor-model-parallel-size ${TP} \\\n    --pipeline-model-parallel-size ${PP} \\\n"
                        "    --num-layers 32 \\\n    --hidden-size 4096 \\\n    --tokenizer-model ${TOKENIZER_MODEL} \\\n"
                        "    --seq-length 4096 \\\n    --micro-batch-size 4 \\\n    --data-path $(cat data.txt) \\\n"
                        "    --global-batch-size 256 \\\n    --optimizer sgd \\\n    --bf16\n\"\n"
                        "torchrun --nproc_per_node $NPUS_PER_NODE pretrain_gpt.py $GPT_ARGS --distributed-backend nccl\n";
    const job_config j = parse_job_config(p, "mindspeed");
    REQUIRE(j.find("training.local_batch_size") != nullptr);
    CHECK(j.find("training.local_batch_size")->val.as_integer() == 4);
    REQUIRE(j.find("training.seq_len") != nullptr);
    CHECK(j.find("training.seq_len")->val.as_integer() == 4096);
    REQUIRE(j.find("parallelism.pipeline_parallel_degree") != nullptr);
    CHECK(j.find("parallelism.pipeline_parallel_degree")->val.as_integer() == 2);
    CHECK(contains_item(j.non_literal, "tokenizer-model = ${TOKENIZER_MODEL}"));
    REQUIRE(j.find("training.global_batch_size") != nullptr);  // after a `$(cmd)` value
    CHECK(j.find("training.global_batch_size")->val.as_integer() == 256);
    CHECK_FALSE(contains_item(j.non_literal, "micro-batch-size"));
    // Megatron's --optimizer (adam -> AdamW, sgd -> SGD; default adam: the adapter's defaults)
    REQUIRE(j.find("optimizer.name") != nullptr);
    CHECK(j.find("optimizer.name")->val.as_string() == "SGD");
}
