// Stage `estimate`: the static estimate, when the model's dimensions are known.
#include "engine/report/pipeline.h"

namespace oomdx {

void stage_estimate(pipeline_state& s) {
    fact_store& facts = s.rep.facts;
    if (!facts.has("model.hidden_size") || !facts.has("model.num_layers")) return;
    s.rep.estimate = estimate(from_facts(facts));
    emit_facts(*s.rep.estimate, facts);
}

}  // namespace oomdx
