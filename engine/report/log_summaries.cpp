#include "engine/report/log_summaries.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <set>
#include <utility>

#include "engine/core/errors.h"
#include "parsers/log/log_summary.h"
#include "parsers/snapshot/compare.h"

namespace oomdx {

log_analysis combine_log_summaries(const std::vector<std::string>& paths) {
    if (paths.size() == 1 && log_summary_kind_of(paths[0]) == log_summary_kind::analysis)
        return load_log_summary(paths[0]);
    std::set<std::int64_t> failed;
    std::int64_t ranks = 0, missing = 0;
    std::optional<log_analysis> first, any;
    std::pair<std::int64_t, std::int64_t> first_key{INT64_MAX, INT64_MAX};  // (step, rank)
    auto candidate = [&](log_analysis a, std::int64_t rank) {
        const std::pair<std::int64_t, std::int64_t> key{a.step.value_or(INT64_MAX), rank};
        if (!first || key < first_key) {
            first_key = key;
            first = std::move(a);
        }
    };
    for (std::size_t i = 0; i < paths.size(); ++i) {
        const std::string& p = paths[i];
        if (log_summary_kind_of(p) == log_summary_kind::ranks) {
            const merged_log_summary m = load_merged_log_summary(p);
            failed.insert(m.failed_ranks.begin(), m.failed_ranks.end());
            ranks += m.ranks;
            missing += m.missing_ranks;
            if (m.first_failed_rank < 0) continue;
            if (m.first_failed_summary.empty() || log_summary_kind_of(m.first_failed_summary) != log_summary_kind::analysis)
                throw input_error::in_file(
                    p, m.first_failed_summary.empty()
                           ? "merged log summary without 'merge.first_failed_summary': merge again with this oomdx, or give the per-rank summaries"
                           : "merge.first_failed_summary: " + m.first_failed_summary +
                                 " is not a readable log summary here; give the per-rank summaries instead");
            candidate(load_log_summary(m.first_failed_summary), m.first_failed_rank);
            continue;
        }
        log_analysis a = load_log_summary(p);
        // The rank as `oomdx log merge` reads it: the log's file name, the summary's, the log's rank.
        const std::string log_path = a.files.empty() ? std::string() : a.files.front().path;
        std::int64_t rank = snap::rank_from_name(log_path, snap::rank_from_name(p, a.rank.value_or(-1)));
        if (rank < 0) rank = static_cast<std::int64_t>(i);
        ++ranks;
        if (!any) any = a;
        if (a.source == "none" || a.source.empty()) continue;
        failed.insert(rank);
        candidate(std::move(a), rank);
    }
    log_analysis out = first ? std::move(*first) : any ? std::move(*any) : log_analysis{};
    if (!first && !any)  // merged views only, none failed: no OOM, and the files named
        for (const auto& p : paths) out.files.push_back({p, 0, 0, false, 0});
    if (first) {
        // The ranks that failed, the first to fail first.
        out.ranks_failed.assign(1, first_key.second);
        for (auto r : failed)
            if (r != first_key.second) out.ranks_failed.push_back(r);
        if (ranks > 1) out.all_ranks_failed = missing == 0 && static_cast<std::int64_t>(failed.size()) == ranks;
        if (!out.rank) {
            out.rank = first_key.second;
            out.rank_from = "filename";
        }
    }
    return out;
}

}  // namespace oomdx
