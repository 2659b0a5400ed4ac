// `oomdx log FILE... [--format text|markdown|json] [--signatures DIR] [--jobs N]`: Step 0 on
// training logs. `oomdx log test [--signatures DIR]...`: the signatures' example lines and the
// coverage gate.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <future>

#include "engine/cli/commands.h"
#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/thread_cpu.h"
#include "engine/core/vocabulary.h"
#include "engine/rules/rule_loader.h"
#include "engine/report/log_verdicts.h"
#include "parsers/config/device_catalog.h"
#include "parsers/log/log_analyzer.h"
#include "parsers/log/signature_examples.h"

namespace oomdx::cli {

namespace {

// Exit 0 when every example passes and every signature is covered, 1 otherwise.
int run_signature_tests(const std::vector<std::string>& extra_dirs, bool only_extra) {
    std::vector<std::string> dirs;
    if (!only_extra) dirs.push_back(data_path("knowledge/log_signatures"));
    dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
    const signature_set sigs = signature_set::load(dirs);
    const auto examples = load_signature_examples(dirs, sigs);
    const example_report r = run_signature_examples(sigs, examples);
    for (const auto& f : r.failures) fmt::print("FAIL {}\n", f);
    for (const auto& u : r.uncovered) fmt::print("UNCOVERED {}\n", u);
    fmt::print("log signatures: {} signatures, {} examples, {} passed, {} failed, {} coverage gaps\n", r.signatures,
               r.examples, r.passed, r.failures.size(), r.uncovered.size());
    return r.ok() ? 0 : 1;
}

}  // namespace

std::int64_t device_capacity(const std::string& device) {
    if (device.empty()) return 0;
    auto d = lookup_device(device);
    if (!d) throw usage_error("unknown device '" + device + "' (see knowledge/devices.yaml)");
    return d->capacity_bytes > 0 ? d->capacity_bytes : d->nominal_bytes;
}

void add_log_command(CLI::App& app, int& exit_code) {
    struct opts {
        std::vector<std::string> files;
        std::vector<std::string> sig_dirs;
        output_format fmt = output_format::text;
        unsigned jobs = 0;
        std::string device;
        bool stats = false;
    };
    auto o = std::make_shared<opts>();
    auto* cmd = app.add_subcommand("log", "Classify the OOM in training logs (plain or .gz): source, sizes, rank, step, timing");
    cmd->add_option("files", o->files, "Log files (plain text or gzip); a file named 'test' is ./test")
        ->check(CLI::ExistingFile);
    add_log_merge_command(*cmd, exit_code);
    cmd->add_option("--signatures", o->sig_dirs,
                    "Extra directory of log signature YAML files (added to the shipped ones)");
    cmd->add_option("-j,--jobs", o->jobs, "Threads that prefilter a big log (default: one per core but one, from three cores up; 1 = none)");
    cmd->add_option("--device", o->device,
                    "Device (catalog name, e.g. h100-80gb, 910b3): its capacity for the forecast "
                    "(default: what the log states)");
    add_format_option(cmd, o->fmt);
    cmd->add_flag("--stats", o->stats,
                  "Print the run's figures to stderr: bytes, wall time, CPU time of the main thread (the "
                  "serial part) and of the prefilter threads");

    struct test_opts {
        std::vector<std::string> dirs;
        bool only = false;
    };
    auto t = std::make_shared<test_opts>();
    auto* test = cmd->add_subcommand(
        "test", "Run the example lines of the log signatures (*.test.yaml beside them) and the coverage gate");
    test->add_option("--signatures", t->dirs, "Extra signature directory (its *.test.yaml files are run too)");
    test->add_flag("--only", t->only, "Test only the --signatures directories, not the shipped signatures");
    test->callback([t, &exit_code] { exit_code = run_signature_tests(t->dirs, t->only); });

    cmd->callback([cmd, o, &exit_code] {
        if (!cmd->get_subcommands().empty()) return;
        if (o->files.empty()) throw usage_error("oomdx log FILE... (or: log test, log merge SUMMARY.json...)");
        const auto wall0 = std::chrono::steady_clock::now();
        log_options lo;
        log_options::run_stats st;
        if (o->stats) lo.stats = &st;
        lo.extra_signature_dirs = o->sig_dirs;
        lo.threads = o->jobs;
        lo.device_capacity_bytes = device_capacity(o->device);
        stderr_progress bar;
        if (bar.active())
            lo.progress = [&bar](const std::string& file, std::int64_t done, std::int64_t total) {
                bar.update(total > 0 ? fmt::format("oomdx: reading {} {:.0f}%", file, 100.0 * done / total)
                                     : fmt::format("oomdx: reading {}", file));
            };
        // the rule packs load on a helper thread while the log is read
        auto rules = std::async(std::launch::async, [] { return &shipped_evidence_rules(); });
        log_analysis a = analyze_logs(o->files, lo);
        judge_log(a, rules.get());  // timing and leak signal: the `evidence` rules (rules/evidence_log.yaml)
        switch (o->fmt) {
            case output_format::json: fmt::print("{}\n", to_json(a).dump(2)); break;
            case output_format::markdown: fmt::print("{}", render_text(a, true, false)); break;
            default: fmt::print("{}", render_text(a, false, use_color())); break;
        }
        if (o->stats) {
            std::fflush(stdout);
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
            fmt::print(stderr,
                       "oomdx: stats: {:.1f} MB read in {:.3f} s wall; CPU {:.3f} s on the main thread (the serial "
                       "part, start-up included), {:.3f} s on {} prefilter threads\n",
                       static_cast<double>(st.bytes) / 1e6, wall, static_cast<double>(thread_cpu_us()) / 1e6,
                       static_cast<double>(st.worker_cpu_us) / 1e6, st.workers);
        }
        exit_code = 0;
    });
}

}  // namespace oomdx::cli
