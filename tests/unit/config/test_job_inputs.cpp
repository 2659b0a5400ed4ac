// load_job_inputs: config + model + device + --set, as used by facts, preflight and diagnose.
#include <doctest/doctest.h>

#include "engine/core/errors.h"
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "parsers/config/job_inputs.h"

#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace oomdx;

static const std::string cfg = std::string(OOMDX_TEST_DIR) + "/fixtures/configs/";

TEST_CASE("config naming a known model resolves its preset; --set wins") {
    job_inputs_options o;
    o.config = cfg + "torchtitan/llama3_70b_2025_04.toml";
    o.device = "H100-80GB";
    o.sets = {"training.local_batch_size=1", "activation_checkpoint.mode=selective", "training.torch_npu_memory_ratio=1"};
    job_inputs in = load_job_inputs(o);
    REQUIRE(in.model);
    CHECK(in.model->name == "llama3-70b");
    CHECK(in.model_from_config);
    fact_store store(&vocabulary::shipped());
    emit_facts(in, store);
    CHECK(store.integer("training.local_batch_size") == 1);
    CHECK(store.get("training.local_batch_size")->prov.producer == "user");
    CHECK(store.string("activation_checkpoint.mode") == "selective");
    CHECK(store.number("training.torch_npu_memory_ratio") == 1.0);
    CHECK(store.integer("model.param_count") == 70553706496);
    CHECK(store.string("device.id") == "h100-80gb");
    CHECK(store.string("device.capacity_source") == "catalog");
}

TEST_CASE("launch-line words override the config") {
    job_inputs_options o;
    o.config = cfg + "torchtitan/llama3_8b_2025_10.toml";
    o.launch_args = {"--training.local_batch_size", "8", "--parallelism.tensor_parallel_degree=1"};
    fact_store store(&vocabulary::shipped());
    emit_facts(load_job_inputs(o), store);
    CHECK(store.integer("training.local_batch_size") == 8);
    CHECK(store.integer("parallelism.tensor_parallel_degree") == 1);
    CHECK(store.integer("training.global_batch_size") == 64);
}

TEST_CASE("a launch line no adapter recognizes names no framework; a recognized one does") {
    // `python train.py -c=configs/m.py --ngpu 8 -t True`: no framework's keys, so the format's
    // fallback (Megatron for command lines) must not become the job's framework.
    job_inputs_options o;
    o.launch_args = {"--ngpu", "8"};
    fact_store plain(&vocabulary::shipped());
    emit_facts(load_job_inputs(o), plain);
    CHECK_FALSE(plain.has("job.framework"));
    CHECK_FALSE(plain.has("activation_checkpoint.mode"));  // nor the fallback's defaults
    o.launch_args = {"--micro-batch-size", "4", "--tensor-model-parallel-size", "2"};
    fact_store meg(&vocabulary::shipped());
    emit_facts(load_job_inputs(o), meg);
    CHECK(meg.string("job.framework") == "megatron");
    CHECK(meg.integer("training.local_batch_size") == 4);
    CHECK(meg.string("activation_checkpoint.mode") == "none");  // Megatron's default: recognized, so kept
    // With --framework given, the words are read in that framework's syntax and it stays named.
    o.framework = "megatron";
    o.launch_args = {"--ngpu", "8", "--micro-batch-size", "2"};
    fact_store named(&vocabulary::shipped());
    emit_facts(load_job_inputs(o), named);
    CHECK(named.string("job.framework") == "megatron");
    CHECK(named.integer("training.local_batch_size") == 2);
    // A framework whose adapter reads no command lines (DeepSpeed's JSON) reads none of the words, and its
    // defaults (fp32) do not stand in for what the line says (`deepspeed --module openrlhf.cli.train_sft --bf16`).
    o.framework = "deepspeed";
    o.launch_args = {"--bf16", "--micro_train_batch_size", "1"};
    fact_store ds(&vocabulary::shipped());
    emit_facts(load_job_inputs(o), ds);
    CHECK_FALSE(ds.has("training.mixed_precision_param"));
    CHECK_FALSE(ds.has("parallelism.zero_stage"));
    // A framework no adapter has is refused even with nothing to read it for (a log alone): a usage error.
    job_inputs_options bad;
    bad.framework = "nosuch";
    CHECK_THROWS_AS(load_job_inputs(bad), usage_error);
}

