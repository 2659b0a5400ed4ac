// Analysis of real files: the generator fixtures (expected overview numbers) and the shared
// corpus (every file analyzes; totals match manifest.json). Corpus tests skip when absent.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "parsers/snapshot/analysis_batch.h"
#include "parsers/snapshot/compare.h"
#include "parsers/snapshot/snapshot_analysis.h"
#include "parsers/snapshot/snapshot_loader.h"

using namespace oomdx;
using namespace oomdx::snap;
namespace fs = std::filesystem;

namespace {

const category_rules& rules() {
    static const category_rules r = category_rules::shipped();
    return r;
}

struct totals {
    std::int64_t reserved = 0, allocated = 0, active = 0, inactive = 0, pending = 0, requested = 0;
    std::int64_t largest_inactive = 0, segments = 0, blocks = 0, entries = 0;
    std::map<std::string, std::int64_t> actions;
};

totals sum(const snapshot_analysis& a) {
    totals t;
    for (const auto& d : a.devices) {
        t.reserved += d.reserved_bytes;
        t.allocated += d.allocated_bytes;
        t.active += d.active_bytes;
        t.inactive += d.inactive_bytes;
        t.pending += d.pending_free_bytes;
        t.requested += d.requested_bytes;
        t.largest_inactive = std::max(t.largest_inactive, d.largest_inactive_block_bytes);
        t.segments += d.segments;
        t.blocks += d.blocks;
        t.entries += d.trace_entries;
        for (const auto& [k, v] : d.actions) t.actions[k] += v;
    }
    return t;
}

nlohmann::json read_json(const fs::path& p) {
    std::ifstream in(p);
    return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("generator fixtures: overview numbers match the descriptions") {
    fs::path dir = fs::path(OOMDX_TEST_DIR) / "fixtures" / "snapshots";
    if (!fs::exists(dir)) {
        MESSAGE("skipped: no tests/fixtures/snapshots");
        return;
    }
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        std::string name = e.path().filename().string();
        if (name.size() < 15 || name.substr(name.size() - 14) != ".expected.json") continue;
        nlohmann::json exp = read_json(e.path());
        fs::path file = dir / exp["file"].get<std::string>();
        if (!fs::exists(file)) continue;
        CAPTURE(file.string());
        analysis_options o;
        o.rules = &rules();
        snapshot_analysis a = analyze_file(file.string(), o);
        totals t = sum(a);
        auto check = [&](const char* key, std::int64_t got) {
            if (!exp.contains(key)) return;
            CAPTURE(key);
            CHECK(got == exp[key].get<std::int64_t>());
        };
        check("reserved_bytes", t.reserved);
        check("allocated_bytes", t.allocated);
        check("active_bytes", t.active);
        check("inactive_bytes", t.inactive);
        check("pending_free_bytes", t.pending);
        check("requested_bytes", t.requested);
        check("largest_inactive_block_bytes", t.largest_inactive);
        check("segments", t.segments);
        check("blocks", t.blocks);
        if (exp.contains("actions"))
            for (auto& [k, v] : exp["actions"].items()) {
                CAPTURE(k);
                CHECK(t.actions[k] == v.get<std::int64_t>());
            }
        if (exp.contains("oom_device_free")) {
            bool seen = false;
            for (const auto& d : a.devices)
                for (const auto& oe : d.ooms)
                    if (oe.device_free_bytes == exp["oom_device_free"].get<std::int64_t>()) seen = true;
            CHECK(seen);
        }
        // Every renderer works on every era.
        CHECK(to_json(a)["schema"] == "oomdx.snapshot/1");
        CHECK_FALSE(render_text(a, false, false).empty());
        CHECK_FALSE(render_text(a, true, false).empty());
        ++n;
    }
    CHECK(n >= 5);
}

TEST_CASE("corpus: every snapshot analyzes and its totals match manifest.json") {
    fs::path dir = fs::path(OOMDX_SHARED_DIR) / "corpus" / "snapshots";
    if (!fs::exists(dir / "manifest.json")) {
        MESSAGE("skipped: no shared corpus");
        return;
    }
    nlohmann::json manifest = read_json(dir / "manifest.json");
    std::vector<std::string> files;
    for (const auto& m : manifest) files.push_back((dir / m["file"].get<std::string>()).string());
    analysis_options o;
    o.rules = &rules();
    auto all = analyze_files(files, o, 2);
    REQUIRE(all.size() == manifest.size());
    std::int64_t with_sites = 0, with_trace = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const auto& sm = manifest[i]["summary"];
        const auto& a = all[i];
        CAPTURE(files[i]);
        totals t = sum(a);
        CHECK(t.segments == sm["segments"].get<std::int64_t>());
        CHECK(t.blocks == sm["blocks"].get<std::int64_t>());
        CHECK(t.reserved == sm["reserved_bytes"].get<std::int64_t>());
        CHECK(t.allocated == sm["active_allocated_block_bytes"].get<std::int64_t>());
        CHECK(t.entries == sm["trace_entries_total"].get<std::int64_t>());
        for (const auto& d : a.devices) {
            if (d.inconsistencies.empty()) CHECK(d.reserved_bytes == d.active_bytes + d.inactive_bytes);
            CHECK(d.peak_bytes >= 0);
            if (d.has_trace) {
                ++with_trace;
                CHECK(d.peak_bytes >= d.initial_active_bytes);
            }
            std::int64_t cat_sum = 0;
            for (const auto& c : d.categories) cat_sum += c.bytes;
            CHECK(cat_sum == d.allocated_bytes);
            std::int64_t site_sum = 0;
            for (const auto& s : d.sites) site_sum += s.bytes;
            CHECK(site_sum == d.allocated_bytes);
            if (d.sites.size() > 1) ++with_sites;
        }
        CHECK_NOTHROW(to_json(a).dump());
        CHECK_FALSE(render_text(a, false, false).empty());
    }
    CHECK(with_sites > 5);
    CHECK(with_trace > 5);
    // The real OOM (expandable segments, 3 devices) has its OOM events replayed.
    for (const auto& a : all) {
        if (a.file.find("Constructor-Sun") == std::string::npos) continue;
        std::int64_t ooms = 0;
        for (const auto& d : a.devices) ooms += d.oom_count;
        CHECK(ooms > 0);
    }
    auto ranks = compare_ranks(all);
    CHECK(ranks.rows.size() == all.size());
}
