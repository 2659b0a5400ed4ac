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
    const translation_table* t = translations(lang);
    return t ? t->pick(key, en) : en;
}

const translation_table* rule_set::translations(const std::string& lang) const {
    if (auto it = i18n.find(lang); it != i18n.end()) return &it->second;
    if (!lazy_i18n) return nullptr;
    std::lock_guard<std::mutex> lock(lazy_i18n->mu);
    auto it = lazy_i18n->loaded.find(lang);
    if (it == lazy_i18n->loaded.end()) it = lazy_i18n->loaded.emplace(lang, lazy_i18n->load(lang)).first;
    return &it->second;
}

}  // namespace oomdx
