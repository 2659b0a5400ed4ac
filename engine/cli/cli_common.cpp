#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>

#include "engine/cli/commands.h"

namespace oomdx::cli {

void add_format_option(CLI::App* cmd, output_format& fmt, bool allow_html) {
    std::map<std::string, output_format> names{{"text", output_format::text},
                                               {"markdown", output_format::markdown},
                                               {"md", output_format::markdown},
                                               {"json", output_format::json}};
    if (allow_html) names["html"] = output_format::html;
    cmd->add_option("-f,--format", fmt, allow_html ? "Output format: text, markdown, json, html"
                                                   : "Output format: text, markdown, json")
        ->transform(CLI::CheckedTransformer(names, CLI::ignore_case))
        ->default_str("text");
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
