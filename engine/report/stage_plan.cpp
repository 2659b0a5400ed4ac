// Stage `plan`: when the configuration does not fit, a combination of overrides that does.
#include "engine/report/pipeline.h"

namespace oomdx {

void stage_plan(pipeline_state&) {}

}  // namespace oomdx
