// Comparing snapshot analyses: diff of two, trend over three or more (warm-up vs leak),
// and the cross-rank table of a directory of per-rank snapshots.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/fact.h"
#include "parsers/snapshot/snapshot_analysis.h"

namespace oomdx::snap {

struct diff_row {
    std::string key;       // site ("file:line:function") or category name
    std::string category;  // for sites
    std::int64_t bytes_a = 0, bytes_b = 0, blocks_a = 0, blocks_b = 0;
    std::int64_t delta_bytes() const { return bytes_b - bytes_a; }
    std::int64_t delta_blocks() const { return blocks_b - blocks_a; }
    bool flagged = false;  // grew in both bytes and blocks: leaking or retained
};

struct diff_result {
    std::string file_a, file_b;
    std::int64_t device = 0;
    std::int64_t live_a = 0, live_b = 0, reserved_a = 0, reserved_b = 0, peak_a = 0, peak_b = 0;
    std::int64_t inactive_a = 0, inactive_b = 0;
    double fragmentation_a = 0, fragmentation_b = 0;
    std::vector<diff_row> categories;  // sorted by growth, largest first
    std::vector<diff_row> sites;       // sorted by growth, largest first
    std::vector<std::string> findings;
};

diff_result diff(const snapshot_analysis& a, const snapshot_analysis& b);

struct trend_series {
    std::string key;
    std::string category;
    std::vector<std::int64_t> bytes, blocks;
    bool monotonic = false;  // never decreases and grows overall (bytes; blocks too for sites)
    std::int64_t growth = 0;
};

struct trend_result {
    std::vector<std::string> files;
    std::int64_t device = 0;
    std::vector<std::int64_t> live, reserved, peak;
    std::int64_t growth_bytes = 0;        // last live - first live
    std::int64_t last_step_bytes = 0;     // last live - the one before
    std::int64_t largest_drop_bytes = 0;  // largest decrease between consecutive snapshots
    // Verdicts of the rules (engine/report/snapshot_verdicts.h); empty / false until applied.
    bool monotonic_growth = false;
    std::string verdict;  // leak | warmup | no_growth
    std::string explanation;
    std::vector<trend_series> categories;  // all categories with any bytes
    std::vector<trend_series> sites;       // monotonic growers, largest growth first
    std::string growing_category, growing_site;
};

trend_result trend(const std::vector<snapshot_analysis>& v);
// The explanation of t.verdict in words, from the measurements (after the verdict is set).
std::string trend_explanation(const trend_result& t);
void emit_facts(const trend_result& t, fact_sink& sink);
void emit_facts(const diff_result& d, fact_sink& sink);

// One rank of the cross-rank view: what one file's summary (its oomdx.snapshot/1 JSON) holds.
struct rank_row {
    std::string file;
    std::int64_t rank = 0;
    std::int64_t device = 0;
    std::int64_t peak = 0, live = 0, reserved = 0, inactive = 0;
    double fragmentation = 0;
    std::int64_t oom_events = 0;
    std::int64_t first_oom_time_us = -1;  // time of its first detailed OOM event, -1 unknown
    std::string top_site;
    std::string top_category;             // category holding most of its live memory
};

struct site_ranks {
    std::string site;
    std::int64_t ranks = 0;  // ranks whose top site it is
    std::int64_t bytes = 0;  // their bytes at it, summed
};

struct rank_table {
    std::vector<rank_row> rows;  // sorted by rank
    std::int64_t median_peak = 0;
    int farthest = -1;           // index into rows of the peak farthest from the median
    double outlier_deviation = 0;  // its (peak - median) / median
    int outlier = -1;            // the rules' verdict: `farthest` when it is an outlier, else -1
    double peak_spread = 0;      // (max - min) / max
    std::vector<std::int64_t> failed_ranks;  // ranks with an OOM event, ascending
    std::int64_t first_failed_rank = -1;     // earliest first OOM (time_us), else lowest failed rank
    std::string majority_category;           // the top category of most ranks
    std::vector<std::int64_t> category_outliers;  // ranks whose top category is another one
    std::vector<site_ranks> common_sites;    // top sites shared by two ranks or more, most ranks first
    std::vector<std::int64_t> missing_ranks; // numbers between 0 and the highest rank without a row (first 1000)
    std::int64_t missing_rank_count = 0;     // all of them
    void add_missing(std::int64_t rank) {
        if (missing_ranks.size() < 1000) missing_ranks.push_back(rank);
        ++missing_rank_count;
    }
};

rank_table compare_ranks(const std::vector<snapshot_analysis>& v);
// The row of one analysis; `fallback_rank` when the analysis has none.
rank_row rank_row_of(const snapshot_analysis& a, std::int64_t fallback_rank);
// The cross-rank view of rows (any order; sorted by rank here).
rank_table rank_table_of(std::vector<rank_row> rows);
// Rank number from the file name ("rank3", "dev3", "_3.pickle"), else from a directory of the
// path ("rank3/oom.pickle"); fallback when none.
std::int64_t rank_from_name(const std::string& path, std::int64_t fallback);
// Only a rank word (rank|rk|dev|device|npu|gpu|cuda and digits) of the name or a directory, -1
// when none: trailing digits alone ("s10.pickle") may be a step as well as a rank.
std::int64_t rank_word_of_path(const std::string& path);
void emit_facts(const rank_table& t, fact_sink& sink);

nlohmann::json to_json(const diff_result& d);
nlohmann::json to_json(const trend_result& t);
nlohmann::json to_json(const rank_table& t);
std::string render_text(const diff_result& d, bool markdown, bool color, int top = 10, const std::string& lang = "en");
std::string render_text(const trend_result& t, bool markdown, bool color, int top = 10, const std::string& lang = "en");
std::string render_text(const rank_table& t, bool markdown, bool color, const std::string& lang = "en");

}  // namespace oomdx::snap
