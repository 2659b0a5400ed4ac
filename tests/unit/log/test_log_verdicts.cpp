// The log's verdicts come from rules/evidence_log.yaml: the same facts through the `evidence`
// step give the timing and the leak signal, and a site pack moves a threshold without a rebuild.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/data_dir.h"
#include "engine/core/vocabulary.h"
#include "engine/report/log_verdicts.h"
#include "engine/rules/rule_loader.h"
#include "parsers/log/log_analyzer.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

log_analysis at_step(int last) {
    std::string log;
    for (int s = last - 1; s <= last; ++s) log += "step " + std::to_string(s) + ", loss 1.0\n";
    return analyze_log_text(log + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n", "t.log");
}

}  // namespace

TEST_CASE("timing from the evidence rules: early <= 2 < mid < 10 <= late") {
    struct c { int last; const char* timing; };
    for (auto [last, timing] : {c{1, "early"}, c{2, "mid"}, c{8, "mid"}, c{9, "late"}, c{400, "late"}}) {
        log_analysis a = at_step(last);
        CHECK(a.timing == "unknown");  // the analyzer decides nothing
        fact_store facts = judge_log(a);
        CAPTURE(last);
        CHECK(a.step == last + 1);
        CHECK(a.timing == timing);
        CHECK(facts.get("oom.timing")->prov.rule_id.rfind("evidence_timing_", 0) == 0);
    }
}

TEST_CASE("a site pack overrides a threshold macro") {
    const fs::path dir = fs::temp_directory_path() / ("oomdx_site_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "site.yaml") << "- macro: late_oom_min_step\n  override: true\n"
                                        "  condition: coalesce(oom.step, oom.last_logged_step + 1) >= 20\n";
    load_result lr = load_rules({data_path("rules"), dir.string()}, vocabulary::shipped(), shipped_actions());
    REQUIRE(lr.ok());
    log_analysis a = at_step(14);
    judge_log(a, &lr.rules);
    CHECK(a.timing == "mid");  // step 15 is late with the shipped threshold, mid with the site's
    log_analysis b = at_step(14);
    judge_log(b);
    CHECK(b.timing == "late");
    fs::remove_all(dir);
}
