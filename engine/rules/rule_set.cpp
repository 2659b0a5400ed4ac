#include "engine/rules/rule_set.h"

namespace oomdx {

const step_def* rule_set::step(const std::string& id) const {
    for (const auto& s : steps)
        if (s.id == id) return &s;
    return nullptr;
}

const rule_def* rule_set::rule(const std::string& id) const {
    for (const auto& r : rules)
        if (r->id == id) return r.get();
    return nullptr;
}

}  // namespace oomdx
