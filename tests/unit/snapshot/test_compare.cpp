// diff, trend (leak / warmup / no_growth) and the cross-rank table.
#include <doctest/doctest.h>

#include "engine/core/vocabulary.h"
#include "engine/report/snapshot_verdicts.h"
#include "parsers/snapshot/compare.h"

using namespace oomdx;
using namespace oomdx::snap;

namespace {

constexpr std::int64_t MiB = 1 << 20;

// One device: live = params + opt + the growing site.
snapshot_analysis make(const std::string& file, std::int64_t opt, std::int64_t grow_bytes, std::int64_t grow_blocks,
                       std::int64_t peak = 0) {
    snapshot_analysis a;
    a.file = file;
    device_analysis d;
    d.device = 0;
    std::int64_t params = 100 * MiB;
    d.allocated_bytes = params + opt + grow_bytes;
    d.reserved_bytes = d.allocated_bytes + 10 * MiB;
    d.peak_bytes = peak ? peak : d.allocated_bytes;
    d.categories = {{"parameter", params, 10, 0}, {"optimizer_state", opt, opt ? 20 : 0, 0},
                    {"other", grow_bytes, grow_blocks, 0}};
    d.sites.push_back({"/u/model.py:10:__init__", "/u/model.py", 10, "__init__", "parameter", params, 10, 0});
    if (opt) d.sites.push_back({"/t/optim/adam.py:111:_init_group", "", 111, "", "optimizer_state", opt, 20, 0});
    if (grow_bytes) d.sites.push_back({"/u/train.py:77:collect", "/u/train.py", 77, "collect", "other", grow_bytes, grow_blocks, 0});
    a.devices.push_back(d);
    a.primary = 0;
    return a;
}

struct collect_sink : fact_sink {
    std::vector<fact> facts;
    void emit(fact f) override { facts.push_back(std::move(f)); }
    using fact_sink::emit;
};

}  // namespace

TEST_CASE("diff: growth per site and category, sorted, flagged in bytes and blocks") {
    auto a = make("a.pickle", 200 * MiB, 10 * MiB, 10);
    auto b = make("b.pickle", 200 * MiB, 60 * MiB, 60);
    auto d = diff(a, b);
    CHECK(d.live_b - d.live_a == 50 * MiB);
    REQUIRE_FALSE(d.sites.empty());
    CHECK(d.sites[0].key == "/u/train.py:77:collect");
    CHECK(d.sites[0].flagged);
    CHECK(d.sites[0].delta_blocks() == 50);
    CHECK_FALSE(d.sites[1].flagged);
    CHECK(d.categories[0].key == "other");
    bool found = false;
    for (const auto& f : d.findings) found = found || f.find("leaking or retained") != std::string::npos;
    CHECK(found);
    auto j = to_json(d);
    CHECK(j["kind"] == "diff");
    CHECK(j["sites"][0]["flagged"] == true);
    CHECK(render_text(d, false, false).find("GROWING") != std::string::npos);

    // Optimizer state appearing between A and B is the first step, not a leak.
    auto d2 = diff(make("a", 0, 0, 0), make("b", 200 * MiB, 0, 0));
    bool expected = false;
    for (const auto& f : d2.findings) expected = expected || f.find("expected, not a leak") != std::string::npos;
    CHECK(expected);
}

// The trend measured, then judged by the rule packs.
namespace {
trend_result judged_trend(const std::vector<snapshot_analysis>& v) {
    trend_result t = trend(v);
    apply_snapshot_verdicts(t, shipped_rules());
    return t;
}
}  // namespace

TEST_CASE("trend: leak, warm-up, no growth") {
    std::vector<snapshot_analysis> leak = {make("s5", 200 * MiB, 10 * MiB, 10), make("s10", 200 * MiB, 30 * MiB, 30),
                                           make("s20", 200 * MiB, 70 * MiB, 70)};
    CHECK(trend(leak).verdict.empty());  // measured only
    auto t = judged_trend(leak);
    CHECK(t.verdict == "leak");
    CHECK(t.monotonic_growth);
    CHECK(t.growth_bytes == 60 * MiB);
    CHECK(t.growing_category == "other");
    CHECK(t.growing_site == "/u/train.py:77:collect");

    std::vector<snapshot_analysis> warm = {make("s1", 0, 0, 0), make("s5", 200 * MiB, 0, 0),
                                           make("s10", 200 * MiB, 0, 0), make("s20", 200 * MiB, 0, 0)};
    auto w = judged_trend(warm);
    CHECK(w.verdict == "warmup");
    CHECK(w.growth_bytes == 200 * MiB);

    std::vector<snapshot_analysis> flat = {make("s1", 200 * MiB, 0, 0), make("s5", 200 * MiB, 0, 0),
                                           make("s10", 200 * MiB, 0, 0)};
    auto f = judged_trend(flat);
    CHECK(f.verdict == "no_growth");
    CHECK_FALSE(f.monotonic_growth);
    CHECK(f.growing_site.empty());

    collect_sink sink;
    emit_facts(t, sink);
    const auto& vocab = vocabulary::shipped();
    for (const auto& fa : sink.facts) {
        CAPTURE(fa.name);
        CHECK_NOTHROW(vocab.check(fa.name, fa.val));
    }
    CHECK(sink.facts.size() == 7);
    CHECK(to_json(t)["verdict"] == "leak");
    CHECK(render_text(t, true, false).find("leak") != std::string::npos);
}

TEST_CASE("ranks: table, median, outlier") {
    std::vector<snapshot_analysis> v;
    for (int r = 0; r < 4; ++r) v.push_back(make("/run/snap_rank" + std::to_string(r) + ".pickle", 200 * MiB, 0, 0,
                                                 r == 2 ? 900 * MiB : 300 * MiB));
    std::swap(v[0], v[3]);
    auto t = compare_ranks(v);
    CHECK(t.outlier == -1);  // measured only: the farthest rank ...
    CHECK(t.rows[t.farthest].rank == 2);
    apply_snapshot_verdicts(t, shipped_rules());  // ... is an outlier by the rules' threshold
    REQUIRE(t.rows.size() == 4);
    CHECK(t.rows[0].rank == 0);
    CHECK(t.rows[3].rank == 3);
    CHECK(t.median_peak == 300 * MiB);
    REQUIRE(t.outlier >= 0);
    CHECK(t.rows[t.outlier].rank == 2);
    CHECK(t.outlier_deviation == doctest::Approx(2.0));
    CHECK(to_json(t)["outlier_rank"] == 2);
    CHECK(render_text(t, false, false).find("OUTLIER") != std::string::npos);
    collect_sink sink;
    emit_facts(t, sink);
    for (const auto& fa : sink.facts) CHECK_NOTHROW(vocabulary::shipped().check(fa.name, fa.val));

    // Within 10% of the median: no outlier.
    std::vector<snapshot_analysis> close;
    for (int r = 0; r < 3; ++r) close.push_back(make("r" + std::to_string(r) + ".pickle", 200 * MiB, 0, 0, r == 1 ? 320 * MiB : 300 * MiB));
    auto c = compare_ranks(close);
    apply_snapshot_verdicts(c, shipped_rules());
    CHECK(c.outlier == -1);

    CHECK(rank_from_name("/x/oom_snapshot_rank12.pickle", 7) == 12);
    CHECK(rank_from_name("dev3.pkl", 7) == 3);
    CHECK(rank_from_name("snapshot_5.pickle", 7) == 5);
    CHECK(rank_from_name("snapshot.pickle", 7) == 7);
}
