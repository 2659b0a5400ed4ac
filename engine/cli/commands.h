// Subcommand registration. Each subcommand lives in its own cmd_<name>.cpp, registers itself
// on the app, and stores its exit code in `exit_code` when it runs.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

namespace oomdx {
struct diagnosis_report;
}

namespace oomdx::cli {

enum class output_format { text, markdown, json, html };

// Adds `--format text|markdown|json[|html]` to a subcommand.
void add_format_option(CLI::App* cmd, output_format& fmt, bool allow_html = false);
// True when stdout is a terminal and NO_COLOR is unset.
bool use_color();
// True when stderr is a terminal (progress output).
bool stderr_is_tty();
// Progress line on stderr ("\r" updates), only when stderr is a terminal; ends the line when done.
class stderr_progress {
public:
    stderr_progress();
    ~stderr_progress();
    bool active() const { return m_active; }
    void update(const std::string& text);

private:
    bool m_active;
    bool m_written = false;
    std::string m_last;  // the line on screen: an unchanged line is not written again
};

// Prints a diagnosis or preflight report in the chosen format (shared by diagnose and preflight).
void print_diagnosis(const diagnosis_report& rep, output_format format, bool explain, const std::string& lang);

// `-o,--output FORMAT=FILE` (repeatable): the same report also written to FILE in FORMAT, from
// the one analysis (a pipeline's JSON beside a reader's HTML). Checked before the run.
void add_output_option(CLI::App* cmd, std::vector<std::string>& specs);
// FORMAT=FILE -> (format, FILE); usage_error when FORMAT is not text, markdown, md, json or html.
std::pair<output_format, std::string> parse_output_spec(const std::string& spec);
// Writes the report to each FORMAT=FILE of `specs` (atomically, never coloured); an unwritable
// FILE is an input_error naming it.
void write_diagnosis_outputs(const diagnosis_report& rep, const std::vector<std::string>& specs, bool explain,
                             const std::string& lang);

// The capacity of a catalog device for `--device` of log and watch (0 for ""); usage_error when unknown.
std::int64_t device_capacity(const std::string& device);

void add_diagnose_command(CLI::App& app, int& exit_code);
void add_preflight_command(CLI::App& app, int& exit_code);
void add_estimate_command(CLI::App& app, int& exit_code);
void add_diff_command(CLI::App& app, int& exit_code);
void add_snapshot_command(CLI::App& app, int& exit_code);
void add_log_command(CLI::App& app, int& exit_code);
void add_watch_command(CLI::App& app, int& exit_code);
// `oomdx log merge`: per-rank log summaries into one cross-rank view (cmd_log_merge.cpp).
void add_log_merge_command(CLI::App& log_cmd, int& exit_code);
void add_rules_command(CLI::App& app, int& exit_code);
void add_facts_command(CLI::App& app, int& exit_code);
void add_capture_command(CLI::App& app, int& exit_code);
void add_completion_command(CLI::App& app, int& exit_code);
void add_i18n_command(CLI::App& app, int& exit_code);

}  // namespace oomdx::cli
