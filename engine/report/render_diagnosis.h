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
nlohmann::json diagnosis_json(const diagnosis_report& r, bool explain);

}  // namespace oomdx
