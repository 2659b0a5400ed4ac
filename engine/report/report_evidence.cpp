#include "engine/report/report_evidence.h"

#include "engine/core/utf8.h"
#include "engine/core/vocabulary.h"

namespace oomdx {

report_evidence evidence_of(const fact_store& facts, int fact_id) {
    report_evidence e;
    const fact* f = facts.by_id(fact_id);
    if (!f) return e;
    e.fact = f->name;
    const vocabulary* v = facts.vocab();
    const fact_decl* d = v ? v->find(f->name) : nullptr;
    e.value = f->val.is_string() ? f->val.as_string() : render_value(f->val, d);
    e.location = f->prov.location();
    e.excerpt = f->prov.excerpt.size() > 240 ? std::string(utf8_prefix(f->prov.excerpt, 237)) + "..." : f->prov.excerpt;
    return e;
}

}  // namespace oomdx
