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

std::string rule_set::text(const std::string& lang, const std::string& key, const std::string& en) const {
    if (lang == "en") return en;
    auto it = i18n.find(lang);
    return it == i18n.end() ? en : it->second.pick(key, en);
}

}  // namespace oomdx
