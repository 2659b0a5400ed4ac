// The working memory: one current fact per name, every assertion kept in history.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/fact.h"

namespace oomdx {

class vocabulary;

class fact_store : public fact_sink {
public:
    // With a vocabulary, every emitted name and type is checked (throws std::invalid_argument).
    explicit fact_store(const vocabulary* vocab = nullptr) : m_vocab(vocab) {}

    using fact_sink::emit;
    void emit(fact f) override;
    // Withdraws the current fact of that name (a rule's `name: null`); its history stays.
    void retract(const std::string& name) { m_current.erase(name); }

    const fact* get(const std::string& name) const;
    bool has(const std::string& name) const { return get(name) != nullptr; }
    std::optional<std::int64_t> integer(const std::string& name) const;
    std::optional<double> number(const std::string& name) const;
    std::optional<bool> boolean(const std::string& name) const;
    std::optional<std::string> string(const std::string& name) const;

    const fact* by_id(int id) const;
    // Current facts, sorted by name.
    std::vector<const fact*> current() const;
    const std::vector<fact>& history() const { return m_history; }
    const vocabulary* vocab() const { return m_vocab; }

private:
    const vocabulary* m_vocab;
    std::vector<fact> m_history;           // index == fact id
    std::map<std::string, int> m_current;  // name -> id of current fact
};

}  // namespace oomdx
