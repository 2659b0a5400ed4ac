// `oomdx estimate` and `oomdx preflight` end to end through the built binary.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/unit/run_oomdx.h"

namespace {

using oomdx::test::run_result;

run_result run(const std::string& args) { return oomdx::test::run_oomdx(args, oomdx::test::stderr_to::discard); }

const char* k8b = "--model llama3-8b --world-size 8 --set training.seq_len=8192 ";

}  // namespace

TEST_CASE("oomdx estimate without a config: JSON breakdown") {
    const run_result r = run(std::string("estimate ") + k8b +
                             "--device h100-80gb --set training.local_batch_size=1 --set activation_checkpoint.mode=full --format json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["schema"] == "oomdx.estimate/1");
    CHECK(j["peak_bytes"].get<std::int64_t>() > 0);
    CHECK(j["reserved_peak_bytes"].get<std::int64_t>() >= j["peak_bytes"].get<std::int64_t>());
    CHECK(j["capacity_bytes"].get<std::int64_t>() > 70LL * (1LL << 30));
    CHECK(j["fits"].get<bool>());
    CHECK(j["components"].size() == 8);
    CHECK(j["param_count"].get<std::int64_t>() == 8030261248LL);
}

TEST_CASE("oomdx estimate: text output names the statistics") {
    const run_result r = run(std::string("estimate ") + k8b + "--device h100-80gb --set training.local_batch_size=2");
    REQUIRE(r.rc == 0);
    CHECK(r.out.find("max_memory_allocated") != std::string::npos);
    CHECK(r.out.find("max_memory_reserved") != std::string::npos);
}

TEST_CASE("oomdx preflight: exit 1 when it does not fit, 0 when it does") {
    const run_result bad = run(std::string("preflight ") + k8b +
                               "--device h100-80gb --set training.local_batch_size=8 --set activation_checkpoint.mode=none");
    CHECK(bad.rc == 1);
    CHECK(bad.out.find("DOES NOT FIT") != std::string::npos);
    const run_result ok = run(std::string("preflight ") + k8b +
                              "--device h100-80gb --set training.local_batch_size=1 --set activation_checkpoint.mode=full");
    CHECK(ok.rc == 0);
}

TEST_CASE("oomdx preflight --plan lists fitting configurations with overrides") {
    const run_result r = run(std::string("preflight ") + k8b +
                             "--device h100-80gb --set training.local_batch_size=8 --set activation_checkpoint.mode=none "
                             "--plan --top 5 --format json");
    CHECK(r.rc == 1);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["schema"] == "oomdx.preflight/1");
    REQUIRE(j["plan"]["candidates"].size() == 5);
    for (const auto& c : j["plan"]["candidates"]) {
        CHECK(c["margin_bytes"].get<std::int64_t>() >= 0);
        CHECK_FALSE(c["overrides"].empty());
        CHECK_FALSE(c["job_syntax"].empty());
    }
}

TEST_CASE("bad inputs exit 2 with a message") {
    CHECK(run("estimate --model llama3-8b --set training.seq_len=abc").rc == 2);
    CHECK(run("estimate --model llama3-8b --set no.such.key=1").rc == 2);
    CHECK(run("preflight --model llama3-8b --device no-such-device").rc == 2);
    CHECK(run("estimate --model /nonexistent/config.json").rc == 2);
    CHECK(run("estimate").rc == 2);  // no model
}
