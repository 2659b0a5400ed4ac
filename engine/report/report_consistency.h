// The comparisons of rules/consistency.yaml as the report shows them (consistency.<id>.* facts),
// and the anchor for the expected figures: the first comparison that measured a peak.
#pragma once

#include "engine/report/diagnosis.h"

namespace oomdx {

void collect_consistency(diagnosis_report& rep);

}  // namespace oomdx
