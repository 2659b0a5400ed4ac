// Bad numbers are refused with one line naming the key, the value and where it came from; the
// degrees must fit the model and the world size; where a framework rounds it is stated.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "parsers/config/job_validate.h"
#include "tests/unit/run_oomdx.h"

namespace {

using oomdx::test::run_result;

run_result run(const std::string& args) { return oomdx::test::run_oomdx(args, oomdx::test::stderr_to::out); }

const std::string k8b_any = "estimate --model llama3-8b --device h100-80gb ";
const std::string k8b = k8b_any + "--world-size 8 ";

void refused(const std::string& args, const std::string& key, const std::string& words) {
    CAPTURE(args);
    const run_result r = run(args);
    CHECK(r.rc == 2);
    CAPTURE(r.out);
    CHECK(r.out.find(key) != std::string::npos);
    CHECK(r.out.find(words) != std::string::npos);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') <= 1);  // one line
}

}  // namespace

TEST_CASE("each class of bad value exits 2 with the key named") {
    refused(k8b + "--set training.seq_len=-5", "training.seq_len = -5 (--set training.seq_len=-5)", "at least 1");
    refused(k8b + "--set training.local_batch_size=0", "training.local_batch_size = 0", "at least 1");
    refused(k8b + "--set training.seq_len=99999999999", "training.seq_len = 99999999999", "larger than");
    refused(k8b + "--set parallelism.tensor_parallel_degree=3", "parallelism.tensor_parallel_degree = 3",
            "does not divide the 32 attention heads");
    refused(k8b + "--set parallelism.pipeline_parallel_degree=7", "job.world_size = 8", "PP 7");
    refused(k8b + "--set parallelism.context_parallel_degree=-2", "parallelism.context_parallel_degree = -2", "at least 1");
    refused(k8b + "--set parallelism.expert_parallel_degree=3", "parallelism.expert_parallel_degree = 3", "without experts");
    refused("estimate --model qwen3-30b-a3b --device h100-80gb --world-size 8 --set parallelism.expert_parallel_degree=3",
            "parallelism.expert_parallel_degree = 3", "does not divide the 128 experts");
    refused("estimate --model qwen3-30b-a3b --device h100-80gb --world-size 8 --set parallelism.expert_parallel_degree=16",
            "parallelism.expert_parallel_degree = 16", "must divide");
    refused(k8b_any + "--set parallelism.pipeline_parallel_degree=64 --world-size 64", "parallelism.pipeline_parallel_degree = 64",
            "larger than the 32 layers");
    refused(k8b + "--set parallelism.context_parallel_degree=2 --set training.seq_len=8190",
            "parallelism.context_parallel_degree = 2", "divisible by 2 x CP = 4");
    refused(k8b + "--set parallelism.data_parallel_shard_degree=4", "parallelism.data_parallel_shard_degree = 4",
            "not the world size 8");
    refused("preflight --model llama3-8b --device h100-80gb --world-size 8 --set training.torch_npu_memory_ratio=1.5",
            "training.torch_npu_memory_ratio", "must be in");
}

TEST_CASE("a bad value in a config file is located by file and line") {
    namespace fs = std::filesystem;
    const fs::path p = fs::temp_directory_path() / ("oomdx_validate_" + std::to_string(::getpid()) + ".toml");
    std::ofstream(p) << "[model]\nname = \"llama3\"\nflavor = \"8B\"\n\n[parallelism]\ntensor_parallel_degree = 3\n";
    const run_result r = run("estimate --config " + p.string() + " --device h100-80gb --world-size 8");
    fs::remove(p);
    CHECK(r.rc == 2);
    CHECK(r.out.find("parallelism.tensor_parallel_degree = 3 (" + p.string() + ":6)") != std::string::npos);
}

TEST_CASE("where the framework rounds, it is an assumption, not an error") {
    const run_result r = run(k8b_any + "--set parallelism.pipeline_parallel_degree=3 --world-size 24");
    CHECK(r.rc == 0);
    CHECK(r.out.find("uneven split") != std::string::npos);
}

TEST_CASE("a sequence that is not a multiple of 2 x CP: refused by torchtitan, padded by ms-swift") {
    // k8b's default framework is torchtitan: refused (the case above); ms-swift's sequence parallel
    // pads each batch, so its max_length is a cap
    const run_result r = run(k8b + "--framework ms_swift --set parallelism.context_parallel_degree=4 --set training.seq_len=65535");
    CHECK(r.rc == 0);
    CHECK(r.out.find("is not a multiple of 2 x CP = 8: ms_swift pads each batch to one") != std::string::npos);
}

TEST_CASE("Megatron expert TP not given: TP when EP x TP fits a stage, else 1; a stated expert TP is checked") {
    const std::string moe = "estimate --model qwen3-30b-a3b --device h100-80gb --world-size 8 --framework megatron ";
    // TP 2 x EP 8 cannot fit 8 ranks: the job ran with expert TP 1 (stated as an assumption, not an error)
    const run_result r = run(moe + "--set parallelism.tensor_parallel_degree=2 --set parallelism.expert_parallel_degree=8");
    CHECK(r.rc == 0);
    CHECK(r.out.find("expert TP not given: EP 8 x TP 2 does not fit the 8 ranks of a pipeline stage, so expert TP 1") !=
          std::string::npos);
    // TP 2 x EP 4 fits: Megatron's default (expert TP = TP) holds, nothing assumed
    const run_result fits = run(moe + "--set parallelism.tensor_parallel_degree=2 --set parallelism.expert_parallel_degree=4");
    CHECK(fits.rc == 0);
    CHECK(fits.out.find("expert TP not given") == std::string::npos);
    // the same layout with expert TP stated as 2 is still refused
    refused(moe + "--set parallelism.tensor_parallel_degree=2 --set parallelism.expert_parallel_degree=8 "
                  "--set parallelism.expert_tensor_parallel_degree=2",
            "parallelism.expert_parallel_degree = 8", "EP 8 x expert TP 2 must divide");
}

TEST_CASE("a torchtitan DDP job has zero_stage 0; FSDP has 3") {
    const run_result ddp = run("facts --config examples/optimizer_bound_npu/job.toml --framework torchtitan_npu --format json");
    CHECK(ddp.rc == 0);
    // The stage follows the mesh once the world size is in (preflight / diagnose / estimate).
    const run_result est = run("estimate --config examples/optimizer_bound_npu/job.toml --framework torchtitan_npu "
                               "--model qwen2.5-7b --device 910b3 --world-size 8 --format json");
    CHECK(est.rc == 0);
    CHECK(est.out.find("replicated over 1 ranks") != std::string::npos);
}

TEST_CASE("override_problem: a what-if layout the framework would reject") {
    using namespace oomdx;
    fact_store f(&vocabulary::shipped());
    provenance p;
    p.producer = "test";
    f.emit("job.framework", value("torchtitan"), p);
    f.emit("job.world_size", value(8), p);
    f.emit("model.num_attention_heads", value(32), p);
    f.emit("parallelism.data_parallel_replicate_degree", value(8), p);
    f.emit("parallelism.data_parallel_shard_degree", value(1), p);
    const auto bad = override_problem(f, {{"parallelism.tensor_parallel_degree", 2}});
    REQUIRE(bad.has_value());
    CHECK(bad->find("not the world size 8") != std::string::npos);
    CHECK_FALSE(override_problem(f, {{"parallelism.data_parallel_shard_degree", 8},
                                     {"parallelism.data_parallel_replicate_degree", 1}}).has_value());
}
