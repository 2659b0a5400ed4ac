// Renderers of the diagnosis report: text (terminal, optional colour), markdown, and JSON
// ("schema": "oomdx.diagnosis/1", documented in docs/json-schemas.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/report/diagnosis.h"

namespace oomdx {

struct render_options {
    bool markdown = false;
    bool color = false;
    bool explain = false;
    std::string lang = "en";  // en | zh (headings and fixed phrases)
};

std::string render_diagnosis_text(const diagnosis_report& r, const render_options& o);
nlohmann::json diagnosis_json(const diagnosis_report& r, bool explain);

}  // namespace oomdx
