// `rules lint`'s coverage check: every rule is named by some test case's expect_fired (read from the
// test files, not run: `rules test` runs them).
#include <doctest/doctest.h>
#include <unistd.h>

#include "engine/rules/rule_lint.h"
#include "engine/rules/rule_tests.h"
#include "test_helpers.h"

using namespace oomdx;

namespace {

bool reports_uncovered(const lint_report& rep, const std::string& id) {
    for (const auto& d : rep.diagnostics)
        if (d.code == rule_error_code::missing_test && d.message.find("'" + id + "'") != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("lint: a rule no test case expects to fire is reported; one a case names is not, pass or fail") {
    vocabulary vocab = test::small_vocab();
    test::temp_rules dir("coverage");
    dir.write("pack.yaml", "- rule: named\n  step: s0\n  condition: a > 10\n- rule: unnamed\n  step: s0\n  condition: b > 10\n");
    // The case naming `named` would fail if run (a = 1): coverage only asks whether it is named.
    dir.write("pack.test.yaml", "cases:\n  - name: one\n    facts: {a: 1}\n    expect_fired: [named]\n"
                                "  - name: two\n    facts: {b: 1}\n    expect_not_fired: [unnamed]\n");
    const lint_report rep = lint_rules(dir.dir.string(), vocab, test::small_actions());
    CHECK(reports_uncovered(rep, "unnamed"));
    CHECK_FALSE(reports_uncovered(rep, "named"));
    CHECK(rules_named_in_tests(dir.dir.string()) == std::vector<std::string>{"named"});
    // an unreadable test file names nothing (and `rules test` reports it)
    dir.write("broken.test.yaml", "cases: [\n");
    CHECK(rules_named_in_tests(dir.dir.string()) == std::vector<std::string>{"named"});
}
