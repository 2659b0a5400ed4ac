// Step 0: one streaming pass over training logs (plain or .gz) that extracts the OOM source,
// sizes, device, rank, step, timing, framework and per-step memory, each with evidence.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/fact.h"
#include "parsers/log/log_analysis.h"

namespace oomdx {

struct log_options {
    std::string signatures_dir;  // default: data_path("knowledge/log_signatures")
    std::vector<std::string> extra_signature_dirs;
    // Called after each chunk: file, bytes read so far, total bytes of the file (compressed
    // position and size for .gz). Empty: no progress reporting.
    std::function<void(const std::string&, std::int64_t, std::int64_t)> progress;
    // Plain files over two chunks are split into line-aligned chunks prefiltered on `threads`
    // worker threads (0 = one per usable core, none when there is one; 1 = no workers); the result is the same.
    unsigned threads = 0;
    size_t chunk_bytes = size_t{1} << 20;
    // Device capacity for the forecast (`--device`); 0: what the log states, if anything.
    std::int64_t device_capacity_bytes = 0;
    // Where to add the prefilter threads' CPU time and count (`oomdx log --stats`); may be null.
    struct run_stats {
        std::int64_t worker_cpu_us = 0;
        unsigned workers = 0;
        std::int64_t bytes = 0;
    }* stats = nullptr;
};

// Throws input_error (exit 2) for unreadable files, corrupt or truncated gzip, bad signatures.
log_analysis analyze_logs(const std::vector<std::string>& paths, const log_options& opts = {});
log_analysis analyze_log_text(std::string_view text, const std::string& name,
                              const log_options& opts = {});

// Facts named in knowledge/facts/oom.yaml; provenance producer "log", file, line, excerpt.
void emit_facts(const log_analysis& a, fact_sink& sink);
// `"schema": "oomdx.log/1"`, documented in docs/log.md.
nlohmann::json to_json(const log_analysis& a);
// The forecast alone: its JSON object (`forecast` in oomdx.log/1 and oomdx.watch/1), its one
// text line, and its facts (log.forecast.*).
nlohmann::json forecast_json(const memory_forecast& f);
std::string forecast_line(const memory_forecast& f);
void emit_forecast_facts(const memory_forecast& f, fact_sink& sink, const provenance& p);
std::string render_text(const log_analysis& a, bool markdown, bool color);

}  // namespace oomdx
