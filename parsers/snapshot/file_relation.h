// Several snapshots given together: what the files say about how they relate (measurements
// only; rules/evidence_snapshot.yaml decides whether they are ranks of one moment or one
// rank at several moments, snapshot.files.relation).
#pragma once

#include <vector>

#include "engine/core/fact.h"
#include "parsers/snapshot/snapshot_analysis.h"

namespace oomdx::snap {

// snapshot.files.{count, distinct_rank_words, distinct_devices, oom_files, timed,
// end_spread_share}: the rank words of the file names, the primary devices, the files with an
// OOM event, and where every trace has times, how far apart the traces end as a share of the
// time they cover together.
void emit_relation_facts(const std::vector<snapshot_analysis>& v, fact_sink& sink);

}  // namespace oomdx::snap
