// `oomdx facts` end to end (skips when the binary is not built).
#include <doctest/doctest.h>

#include <filesystem>
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
