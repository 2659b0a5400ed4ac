#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "engine/cli/commands.h"
#include "engine/core/errors.h"

namespace oomdx::cli {

namespace {

std::map<std::string, output_format> format_names(bool allow_html) {
    std::map<std::string, output_format> names{{"text", output_format::text},
                                               {"markdown", output_format::markdown},
                                               {"md", output_format::markdown},
                                               {"json", output_format::json}};
    if (allow_html) names["html"] = output_format::html;
    return names;
}

}  // namespace

void add_format_option(CLI::App* cmd, output_format& fmt, bool allow_html) {
    cmd->add_option("-f,--format", fmt, allow_html ? "Output format: text, markdown, json, html"
                                                   : "Output format: text, markdown, json")
        ->transform(CLI::CheckedTransformer(format_names(allow_html), CLI::ignore_case))
        ->default_str("text");
}

std::pair<output_format, std::string> parse_output_spec(const std::string& spec) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq + 1 == spec.size())
        throw usage_error(fmt::format("{}: expected FORMAT=FILE (e.g. json=report.json)", spec));
    std::string name = spec.substr(0, eq);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto names = format_names(true);
    const auto it = names.find(name);
    if (it == names.end())
        throw usage_error(fmt::format("{}: unknown format '{}' (text, markdown, json, html)", spec, name));
    return {it->second, spec.substr(eq + 1)};
}

void add_output_option(CLI::App* cmd, std::vector<std::string>& specs) {
    cmd->add_option("-o,--output", specs,
                    "FORMAT=FILE: also write the report to FILE (text, markdown, json, html); repeatable")
        ->check(CLI::Validator(
            [](std::string& spec) {
                try {
                    parse_output_spec(spec);
                } catch (const std::exception& e) {
                    return std::string(e.what());
                }
                return std::string();
            },
            "FORMAT=FILE"));
}

bool use_color() {
    const char* nc = std::getenv("NO_COLOR");
    if (nc && *nc) return false;
    return ::isatty(STDOUT_FILENO) == 1;
}

bool stderr_is_tty() { return ::isatty(STDERR_FILENO) == 1; }

stderr_progress::stderr_progress() : m_active(stderr_is_tty()) {}

stderr_progress::~stderr_progress() {
    if (m_active && m_written) std::fputs("\r\x1b[K", stderr);
}

void stderr_progress::update(const std::string& text) {
    if (!m_active || (m_written && text == m_last)) return;
    m_last = text;
    std::fprintf(stderr, "\r\x1b[K%s", text.c_str());
    std::fflush(stderr);
    m_written = true;
}

}  // namespace oomdx::cli
