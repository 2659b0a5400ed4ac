// `oomdx facts` end to end (skips when the binary is not built).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/unit/run_oomdx.h"

namespace {

using oomdx::test::run_result;

run_result run(const std::string& args) { return oomdx::test::run_oomdx(args); }

bool have_binary() { return std::filesystem::exists(OOMDX_BINARY); }

const std::string cfg = std::string(OOMDX_TEST_DIR) + "/fixtures/configs/";

}  // namespace

TEST_CASE("oomdx facts: text with provenance") {
    if (!have_binary()) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    auto r = run("facts --config " + cfg + "torchtitan/llama3_8b_2025_10.toml --device h100");
    CAPTURE(r.out);
    CHECK(r.rc == 0);
    CHECK(r.out.find("training.local_batch_size") != std::string::npos);
    CHECK(r.out.find("llama3_8b_2025_10.toml:20") != std::string::npos);
    CHECK(r.out.find("local_batch_size = 2") != std::string::npos);   // the excerpt
    CHECK(r.out.find("device.capacity_bytes") != std::string::npos);
    CHECK(r.out.find("79.10 GiB") != std::string::npos);
    CHECK(r.out.find("training.local_batchsize") != std::string::npos);  // unknown key reported
    // The config names llama3 / 8B: the preset is found without --model.
    CHECK(r.out.find("model.param_count") != std::string::npos);
}

TEST_CASE("oomdx facts: JSON, --set and --model") {
    if (!have_binary()) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    auto r = run("facts --config " + cfg + "megatron/pretrain_llama3_8b.sh --model llama3-8b --device 910b3 "
                 "--set training.local_batch_size=4 --format json");
    CAPTURE(r.out);
    REQUIRE(r.rc == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["schema"] == "oomdx.facts/1");
    CHECK(j["framework"] == "megatron");
    std::map<std::string, nlohmann::json> by;
    for (const auto& f : j["facts"]) by[f["name"].get<std::string>()] = f;
    CHECK(by["training.local_batch_size"]["value"] == 4);
    CHECK(by["training.local_batch_size"]["producer"] == "user");
    CHECK(by["parallelism.tensor_parallel_degree"]["value"] == 2);
    CHECK(by["parallelism.tensor_parallel_degree"]["line"] == 60);
    CHECK(by["model.param_count"]["value"] == 8030261248LL);
    CHECK(by["device.kind"]["value"] == "npu");
}

TEST_CASE("oomdx facts: errors exit 2 with one line") {
    if (!have_binary()) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    auto r = run("facts --config " + cfg + "bad/bad_value.toml");
    CHECK(r.rc == 2);
    CHECK(r.out.find("bad_value.toml:3") != std::string::npos);
    CHECK(run("facts --device toaster").rc == 2);
    CHECK(run("facts --set no.such.key=1").rc == 2);
    CHECK(run("facts").rc == 2);
}

// --framework without a config: a framework that checkpoints by default (LLaMA-Factory) is not
// advised to turn checkpointing on; one whose default is off (HF Trainer) is not made certain of it.
TEST_CASE("oomdx diagnose: --framework without a config assumes only a checkpointing default that is on") {
    if (!have_binary()) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    const auto log = std::filesystem::temp_directory_path() / "oomdx_fw_default_ac.log";
    {
        std::ofstream f(log);
        f << "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 50.00 MiB. GPU 0 has a total "
             "capacity of 79.15 GiB of which 20.00 MiB is free.\n";
    }
    auto recs = [&](const std::string& fw) {
        auto r = run("diagnose --log " + log.string() + " --framework " + fw + " --format json");
        CAPTURE(r.out);
        REQUIRE(r.rc == 0);
        const auto j = nlohmann::json::parse(r.out);
        std::map<std::string, std::string> by;
        for (const auto& x : j["recommendations"])
            by[x["action"].get<std::string>()] = x["confidence"].get<std::string>();
        return by;
    };
    const auto lf = recs("llama_factory");
    CHECK(lf.count("enable_full_ac") == 0);     // already on by default
    CHECK(lf.count("reduce_micro_batch") == 1);
    const auto off = recs("llama_factory --set activation_checkpoint.mode=none");  // stated off: the lever is back
    REQUIRE(off.count("enable_full_ac") == 1);
    CHECK(off.at("enable_full_ac") == "high");
    const auto hf = recs("hf_trainer");
    REQUIRE(hf.count("enable_full_ac") == 1);  // off by default, but not assumed
    CHECK(hf.at("enable_full_ac") != "high");
    std::filesystem::remove(log);
}
