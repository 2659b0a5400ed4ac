// `oomdx rules lint`: load diagnostics plus set-wide checks (tests present, rules covered,
// duplicate conditions).
#pragma once

#include <string>
#include <vector>

#include "engine/rules/rule_loader.h"

namespace oomdx {

struct lint_report {
    std::vector<rule_diagnostic> diagnostics;
    size_t rules = 0, macros = 0, files = 0;
    size_t errors() const;
    size_t warnings() const;
};

lint_report lint_rules(const std::string& dir, const vocabulary& vocab, const std::vector<action_decl>& actions);

}  // namespace oomdx
