// Stage `estimate`: the static estimate of a training step, when the model's dimensions are known
// and the config trains (job.trains is false for an evaluation- or prediction-only config).
#include "engine/report/pipeline.h"

namespace oomdx {

void stage_estimate(pipeline_state& s) {
    fact_store& facts = s.rep.facts;
    if (!facts.has("model.hidden_size") || !facts.has("model.num_layers")) return;
    if (facts.boolean("job.trains") == std::optional<bool>(false)) return;
    s.rep.estimate = estimate(from_facts(facts));
    emit_facts(*s.rep.estimate, facts);
}

}  // namespace oomdx