TEST_CASE("device as a bare size; bad names are usage errors") {
    job_inputs_options o;
    o.device = "80GiB";
    job_inputs in = load_job_inputs(o);
    REQUIRE(in.device);
    CHECK(in.device->capacity_bytes == 80LL << 30);
    fact_store store(&vocabulary::shipped());
    emit_facts(in, store);
    CHECK(store.string("device.capacity_source") == "user");
    o.device = "toaster";
    CHECK_THROWS_AS(load_job_inputs(o), usage_error);
    CHECK_THROWS_AS(parse_set_override("no.such.key=1"), usage_error);
    CHECK_THROWS_AS(parse_set_override("activation_checkpoint.mode=sometimes"), usage_error);
    CHECK_THROWS_AS(parse_set_override("training.local_batch_size"), usage_error);
    CHECK(parse_set_override("parallelism.sequence_parallel=true").val == value(true));
    CHECK(parse_set_override("training.seq_len=4096").val == value(4096));
}

TEST_CASE("a pre-quantized checkpoint's name gives the width of the frozen weights, unless the config says") {
    job_inputs_options o;
    o.config = cfg + "llama_factory/unsloth_bnb4_lora.yaml";
    job_inputs in = load_job_inputs(o);
    REQUIRE(in.model);
    CHECK(in.model->name == "llama3-8b");
    fact_store store(&vocabulary::shipped());
    emit_facts(in, store);
    CHECK(store.integer("training.quantization_bit") == 4);
    CHECK(store.get("training.quantization_bit")->prov.producer == "config.model_name");
    CHECK(store.string("training.quantization_method") == "bitsandbytes");

    job_inputs_options e;
    e.config = cfg + "llama_factory/unsloth_bnb4_explicit8.yaml";
    fact_store s2(&vocabulary::shipped());
    emit_facts(load_job_inputs(e), s2);
    CHECK(s2.integer("training.quantization_bit") == 8);
    CHECK(s2.get("training.quantization_bit")->prov.producer != "config.model_name");
}

TEST_CASE("a launch script no adapter recognizes names no framework; the launcher's process counts sign none") {
    // `torchrun --nproc_per_node 8 train.py`: every adapter whose jobs torchrun starts maps --nproc_per_node,
    // so the first of them (diffusers) took the file and its defaults (AdamW, no checkpointing) became the job's.
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("oomdx_test_job_inputs_" + std::to_string(::getpid()))).string() + "/";
    std::filesystem::create_directories(dir);
    auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(dir + name) << text;
        return dir + name;
    };
    job_inputs_options o;
    o.config = write("own.sh", "torchrun --nproc_per_node 8 --nnodes 2 train.py --ngpu 8\n");
    job_inputs own = load_job_inputs(o);
    CHECK(own.job->framework_guessed);
    fact_store s(&vocabulary::shipped());
    emit_facts(own, s);
    CHECK_FALSE(s.has("job.framework"));
    CHECK_FALSE(s.has("optimizer.name"));               // no framework's default
    CHECK_FALSE(s.has("activation_checkpoint.mode"));
    CHECK(s.integer("job.world_size") == 16);          // what the launcher says stays
    CHECK(s.string("job.entry_script") == "train.py");
    // one key of a framework's own signs it, beside the same launcher flags
    o.config = write("hf.sh", "torchrun --nproc_per_node 8 train.py --per_device_train_batch_size 4\n");
    fact_store hf(&vocabulary::shipped());
    emit_facts(load_job_inputs(o), hf);
    CHECK(hf.string("job.framework") == "hf_trainer");
    CHECK(hf.integer("training.local_batch_size") == 4);
    // the logged launch line that an adapter recognizes names the framework of an unrecognized file
    o.config = write("own2.sh", "torchrun --nproc_per_node 8 train.py\n");
    o.launch_args = {"--micro-batch-size", "2", "--tensor-model-parallel-size", "2"};
    fact_store meg(&vocabulary::shipped());
    emit_facts(load_job_inputs(o), meg);
    CHECK(meg.string("job.framework") == "megatron");
    CHECK(meg.integer("training.local_batch_size") == 2);
    CHECK(meg.integer("job.world_size") == 8);
    // a config file the unrecognized line names tells the framework, without the fallback's defaults
    write("lf.yaml", "stage: sft\nfinetuning_type: lora\nper_device_train_batch_size: 2\nlearning_rate: 1.0e-4\n"
                     "model_name_or_path: meta-llama/Meta-Llama-3-8B\n");
    o.launch_args.clear();
    o.config = write("run_lf.sh", "torchrun --nproc_per_node 4 train.py lf.yaml\n");
    job_inputs lf = load_job_inputs(o);
    fact_store l(&vocabulary::shipped());
    emit_facts(lf, l);
    CHECK(l.string("job.framework") == "llama_factory");
    CHECK(l.string("training.finetuning_type") == "lora");
    CHECK(l.integer("job.world_size") == 4);
}
