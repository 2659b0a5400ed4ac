// `oomdx snapshot` end to end: JSON schema, diff, trend, directories, user categories, errors.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/unit/run_oomdx.h"

namespace fs = std::filesystem;

namespace {

oomdx::test::run_result run(const std::string& args) { return oomdx::test::run_oomdx(args); }

std::string fixture(const std::string& name) {
    return (fs::path(OOMDX_TEST_DIR) / "fixtures" / "snapshots" / name).string();
}

bool ready() {
    return fs::exists(OOMDX_BINARY) && fs::exists(fixture("v2_7_oom_expandable.pickle"));
}

}  // namespace

TEST_CASE("cli: oomdx snapshot FILE --format json") {
    if (!ready()) {
        MESSAGE("skipped: binary or fixtures missing");
        return;
    }
    auto r = run("snapshot '" + fixture("v2_7_oom_expandable.pickle") + "' --format json --top 3");
    REQUIRE(r.rc == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["schema"] == "oomdx.snapshot/1");
    CHECK(j["kind"] == "analysis");
    REQUIRE_FALSE(j["devices"].empty());
    const auto& d = j["devices"][0];
    CHECK(d["reserved_bytes"] == 16777216);
    CHECK(d["allocated_bytes"] == 10485760);
    CHECK(d["oom_events"].size() == 1);
    CHECK(d["oom_events"][0]["device_free_bytes"] == 52428800);

    auto t = run("snapshot '" + fixture("v2_7_oom_expandable.pickle") + "'");
    CHECK(t.rc == 0);
    CHECK(t.out.find("OOM events") != std::string::npos);
    auto m = run("snapshot '" + fixture("v2_1_no_time.pickle") + "' --format markdown");
    CHECK(m.rc == 0);
    CHECK(m.out.find("## Device") != std::string::npos);
}

TEST_CASE("cli: diff, trend, several files, user categories") {
    if (!ready()) {
        MESSAGE("skipped: binary or fixtures missing");
        return;
    }
    std::string a = "'" + fixture("v2_1_no_time.pickle") + "'";
    std::string b = "'" + fixture("v2_5_allocator_settings.pickle") + "'";
    std::string c = "'" + fixture("v2_7_oom_expandable.pickle") + "'";
    auto d = run("snapshot diff " + a + " " + b + " --format json");
    REQUIRE(d.rc == 0);
    CHECK(nlohmann::json::parse(d.out)["kind"] == "diff");
    auto t = run("snapshot trend " + a + " " + b + " " + c + " --format json");
    REQUIRE(t.rc == 0);
    auto tj = nlohmann::json::parse(t.out);
    CHECK(tj["kind"] == "trend");
    CHECK((tj["verdict"] == "leak" || tj["verdict"] == "warmup" || tj["verdict"] == "no_growth"));
    auto m = run("snapshot " + a + " " + b + " " + c + " --format json -j 2");
    REQUIRE(m.rc == 0);
    auto mj = nlohmann::json::parse(m.out);
    CHECK(mj["kind"] == "ranks");
    CHECK(mj["snapshots"].size() == 3);
    CHECK(mj["ranks"]["rows"].size() == 3);
    auto text = run("snapshot " + a + " " + b + " " + c);
    CHECK(text.rc == 0);
    CHECK(text.out.find("Ranks (3)") != std::string::npos);

    fs::path prof = fs::temp_directory_path() / "oomdx_test_profile.yaml";
    std::ofstream(prof) << "{everything: '.'}\n";
    auto u = run("snapshot " + c + " --format json --categories '" + prof.string() + "'");
    fs::remove(prof);
    REQUIRE(u.rc == 0);
    auto uj = nlohmann::json::parse(u.out);
    bool has = false;
    for (const auto& n : uj["category_names"]) has = has || n == "everything";
    CHECK(has);
}

TEST_CASE("cli: bad inputs exit 2 with one line") {
    if (!ready()) {
        MESSAGE("skipped: binary or fixtures missing");
        return;
    }
    fs::path bad = fs::temp_directory_path() / "oomdx_test_bad.pickle";
    std::ofstream(bad, std::ios::binary) << "\x80\x04\x95garbage";
    auto r = run("snapshot '" + bad.string() + "'");
    fs::remove(bad);
    CHECK(r.rc == 2);
    CHECK(r.out.find("oomdx: error:") != std::string::npos);
    CHECK(run("snapshot /nonexistent/x.pickle").rc == 2);
    CHECK(run("snapshot diff '" + fixture("v2_1_no_time.pickle") + "'").rc == 2);
    CHECK(run("snapshot trend '" + fixture("v2_1_no_time.pickle") + "' '" + fixture("v2_1_no_time.pickle") + "'").rc == 2);
    CHECK(run("snapshot").rc == 2);
    CHECK(run("snapshot '" + fixture("v2_1_no_time.pickle") + "' --capacity lots").rc == 2);
}

// The verdicts' packs are loaded when the verdicts first need them (snap38, no thread): a pack that
// does not load still fails the run, after the snapshot's own errors, as when a thread loaded it.
TEST_CASE("cli: a --rules pack that does not load fails after the snapshot's own errors") {
    if (!ready()) {
        MESSAGE("skipped: binary or fixtures missing");
        return;
    }
    const fs::path dir = fs::temp_directory_path() / "oomdx_test_broken_pack";
    fs::create_directories(dir);
    std::ofstream(dir / "broken.yaml") << "rules:\n  - id: [unclosed\n";
    const auto broken = run("snapshot '" + fixture("v2_1_no_time.pickle") + "' --rules '" + dir.string() + "'");
    const auto missing = run("snapshot /nonexistent/x.pickle --rules '" + dir.string() + "'");
    const auto fine = run("snapshot '" + fixture("v2_7_oom_expandable.pickle") + "' --format json");
    fs::remove_all(dir);
    CHECK(broken.rc == 2);
    CHECK(broken.out.find("the rule packs do not load") != std::string::npos);
    CHECK(broken.out.find("broken.yaml") != std::string::npos);
    CHECK(missing.rc == 2);
    CHECK(missing.out.find("/nonexistent/x.pickle") != std::string::npos);
    CHECK(missing.out.find("rule packs") == std::string::npos);
    CHECK(fine.rc == 0);
    CHECK(fine.out.find("\"fragmentation_level\": \"\"") == std::string::npos);  // a rule's verdict, set
    CHECK(fine.out.find("\"fragmentation_level\": \"") != std::string::npos);
}
