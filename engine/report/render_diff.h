// `oomdx diff` as text or markdown: the keys that differ, each side's estimate, the per-component
// deltas and the step-by-step attribution.
#pragma once

#include <string>

#include "engine/estimator/config_diff.h"

namespace oomdx {

std::string render_diff_text(const config_diff& d, bool markdown);

}  // namespace oomdx
