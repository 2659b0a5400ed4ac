// `oomdx preflight`: placeholder until its issue lands.
#include <fmt/format.h>

#include "engine/cli/commands.h"

namespace oomdx::cli {

void add_preflight_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("preflight", "(not implemented yet)");
    cmd->allow_extras();
    cmd->callback([&exit_code] {
        fmt::print(stderr, "oomdx: 'preflight' is not implemented yet\n");
        exit_code = 2;
    });
}

}  // namespace oomdx::cli
