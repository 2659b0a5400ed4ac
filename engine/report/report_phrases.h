// The fixed phrases of the reports (text, markdown, HTML, the headline and notes of the report
// model) in English, by key, as message templates with named arguments (engine/core/message.h).
// Their translations are knowledge/i18n/<lang>/report.yaml; `oomdx i18n lint` checks that every
// phrase has a current one. Texts the producers wrote in English (estimate formulas, the log's
// timing reason, snapshot patterns) are translated by their templates (translated()).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/core/message.h"
#include "engine/estimator/estimate.h"

namespace oomdx {

// Every phrase: key -> English template, in a stable order.
const std::vector<std::pair<std::string, std::string>>& report_phrases();

// The phrase `key` in `lang` with `args` substituted; the English when it has no current
// translation. An unknown key renders as itself (a slip the golden tests show).
std::string phrase(const std::string& lang, const std::string& key, const message_args& args = {});

// A machine value shown in a sentence (a severity, a timing, a verdict): the phrase
// `value.<kind>.<v>` when the table has one, else `v` as it is.
std::string value_phrase(const std::string& lang, const std::string& kind, const std::string& v);

// A text a producer wrote in English from a template under `prefix` (knowledge/i18n/<lang>),
// in `lang`; the English when no template matches.
std::string translated(const std::string& lang, const std::string& prefix, const std::string& english);

// An estimate component's label in `lang` (estimate.component.<id>).
std::string estimate_label(const std::string& lang, const estimate_component& c);

}  // namespace oomdx
