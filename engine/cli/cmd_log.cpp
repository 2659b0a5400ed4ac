// `oomdx log FILE... [--format text|markdown|json] [--signatures DIR] [--jobs N]`: Step 0 on training logs.
#include <fmt/format.h>

#include "engine/cli/commands.h"
#include "engine/core/errors.h"
#include "parsers/log/log_analyzer.h"

namespace oomdx::cli {

void add_log_command(CLI::App& app, int& exit_code) {
    struct opts {
        std::vector<std::string> files;
        std::vector<std::string> sig_dirs;
        output_format fmt = output_format::text;
        unsigned jobs = 0;
    };
    auto o = std::make_shared<opts>();
    auto* cmd = app.add_subcommand("log", "Classify the OOM in training logs (plain or .gz): source, sizes, rank, step, timing");
    cmd->add_option("files", o->files, "Log files (plain text or gzip)")->check(CLI::ExistingFile);
    add_log_merge_command(*cmd, exit_code);
    cmd->add_option("--signatures", o->sig_dirs,
                    "Extra directory of log signature YAML files (added to the shipped ones)");
    cmd->add_option("-j,--jobs", o->jobs, "Threads that prefilter a big log (default: all cores; 1 = none)");
    add_format_option(cmd, o->fmt);
    cmd->callback([cmd, o, &exit_code] {
        if (!cmd->get_subcommands().empty()) return;  // log merge
        if (o->files.empty()) throw usage_error("oomdx log FILE... (or: log merge SUMMARY.json...)");
        log_options lo;
        lo.extra_signature_dirs = o->sig_dirs;
        lo.threads = o->jobs;
        stderr_progress bar;
        if (bar.active())
            lo.progress = [&bar](const std::string& file, std::int64_t done, std::int64_t total) {
                bar.update(total > 0 ? fmt::format("oomdx: reading {} {:.0f}%", file, 100.0 * done / total)
                                     : fmt::format("oomdx: reading {}", file));
            };
        log_analysis a = analyze_logs(o->files, lo);
        switch (o->fmt) {
            case output_format::json: fmt::print("{}\n", to_json(a).dump(2)); break;
            case output_format::markdown: fmt::print("{}", render_text(a, true, false)); break;
            default: fmt::print("{}", render_text(a, false, use_color())); break;
        }
        exit_code = 0;
    });
}

}  // namespace oomdx::cli
