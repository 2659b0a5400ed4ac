// Several snapshots at once: expand directories, load and analyze files on all cores, and
// emit the facts of a set (for `diagnose --snapshot A --snapshot B ...`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/core/fact.h"
#include "parsers/snapshot/snapshot_analysis.h"

namespace oomdx::snap {

// Files of the given paths; a directory contributes its *.pickle and *.pkl files (sorted), or its
// *.json files when it has no pickle.
// Throws input_error for a missing path or an empty directory.
std::vector<std::string> expand_snapshot_inputs(const std::vector<std::string>& paths);

// Loads and analyzes one file (the snapshot model is dropped after the analysis).
snapshot_analysis analyze_file(const std::string& path, const analysis_options& opt = {});

// Analyzes files in parallel (jobs = 0: all cores); results keep the order of `files`.
// `progress(done, total)` is called from worker threads under a lock when given.
// The first failing file's input_error is rethrown after all workers stop.
std::vector<snapshot_analysis> analyze_files(const std::vector<std::string>& files,
                                             const analysis_options& opt, unsigned jobs = 0,
                                             const std::function<void(std::size_t, std::size_t)>& progress = {});

// Facts of a set: per-snapshot facts from the file with the largest peak, snapshot.count = n,
// rank facts when n >= 2, trend facts (in the given order) when as_trend and n >= 3.
void emit_facts(const std::vector<snapshot_analysis>& v, fact_sink& sink, bool as_trend = false);

}  // namespace oomdx::snap
