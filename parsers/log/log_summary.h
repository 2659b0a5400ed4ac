// Per-rank log summaries (thousands of ranks, docs/scale.md): the oomdx.log/1 JSON of
// `oomdx log RANK.log --format json` read back into the analysis it was written from, so that
// `diagnose --log summary.json` gives the facts the log itself gives; and the merged view of
// `oomdx log merge --format json` (kind "ranks"), which names its first failed rank's summary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parsers/log/log_analysis.h"

namespace oomdx {

// not_summary: a training log (or anything else); analysis: one rank's summary; ranks: a merged
// view. Only *.json files of at most 64 MiB that name the schema are parsed to tell.
enum class log_summary_kind { not_summary, analysis, ranks };
log_summary_kind log_summary_kind_of(const std::string& path);

// The analysis an oomdx.log/1 summary holds (what `oomdx log FILE` found, with the verdicts it
// had then; figures the JSON rounds, such as R2 to 3 decimals, stay rounded). Throws input_error
// naming the file and the key.
log_analysis analysis_of_log_summary(const nlohmann::json& j, const std::string& path);
log_analysis load_log_summary(const std::string& path);

// A merged view: the ranks that failed (ascending), the first to fail, the ranks merged and the
// summary of the first failed rank (`merge.first_failed_summary`, "" when none failed or absent).
struct merged_log_summary {
    std::vector<std::int64_t> failed_ranks;
    std::int64_t first_failed_rank = -1;
    std::int64_t ranks = 0;          // rows merged
    std::int64_t missing_ranks = 0;  // missing_rank_count
    std::string first_failed_summary;
};
merged_log_summary load_merged_log_summary(const std::string& path);

}  // namespace oomdx
