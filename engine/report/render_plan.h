#pragma once
// The plan as a text block in the report's language: the "A PLAN THAT FITS" section of the text
// and markdown reports (diagnose and preflight, with --plan the ranked candidates too).
#include <cstddef>
#include <string>

#include "engine/estimator/plan.h"

namespace oomdx {

std::string render_plan_text(const plan_answer& p, std::size_t max_candidates, const std::string& lang);

}  // namespace oomdx
