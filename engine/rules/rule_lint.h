// `oomdx rules lint`: load diagnostics plus set-wide checks (tests present, rules covered,
// duplicate conditions, every text translated: engine/rules/rule_translations.h).
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

// W206/W207/W208/E115 for the rule and step texts of `rules` in every report language.
std::vector<rule_diagnostic> lint_rule_translations(const rule_set& rules);

lint_report lint_rules(const std::string& dir, const vocabulary& vocab, const std::vector<action_decl>& actions);

}  // namespace oomdx
