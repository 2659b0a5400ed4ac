// Renderers of the diagnosis report: text (terminal, optional colour), markdown, and JSON
// ("schema": "oomdx.diagnosis/1", documented in docs/engine.md). The JSON's machine fields are
// language-neutral; its texts (headline, findings, recommendations, route, next steps, uncertainty)
// are in the report's language, named by "lang".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/report/diagnosis.h"

namespace oomdx {

struct render_options {
    bool markdown = false;
    bool color = false;
    bool explain = false;
    std::string lang = "en";  // en | zh: the fixed phrases; the report's own texts are in diagnosis_report::lang
};

std::string render_diagnosis_text(const diagnosis_report& r, const render_options& o);
// rev36: the sentences under the estimate that text and HTML both print, in `lang` ("" where the report has none):
// "largest that fit: ..." (the limits) and "<framework> defaults applied where the config is silent: ...".
std::string limits_sentence(const std::string& lang, const diagnosis_report& r);
std::string framework_defaults_sentence(const std::string& lang, const diagnosis_report& r);
nlohmann::json diagnosis_json(const diagnosis_report& r, bool explain);

}  // namespace oomdx
