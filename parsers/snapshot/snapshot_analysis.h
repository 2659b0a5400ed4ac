// Analysis of one allocator snapshot: overview per device, categories, allocation sites,
// trace replay (peak, phases, pending frees, OOM events) and the method's named patterns.
// Fields are documented in docs/snapshot-analysis.md (JSON schema oomdx.snapshot/1).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/fact.h"
#include "parsers/snapshot/categories.h"
#include "parsers/snapshot/snapshot_model.h"

namespace oomdx::snap {

struct analysis_options {
    int top = 10;                             // sites listed in reports and per OOM
    const category_rules* rules = nullptr;    // nullptr: knowledge/snapshot_categories.yaml
    std::int64_t device_capacity_bytes = 0;   // 0: unknown (non-PyTorch gap not computed)
    std::int64_t max_detailed_ooms = 32;      // OOM events with holders and free-block replay
    // Loading progress of one file (bytes read, file size); used by analyze_file. Empty: silent.
    std::function<void(std::size_t, std::size_t)> load_progress;
    // One file, and the process ends after its report (`oomdx snapshot FILE`): the snapshot model
    // is left to the process's exit instead of freed after the analysis (docs/snapshot.md, snap32).
    // analyze_files honours it for a single file only.
    bool leave_input_to_exit = false;
};

struct category_total {
    std::string name;
    std::int64_t bytes = 0;
    std::int64_t blocks = 0;
    double share = 0;  // of live (active_allocated) bytes
};

struct site_total {
    std::string site;      // "file:line:function" of the first user frame, or "<no stack>"
    std::string file;
    std::int64_t line = 0;
    std::string function;
    std::string category;  // category of the largest block at the site
    std::int64_t bytes = 0;
    std::int64_t blocks = 0;
    double share = 0;      // of live bytes
};

// A leg of the live-bytes curve between two turning points (hysteresis 10% of the range).
struct phase {
    std::string kind;  // growth | release
    std::int64_t start_index = 0, end_index = 0;
    std::int64_t start_bytes = 0, end_bytes = 0;
    std::int64_t start_time_us = -1, end_time_us = -1;
};

// One slice of the trace (the trace is cut into up to 16 equal slices).
struct timeline_slice {
    std::int64_t start_index = 0, end_index = 0;
    std::int64_t allocs = 0, frees = 0;  // alloc / free_completed events
    std::int64_t alloc_bytes = 0, free_bytes = 0;
    std::int64_t live_end_bytes = 0;
    std::int64_t max_pending_bytes = 0;
    std::string label;  // growth | release | steady (cannbot: 1.5x rule on event counts)
};

struct pending_free_stats {
    std::int64_t free_requested = 0, free_completed = 0;
    std::int64_t immediate = 0;  // completed right after its request
    std::int64_t deferred = 0;   // completed later (other streams / events)
    std::int64_t max_pending_bytes = 0, max_pending_index = -1;
    std::int64_t max_delay_events = 0, max_delay_us = -1;
    std::int64_t unmatched_frees = 0;  // frees of allocations made before the trace
};

struct oom_event {
    std::int64_t trace_index = 0;
    std::int64_t requested_bytes = 0;
    std::int64_t device_free_bytes = -1;
    std::int64_t time_us = -1;
    std::int64_t live_bytes = 0;           // active bytes (replayed) at the event
    std::int64_t reserved_bytes = 0;       // reserved (replayed) at the event
    std::int64_t inactive_bytes = -1;      // -1 when the free-block replay was not possible
    std::int64_t largest_inactive_block_bytes = -1;
    std::string site;                      // first user frame of the failing request
    std::string category;
    bool fragmentation = false;            // request > largest inactive < total inactive
    std::vector<site_total> holders;       // sites live at the event, largest first
};

struct pattern {
    std::string name;     // retained_graph, growing_container, optimizer_first_step_spike, ...
    bool leak = false;    // counts as a leak / retention problem
    bool expected = false;  // expected retention, explicitly not a leak
    std::string confidence;  // high | medium | low
    std::string summary;
    std::vector<std::string> evidence;
};

// What a pattern would say, described from the measurements; the rule pack decides whether it
// applies and with what confidence (rules/evidence_snapshot.yaml). `variant` tells texts of
// the same pattern apart: growing_container "all_sites" | "other_sites" (when retained_graph
// applies, its forward sites are not repeated); activation_sawtooth "" | "peak_elsewhere";
// optimizer_first_step_spike "" | "no_trace".
struct pattern_candidate {
    pattern p;
    std::string variant;
};

// Measurements behind the patterns (facts snapshot.trace.*, snapshot.retention.*, ...).
// "Steps" are the growth/release cycles of the trace, or 16 slices of it with fewer than 3.
struct pattern_measures {
    std::int64_t growth_phases = 0, release_phases = 0;
    std::string last_phase;             // growth | release | "" (no phase)
    std::int64_t gradient_allocs = 0;   // allocations attributed to gradients: backward seen
    bool steps_from_cycles = false;
    // Sites whose blocks still live at the end of the trace were allocated in >= 3 different
    // steps (and >= 3 blocks): forward-pass sites (activation, attention, loss, moe) and others.
    std::int64_t retention_forward_sites = 0, retention_other_sites = 0;
    std::int64_t retention_forward_bytes = 0, retention_other_bytes = 0;
    std::int64_t retention_max_steps = 0;
    std::int64_t optimizer_alloc_bytes = 0, optimizer_allocs = 0, optimizer_first_burst_bytes = 0;
    std::int64_t growth_alloc_bytes = 0, growth_forward_bytes = 0;  // allocated during growth legs
    std::int64_t range_bytes = 0;            // max - min of the live curve
    std::int64_t forward_live_max_bytes = 0; // most forward-pass bytes live at once
    std::int64_t peak_forward_bytes = 0;     // forward-pass bytes live at the peak
    bool fsdp_frames = false, ddp_frames = false;
    // rev28: what the stacks of live blocks and recorded allocations show (stack_frames: any Python frame at all,
    // so that "no backward frame" means something): autograd's backward, an optimizer step, a generation loop
    bool stack_frames = false, backward_frames = false, optimizer_frames = false, generate_frames = false;
    std::int64_t bulk_free_blocks = 0, bulk_free_bytes = 0, bulk_free_steps = 0, bulk_free_index = -1;
    std::int64_t oom_fragmented_events = 0;  // request > largest cached block, cache >= request
};

struct device_analysis {
    std::int64_t device = 0;
    // Overview: exact byte sums over blocks of this device's segments.
    std::int64_t segments = 0, blocks = 0;
    std::int64_t large_segments = 0, small_segments = 0, expandable_segments = 0;
    std::int64_t private_pool_segments = 0;
    std::int64_t reserved_bytes = 0;    // sum of segment total_size
    std::int64_t allocated_bytes = 0;   // active_allocated blocks
    std::int64_t active_bytes = 0;      // allocated + pending free
    std::int64_t pending_free_bytes = 0;  // active_pending_free / active_awaiting_free
    std::int64_t inactive_bytes = 0;    // inactive blocks (cached, reusable)
    std::int64_t requested_bytes = 0;   // requested_size of active_allocated blocks
    std::int64_t rounding_bytes = 0;    // allocated - requested
    std::int64_t allocated_blocks = 0, pending_free_blocks = 0, inactive_blocks = 0;
    std::int64_t largest_inactive_block_bytes = 0;
    std::int64_t largest_allocated_block_bytes = 0;
    std::int64_t small_free_blocks = 0;  // free (inactive or pending) blocks < 1 MiB
    std::int64_t free_blocks = 0;
    double small_free_block_share = 0;   // by count
    double fragmentation_rate = 0;       // 1 - allocated/reserved
    std::string fragmentation_level;     // normal | slight | high | severe (a verdict of the rules)
    std::vector<std::string> inconsistencies;  // segment fields that disagree with block sums

