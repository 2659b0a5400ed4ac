// Per-file summaries for thousands of ranks: the oomdx.snapshot/1 JSON of one snapshot
// (`oomdx snapshot FILE --format json --output F`, written where the file lives) is the map
// step; merge_summaries is the reduce step: it reads summaries one at a time, keeps one row
// per rank and builds the same cross-rank view as the analysis of a directory of snapshots.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parsers/snapshot/compare.h"
#include "parsers/snapshot/snapshot_analysis.h"

namespace oomdx::snap {

// Summary files of the arguments: a file, a directory (its *.json, sorted), a glob pattern
// (expanded here, sorted), or @LIST (one path per line; blank lines and # comments skipped).
// A path that does not exist is kept: the merge reports it as a missing summary.
std::vector<std::string> expand_summary_inputs(const std::vector<std::string>& args);

// A summary that could not be read, by rank (-1 when not even the file name tells it).
struct summary_error {
    std::string file;
    std::int64_t rank = -1;
    std::string message;
};

struct merge_result {
    rank_table table;
    std::vector<summary_error> bad;
    std::size_t inputs = 0;
    // The summary of the rank with the largest peak (lowest rank on a tie), as an absolute path:
    // `diagnose` given the merged view reads it for the per-snapshot facts.
    std::string peak_summary;
    std::int64_t peak_rank = -1, peak_bytes = 0;
};

// The row of one summary (an oomdx.snapshot/1 "analysis" document); throws input_error naming
// the file and the key when it is not one. `fallback_rank`: its position among the inputs.
rank_row rank_row_of_summary(const nlohmann::json& j, const std::string& path, std::int64_t fallback_rank);

// Reads every summary once, in order; `progress(done, total)` after each. Memory: one row per
// rank. Bad or missing summaries are listed in `bad`, never dropped silently; the rank numbers
// without a row, up to the highest seen (or world_size - 1), in table.missing_ranks.
merge_result merge_summaries(const std::vector<std::string>& files,
                             const std::function<void(std::size_t, std::size_t)>& progress = {},
                             std::int64_t world_size = 0);

// The analysis a summary describes (for `diagnose` given summaries instead of snapshots): what
// the JSON holds - overview, categories, the listed sites, replay figures, OOM events, phases,
// timeline, measurements and the patterns decided when it was written. Throws input_error.
snapshot_analysis analysis_of_summary(const nlohmann::json& j, const std::string& path);
snapshot_analysis load_summary(const std::string& path);

// What a file given where snapshots are expected is: not an oomdx document (a memory snapshot,
// pickle or JSON), a per-file summary (kind "analysis"), a merged one (`oomdx snapshot merge
// --format json`, kind "ranks") or another oomdx.snapshot/1 document (diff, trend, a directory's
// report). Only *.json files of at most 64 MiB that name the schema are parsed to tell.
enum class summary_kind { not_summary, analysis, ranks, other };
summary_kind summary_kind_of(const std::string& path);
// A merged summary: its rows (`ranks.rows`) and the path of its peak rank's summary
// (`merge.peak_summary`, "" when absent). Throws input_error.
struct merged_summary {
    std::vector<rank_row> rows;
    std::string peak_summary;
};
merged_summary load_merged(const std::string& path);

}  // namespace oomdx::snap
