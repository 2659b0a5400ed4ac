// Per-file summaries (oomdx.snapshot/1 "analysis" documents) and their merge: a summary gives
// the same cross-rank row as the analysis it came from, and the analysis back.
#include <doctest/doctest.h>

#include <regex>

#include <filesystem>
#include <fstream>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/report/snapshot_verdicts.h"
#include "parsers/snapshot/analysis_batch.h"
#include "parsers/snapshot/analysis_report.h"
#include "parsers/snapshot/summary.h"

using namespace oomdx;
using namespace oomdx::snap;
namespace fs = std::filesystem;

namespace {

std::vector<snapshot_analysis> fixtures() {
    std::vector<snapshot_analysis> v;
    for (const auto& e : fs::directory_iterator(fs::path(OOMDX_TEST_DIR) / "fixtures" / "snapshots")) {
        if (e.path().extension() != ".pickle") continue;
        try {
            v.push_back(analyze_file(e.path().string()));
        } catch (const input_error&) {
        }
    }
    for (auto& a : v) apply_snapshot_verdicts(a, shipped_rules());
    return v;
}

bool same(const rank_row& a, const rank_row& b) {
    return a.file == b.file && a.rank == b.rank && a.device == b.device && a.peak == b.peak && a.live == b.live &&
           a.reserved == b.reserved && a.inactive == b.inactive && a.fragmentation == b.fragmentation &&
           a.oom_events == b.oom_events && a.first_oom_time_us == b.first_oom_time_us && a.top_site == b.top_site &&
           a.top_category == b.top_category;
}

struct temp_dir {
    fs::path path = fs::temp_directory_path() / ("oomdx_summary_test_" + std::to_string(::getpid()));
    temp_dir() { fs::create_directories(path); }
    ~temp_dir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("a summary gives the row of its analysis, with and without cross_rank") {
    const auto all = fixtures();
    REQUIRE(all.size() > 5);
    for (std::size_t i = 0; i < all.size(); ++i) {
        INFO(all[i].file);
        nlohmann::json j = to_json(all[i]);
        CHECK(j.contains("cross_rank"));
        CHECK(same(rank_row_of(all[i], 7), rank_row_of_summary(j, "s.json", 7)));
        j.erase("cross_rank");  // an older summary: read from its primary device
        CHECK(same(rank_row_of(all[i], 7), rank_row_of_summary(j, "s.json", 7)));
    }
}

TEST_CASE("a summary gives the analysis back") {
    for (const auto& a : fixtures()) {
        INFO(a.file);
        const nlohmann::json j = to_json(a);
        const snapshot_analysis b = analysis_of_summary(j, "s.json");
        CHECK(to_json(b) == j);
    }
}

TEST_CASE("summaries that are not oomdx analyses are refused with the file and the key") {
    CHECK_THROWS_WITH_AS(rank_row_of_summary(nlohmann::json::parse(R"({"schema": "x"})"), "a.json", 0),
                         doctest::Contains("a.json"), input_error);
    CHECK_THROWS_WITH_AS(
        rank_row_of_summary(nlohmann::json::parse(R"({"schema": "oomdx.snapshot/1", "kind": "ranks"})"), "b.json", 0),
        doctest::Contains("kind 'ranks'"), input_error);
}

TEST_CASE("rank from the file name or a directory of the path") {
    CHECK(rank_from_name("/x/oom_snapshot_rank12.pickle", 7) == 12);
    CHECK(rank_from_name("/job/rank5/oom.pickle", 7) == 5);
    CHECK(rank_from_name("/job/node1/gpu3/snapshot.pickle", 7) == 3);
    CHECK(rank_from_name("/job/snapshot.pickle", 7) == 7);
}

// The regular expressions rank_from_name replaced by a hand-written search (docs/snapshot.md, snap8).
static std::int64_t rank_by_regex(const std::string& path, std::int64_t fallback) {
    static const std::regex rank_re(R"((?:rank|rk|dev|device|npu|gpu|cuda)[_-]?(\d{1,6}))", std::regex::icase);
    static const std::regex tail_re(R"((\d{1,6})\.(?:pickle|pkl|json)$)");
    const std::size_t slash = path.find_last_of("/\\");
    const std::string name = path.substr(slash == std::string::npos ? 0 : slash + 1);
    std::smatch m;
    if (std::regex_search(name, m, rank_re)) return std::stoll(m[1].str());
    if (std::regex_search(name, m, tail_re)) return std::stoll(m[1].str());
    for (std::size_t end = slash; end != std::string::npos && end > 0;) {
        const std::size_t b = path.find_last_of("/\\", end - 1);
        const std::string dir = path.substr(b == std::string::npos ? 0 : b + 1, end - (b == std::string::npos ? 0 : b + 1));
        if (std::regex_search(dir, m, rank_re)) return std::stoll(m[1].str());
        end = b;
    }
    return fallback;
}

TEST_CASE("rank from the name: the hand-written search finds what the regular expressions found") {
    const std::vector<std::string> names = {
        "/x/oom_snapshot_rank12.pickle", "RANK_3.pkl", "Rk-7/a.json", "device_1234567.pickle", "devi3.pickle",
        "dev.pickle", "dev_x1.pickle", "gpu-_4.pickle", "cuda:0.pickle", "cuda0rank1.pickle", "snap_1234567.pickle",
        "snap_42.PICKLE", "a12.json", "a12.json.bak", "x/y7/z.pickle", "node0\\gpu3\\s.pickle", "NPU007x",
        "rankrank5", "dedevice9", "ra_nk9.pkl", "/a/rank/b/5.pickle", "", "/", "rank", "rank_", "rank-",
        "mydevice-12.pkl", "9.pkl", ".pkl", "x.json", "dev__1.pickle"};
    for (const auto& n : names) {
        INFO(n);
        CHECK(rank_from_name(n, -5) == rank_by_regex(n, -5));
    }
    // Random names over the letters and separators that matter.
    const std::string alphabet = "rankRANKdevicDEVICEnpugpucudk_-./0123456789xjsonpicklejson";
    std::uint64_t seed = 12345;
    for (int i = 0; i < 3000; ++i) {
        std::string n;
        const int len = static_cast<int>(seed % 24);
        for (int k = 0; k < len; ++k) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            n += alphabet[(seed >> 33) % alphabet.size()];
        }
        if (i % 3 == 0) n += ".pickle";
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        INFO(n);
        CHECK(rank_from_name(n, -5) == rank_by_regex(n, -5));
    }
}

TEST_CASE("merge: inputs from a directory, a glob and @list; bad and missing summaries by rank") {
    temp_dir t;
    const auto all = fixtures();
    for (std::size_t r = 0; r < 4; ++r) {
        snapshot_analysis a = all[r];
        a.rank = static_cast<std::int64_t>(r);
        write_file_atomic((t.path / ("rank" + std::to_string(r) + ".json")).string(), to_json(a).dump());
    }
    write_file_atomic((t.path / "rank5.json").string(), "{\"schema\": \"oomdx.snap");  // cut
    {
        std::ofstream list(t.path / "list.txt");
        list << "# summaries\n" << (t.path / "rank0.json").string() << "\n\n" << (t.path / "rank9.json").string() << "\n";
    }
    CHECK(expand_summary_inputs({t.path.string()}).size() == 5);
    CHECK(expand_summary_inputs({(t.path / "rank[0-3].json").string()}).size() == 4);
    const auto listed = expand_summary_inputs({"@" + (t.path / "list.txt").string()});
    REQUIRE(listed.size() == 2);

    merge_result m = merge_summaries(expand_summary_inputs({t.path.string()}));
    CHECK(m.inputs == 5);
    REQUIRE(m.table.rows.size() == 4);
    REQUIRE(m.bad.size() == 1);
    CHECK(m.bad[0].rank == 5);
    CHECK(m.bad[0].message.find("byte") != std::string::npos);
    CHECK(m.table.missing_ranks == (std::vector<std::int64_t>{4, 5}));  // none for 4, a bad one for 5

    merge_result l = merge_summaries(listed);
    REQUIRE(l.bad.size() == 1);
    CHECK(l.bad[0].rank == 9);
    CHECK(l.bad[0].message.find("missing summary") != std::string::npos);

    // The same rows as the table of the analyses themselves.
    std::vector<snapshot_analysis> four(all.begin(), all.begin() + 4);
    for (std::size_t r = 0; r < 4; ++r) four[r].rank = static_cast<std::int64_t>(r);
    CHECK(to_json(compare_ranks(four))["rows"] == to_json(m.table)["rows"]);
}

TEST_CASE("atomic write: the file appears whole, no temporary left") {
    temp_dir t;
    const std::string f = (t.path / "s.json").string();
    write_file_atomic(f, "{}\n");
    write_file_atomic(f, "{\"a\": 1}\n");
    std::ifstream in(f);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == "{\"a\": 1}\n");
    CHECK(std::distance(fs::directory_iterator(t.path), fs::directory_iterator()) == 1);
    CHECK_THROWS_AS(write_file_atomic((t.path / "no" / "dir.json").string(), "x"), input_error);
}

