#include <doctest/doctest.h>
#include <unistd.h>

#include "engine/core/fact_store.h"
#include "engine/rules/inference.h"
#include "engine/rules/rule_loader.h"
#include "test_helpers.h"

using namespace oomdx;

namespace {

struct engine_fixture {
    vocabulary vocab = test::small_vocab();
    std::vector<action_decl> actions = test::small_actions();
    test::temp_rules dir;
    explicit engine_fixture(const std::string& tag) : dir(tag) {}

    load_result load(const std::string& rules) {
        dir.write("r.yaml", rules);
        return load_rules({dir.dir.string()}, vocab, actions);
    }
};

std::vector<std::string> fired(const inference_result& r) {
    std::vector<std::string> out;
    for (const auto& f : r.firings) out.push_back(f.rule_id);
    return out;
}

}  // namespace

TEST_CASE("agenda order: step, then salience, then specificity, then file order") {
    engine_fixture f("order");
    auto lr = f.load(R"Y(
- rule: late_step
  step: s1
  salience: 100
  condition: a > 0
- rule: low
  step: s0
  salience: 1
  condition: a > 0
- rule: high
  step: s0
  salience: 10
  condition: a > 0
- rule: specific
  step: s0
  salience: 1
  condition: a > 0 and a < 100
  route: s1
- rule: first_in_file
  step: s0
  salience: 1
  condition: a >= 1
)Y");
    REQUIRE(lr.ok());
    fact_store facts(&f.vocab);
    facts.emit("a", value(5), provenance{"test"});
    auto res = run_inference(lr.rules, facts);
    CHECK(fired(res) == std::vector<std::string>{"high", "specific", "low", "first_in_file", "late_step"});
    // Deterministic: the same run gives the same order.
    fact_store facts2(&f.vocab);
    facts2.emit("a", value(5), provenance{"test"});
    CHECK(fired(run_inference(lr.rules, facts2)) == fired(res));
}

TEST_CASE("refraction: a rule fires once per version of the facts it reads") {
    engine_fixture f("refraction");
    auto lr = f.load(R"Y(
- rule: count
  step: s0
  condition: a > 0
  asserts: {out.level: 1}
- rule: bump_on_change
  step: s0
  salience: -1
  condition: a > 0 and out.level == 1
  asserts: {out.tag: "seen"}
)Y");
    REQUIRE(lr.ok());
    fact_store facts(&f.vocab);
    facts.emit("a", value(5), provenance{"test"});
    auto res = run_inference(lr.rules, facts);
    CHECK(fired(res) == std::vector<std::string>{"count", "bump_on_change"});
    // Re-running on a new version of `a` fires again; the same versions do not.
    facts.emit("a", value(6), provenance{"test"});
    auto res2 = run_inference(lr.rules, facts);
    CHECK(fired(res2).size() == 2);
}

TEST_CASE("cycle limit: a rule that keeps changing its own input stops with a clear error") {
    engine_fixture f("cycle");
    auto lr = f.load(R"Y(
- rule: runaway
  step: s0
  condition: out.level >= 0
  asserts: {out.level: "= out.level + 1"}
)Y");
    REQUIRE(lr.ok());
    fact_store facts(&f.vocab);
    facts.emit("out.level", value(0), provenance{"test"});
    inference_options opts;
    opts.max_cycles = 50;
    CHECK_THROWS_WITH_AS(run_inference(lr.rules, facts, opts),
                         doctest::Contains("stopped after 50 firings"), inference_error);
}

TEST_CASE("exclusive groups: the first rule to fire wins, the others explain why not") {
    engine_fixture f("group");
    auto lr = f.load(R"Y(
- rule: winner
  step: s0
  salience: 5
  exclusive_group: g
  condition: a > 0
- rule: loser
  step: s0
  exclusive_group: g
  condition: a > 1
)Y");
    REQUIRE(lr.ok());
    fact_store facts(&f.vocab);
    facts.emit("a", value(5), provenance{"test"});
    auto res = run_inference(lr.rules, facts);
    CHECK(fired(res) == std::vector<std::string>{"winner"});
    REQUIRE(res.near_misses.size() == 1);
    CHECK(res.near_misses[0].reason.find("already decided by rule 'winner'") != std::string::npos);
}

TEST_CASE("steps run only when routed to, and the route says why") {
    engine_fixture f("route");
    auto lr = f.load(R"Y(
- rule: go
  step: s0
  condition: src == "workspace"
  route: {to: s2, why: "source is {src}"}
- rule: in_s1
  step: s1
  condition: true
- rule: in_s2
  step: s2
  condition: true
  finding: "reached s2"
)Y");
    REQUIRE(lr.ok());
    fact_store facts(&f.vocab);
    facts.emit("src", value("workspace"), provenance{"test"});
    auto res = run_inference(lr.rules, facts);
    CHECK(fired(res) == std::vector<std::string>{"go", "in_s2"});
    REQUIRE(res.route.size() == 2);
    CHECK(res.route[1].to == "s2");
    CHECK(res.route[1].why == "source is workspace");
    CHECK(res.route[1].from_rule == "go");
    bool s1_explained = false;
    for (const auto& nm : res.near_misses)
        if (nm.rule_id == "in_s1") s1_explained = nm.reason.find("was not reached") != std::string::npos;
    CHECK(s1_explained);
}

