// Several snapshots given together (rev37): what the files say about how they relate, and the rules'
// verdict snapshot.files.relation (ranks of one moment, or one rank at several moments).
#include <doctest/doctest.h>

#include "engine/core/fact_store.h"
#include "engine/report/snapshot_verdicts.h"
#include "parsers/snapshot/file_relation.h"

using namespace oomdx;
using namespace oomdx::snap;

namespace {

snapshot_analysis relation_file(const std::string& file, std::int64_t device, bool oom, std::int64_t t0, std::int64_t t1) {
    snapshot_analysis a;
    a.file = file;
    device_analysis d;
    d.device = device;
    d.oom_count = oom ? 1 : 0;
    d.trace_first_time_us = t0;
    d.trace_last_time_us = t1;
    a.devices.push_back(d);
    a.primary = 0;
    return a;
}

std::string relation_of(const std::vector<snapshot_analysis>& v) { return snapshot_files_relation(v, shipped_snapshot_rules()); }

}  // namespace

TEST_CASE("rank0.pickle and rank1.pickle of one failure are ranks") {
    std::vector<snapshot_analysis> v = {relation_file("job/rank0.pickle", 0, false, 1000, 9000),
                                        relation_file("job/rank1.pickle", 0, true, 1200, 9050)};
    fact_store facts;
    emit_relation_facts(v, facts);
    CHECK(facts.integer("snapshot.files.count") == 2);
    CHECK(facts.integer("snapshot.files.distinct_rank_words") == 2);
    CHECK(facts.integer("snapshot.files.oom_files") == 1);
    CHECK(relation_of(v) == "ranks");
}

TEST_CASE("dumps of one device at steps 5, 10 and 20 are a timeline") {
    std::vector<snapshot_analysis> v = {relation_file("s5.pickle", 0, false, 1000, 5000),
                                        relation_file("s10.pickle", 0, false, 1000, 10000),
                                        relation_file("s20.pickle", 0, true, 1000, 20000)};
    fact_store facts;
    emit_relation_facts(v, facts);
    CHECK(facts.integer("snapshot.files.distinct_rank_words") == 0);  // trailing digits are no rank word
    CHECK(facts.number("snapshot.files.end_spread_share").value_or(0) == doctest::Approx(15000.0 / 19000.0));
    CHECK(relation_of(v) == "timeline");
}

TEST_CASE("unnamed dumps on two devices are ranks; traces that end together are ranks") {
    CHECK(relation_of({relation_file("a.pickle", 0, false, -1, -1), relation_file("b.pickle", 1, false, -1, -1)}) == "ranks");
    CHECK(relation_of({relation_file("a.pickle", 0, false, 1000, 100000), relation_file("b.pickle", 0, false, 2000, 100500)}) ==
          "ranks");
}
