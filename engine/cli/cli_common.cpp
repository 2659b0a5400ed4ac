#include <unistd.h>

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

}  // namespace oomdx::cli
