#include "engine/core/fact_store.h"

#include <stdexcept>

#include "engine/core/vocabulary.h"

namespace oomdx {

void fact_store::emit(fact f) {
    if (m_vocab) m_vocab->check(f.name, f.val);
    f.id = static_cast<int>(m_history.size());
    m_current[f.name] = f.id;
    m_history.push_back(std::move(f));
}

const fact* fact_store::get(const std::string& name) const {
    auto it = m_current.find(name);
    return it == m_current.end() ? nullptr : &m_history[it->second];
}

const fact* fact_store::by_id(int id) const {
    if (id < 0 || id >= static_cast<int>(m_history.size())) return nullptr;
    return &m_history[id];
}

std::optional<std::int64_t> fact_store::integer(const std::string& name) const {
    const fact* f = get(name);
    if (!f) return std::nullopt;
    if (f->val.is_integer()) return f->val.as_integer();
    if (f->val.is_number()) return static_cast<std::int64_t>(f->val.as_number());
    return std::nullopt;
}

std::optional<double> fact_store::number(const std::string& name) const {
    const fact* f = get(name);
    if (!f || !f->val.is_numeric()) return std::nullopt;
    return f->val.as_number();
}

std::optional<bool> fact_store::boolean(const std::string& name) const {
    const fact* f = get(name);
    if (!f || !f->val.is_bool()) return std::nullopt;
    return f->val.as_bool();
}

std::optional<std::string> fact_store::string(const std::string& name) const {
    const fact* f = get(name);
    if (!f || !f->val.is_string()) return std::nullopt;
    return f->val.as_string();
}

std::vector<const fact*> fact_store::current() const {
    std::vector<const fact*> out;
    out.reserve(m_current.size());
    for (const auto& [name, id] : m_current) out.push_back(&m_history[id]);
    return out;
}

}  // namespace oomdx
