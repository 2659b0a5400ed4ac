// Per-rank log summaries read back (parsers/log/log_summary.h): the oomdx.log/1 JSON of every
// fixture log gives the analysis it was written from (same JSON, same facts); wrong values are
// refused naming the key; what is a summary and what is a log.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/errors.h"
#include "engine/core/fact_store.h"
#include "parsers/log/log_analyzer.h"
#include "parsers/log/log_summary.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) { return std::string(OOMDX_TEST_DIR) + "/fixtures/logs/" + name; }

std::string write_temp(const std::string& name, const std::string& text) {
    const auto d = fs::temp_directory_path() / ("oomdx_log_summary_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    const auto p = (d / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

// The facts of the summary's analysis are the log's, but for the figures the JSON rounds:
// seconds to whole seconds, R2 to 3 decimals.
void check_same_facts(const log_analysis& log, const log_analysis& summary) {
    fact_store a, b;
    emit_facts(log, a);
    emit_facts(summary, b);
    REQUIRE(a.current().size() == b.current().size());
    for (const fact* f : a.current()) {
        CAPTURE(f->name);
        const fact* g = b.get(f->name);
        REQUIRE(g != nullptr);
        CHECK(g->prov.file == f->prov.file);
        CHECK(g->prov.line == f->prov.line);
        const bool seconds = f->name.ends_with("_seconds"), r2 = f->name.ends_with("r2");
        if ((seconds || r2) && f->val.is_numeric())
            CHECK(std::abs(f->val.as_number() - g->val.as_number()) <= (seconds ? 0.5 : 0.0005));
        else
            CHECK(g->val.to_string() == f->val.to_string());
    }
}

}  // namespace

TEST_CASE("a log summary reads back into the analysis it was written from") {
    for (const char* name : {"torchtitan_leak.log", "megatron_old_format.log", "deepspeed_npu_crlf.log", "multi_rank.log"}) {
        CAPTURE(name);
        const log_analysis a = analyze_logs({fixture(name)});
        const nlohmann::json j = to_json(a);
        const log_analysis b = analysis_of_log_summary(j, "s.json");
        CHECK(to_json(b) == j);
        check_same_facts(a, b);
    }
}

TEST_CASE("a wrong value in a log summary is refused naming the key") {
    nlohmann::json j = to_json(analyze_logs({fixture("torchtitan_leak.log")}));
    j["oom"]["requested_bytes"] = "four";
    try {
        analysis_of_log_summary(j, "rank3.json");
        FAIL("no error");
    } catch (const input_error& e) {
        CHECK(std::string(e.what()).find("rank3.json") != std::string::npos);
        CHECK(std::string(e.what()).find("requested_bytes") != std::string::npos);
    }
    j = to_json(analyze_logs({fixture("torchtitan_leak.log")}));
    j["memory_steady"]["points"] = 100000;
    CHECK_THROWS_AS(analysis_of_log_summary(j, "s.json"), input_error);
    j["kind"] = "ranks";
    CHECK_THROWS_AS(analysis_of_log_summary(j, "s.json"), input_error);
    CHECK_THROWS_AS(analysis_of_log_summary(nlohmann::json::array(), "s.json"), input_error);
}

TEST_CASE("log summaries are told from logs") {
    const std::string summary = to_json(analyze_logs({fixture("megatron_old_format.log")})).dump(2);
    CHECK(log_summary_kind_of(write_temp("rank0.json", summary)) == log_summary_kind::analysis);
    CHECK(log_summary_kind_of(write_temp("cut.json", summary.substr(0, 300))) == log_summary_kind::analysis);
    CHECK(log_summary_kind_of(write_temp("merged.json", R"({"schema": "oomdx.log/1", "kind": "ranks", "ranks": {}})")) ==
          log_summary_kind::ranks);
    CHECK(log_summary_kind_of(write_temp("rank0.log", summary)) == log_summary_kind::not_summary);  // not *.json
    CHECK(log_summary_kind_of(write_temp("lines.json", "{\"step\": 1}\n{\"step\": 2}\n")) == log_summary_kind::not_summary);
    CHECK(log_summary_kind_of(write_temp("other.json", "{\n  \"a\": 1\n}\n")) == log_summary_kind::not_summary);
    CHECK(log_summary_kind_of(fixture("torchtitan_leak.log")) == log_summary_kind::not_summary);
    CHECK_THROWS_AS(load_log_summary(write_temp("cut2.json", summary.substr(0, 300))), input_error);
}
