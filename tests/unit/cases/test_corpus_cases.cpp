// The real-case corpus (tests/cases/): every file is valid, and the ranking of each confirmed fix
// is measured. Scores are measurements; the only failure is dropping below score_floor.yaml.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "case_file.h"
#include "case_score.h"

namespace fs = std::filesystem;
using namespace oomdx::cases;

namespace {

const std::string k_dir = std::string(OOMDX_TEST_DIR) + "/cases";

std::string report_path() {
    if (const char* p = std::getenv("OOMDX_CASES_REPORT"); p && *p) return p;
    return (fs::path(OOMDX_BINARY).parent_path() / "cases_report.txt").string();
}

}  // namespace

TEST_CASE("cases: every case file is valid and every thread is used once") {
    const auto files = case_files(k_dir);
    REQUIRE_FALSE(files.empty());
    std::set<std::string> sources;
    for (const auto& f : files) {
        const load_outcome o = load_case(f, catalog::shipped());
        for (const auto& e : o.errors) FAIL_CHECK(e);
        if (!o.tc.source.empty()) {
            INFO(f);
            const std::string msg = f + ": source already used by another case";
            CHECK_MESSAGE(sources.insert(o.tc.source).second, msg);
        }
    }
}

TEST_CASE("cases: the confirmed fix ranks (measured, with a ratchet floor)") {
    const fs::path scratch = fs::temp_directory_path() / ("oomdx_cases_" + std::to_string(::getpid()));
    fs::create_directories(scratch);
    std::vector<case_result> results;
    for (const auto& f : case_files(k_dir)) {
        const load_outcome o = load_case(f, catalog::shipped());
        if (!o.ok()) continue;  // reported by the validity test
        results.push_back(run_case(o.tc, scratch.string()));
        std::printf("%s\n", result_line(results.back()).c_str());
    }
    fs::remove_all(scratch);
    const score s = score_of(results);
    std::printf("%s", totals_text(s).c_str());
    std::fflush(stdout);

    const std::string out = report_path();
    std::ofstream(out) << report_text(results);
    MESSAGE("per-case table written to " << out);

    // A report must not contradict itself nor offer as a fix what the job already does.
    for (const auto& r : results)
        for (const auto& d : r.defects) FAIL_CHECK(r.id << ": " << d);

    const floor_counts fl = read_floor(k_dir + "/score_floor.yaml");
    CHECK_MESSAGE(s.all.top1 >= fl.top1, "top-1 dropped below tests/cases/score_floor.yaml");
    CHECK_MESSAGE(s.all.top3 >= fl.top3, "top-3 dropped below tests/cases/score_floor.yaml");
}
