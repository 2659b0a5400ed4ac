// The snapshot analysis measures; the rule packs' `evidence` step decides (levels, patterns,
// leak suspicion, trend verdict, outlier rank: rules/evidence_snapshot.yaml). These functions
// run that step on the facts of each analysed device, file set or trend and write the verdicts
// back into the analysis, so that every renderer (`oomdx snapshot`, the diagnosis report)
// shows the rules' decisions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/core/fact_store.h"
#include "engine/rules/inference.h"
#include "engine/rules/rule_loader.h"
#include "engine/rules/rule_set.h"
#include "parsers/snapshot/compare.h"
#include "parsers/snapshot/snapshot_analysis.h"

namespace oomdx {

// The shipped evidence rules that can fire on a snapshot's facts (snap::fact_prefixes, rule_scope.h):
// on those facts they decide what the whole evidence set decides.
const rule_set& shipped_snapshot_rules();
// Those, or the shipped packs plus site packs from `dirs` (held in `holder`, all of their rules);
// throws input_error listing the errors when a pack does not load.
const rule_set& rules_with(const std::vector<std::string>& dirs, std::optional<load_result>& holder);

// The evidence step alone over `facts` (derived facts are added to them).
inference_result run_evidence(const rule_set& rules, fact_store& facts);

// Per device: fragmentation_level, patterns (from the measured candidates, with the rules'
// confidence) and leak_suspected.
void apply_snapshot_verdicts(snap::snapshot_analysis& a, const rule_set& rules);
void apply_snapshot_verdicts(std::vector<snap::snapshot_analysis>& v, const rule_set& rules);
// monotonic_growth, verdict and its explanation.
void apply_snapshot_verdicts(snap::trend_result& t, const rule_set& rules);
// The outlier rank.
void apply_snapshot_verdicts(snap::rank_table& t, const rule_set& rules);
// Several snapshots: "ranks" (of one moment) or "timeline" (one rank at several moments).
std::string snapshot_files_relation(const std::vector<snap::snapshot_analysis>& v, const rule_set& rules);

}  // namespace oomdx