TEST_CASE("findings, recommendations and explanation down to input provenance") {
    engine_fixture f("explain");
    auto lr = f.load(R"Y(
- rule: derive
  step: s0
  condition: mem.bytes > 0.9 * cap.bytes
  asserts: {out.tag: "tight"}
- rule: advise
  step: s0
  salience: -1
  condition: out.tag == "tight" and training.local_batch_size > 1
  finding: "Peak {mem.bytes|bytes} is {= mem.bytes / cap.bytes | pct} of {cap.bytes}"
  recommend:
    - action: reduce_micro_batch
      set: {training.local_batch_size: "= max(1, int(training.local_batch_size / 2))"}
      text: "Halve the micro-batch to {= max(1, int(training.local_batch_size / 2))}"
    - action: enable_full_ac
)Y");
    REQUIRE(lr.ok());
    fact_store facts(&f.vocab);
    provenance p{"log", "train.log", 42, -1, "memory: 76.00GiB"};
    facts.emit("mem.bytes", value(std::int64_t{76} << 30), p);
    facts.emit("cap.bytes", value(std::int64_t{80} << 30), provenance{"catalog"});
    facts.emit("training.local_batch_size", value(8), provenance{"config", "job.toml", 7});
    auto res = run_inference(lr.rules, facts);
    REQUIRE(res.findings.size() == 1);
    CHECK(res.findings[0].text == "Peak 76.00 GiB is 95.0% of 80.00 GiB");
    REQUIRE(res.recommendations.size() == 2);
    CHECK(res.recommendations[0].overrides[0].val == value(4));
    CHECK(res.recommendations[0].text == "Halve the micro-batch to 4");
    auto ranked = res.ranked();
    CHECK(ranked[0].action == "enable_full_ac");  // priority 30 before 70
    // HOW: out.tag comes from rule derive, which read mem.bytes from train.log:42.
    const fact* tag = facts.get("out.tag");
    REQUIRE(tag);
    auto how = explain_fact(facts, tag->id);
    REQUIRE(how.size() >= 3);
    CHECK(how[0] == "out.tag = tight  <- rule derive");
    bool found_log = false;
    for (const auto& l : how) found_log |= l.find("train.log:42: \"memory: 76.00GiB\"") != std::string::npos;
    CHECK(found_log);
}

TEST_CASE("a recommendation's priority may follow the facts; a bad one is refused with its place") {
    engine_fixture f("priority_expr");
    auto lr = f.load(R"Y(
- rule: advise
  step: s0
  condition: a > 0
  recommend:
    - action: reduce_micro_batch
    - action: enable_full_ac
      priority: "= if(a > 5, 30, 75)"
)Y");
    REQUIRE(lr.ok());
    for (const auto& [a, first] : {std::pair{9, "enable_full_ac"}, std::pair{2, "reduce_micro_batch"}}) {
        fact_store facts(&f.vocab);
        facts.emit("a", value(a), provenance{"test"});
        const auto ranked = run_inference(lr.rules, facts).ranked();
        REQUIRE(ranked.size() == 2);
        CHECK(ranked[0].action == first);
    }
    auto bad = f.load(R"Y(
- rule: advise
  step: s0
  condition: a > 0
  recommend:
    - action: enable_full_ac
      priority: soon
)Y");
    CHECK_FALSE(bad.ok());
}

TEST_CASE("an unchanged assert creates no new fact version, so no loop") {
    engine_fixture f("stable");
    auto lr = f.load(R"Y(
- rule: set_level
  step: s0
  condition: out.level >= 0
  asserts: {out.level: 1}
)Y");
    REQUIRE(lr.ok());
    fact_store facts(&f.vocab);
    facts.emit("out.level", value(1), provenance{"test"});
    auto res = run_inference(lr.rules, facts);
    CHECK(res.firings.size() == 1);
}

TEST_CASE("only_steps: a producer's verdict pass runs one step and follows no route") {
    engine_fixture f("only");
    auto lr = f.load(R"Y(
- rule: verdict
  step: s0
  condition: a > 2
  asserts: {out.level: 1}
  route: s1
- rule: later
  step: s1
  condition: true
)Y");
    REQUIRE(lr.ok());
    fact_store facts(&f.vocab);
    facts.emit("a", value(5), provenance{"test"});
    inference_options o;
    o.only_steps = {"s0"};
    auto res = run_inference(lr.rules, facts, o);
    CHECK(fired(res) == std::vector<std::string>{"verdict"});
    CHECK(facts.get("out.level") != nullptr);
    for (const auto& nm : res.near_misses) CHECK(nm.rule_id != "later");
}

TEST_CASE("site packs: 'override: true' replaces a macro, list or rule of an earlier pack") {
    engine_fixture f("override");
    f.dir.write("a_shipped.yaml", R"Y(
- macro: late_min
  condition: a >= 10
- list: srcs
  items: [workspace]
- rule: late
  step: s0
  condition: late_min and src in srcs
  finding: "late"
)Y");
    f.dir.write("b_site.yaml", R"Y(
- macro: late_min
  override: true
  condition: a >= 3
- list: srcs
  override: true
  items: [workspace, hccl]
)Y");
    auto lr = load_rules({f.dir.dir.string()}, f.vocab, f.actions);
    REQUIRE(lr.ok());
    fact_store facts(&f.vocab);
    facts.emit("a", value(5), provenance{"test"});
    facts.emit("src", value("hccl"), provenance{"test"});
    CHECK(fired(run_inference(lr.rules, facts)) == std::vector<std::string>{"late"});

    f.dir.write("c_site.yaml", "- rule: late\n  override: true\n  step: s0\n  condition: a > 100\n");
    auto lr2 = load_rules({f.dir.dir.string()}, f.vocab, f.actions);
    REQUIRE(lr2.ok());
    fact_store facts2(&f.vocab);
    facts2.emit("a", value(5), provenance{"test"});
    CHECK(run_inference(lr2.rules, facts2).firings.empty());

    f.dir.write("d_bad.yaml", "- macro: nothing_here\n  override: true\n  condition: a > 1\n");
    auto lr3 = load_rules({f.dir.dir.string()}, f.vocab, f.actions);
    CHECK_FALSE(lr3.ok());
}
