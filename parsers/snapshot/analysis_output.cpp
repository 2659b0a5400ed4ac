// Rendering of one analysis: JSON (oomdx.snapshot/1), text/markdown, and facts.
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "parsers/snapshot/analysis_report.h"
#include "parsers/snapshot/compare.h"
#include "parsers/snapshot/snapshot_analysis.h"

namespace oomdx::snap {

namespace {

using nlohmann::json;

json opt_int(std::int64_t v) { return v < 0 ? json(nullptr) : json(v); }

constexpr std::size_t k_json_phases = 200;   // phases kept in the JSON (first and last halves)
constexpr std::size_t k_json_actions = 256;  // distinct actions listed

json sites_json(const std::vector<site_total>& v, std::size_t limit) {
    json a = json::array();
    for (std::size_t i = 0; i < v.size() && i < limit; ++i) {
        const auto& s = v[i];
        a.push_back({{"site", s.site}, {"file", s.file}, {"line", s.line}, {"function", s.function},
                     {"category", s.category}, {"bytes", s.bytes}, {"blocks", s.blocks},
                     {"share", s.share}});
    }
    return a;
}

json cats_json(const std::vector<category_total>& v) {
    json a = json::array();
    for (const auto& c : v)
        a.push_back({{"name", c.name}, {"bytes", c.bytes}, {"blocks", c.blocks}, {"share", c.share}});
    return a;
}

json device_json(const device_analysis& d, int top) {
    json j;
    j["device"] = d.device;
    j["segments"] = d.segments;
    j["blocks"] = d.blocks;
    j["large_segments"] = d.large_segments;
    j["small_segments"] = d.small_segments;
    j["expandable_segments"] = d.expandable_segments;
    j["private_pool_segments"] = d.private_pool_segments;
    j["reserved_bytes"] = d.reserved_bytes;
    j["allocated_bytes"] = d.allocated_bytes;
    j["active_bytes"] = d.active_bytes;
    j["pending_free_bytes"] = d.pending_free_bytes;
    j["inactive_bytes"] = d.inactive_bytes;
    j["requested_bytes"] = d.requested_bytes;
    j["rounding_bytes"] = d.rounding_bytes;
    j["allocated_blocks"] = d.allocated_blocks;
    j["pending_free_blocks"] = d.pending_free_blocks;
    j["inactive_blocks"] = d.inactive_blocks;
    j["largest_inactive_block_bytes"] = d.largest_inactive_block_bytes;
    j["largest_allocated_block_bytes"] = d.largest_allocated_block_bytes;
    j["free_blocks"] = d.free_blocks;
    j["small_free_blocks"] = d.small_free_blocks;
    j["small_free_block_share"] = d.small_free_block_share;
    j["fragmentation_rate"] = d.fragmentation_rate;
    j["fragmentation_level"] = d.fragmentation_level;
    j["trace_entries"] = d.trace_entries;
    json acts = json::object();
    for (std::size_t i = 0; i < d.actions.size() && i < k_json_actions; ++i) acts[d.actions[i].first] = d.actions[i].second;
    j["actions"] = std::move(acts);
    j["has_trace"] = d.has_trace;
    j["initial_active_bytes"] = d.initial_active_bytes;
    j["peak_bytes"] = d.peak_bytes;
    j["peak_index"] = opt_int(d.peak_index);
    j["peak_time_us"] = opt_int(d.peak_time_us);
    j["peak_reserved_bytes"] = d.peak_reserved_bytes;
    json ooms = json::array();
    for (const auto& o : d.ooms) {
        json h = json::array();
        for (const auto& s : o.holders) h.push_back({{"site", s.site}, {"bytes", s.bytes}, {"blocks", s.blocks}});
        ooms.push_back({{"trace_index", o.trace_index},
                        {"requested_bytes", o.requested_bytes},
                        {"device_free_bytes", opt_int(o.device_free_bytes)},
                        {"time_us", opt_int(o.time_us)},
                        {"live_bytes", o.live_bytes},
                        {"reserved_bytes", o.reserved_bytes},
                        {"inactive_bytes", opt_int(o.inactive_bytes)},
                        {"largest_inactive_block_bytes", opt_int(o.largest_inactive_block_bytes)},
                        {"fragmentation", o.fragmentation},
                        {"site", o.site},
                        {"category", o.category},
                        {"holders", std::move(h)}});
    }
    j["oom_count"] = d.oom_count;
    j["oom_events"] = ooms;
    j["categories"] = cats_json(d.categories);
    j["site_count"] = d.sites.size();
    j["top_sites"] = sites_json(d.sites, static_cast<std::size_t>(top));
    j["peak_categories"] = cats_json(d.peak_categories);
    j["peak_sites"] = sites_json(d.peak_sites, static_cast<std::size_t>(top));
    // A long trace has thousands of phases: the first and the last k_json_phases / 2 are kept,
    // so that a summary stays kilobytes whatever the trace (phases_total counts them all).
    json ph = json::array();
    const std::size_t np = d.phases.size(), half = k_json_phases / 2;
    for (std::size_t i = 0; i < np; ++i) {
        if (np > k_json_phases && i >= half && i < np - half) continue;
        const auto& p = d.phases[i];
        // Keys set one by one: an initializer list builds a [key, value] array per key and
        // then the object from them, ~10 k instructions a phase (docs/snapshot.md snap37).
        json o(json::value_t::object);
        o["kind"] = p.kind;
        o["start_index"] = p.start_index;
        o["end_index"] = p.end_index;
        o["start_bytes"] = p.start_bytes;
        o["end_bytes"] = p.end_bytes;
        o["start_time_us"] = opt_int(p.start_time_us);
        o["end_time_us"] = opt_int(p.end_time_us);
        ph.push_back(std::move(o));
    }
    j["phases"] = std::move(ph);
    j["phases_total"] = np;
    j["cycles"] = d.cycles;
    json tl = json::array();
    for (const auto& t : d.timeline)
        tl.push_back({{"start_index", t.start_index}, {"end_index", t.end_index}, {"allocs", t.allocs},
                      {"frees", t.frees}, {"alloc_bytes", t.alloc_bytes}, {"free_bytes", t.free_bytes},
                      {"live_end_bytes", t.live_end_bytes}, {"max_pending_bytes", t.max_pending_bytes},
                      {"label", t.label}});
    j["timeline"] = std::move(tl);
    const auto& pf = d.pending;
    j["pending_free"] = {{"free_requested", pf.free_requested}, {"free_completed", pf.free_completed},
                         {"immediate", pf.immediate}, {"deferred", pf.deferred},
                         {"max_pending_bytes", pf.max_pending_bytes},
                         {"max_pending_index", opt_int(pf.max_pending_index)},
                         {"max_delay_events", pf.max_delay_events}, {"max_delay_us", opt_int(pf.max_delay_us)},
                         {"unmatched_frees", pf.unmatched_frees}};
    j["end_live_recorded_bytes"] = d.end_live_recorded_bytes;
    j["end_other_unknown_share"] = d.end_other_unknown_share;
    j["non_pytorch_gap_bytes"] = opt_int(d.non_pytorch_gap_bytes);
    json pats = json::array();
    for (const auto& p : d.patterns)
        pats.push_back({{"name", p.name}, {"leak", p.leak}, {"expected", p.expected},
                        {"confidence", p.confidence}, {"summary", p.summary}, {"evidence", p.evidence}});
    j["patterns"] = std::move(pats);
    j["leak_suspected"] = d.leak_suspected;
    j["inconsistencies"] = d.inconsistencies;
    const auto& m = d.measures;
    j["measures"] = {{"growth_phases", m.growth_phases},
                     {"release_phases", m.release_phases},
                     {"last_phase", m.last_phase},
                     {"gradient_allocs", m.gradient_allocs},
                     {"steps_from_cycles", m.steps_from_cycles},
                     {"retention_forward_sites", m.retention_forward_sites},
                     {"retention_other_sites", m.retention_other_sites},
                     {"retention_forward_bytes", m.retention_forward_bytes},
                     {"retention_other_bytes", m.retention_other_bytes},
                     {"retention_max_steps", m.retention_max_steps},
                     {"optimizer_alloc_bytes", m.optimizer_alloc_bytes},
                     {"optimizer_allocs", m.optimizer_allocs},
                     {"optimizer_first_burst_bytes", m.optimizer_first_burst_bytes},
                     {"growth_alloc_bytes", m.growth_alloc_bytes},
                     {"growth_forward_bytes", m.growth_forward_bytes},
                     {"range_bytes", m.range_bytes},
                     {"forward_live_max_bytes", m.forward_live_max_bytes},
                     {"peak_forward_bytes", m.peak_forward_bytes},
                     {"fsdp_frames", m.fsdp_frames},
                     {"ddp_frames", m.ddp_frames},
                     {"stack_frames", m.stack_frames},
                     {"backward_frames", m.backward_frames},
                     {"optimizer_frames", m.optimizer_frames},
                     {"generate_frames", m.generate_frames},
                     {"bulk_free_blocks", m.bulk_free_blocks},
                     {"bulk_free_bytes", m.bulk_free_bytes},
                     {"bulk_free_steps", m.bulk_free_steps},
                     {"bulk_free_index", m.bulk_free_index},
                     {"oom_fragmented_events", m.oom_fragmented_events}};
    return j;
}

}  // namespace

nlohmann::json to_json_body(const snapshot_analysis& a, int top) {
    json j;
    j["file"] = a.file;
    j["rank"] = opt_int(a.rank);
    j["format"] = a.info.format;
    j["pickle_protocol"] = a.info.pickle_protocol;
    j["producer"] = a.info.producer;
    j["era"] = a.info.era;
    j["file_bytes"] = a.info.file_bytes;
    j["alloc_conf"] = a.alloc_conf;
    j["expandable_segments"] = a.expandable_segments;
    j["device_capacity_bytes"] = a.device_capacity_bytes > 0 ? json(a.device_capacity_bytes) : json(nullptr);
    j["category_names"] = a.category_names;
    j["primary_device"] = a.primary >= 0 ? json(a.devices[a.primary].device) : json(nullptr);
    json devs = json::array();
    for (const auto& d : a.devices) devs.push_back(device_json(d, top));
    j["devices"] = std::move(devs);
    j["warnings"] = a.warnings;
    // What the cross-rank view reads of this file, in one place near the start of the document
    // (keys are written in alphabetical order): a merge of thousands of summaries stops there.
    const rank_row r = rank_row_of(a, a.rank);
    j["cross_rank"] = {{"rank", opt_int(a.rank)},
                       {"file", r.file},
                       {"device", r.device},
                       {"peak_bytes", r.peak},
                       {"allocated_bytes", r.live},
                       {"reserved_bytes", r.reserved},
                       {"inactive_bytes", r.inactive},
                       {"fragmentation_rate", r.fragmentation},
                       {"oom_events", r.oom_events},
                       {"first_oom_time_us", opt_int(r.first_oom_time_us)},
                       {"top_site", r.top_site},
                       {"top_category", r.top_category}};
    return j;
}

nlohmann::json to_json(const snapshot_analysis& a, int top) {
    json j = to_json_body(a, top);  // the body has neither key; no copy of it (update copies)
    j["schema"] = "oomdx.snapshot/1";
    j["kind"] = "analysis";
    return j;
}

// ---- facts -------------------------------------------------------------------------------------

void emit_facts(const snapshot_analysis& a, fact_sink& sink) { emit_analysis_facts(a, sink, 1); }

void emit_analysis_facts(const snapshot_analysis& a, fact_sink& sink, std::int64_t count) {
    emit_device_facts(a, a.primary < 0 ? a.devices.size() : static_cast<std::size_t>(a.primary), sink, count);
}

// Measurements only: every verdict (levels, patterns, leak suspicion) is derived by the rule
// pack rules/evidence_snapshot.yaml. Facts about an OOM event (snapshot.oom.*) describe the
// last detailed OOM; the others, the final state (when the snapshot was written).
void emit_device_facts(const snapshot_analysis& a, std::size_t device, fact_sink& sink, std::int64_t count) {
    provenance p;
    p.producer = "snapshot";
    p.file = a.file;
    auto emit = [&](const char* name, value v, std::string excerpt = {}) {
        provenance q = p;
        q.excerpt = std::move(excerpt);
        sink.emit(name, std::move(v), std::move(q));
    };
    emit("snapshot.count", count);
    emit("snapshot.devices", static_cast<std::int64_t>(a.devices.size()));
    if (!a.alloc_conf.empty()) emit("snapshot.alloc_conf", a.alloc_conf, "PYTORCH_CUDA_ALLOC_CONF: " + a.alloc_conf);
    emit("snapshot.expandable_segments", a.expandable_segments);
    if (a.device_capacity_bytes > 0) emit("snapshot.device_capacity_bytes", a.device_capacity_bytes, "--capacity");
    if (device >= a.devices.size()) return;
    const device_analysis& d = a.devices[device];
    std::string seg_ex = fmt::format("device {}: {} segments, {} blocks", d.device, d.segments, d.blocks);
    emit("snapshot.device", d.device, seg_ex);
    emit("snapshot.segments", d.segments, seg_ex);
    emit("snapshot.blocks", d.blocks, seg_ex);
    emit("snapshot.trace_entries", d.trace_entries);
    emit("snapshot.reserved_bytes", d.reserved_bytes, "sum of segment total_size");
    emit("snapshot.allocated_bytes", d.allocated_bytes, "sum of active_allocated block sizes");
    emit("snapshot.active_bytes", d.active_bytes);
    emit("snapshot.inactive_bytes", d.inactive_bytes);
    emit("snapshot.pending_free_bytes", d.pending_free_bytes);
    emit("snapshot.requested_bytes", d.requested_bytes);
    emit("snapshot.peak_bytes", d.peak_bytes,
         d.has_trace ? fmt::format("trace entry {}", d.peak_index) : std::string("final state (no trace)"));
    emit("snapshot.peak_from_trace", d.has_trace);
    emit("snapshot.fragmentation_rate", d.fragmentation_rate,
         fmt::format("1 - {}/{}", d.allocated_bytes, d.reserved_bytes));
    emit("snapshot.largest_inactive_block_bytes", d.largest_inactive_block_bytes);
    emit("snapshot.small_free_block_share", d.small_free_block_share);
    auto share = [&](const char* cat) {
        for (const auto& c : d.categories)
            if (c.name == cat) return c.share;
        return 0.0;
    };
    emit("snapshot.activation_share", share("activation"));
    emit("snapshot.optimizer_share", share("optimizer_state"));
    emit("snapshot.gradient_share", share("gradient"));
    emit("snapshot.parameter_share", share("parameter"));
    emit("snapshot.communication_share", share("communication"));
    emit("snapshot.attention_share", share("attention"));
    emit("snapshot.moe_share", share("moe"));
    emit("snapshot.loss_share", share("loss"));
    emit("snapshot.other_share", share("other"));
    emit("snapshot.unknown_share", share("unknown"));
    if (d.has_trace) {
        // The same shares at the trace's peak, which the OOM or the step's high-water mark is.
        auto peak_share = [&](const char* cat) {
            for (const auto& c : d.peak_categories)
                if (c.name == cat) return c.share;
            return 0.0;
        };
        const std::string ex = fmt::format("at trace entry {} ({} bytes live)", d.peak_index, d.peak_bytes);
        static const std::pair<const char*, const char*> at_peak[] = {
            {"snapshot.peak.activation_share", "activation"}, {"snapshot.peak.optimizer_share", "optimizer_state"},
            {"snapshot.peak.gradient_share", "gradient"},     {"snapshot.peak.parameter_share", "parameter"},
            {"snapshot.peak.communication_share", "communication"}, {"snapshot.peak.attention_share", "attention"},
            {"snapshot.peak.other_share", "other"},
            {"snapshot.peak.unknown_share", "unknown"}};
        for (const auto& [name, cat] : at_peak) emit(name, peak_share(cat), ex);
    }
    if (!d.categories.empty() && d.categories.front().bytes > 0) {
        const std::string& top = d.categories.front().name;
        static const char* builtin[] = {"parameter", "gradient", "optimizer_state", "activation", "communication",
                                        "attention", "moe", "loss", "other", "unknown"};
        if (std::find(std::begin(builtin), std::end(builtin), top) != std::end(builtin))
            emit("snapshot.top_category", top);
    }
    emit("snapshot.oom_events", d.oom_count);
    if (!d.ooms.empty()) {
        const auto& o = d.ooms.back();
        std::string ex = fmt::format("oom at trace entry {}: size {}, device_free {}", o.trace_index,
                                     o.requested_bytes, o.device_free_bytes);
        // Kept under their first names for the packs that read them.
        emit("snapshot.oom_requested_bytes", o.requested_bytes, ex);
        if (o.device_free_bytes >= 0) emit("snapshot.oom_device_free_bytes", o.device_free_bytes, ex);
        if (o.largest_inactive_block_bytes >= 0)
            emit("snapshot.oom_largest_inactive_block_bytes", o.largest_inactive_block_bytes, ex);
        emit("snapshot.oom.trace_index", o.trace_index, ex);
        emit("snapshot.oom.requested_bytes", o.requested_bytes, ex);
        if (o.device_free_bytes >= 0) emit("snapshot.oom.device_free_bytes", o.device_free_bytes, ex);
        emit("snapshot.oom.live_bytes", o.live_bytes, ex);
        emit("snapshot.oom.reserved_bytes", o.reserved_bytes, ex);
        if (o.inactive_bytes >= 0) emit("snapshot.oom.inactive_bytes", o.inactive_bytes, ex);
        if (o.largest_inactive_block_bytes >= 0)
            emit("snapshot.oom.largest_inactive_block_bytes", o.largest_inactive_block_bytes, ex);
        if (!o.site.empty()) emit("snapshot.oom.site", o.site, ex);
        if (!o.category.empty()) emit("snapshot.oom.category", o.category, ex);
        emit("snapshot.oom.fragmented_events", d.measures.oom_fragmented_events,
             "OOM events whose request was larger than the largest cached block while the cache held as much");
    }
    if (d.non_pytorch_gap_bytes >= 0) emit("snapshot.non_pytorch_gap_bytes", d.non_pytorch_gap_bytes);
    const pattern_measures& m = d.measures;
    if (d.has_trace) {
        const std::string ex = fmt::format("{} phases, {} cycles", d.phases.size(), d.cycles);
        emit("snapshot.trace.growth_phases", m.growth_phases, ex);
        emit("snapshot.trace.release_phases", m.release_phases, ex);
        emit("snapshot.trace.cycles", d.cycles, ex);
        if (!m.last_phase.empty()) emit("snapshot.trace.last_phase", m.last_phase, ex);
        emit("snapshot.trace.gradient_allocs", m.gradient_allocs);
        emit("snapshot.trace.steps_from_cycles", m.steps_from_cycles, ex);
        emit("snapshot.trace.range_bytes", m.range_bytes);
        emit("snapshot.trace.initial_live_bytes", d.initial_active_bytes, "live when the trace starts (allocated before it)");
        emit("snapshot.trace.growth_alloc_bytes", m.growth_alloc_bytes);
        emit("snapshot.trace.growth_forward_bytes", m.growth_forward_bytes);
        emit("snapshot.trace.forward_live_max_bytes", m.forward_live_max_bytes);
        emit("snapshot.peak.forward_bytes", m.peak_forward_bytes);
        emit("snapshot.retention.forward_sites", m.retention_forward_sites);
        emit("snapshot.retention.other_sites", m.retention_other_sites);
        emit("snapshot.retention.forward_bytes", m.retention_forward_bytes);
        emit("snapshot.retention.other_bytes", m.retention_other_bytes);
        emit("snapshot.retention.max_steps", m.retention_max_steps);
        emit("snapshot.optimizer.alloc_bytes", m.optimizer_alloc_bytes);
        emit("snapshot.optimizer.allocs", m.optimizer_allocs);
        emit("snapshot.optimizer.first_burst_bytes", m.optimizer_first_burst_bytes);
        emit("snapshot.bulk_free.blocks", m.bulk_free_blocks,
             m.bulk_free_index >= 0 ? fmt::format("frees without allocation from trace entry {}", m.bulk_free_index) : "");
        emit("snapshot.bulk_free.bytes", m.bulk_free_bytes);
        emit("snapshot.bulk_free.steps", m.bulk_free_steps);
        emit("snapshot.end_live_recorded_bytes", d.end_live_recorded_bytes);
        emit("snapshot.end_other_unknown_share", d.end_other_unknown_share);
    }
    emit("snapshot.fsdp_frames", m.fsdp_frames);
    emit("snapshot.ddp_frames", m.ddp_frames);
    // rev28: only where the stacks hold Python frames; without them "no backward frame" says nothing
    if (m.stack_frames) {
        const char* ex = "Python frames of the live blocks' and recorded allocations' stacks";
        emit("snapshot.backward_frames", m.backward_frames, ex);
        emit("snapshot.optimizer_frames", m.optimizer_frames, ex);
        emit("snapshot.generate_frames", m.generate_frames, ex);
    }
    if (!d.sites.empty()) {
        emit("snapshot.top_site", d.sites.front().site);
        emit("snapshot.top_site_bytes", d.sites.front().bytes);
    }
}

}  // namespace oomdx::snap
