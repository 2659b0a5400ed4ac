// The verdicts on a training log (timing, leak signal, monotonic growth) come from the rules of
// the `evidence` step, not from the log analyzer: `oomdx log` and `oomdx watch` run that step
// alone over the log's facts, `oomdx diagnose` runs it with the others; either way the derived
// facts are written back into the analysis for its renderers.
#pragma once

#include "engine/core/fact_store.h"
#include "engine/rules/rule_set.h"
#include "parsers/log/log_analysis.h"

namespace oomdx {

// Copies oom.timing, oom.timing_reason, log.memory_leak_signal and log.memory_series_monotonic
// from the facts (absent: timing "unknown", no leak signal).
void apply_log_verdicts(log_analysis& a, const fact_store& facts);

// Emits the analysis as facts, runs the `evidence` step of `rules` (the shipped packs when
// null) and applies its verdicts. Returns the facts, derived ones included.
fact_store judge_log(log_analysis& a, const rule_set* rules = nullptr);

}  // namespace oomdx
