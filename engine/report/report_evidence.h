// A fact as the report quotes it: name, rendered value, location and the input excerpt.
#pragma once

#include "engine/core/fact_store.h"
#include "engine/report/diagnosis.h"

namespace oomdx {

report_evidence evidence_of(const fact_store& facts, int fact_id);

}  // namespace oomdx
