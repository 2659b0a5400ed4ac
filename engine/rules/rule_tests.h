// Rule tests as data: `<pack>.test.yaml` beside each rule file.
//
//   rule_files: [other.yaml]     # optional; default: every rule file of the directory tree
//   cases:
//     - name: workspace OOM routes to the watermark step
//       facts: {oom.source: workspace, estimate.peak_bytes: 40 GiB}
//       expect_fired: [step0_workspace_or_hccl]
//       expect_not_fired: [step0_caching_allocator]
//       expect_finding: {rule_id: "exact rendered text"}       # or {rule_id: {contains: "..."}}
//       expect_finding_zh: {rule_id: {contains: "..."}}          # the same case rendered in Chinese
//       expect_overrides: {rule_id: {training.torch_npu_memory_ratio: 0.9}}
//       expect_route: [step0, step1, step2]                      # steps entered, in order
//       expect_route_why: {rule_id: {contains: "..."}}          # the why of the route entries the rule added
//       expect_route_why_zh: {rule_id: {contains: "..."}}       # the same in Chinese
//       expect_facts: {diagnosis.primary: temporary_memory}
//       expect_actions: [memory_fraction_watermark]               # ranked recommendation actions (prefix)
//       todo: true                                                # known gap: reported, never fails
#pragma once

#include <string>
#include <vector>

#include "engine/core/vocabulary.h"
#include "engine/rules/rule_loader.h"

namespace oomdx {

struct rule_test_failure {
    std::string file;
    int line = 0;
    std::string case_name;
    std::string what;      // "expect_fired", ...
    std::string expected;
    std::string got;
};

struct rule_test_report {
    int files = 0;
    int cases = 0;
    int passed = 0;
    int todo = 0;
    std::vector<rule_test_failure> failures;
    std::vector<std::string> errors;  // load errors (rules or test files)

    bool ok() const { return failures.empty() && errors.empty(); }
};

rule_test_report run_rule_tests(const std::string& dir, const vocabulary& vocab,
                                const std::vector<action_decl>& actions);
// The rule ids some case under `dir` expects to fire (sorted, once each), read without running
// a case: the lint's coverage check; whether they do fire is `run_rule_tests`' question.
std::vector<std::string> rules_named_in_tests(const std::string& dir);

}  // namespace oomdx