    std::vector<category_total> categories;  // live memory by category, all categories
    std::vector<site_total> sites;           // all sites, largest first

    // Trace replay.
    std::int64_t trace_entries = 0;
    std::vector<std::pair<std::string, std::int64_t>> actions;  // count per action, file order
    bool has_trace = false;       // at least one alloc/free event
    bool has_time = false;
    std::int64_t trace_first_time_us = -1, trace_last_time_us = -1;  // the trace's time range, -1 unknown
    std::int64_t initial_active_bytes = 0;   // allocated before the trace started
    std::int64_t peak_bytes = 0;             // peak active bytes (final active without a trace)
    std::int64_t peak_index = -1;
    std::int64_t peak_time_us = -1;
    std::int64_t peak_reserved_bytes = 0;
    std::vector<category_total> peak_categories;  // share = of peak bytes
    std::vector<site_total> peak_sites;
    std::vector<phase> phases;
    std::int64_t cycles = 0;                 // growth legs followed by a release
    std::vector<timeline_slice> timeline;
    pending_free_stats pending;
    std::int64_t oom_count = 0;
    std::vector<oom_event> ooms;
    std::int64_t end_live_recorded_bytes = 0;  // allocated in the trace, still live at its end
    double end_other_unknown_share = 0;        // cannbot leak heuristic input
    std::int64_t non_pytorch_gap_bytes = -1;   // capacity - device_free - reserved at the OOM

    // Verdicts, written by the rule pack's evidence step (engine/report/snapshot_verdicts.h):
    // fragmentation_level above, the patterns that apply, leak_suspected, headline_at_peak.
    pattern_measures measures;
    std::vector<pattern_candidate> pattern_candidates;  // not in the JSON
    std::vector<pattern> patterns;
    bool leak_suspected = false;
    bool headline_at_peak = false;  // the text's main finding names the trace's peak before the dump
};

struct snapshot_analysis {
    std::string file;
    std::int64_t rank = -1;                  // from --rank, the file name or the path; -1: unknown
    snapshot_info info;
    std::string alloc_conf;                  // allocator_settings.PYTORCH_CUDA_ALLOC_CONF
    bool expandable_segments = false;
    std::int64_t device_capacity_bytes = 0;
    std::vector<std::string> category_names;
    std::vector<device_analysis> devices;    // sorted by device index
    int primary = -1;                        // index in devices: largest reserved (then peak)
    std::vector<std::string> warnings;
};

snapshot_analysis analyze(const snapshot& s, const analysis_options& opt = {});

// Facts for the rule engine (producer "snapshot"), from the primary device: measurements only.
void emit_facts(const snapshot_analysis& a, fact_sink& sink);
// The same for one device (index into a.devices), with snapshot.count = count.
void emit_device_facts(const snapshot_analysis& a, std::size_t device, fact_sink& sink, std::int64_t count = 1);

nlohmann::json to_json(const snapshot_analysis& a, int top = 10);
// `lang`: the report language of the texts (report_writer::set_lang).
std::string render_text(const snapshot_analysis& a, bool markdown, bool color, int top = 10, const std::string& lang = "en");

}  // namespace oomdx::snap
