// `oomdx i18n lint`: are the report's texts translated, and are the translations current? The
// rule packs' translations (rules/i18n/<lang>) and the knowledge translations (knowledge/i18n/<lang>).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/cli/commands.h"
#include "engine/core/data_dir.h"
#include "engine/core/translations.h"
#include "engine/core/vocabulary.h"
#include "engine/report/i18n_lint.h"
#include "engine/rules/rule_lint.h"

namespace oomdx::cli {

namespace {

struct i18n_options {
    std::string dir;
    bool strict = false;
    output_format format = output_format::text;
};

int run_lint(const i18n_options& o) {
    const load_result lr = load_rules({o.dir}, vocabulary::shipped(), shipped_actions());
    std::vector<rule_diagnostic> diags;
    for (const auto& d : lr.diagnostics)
        if (!rule_error_is_warning(d.code) || d.where.file.find("/i18n/") != std::string::npos) diags.push_back(d);
    for (auto& d : lint_rule_translations(lr.rules)) diags.push_back(std::move(d));
    for (const auto& lang : report_languages())
        for (auto& d : lint_knowledge_translations(lang)) diags.push_back(std::move(d));
    size_t errors = 0;
    for (const auto& d : diags) errors += rule_error_is_warning(d.code) ? 0 : 1;
    const size_t warnings = diags.size() - errors;
    const bool failed = errors > 0 || (o.strict && warnings > 0);
    if (o.format == output_format::json) {
        nlohmann::json j = {{"schema", "oomdx.i18n_lint/1"}, {"languages", report_languages()}, {"errors", errors},
                            {"warnings", warnings}, {"ok", !failed}, {"diagnostics", nlohmann::json::array()}};
        for (const auto& d : diags)
            j["diagnostics"].push_back({{"file", d.where.file}, {"line", d.where.line}, {"code", rule_error_code_str(d.code)},
                                        {"name", rule_error_short(d.code)},
                                        {"severity", rule_error_is_warning(d.code) ? "warning" : "error"},
                                        {"message", d.message}});
        fmt::print("{}\n", j.dump(2));
    } else {
        for (const auto& d : diags) fmt::print("{}\n\n", d.render());
        fmt::print("{}: translations of {} and knowledge/i18n; {} errors, {} warnings{}\n", failed ? "FAIL" : "ok", o.dir,
                   errors, warnings, o.strict ? " (strict: warnings fail)" : "");
    }
    return failed ? 2 : 0;
}

}  // namespace

void add_i18n_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("i18n", "Check the translations of the report texts (--lang)");
    cmd->require_subcommand(1);
    auto opts = std::make_shared<i18n_options>();
    auto* lint = cmd->add_subcommand("lint", "Every text translated, no translation stale, the same facts in each language");
    lint->add_option("dir", opts->dir, "Rule directory whose translations to check (default: the shipped rules/)");
    lint->add_flag("--strict", opts->strict, "Treat warnings (missing, stale, orphan translations) as errors");
    add_format_option(lint, opts->format);
    lint->callback([opts, &exit_code] {
        if (opts->dir.empty()) opts->dir = data_path("rules");
        exit_code = run_lint(*opts);
    });
}

}  // namespace oomdx::cli
