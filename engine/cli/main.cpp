// oomdx: parse options, run one subcommand, exit with its code. Nothing else lives here.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include <fmt/format.h>

#include "engine/cli/commands.h"
#include "engine/core/errors.h"
#include "engine/core/limits.h"

int main(int argc, char** argv) {
    CLI::App app{"oomdx: diagnose out-of-memory crashes of PyTorch training (CUDA and Ascend NPU)",
                 "oomdx"};
    app.set_version_flag("--version", std::string("oomdx ") + OOMDX_VERSION);
    app.require_subcommand(1);
    app.footer(
        "Exit codes: 0 ok; 1 preflight predicts an OOM (does not fit) or rule tests failed;\n"
        "            2 usage error or unreadable/invalid input.");
    // Limits apply to every subcommand and may follow it (fallthrough).
    app.fallthrough();
    app.add_option_function<std::vector<std::string>>(
           "--limit",
           [](const std::vector<std::string>& items) {
               for (const auto& item : items) {
                   if (item == "list") {
                       fmt::print("{}", oomdx::describe_limits());
                       std::exit(0);
                   }
                   oomdx::set_limit(item);
               }
           },
           "NAME=VALUE bound on inputs (e.g. snapshot_memo=1000000, text_file_bytes=64MiB); "
           "'--limit list' prints them. Also OOMDX_LIMITS=a=1,b=2")
        ->trigger_on_parse()
        ->expected(1)
        ->allow_extra_args(false);
    int exit_code = 0;
    // `oomdx snapshot ...` builds that subcommand's options only: the others' option trees are
    // ~2 M instructions and ~20 page faults of start-up that a snapshot run never reads
    // (docs/snapshot.md, snap19). Its help, errors and exit codes are the same either way.
    const bool snapshot_only = argc > 1 && std::string_view(argv[1]) == "snapshot";
    if (!snapshot_only) {
        oomdx::cli::add_diagnose_command(app, exit_code);
        oomdx::cli::add_preflight_command(app, exit_code);
        oomdx::cli::add_estimate_command(app, exit_code);
        oomdx::cli::add_diff_command(app, exit_code);
    }
    oomdx::cli::add_snapshot_command(app, exit_code);
    if (!snapshot_only) {
        oomdx::cli::add_log_command(app, exit_code);
        oomdx::cli::add_watch_command(app, exit_code);
        oomdx::cli::add_facts_command(app, exit_code);
        oomdx::cli::add_rules_command(app, exit_code);
        oomdx::cli::add_i18n_command(app, exit_code);
        oomdx::cli::add_capture_command(app, exit_code);
        oomdx::cli::add_completion_command(app, exit_code);
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : oomdx::exit_input_error;
    } catch (const oomdx::input_error& e) {
        std::fflush(stdout);
        fmt::print(stderr, "oomdx: error: {}\n", e.what());
        return oomdx::exit_input_error;
    } catch (const oomdx::usage_error& e) {
        std::fflush(stdout);
        fmt::print(stderr, "oomdx: usage: {}\n", e.what());
        return oomdx::exit_input_error;
    } catch (const std::bad_alloc&) {
        std::fflush(stdout);
        fmt::print(stderr, "oomdx: error: out of host memory while reading the input (see --help for limits)\n");
        return oomdx::exit_input_error;
    } catch (const std::exception& e) {
        std::fflush(stdout);
        fmt::print(stderr, "oomdx: error: {}\n", e.what());
        return oomdx::exit_input_error;
    }
    return exit_code;
}
