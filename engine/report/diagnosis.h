// `oomdx diagnose` and `oomdx preflight`: one pipeline of named stages (engine/report/pipeline.h)
// gathers facts from every input given, estimates, runs the rule packs (Steps 0-4), plans,
// re-estimates each recommendation, and builds the report model that the renderers print.
#pragma once
#include <algorithm>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/fact_store.h"
#include "engine/estimator/config_diff.h"
#include "engine/estimator/estimate.h"
#include "engine/estimator/plan.h"
#include "engine/rules/inference.h"
#include "parsers/log/log_analysis.h"
#include "parsers/snapshot/compare.h"
#include "parsers/snapshot/snapshot_analysis.h"

namespace oomdx {

struct diagnosis_request {
    std::vector<std::string> logs;
    std::string config;
    std::string framework;
    std::string model;
    std::string device;
    std::int64_t world_size = 0;
    std::vector<std::string> sets;       // canonical key=value
    std::vector<std::string> snapshots;  // files or directories
    std::vector<std::string> rule_dirs;  // extra rule packs (added to the shipped ones)
    std::string baseline_config;         // a config that ran fine: say what moved the peak
    bool plan = false;                   // always search a plan (preflight --plan), not only when it does not fit
    plan_request plan_opts;
    bool preflight = false;
    std::string lang = "en";             // en | zh
    // Progress of reading large logs: file, bytes done, total (empty: silent).
    std::function<void(const std::string&, std::int64_t, std::int64_t)> log_progress;
};

struct report_evidence {
    std::string fact;
    std::string value;     // rendered
    std::string location;  // file:line, file@offset, rule id, producer
    std::string excerpt;
};

struct report_finding {
    std::string id;
    std::string rule_id;
    std::string step;
    std::string severity;
    std::string text;
    std::string rationale;
    std::vector<report_evidence> evidence;
    std::vector<std::string> how;  // derivation lines down to input provenance
};

struct report_recommendation {
    int rank = 0;
    std::string action;
    std::string rule_id;
    std::vector<override_value> overrides;
    std::vector<std::string> rendered;  // overrides in the job's own syntax, one line each
    std::string framework;
    std::string text;
    std::string rationale;
    std::string confidence = "medium";  // high | medium | low: how well the evidence supports it
    std::string confirm;                // what would confirm it or rule it out
    std::optional<std::int64_t> expected_peak_bytes;         // live tensors after the change
    std::optional<std::int64_t> expected_device_peak_bytes;  // reserved + runtime after the change
    // rev42: the interval's high end after the change, where preflight judges it (the verdict is that end's)
    std::optional<std::int64_t> expected_device_high_bytes;
    std::optional<bool> expected_fits;
    // cases77: no device given (no budget): the figure is shown, the verdict says the fit is not judged
    bool expected_budget_unknown = false;
    bool expected_capped = false;  // its device figure is the card's capacity (the cache model reached it, rev32)
    std::optional<std::int64_t> expected_host_bytes;  // host RAM per node its offload takes, when it changes
    std::string expected_host_sizing;                 // whose layout that figure follows (host_memory.h)
    std::optional<std::int64_t> anchored_device_peak_bytes;  // expected device peak anchored on a measurement
    std::optional<bool> anchored_fits;
    std::string expected_note;  // why no figure, or what the figure assumes
    std::vector<report_evidence> evidence;
};

// One measured figure against the estimate of the same statistic (rules/consistency.yaml).
struct report_consistency {
    std::string id;         // progress, oom_needed, oom_reserved, snapshot_peak
    std::string statistic;  // allocated | reserved | live_peak
    std::int64_t measured_bytes = 0;
    std::int64_t estimated_bytes = 0;
    double ratio = 0;
    std::string source;     // file:line of the measurement, or the snapshot
    std::string verdict;    // agree | measured_higher | measured_lower | not_above (a reading that is no peak: only higher is news)
    bool anchor = false;    // a peak the expected figures may be anchored on
};

// The measurement the expected figures are anchored on: expected after = the estimate's figure
// after the change + (measured - estimated), i.e. the measured peak minus the estimated saving.
struct report_anchor {
    std::string id;
    std::string source;
    std::string statistic;
    std::int64_t offset_bytes = 0;  // measured - estimated
    // Measured below the estimate: the estimate overstates the job, and the overstated part shrinks
    // with what a change leaves of the estimate (offset x live after / live before), so a large
    // saving never takes the anchored figure below zero.
    bool scaled = false;
    bool used = false;              // the report's verdicts use the anchored figures (the estimate disagrees)
    // The offset after a change that leaves `left` (after / before, of the estimate) of the estimate.
    std::int64_t offset_after(double left) const {
        if (!scaled || !(left > 0)) return offset_bytes;
        return static_cast<std::int64_t>(static_cast<double>(offset_bytes) * std::min(left, 1.0));
    }
    std::string why;
};

// A recommendation the rules made that the job cannot take as written (its framework has no
// setting for it, or the layout it gives fails the input checks).
// rev42: a recommendation's expected device figure, "21.64 GiB .. 22.59 GiB" where preflight judges an interval's high
// end ("" without a figure).
std::string expected_device_text(const report_recommendation& rec);
// The phrase key of a recommendation's verdict on its expected figure: fits, still over, or not judged (no device).
const char* rec_verdict_key(const report_recommendation& rec);

struct report_not_offered {
    std::string action;
    std::string rule_id;
    std::string why;
};

struct report_step {
    std::string step;
    std::string title;
    std::string why;
    std::string from_rule;
};

struct diagnosis_report {
    std::string mode = "diagnose";  // diagnose | preflight
    std::string lang = "en";        // the language of the texts (diagnosis_request::lang)
    std::string headline;
    std::string framework;
    std::vector<std::string> inputs;  // what was read, one line each
    std::optional<log_analysis> log;
    std::optional<estimate_result> estimate;
    std::vector<snap::snapshot_analysis> snapshots;
    std::optional<snap::trend_result> trend;
    std::optional<snap::diff_result> diff;
    // The cross-rank view: of merged summaries (oomdx snapshot merge) and the other snapshots given,
    // or of several snapshots the rules call ranks of one moment (snapshot.files.relation, rev37).
    std::optional<snap::rank_table> ranks;
    bool snapshots_merged = false;  // merged summaries were among the snapshots
    std::optional<config_diff> baseline_diff;  // --baseline-config against the job's config
    std::optional<plan_answer> plan;           // when the configuration does not fit (or --plan)
    std::optional<fit_limits> limits;          // largest micro-batch and sequence that fit (diagnose: only when over)
    // rev35: the job's own names for the micro-batch and the sequence length ("" = unknown: generic words)
    std::string micro_batch_key, seq_len_key;
    // rev35: framework defaults the estimate applied where the config is silent, as "key=value" in the job's keys
    std::vector<std::string> applied_defaults;
    std::string applied_defaults_source;  // rev39: where those defaults are written (the adapter's file)
    bool straddles_budget = false;             // the estimate's interval straddles the budget
    fact_store facts;
    inference_result inference;
    std::vector<report_step> route;
    std::vector<report_finding> findings;
    std::vector<report_recommendation> recommendations;
    std::vector<report_not_offered> not_offered;
    std::vector<report_consistency> consistency;
    std::optional<report_anchor> anchor;
    std::vector<std::string> next_steps;
    std::vector<std::string> uncertain;
    std::vector<std::pair<std::string, std::string>> contradictions;  // rule pairs (a pack defect; tests require none)
    int exit_code = 0;  // preflight: 1 when the estimate does not fit
    std::vector<std::pair<std::string, double>> stage_seconds;  // pipeline stages, in order

    explicit diagnosis_report(const vocabulary* v) : facts(v) {}
};

diagnosis_report run_diagnosis(const diagnosis_request& req);

// The route as a reader sees it: one entry per step, in the method's order (step ids sort as the steps do), with
// the reasons of every rule that routed there (rev23: "Step 4" was listed once per rule). JSON keeps each entry.
struct route_group {
    std::string step;
    std::string title;
    std::vector<std::string> whys;
    // rev33: the first reason without its "Step N: " prefix (the step that sent the job here), so a line reads
    // "Step 1: title (sent by Step 0) - reason", not "Step 1: title: Step 0: reason"; `from` is empty where the
    // reason names no step or names the line's own step.
    std::string from;
    std::string first;
};
std::vector<route_group> grouped_route(const std::vector<report_step>& route);

}  // namespace oomdx
