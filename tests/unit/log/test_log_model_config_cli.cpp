// `oomdx diagnose --log` with a printed HF model config: the estimate from the log alone, --model
// still wins, a config that does not read is noted and changes no exit code.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/run_oomdx.h"

namespace {

namespace fs = std::filesystem;
using oomdx::test::run_oomdx;

const std::string k_fixture = std::string(OOMDX_TEST_DIR) + "/fixtures/logs/hf_model_config/llamafactory_llama3_8b_lora.log";

bool have_binary() { return fs::exists(OOMDX_BINARY); }

std::string read_all(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

// The fixture edited: `from` replaced by `to` everywhere (both printed configs).
std::string variant(const std::string& name, const std::string& from, const std::string& to) {
    std::string t = read_all(k_fixture);
    for (size_t at = t.find(from); at != std::string::npos; at = t.find(from, at + to.size())) t.replace(at, from.size(), to);
    const fs::path p = fs::temp_directory_path() / ("oomdx_model_config_cli_" + name + ".log");
    std::ofstream(p, std::ios::binary) << t;
    return p.string();
}

// `diagnose` on such a variant, on the card the tests use.
oomdx::test::run_result diagnose_variant(const std::string& name, const std::string& from, const std::string& to) {
    return run_oomdx("diagnose --log '" + variant(name, from, to) + "' --device rtx4090");
}

}  // namespace

TEST_CASE("diagnose --log: the printed model config gives the static estimate") {
    if (!have_binary()) {
        MESSAGE("skipped: oomdx binary not built");
        return;
    }
    const auto r = run_oomdx("diagnose --log '" + k_fixture + "' --device rtx4090");
    CAPTURE(r.out);
    CHECK(r.rc == 0);
    CHECK(r.out.find("model /data/models/Meta-Llama-3-8B-Instruct (the config printed in the log at") != std::string::npos);
    CHECK(r.out.find("llamafactory_llama3_8b_lora.log:3)") != std::string::npos);
    CHECK(r.out.find("STATIC ESTIMATE PER DEVICE") != std::string::npos);
    CHECK(r.out.find("no estimate: give --model") == std::string::npos);
    // The printed micro-batch and checkpointing are the estimate's (8 x 2048 tokens, AC full).
    CHECK(r.out.find("16384 tokens") != std::string::npos);

    // The JSON report carries the block, one line per entry (a summary reads it back).
    const auto j = run_oomdx("diagnose --log '" + k_fixture + "' --device rtx4090 --format json", oomdx::test::stderr_to::discard);
    CHECK(j.out.find("\"json_lines\": [") != std::string::npos);
    CHECK(j.out.find("\"  \\\"hidden_size\\\": 4096,\"") != std::string::npos);
}

TEST_CASE("diagnose --log --model: the named model wins over the printed one") {
    if (!have_binary()) return;
    const auto r = run_oomdx("diagnose --log '" + k_fixture + "' --device rtx4090 --model qwen3-8b");
    CAPTURE(r.out);
    CHECK(r.out.find("(the config printed in the log at") == std::string::npos);
    CHECK(r.out.find("STATIC ESTIMATE PER DEVICE") != std::string::npos);
}

TEST_CASE("diagnose --log: a printed config that does not read is noted, nothing else changes") {
    if (!have_binary()) return;
    const auto good = run_oomdx("diagnose --log '" + k_fixture + "' --device rtx4090");
    SUBCASE("a dimension that is not a number") {
        const auto r = diagnose_variant("bad_dim", "\"hidden_size\": 4096", "\"hidden_size\": \"big\"");
        CAPTURE(r.out);
        CHECK(r.rc == good.rc);
        CHECK(r.out.find("not read:") != std::string::npos);
        CHECK(r.out.find(".log:13:") != std::string::npos);  // the log's own line of hidden_size
        // the model then comes from the PEFT line's exact count (8,051,232,768 less 20,971,520 adapters: llama3-8b's)
        CHECK(r.out.find("model llama3-8b (inferred: the one preset with the 8,030,261,248 parameters") != std::string::npos);
    }
    SUBCASE("no dimensions at all") {
        const auto r = diagnose_variant("no_dims", "\"hidden_size\": 4096,", "\"hidden\": 1,");
        CAPTURE(r.out);
        CHECK(r.rc == good.rc);
        CHECK(r.out.find("not a model config: no hidden_size") != std::string::npos);
    }
    SUBCASE("a block that never closes") {
        const auto r = diagnose_variant("open", "\n}\n", "\n");
        CAPTURE(r.out);
        CHECK(r.rc == good.rc);
        CHECK(r.out.find("(the config printed in the log at") == std::string::npos);
        CHECK(r.out.find("(inferred: the one preset with the 8,030,261,248 parameters") != std::string::npos);
    }
}

TEST_CASE("a log summary carries the printed config: diagnose from the summary estimates too") {
    if (!have_binary()) return;
    const std::string sum = (fs::temp_directory_path() / "oomdx_model_config_cli_summary.json").string();
    run_oomdx("log --format json '" + k_fixture + "' > '" + sum + "'", oomdx::test::stderr_to::discard);
    REQUIRE(fs::exists(sum));
    const auto r = run_oomdx("diagnose --log '" + sum + "' --device rtx4090");
    CAPTURE(r.out);
    CHECK(r.out.find("model /data/models/Meta-Llama-3-8B-Instruct (the config printed in the log at") != std::string::npos);
    CHECK(r.out.find("STATIC ESTIMATE PER DEVICE") != std::string::npos);
    fs::remove(sum);
}
