// `diagnose --log` given per-rank log summaries (oomdx log FILE --format json) or merged ones
// (oomdx log merge --format json) instead of the logs: one analysis for the facts, that of the
// first rank to fail (lowest failing step, then rank, as `oomdx log merge` decides), with the
// failed ranks of every summary.
#pragma once

#include <string>
#include <vector>

#include "parsers/log/log_analysis.h"

namespace oomdx {

// Throws input_error (a bad summary, or a merged one whose first failed rank's summary cannot
// be read here).
log_analysis combine_log_summaries(const std::vector<std::string>& paths);

}  // namespace oomdx
