#include <doctest/doctest.h>
#include <unistd.h>

#include "engine/core/errors.h"
#include "engine/rules/rule_loader.h"
#include "test_helpers.h"

using namespace oomdx;

namespace {

load_result load_text(test::temp_rules& dir, const std::string& text, vocabulary& vocab) {
    dir.write("bad.yaml", text);
    return load_rules({dir.dir.string()}, vocab, test::small_actions());
}

const rule_diagnostic* find_code(const load_result& lr, rule_error_code c) {
    for (const auto& d : lr.diagnostics)
        if (d.code == c) return &d;
    return nullptr;
}

}  // namespace

TEST_CASE("errors carry 1-based file:line:col and every error of a file is collected") {
    vocabulary vocab = test::small_vocab();
    test::temp_rules dir("loc");
    auto lr = load_text(dir, R"Y(- rule: r1
  step: s0
  condition: a > 1 and nosuch > 2
- rule: r2
  step: nowhere
  condition: >
    a > 1
    and src == "wrkspace"
  recommend: [{action: not_an_action}]
- rule: r1
  step: s0
  condition: a > 3
  colour: red
)Y", vocab);
    CHECK_FALSE(lr.ok());
    const auto* unknown = find_code(lr, rule_error_code::unknown_fact);
    REQUIRE(unknown);
    CHECK(unknown->where.line == 3);
    CHECK(unknown->where.column == 24);
    const auto* step = find_code(lr, rule_error_code::unknown_step);
    REQUIRE(step);
    CHECK(step->where.line == 5);
    CHECK(step->where.column == 9);
    const auto* enumv = find_code(lr, rule_error_code::bad_value);
    REQUIRE(enumv);
    CHECK(enumv->where.line == 8);   // inside the folded block scalar
    CHECK(enumv->where.column == 16);
    CHECK(find_code(lr, rule_error_code::unknown_action));
    CHECK(find_code(lr, rule_error_code::duplicate_id));
    const auto* key = find_code(lr, rule_error_code::unknown_key);
    REQUIRE(key);
    CHECK(key->where.line == 13);
    CHECK(key->where.column == 3);
    // The rendering shows the source line and a caret under the column.
    const std::string text = unknown->render();
    CHECK(text.find("bad.yaml:3:24: error E103 unknown-fact") != std::string::npos);
    CHECK(text.find("\n      condition: a > 1 and nosuch > 2\n" + std::string(4 + 23, ' ') + "^") != std::string::npos);
    CHECK(text.find("in rule 'r1'") != std::string::npos);
}

TEST_CASE("YAML syntax errors are reported with their location") {
    vocabulary vocab = test::small_vocab();
    test::temp_rules dir("yaml");
    auto lr = load_text(dir, "- rule: r1\n  step: s0\n  condition: [a > 1\n", vocab);
    const auto* d = find_code(lr, rule_error_code::yaml_syntax);
    REQUIRE(d);
    CHECK(d->where.file.find("bad.yaml") != std::string::npos);
    CHECK(d->where.line >= 3);
}

TEST_CASE("macros expand, unused macros and lists warn, macro cycles are errors") {
    vocabulary vocab = test::small_vocab();
    test::temp_rules dir("macro");
    auto lr = load_text(dir, R"Y(- macro: big
  condition: a > 10
- macro: unused_one
  condition: a > 1
- list: unused_list
  items: [1, 2]
- macro: loop_a
  condition: loop_b
- macro: loop_b
  condition: loop_a
- rule: uses_macro
  step: s0
  condition: big and not flag
- rule: uses_loop
  step: s0
  condition: loop_a
)Y", vocab);
    CHECK(find_code(lr, rule_error_code::unused_macro));
    CHECK(find_code(lr, rule_error_code::unused_list));
    CHECK(find_code(lr, rule_error_code::macro_cycle));
    REQUIRE(lr.rules.rule("uses_macro"));
    CHECK(lr.rules.rule("uses_macro")->facts == std::vector<std::string>{"a", "flag"});
}

TEST_CASE("recommendations may only set declared override keys with valid values") {
    vocabulary vocab = test::small_vocab();
    test::temp_rules dir("override");
    auto lr = load_text(dir, R"Y(- rule: r
  step: s0
  condition: a > 1
  recommend:
    - action: reduce_micro_batch
      set: {a: 3}
    - action: reduce_micro_batch
      set: {training.local_batch_size: "eight"}
)Y", vocab);
    const auto* d = find_code(lr, rule_error_code::unknown_override);
    REQUIRE(d);
    CHECK(d->where.line == 6);
    CHECK(find_code(lr, rule_error_code::bad_value));
}

