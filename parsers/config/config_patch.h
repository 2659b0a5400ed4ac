// Applying rendered overrides (render_overrides' lines) back to the config they were rendered
// for: a TOML edit, flags appended to a launch command (existing occurrences removed), a
// registry function's fields edited, a JSON merge patch, a YAML merge. The inverse of
// rendering; the round-trip tests re-read the result with the parsers and re-estimate.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parsers/config/override_syntax.h"

namespace oomdx {

// Returns the patched text of the config `s.file` (whose text is `text`). Lines for another
// file (the `# file (JSON merge patch):` block of an HF job's DeepSpeed config) are ignored;
// `export` lines go before the launch command of a script and are ignored elsewhere.
// Throws input_error naming the line it cannot apply.
std::string apply_rendered(const override_syntax& s, std::string_view text, const std::vector<std::string>& lines);

}  // namespace oomdx
