#include "engine/report/report_consistency.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/report/report_phrases.h"

namespace oomdx {

namespace {

const fact* member(const fact_store& facts, const std::string& id, const char* name) {
    return facts.get(fmt::format("consistency.{}.{}", id, name));
}

std::int64_t bytes_of(const fact* f) {
    if (!f) return 0;
    return f->val.is_integer() ? f->val.as_integer() : static_cast<std::int64_t>(f->val.as_number());
}

}  // namespace

void collect_consistency(diagnosis_report& rep) {
    const fact_store& facts = rep.facts;
    // Comparisons in the order their verdicts were asserted (the rules' salience order).
    std::vector<const fact*> verdicts;
    for (const fact* f : facts.current())
        if (f->name.rfind("consistency.", 0) == 0 && f->name.ends_with(".verdict")) verdicts.push_back(f);
    std::sort(verdicts.begin(), verdicts.end(), [](const fact* a, const fact* b) { return a->id < b->id; });
    for (const fact* v : verdicts) {
        report_consistency c;
        c.id = v->name.substr(12, v->name.size() - 12 - 8);
        c.verdict = v->val.as_string();
        if (const fact* s = member(facts, c.id, "statistic")) c.statistic = s->val.as_string();
        c.measured_bytes = bytes_of(member(facts, c.id, "measured_bytes"));
        c.estimated_bytes = bytes_of(member(facts, c.id, "estimated_bytes"));
        if (const fact* r = member(facts, c.id, "ratio")) c.ratio = r->val.as_number();
        if (const fact* a = member(facts, c.id, "anchor")) c.anchor = a->val.is_bool() && a->val.as_bool();
        if (const fact* src = member(facts, c.id, "source_fact"))
            if (const fact* in = facts.get(src->val.as_string())) c.source = in->prov.location();
        rep.consistency.push_back(std::move(c));
    }
    for (const auto& c : rep.consistency) {
        if (!c.anchor || c.estimated_bytes <= 0) continue;
        report_anchor a;
        a.id = c.id;
        a.source = c.source;
        a.statistic = c.statistic;
        a.offset_bytes = c.measured_bytes - c.estimated_bytes;
        a.scaled = a.offset_bytes < 0;
        a.used = c.verdict != "agree";
        a.why = phrase(rep.lang, a.used ? (a.scaled ? "report.anchor.used_lower" : "report.anchor.used") : "report.anchor.agrees",
                       {{"statistic", value_phrase(rep.lang, "statistic", c.statistic)},
                        {"measured", format_bytes(c.measured_bytes)},
                        {"ratio", fmt::format("{:.2f}", c.ratio)}});
        rep.anchor = a;
        break;
    }
}

}  // namespace oomdx