TEST_CASE("summaries are told from snapshots, and analyze_file reads a summary as its snapshot") {
    const auto dir = fs::temp_directory_path() / ("oomdx_summary_kind_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string pickle = std::string(OOMDX_TEST_DIR) + "/fixtures/snapshots/v2_7_oom_expandable.pickle";
    const snapshot_analysis a = analyze_file(pickle);
    const std::string summary = (dir / "rank5.json").string();
    write_file_atomic(summary, to_json(a).dump(2));
    CHECK(summary_kind_of(pickle) == summary_kind::not_summary);
    CHECK(summary_kind_of(summary) == summary_kind::analysis);
    const snapshot_analysis b = analyze_file(summary);
    CHECK(b.file == a.file);
    CHECK(b.rank == 5);  // from the summary's name when the analysis has none
    rank_row ra = rank_row_of(a, 5), rb = rank_row_of(b, 5);
    CHECK(same(ra, rb));
    const std::string merged = (dir / "merged.json").string();
    write_file_atomic(merged, R"({"schema": "oomdx.snapshot/1", "kind": "ranks", "ranks": {"rows": [
        {"rank": 1, "file": "r1.pickle", "device": 0, "peak_bytes": 10, "allocated_bytes": 5, "reserved_bytes": 20,
         "inactive_bytes": 15, "fragmentation_rate": 0.5, "oom_events": 0, "first_oom_time_us": null,
         "top_site": "", "top_category": ""}]}, "merge": {"peak_summary": "/s/rank1.json"}})");
    CHECK(summary_kind_of(merged) == summary_kind::ranks);
    const merged_summary m = load_merged(merged);
    REQUIRE(m.rows.size() == 1);
    CHECK(m.rows[0].rank == 1);
    CHECK(m.rows[0].reserved == 20);
    CHECK(m.peak_summary == "/s/rank1.json");
    CHECK_THROWS_AS(analyze_file(merged), input_error);
    const std::string trend = (dir / "trend.json").string();
    write_file_atomic(trend, R"({"schema": "oomdx.snapshot/1", "kind": "trend"})");
    CHECK(summary_kind_of(trend) == summary_kind::other);
    CHECK_THROWS_AS(analyze_file(trend), input_error);
    fs::remove_all(dir);
}
