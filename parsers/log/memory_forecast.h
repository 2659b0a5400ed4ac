// The forecast from a log that has not failed (yet): the steady per-step memory growth of one
// rank extrapolated to the device capacity and to the 0.95 budget, with an interval, and to
// wall-clock time from the steps' timestamps. A measurement: what to do about it is for rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "parsers/log/log_analysis.h"

namespace oomdx {

// One series (points in step order). capacity 0: unknown. At least 4 readings after the warm-up
// are needed; a line that does not rise has no projection. Whether a rising line is growth or
// noise (its slope's lower bound, its rise against the scatter) is the rules' verdict.
memory_forecast forecast_memory(const std::vector<memory_point>& points, std::int64_t capacity_bytes,
                                const std::string& capacity_from, std::optional<std::int64_t> rank);
// The reason given when the rules call the series flat.
std::string flat_reason(const memory_forecast& f);

}  // namespace oomdx
