#include "parsers/snapshot/file_relation.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "parsers/snapshot/compare.h"

namespace oomdx::snap {

void emit_relation_facts(const std::vector<snapshot_analysis>& v, fact_sink& sink) {
    if (v.size() < 2) return;
    std::set<std::int64_t> ranks, devices;
    std::int64_t ooms = 0, timed = 0;
    std::int64_t first = -1, first_end = -1, last_end = -1;
    std::string names;
    for (const auto& a : v) {
        names += (names.empty() ? "" : ", ") + a.file;
        if (const std::int64_t r = rank_word_of_path(a.file); r >= 0) ranks.insert(r);
        if (a.primary < 0) continue;
        const device_analysis& d = a.devices[a.primary];
        devices.insert(d.device);
        if (d.oom_count > 0) ++ooms;
        if (d.trace_first_time_us < 0 || d.trace_last_time_us < d.trace_first_time_us) continue;
        ++timed;
        first = first < 0 ? d.trace_first_time_us : std::min(first, d.trace_first_time_us);
        first_end = first_end < 0 ? d.trace_last_time_us : std::min(first_end, d.trace_last_time_us);
        last_end = std::max(last_end, d.trace_last_time_us);
    }
    provenance p;
    p.producer = "snapshot";
    p.excerpt = names.size() > 300 ? names.substr(0, 300) + "..." : names;
    sink.emit("snapshot.files.count", static_cast<std::int64_t>(v.size()), p);
    sink.emit("snapshot.files.distinct_rank_words", static_cast<std::int64_t>(ranks.size()), p);
    sink.emit("snapshot.files.distinct_devices", static_cast<std::int64_t>(devices.size()), p);
    sink.emit("snapshot.files.oom_files", ooms, p);
    sink.emit("snapshot.files.timed", timed, p);
    if (timed == static_cast<std::int64_t>(v.size()) && last_end > first) {
        // Ranks dumped at one failure end together; one rank's dumps at steps 5, 10 and 20 end apart.
        p.excerpt = fmt::format("traces from t={}us to t={}us, ending between t={}us and t={}us", first, last_end,
                                first_end, last_end);
        sink.emit("snapshot.files.end_spread_share", static_cast<double>(last_end - first_end) / (last_end - first), p);
    }
}

}  // namespace oomdx::snap
