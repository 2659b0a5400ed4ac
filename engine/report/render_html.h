// Self-contained HTML reports: one file with inline CSS and inline SVG charts, no scripts and
// no network references. Every string that comes from an input is escaped. Layout and the
// charts drawn are described in docs/html.md.
#pragma once

#include <string>
#include <string_view>

#include "engine/estimator/config_diff.h"
#include "engine/report/diagnosis.h"
#include "parsers/snapshot/snapshot_analysis.h"

namespace oomdx {

// `oomdx diagnose --format html` and `oomdx preflight --format html`, in the report's language
// (`<html lang>`, a font stack that shows CJK).
std::string render_diagnosis_html(const diagnosis_report& r);
// `oomdx snapshot FILE --format html`.
std::string render_snapshot_html(const snap::snapshot_analysis& a, const std::string& lang = "en");

// `oomdx diff A B --format html`.
std::string render_diff_html(const config_diff& d);

// Text -> HTML text/attribute content: escapes & < > " ', replaces invalid UTF-8 and control
// characters (other than tab and newline) with U+FFFD.
std::string html_escape(std::string_view s);

}  // namespace oomdx