TEST_CASE("translations beside the packs: eager for lint, lazy on first use of a language") {
    vocabulary vocab = test::small_vocab();
    test::temp_rules dir("i18n");
    dir.write("pack.yaml", "- rule: r1\n  step: s1\n  condition: a > 1\n  finding: \"big\"\n");
    std::filesystem::create_directories(dir.dir / "i18n" / "zh");
    dir.write("i18n/zh/pack.yaml", "- rule: r1\n  finding: {en: \"big\", zh: \"大\"}\n");

    load_result eager = load_rules({dir.dir.string()}, vocab, test::small_actions());
    REQUIRE(eager.ok());
    CHECK(eager.rules.i18n.count("zh") == 1);
    CHECK(eager.rules.text("zh", "rule.r1.finding", "big") == "大");

    load_result lazy = load_rules({dir.dir.string()}, vocab, test::small_actions(), translation_loading::lazy);
    REQUIRE(lazy.ok());
    CHECK(lazy.rules.i18n.empty());  // nothing read yet
    CHECK(lazy.rules.text("en", "rule.r1.finding", "big") == "big");
    CHECK(lazy.rules.text("zh", "rule.r1.finding", "big") == "大");  // read now

    // A malformed translation file: the lint sees the error; a lazy set loads, and fails only
    // the run that asks for that language.
    dir.write("i18n/zh/pack.yaml", "- rule: r1\n  finding: [not, a, text]\n");
    load_result eager_bad = load_rules({dir.dir.string()}, vocab, test::small_actions());
    CHECK_FALSE(eager_bad.ok());
    load_result lazy_bad = load_rules({dir.dir.string()}, vocab, test::small_actions(), translation_loading::lazy);
    REQUIRE(lazy_bad.ok());
    CHECK(lazy_bad.rules.text("en", "rule.r1.finding", "big") == "big");
    CHECK_THROWS_AS(lazy_bad.rules.text("zh", "rule.r1.finding", "big"), input_error);
}

TEST_CASE("the evidence rules load alone (log, snapshot) and are the full set's evidence rules") {
    const load_result alone = load_shipped_rules({"evidence"});
    REQUIRE(alone.ok());
    const rule_set& evidence = alone.rules;
    const rule_set& all = shipped_rules();
    std::vector<std::string> want, got;
    for (const auto& r : all.rules) {
        if (r->step != "evidence") continue;
        want.push_back(r->id + " @ " + r->where.file + ":" + std::to_string(r->where.line) + " if " + r->condition_text);
        // The evidence run skips the step packs: they must not hold evidence rules.
        CHECK_FALSE(std::filesystem::path(r->where.file).filename().string().starts_with("step"));
    }
    for (const auto& r : evidence.rules) {
        CHECK(r->step == "evidence");
        got.push_back(r->id + " @ " + r->where.file + ":" + std::to_string(r->where.line) + " if " + r->condition_text);
    }
    CHECK(want.size() > 50);
    CHECK(got == want);
    CHECK(evidence.steps.size() == all.steps.size());
    CHECK(&shipped_evidence_rules() == &all);  // once the full set is loaded, it serves both
    for (const auto& f : evidence.files)
        CHECK_FALSE(std::filesystem::path(f).filename().string().starts_with("step0"));
}

TEST_CASE("expect_device_peak: a positive size or an expression, else a located error") {
    vocabulary vocab = test::small_vocab();
    test::temp_rules dir("expect");
    auto bad = load_text(dir, R"Y(- rule: r
  step: s0
  condition: a > 1
  recommend:
    - action: reduce_micro_batch
      expect_device_peak: "a lot"
)Y", vocab);
    const auto* d = find_code(bad, rule_error_code::bad_value);
    REQUIRE(d);
    CHECK(d->where.line == 6);
    auto good = load_text(dir, R"Y(- rule: r
  step: s0
  condition: a > 1
  recommend:
    - action: reduce_micro_batch
      expect_device_peak: "= a * 2"
    - action: reduce_micro_batch
      expect_device_peak: 1024
)Y", vocab);
    CHECK(good.ok());
    REQUIRE(good.rules.rule("r"));
    CHECK(good.rules.rule("r")->recommendations.size() == 2);
}
