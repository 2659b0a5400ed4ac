// `oomdx i18n lint`: the knowledge translations (knowledge/i18n/<lang>/*.yaml) against the English
// texts they translate: the reports' fixed phrases (report_phrases.h), the vocabulary's phrases,
// the actions' descriptions. Templates of producer sentences (log., estimate., snapshot., adapter.,
// term.)
// have no English source to compare with: the lint checks that each has a translation with the
// same placeholders; whether they still match what the producers write is tested on the examples
// (tests/scripts/examples_zh.sh) and the fixtures (tests/unit/i18n).
// Codes as for rules: W206 missing, W207 stale, W208 orphan, E115 placeholders differ, E100 a
// file that does not load.
#pragma once

#include <string>
#include <vector>

#include "engine/rules/source_context.h"

namespace oomdx {

std::vector<rule_diagnostic> lint_knowledge_translations(const std::string& lang);

}  // namespace oomdx
