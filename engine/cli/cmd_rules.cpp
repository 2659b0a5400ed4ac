// `oomdx rules lint|test|list`: tooling for rule authors.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/cli/commands.h"
#include "engine/core/data_dir.h"
#include "engine/core/vocabulary.h"
#include "engine/rules/rule_lint.h"
#include "engine/rules/rule_tests.h"

namespace oomdx::cli {

namespace {

struct rules_options {
    std::string dir;
    bool strict = false;
    output_format format = output_format::text;
};

nlohmann::json diag_json(const rule_diagnostic& d) {
    return {{"file", d.where.file},     {"line", d.where.line},
            {"column", d.where.column}, {"code", rule_error_code_str(d.code)},
            {"name", rule_error_short(d.code)}, {"severity", rule_error_is_warning(d.code) ? "warning" : "error"},
            {"message", d.message},     {"item", d.item}};
}

int run_lint(const rules_options& o) {
    const lint_report rep = lint_rules(o.dir, vocabulary::shipped(), shipped_actions());
    const bool failed = rep.errors() > 0 || (o.strict && rep.warnings() > 0);
    if (o.format == output_format::json) {
        nlohmann::json j = {{"schema", "oomdx.rules_lint/1"}, {"files", rep.files}, {"rules", rep.rules},
                            {"macros", rep.macros}, {"errors", rep.errors()}, {"warnings", rep.warnings()},
                            {"ok", !failed}, {"diagnostics", nlohmann::json::array()}};
        for (const auto& d : rep.diagnostics) j["diagnostics"].push_back(diag_json(d));
        fmt::print("{}\n", j.dump(2));
    } else {
        for (const auto& d : rep.diagnostics) fmt::print("{}\n\n", d.render());
        fmt::print("{}: {} files, {} rules, {} macros; {} errors, {} warnings{}\n", failed ? "FAIL" : "ok",
                   rep.files, rep.rules, rep.macros, rep.errors(), rep.warnings(),
                   o.strict ? " (strict: warnings fail)" : "");
    }
    return failed ? 2 : 0;
}

int run_tests(const rules_options& o) {
    const rule_test_report rep = run_rule_tests(o.dir, vocabulary::shipped(), shipped_actions());
    if (o.format == output_format::json) {
        nlohmann::json j = {{"schema", "oomdx.rules_test/1"}, {"files", rep.files}, {"cases", rep.cases},
                            {"passed", rep.passed}, {"todo", rep.todo}, {"errors", rep.errors},
                            {"failures", nlohmann::json::array()}};
        for (const auto& f : rep.failures)
            j["failures"].push_back({{"file", f.file}, {"line", f.line}, {"case", f.case_name},
                                     {"check", f.what}, {"expected", f.expected}, {"got", f.got}});
        fmt::print("{}\n", j.dump(2));
    } else {
        for (const auto& e : rep.errors) fmt::print("error: {}\n", e);
        for (const auto& f : rep.failures)
            fmt::print("FAIL {}:{}: {}\n  check: {}\n  exp: {}\n  got: {}\n", f.file, f.line, f.case_name, f.what,
                       f.expected, f.got);
        fmt::print("{} passed, {} failed{}\n", rep.passed, rep.failures.empty() ? 0 : rep.cases - rep.passed - rep.todo,
                   rep.todo ? fmt::format(", {} todo", rep.todo) : "");
    }
    if (!rep.errors.empty()) return 2;
    return rep.failures.empty() ? 0 : 1;
}

int run_list(const rules_options& o) {
    load_result lr = load_rules({o.dir}, vocabulary::shipped(), shipped_actions());
    if (o.format == output_format::json) {
        nlohmann::json j = {{"schema", "oomdx.rules_list/1"}, {"steps", nlohmann::json::array()},
                            {"rules", nlohmann::json::array()}};
        for (const auto& s : lr.rules.steps)
            j["steps"].push_back({{"id", s.id}, {"title", s.title}, {"order", s.order}, {"always", s.always}});
        for (const auto& r : lr.rules.rules)
            j["rules"].push_back({{"id", r->id}, {"step", r->step}, {"salience", r->salience},
                                  {"desc", r->desc}, {"condition", r->condition_text},
                                  {"file", r->where.file}, {"line", r->where.line}});
        fmt::print("{}\n", j.dump(2));
        return lr.ok() ? 0 : 2;
    }
    for (const auto& s : lr.rules.steps) {
        fmt::print("{}  {}\n", s.id, s.title);
        for (const auto& r : lr.rules.rules)
            if (r->step == s.id) fmt::print("  {:<44} {}\n", r->id, r->desc);
    }
    for (const auto& d : lr.diagnostics) fmt::print(stderr, "{}\n", d.render());
    return lr.ok() ? 0 : 2;
}

}  // namespace

void add_rules_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("rules", "Lint, test and list YAML rule packs");
    cmd->require_subcommand(1);
    auto opts = std::make_shared<rules_options>();
    auto add_common = [&](CLI::App* sub) {
        sub->add_option("dir", opts->dir, "Rule directory or file (default: the shipped rules/)");
        add_format_option(sub, opts->format);
    };
    auto* lint = cmd->add_subcommand("lint", "Check rule files: ids, facts, override keys, steps, tests");
    add_common(lint);
    lint->add_flag("--strict", opts->strict, "Treat warnings as errors");
    lint->callback([opts, &exit_code] {
        if (opts->dir.empty()) opts->dir = data_path("rules");
        exit_code = run_lint(*opts);
    });
    auto* test = cmd->add_subcommand("test", "Run the rule tests (*.test.yaml) beside the rule files");
    add_common(test);
    test->callback([opts, &exit_code] {
        if (opts->dir.empty()) opts->dir = data_path("rules");
        exit_code = run_tests(*opts);
    });
    auto* list = cmd->add_subcommand("list", "List steps and their rules");
    add_common(list);
    list->callback([opts, &exit_code] {
        if (opts->dir.empty()) opts->dir = data_path("rules");
        exit_code = run_list(*opts);
    });
}

}  // namespace oomdx::cli
