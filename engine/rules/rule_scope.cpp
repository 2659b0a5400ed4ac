#include "engine/rules/rule_scope.h"

#include <set>

#include "engine/core/fact_store.h"
#include "engine/rules/expression.h"

namespace oomdx {

namespace {

// The facts `n` reads (a fact node, or the name `exists` takes).
void facts_read(const expr_node& n, std::vector<const std::string*>& out) {
    if (n.op == expr_op::fact) out.push_back(&n.name);
    for (const auto& k : n.kids) facts_read(*k, out);
}

// The conjuncts of `n` (nested `and`s flattened); `n` itself when it is not an `and`.
void conjuncts(const expr_node& n, std::vector<const expr_node*>& out) {
    if (n.op != expr_op::and_) {
        out.push_back(&n);
        return;
    }
    for (const auto& k : n.kids) conjuncts(*k, out);
}

}  // namespace

std::size_t keep_rules_for_facts(rule_set& rs, const std::vector<std::string>& prefixes) {
    std::set<std::string> asserted;  // by the rules kept so far
    auto present = [&](const std::string& name) {
        for (const auto& p : prefixes)
            if (name.starts_with(p)) return true;
        return asserted.count(name) > 0;
    };
    const fact_store none;
    std::vector<char> keep(rs.rules.size(), 0);
    for (bool grew = true; grew;) {
        grew = false;
        for (std::size_t i = 0; i < rs.rules.size(); ++i) {
            if (keep[i]) continue;
            const rule_def& r = *rs.rules[i];
            bool can = false;
            for (const auto& f : r.facts) can = can || present(f);
            // Every fact it reads absent: its condition's value is fixed.
            if (!can) can = !r.condition || evaluate_condition(*r.condition, none) == truth::true_;
            // A conjunct that reads only facts that stay absent has a fixed value: when it is not
            // true, neither is the condition (Kleene `and`), whatever the other facts are.
            if (can && r.condition) {
                std::vector<const expr_node*> parts;
                conjuncts(*r.condition, parts);
                for (const expr_node* c : parts) {
                    std::vector<const std::string*> read;
                    facts_read(*c, read);
                    bool fixed = true;
                    for (const std::string* f : read) fixed = fixed && !present(*f);
                    if (fixed && evaluate_condition(*c, none) != truth::true_) {
                        can = false;
                        break;
                    }
                }
            }
            if (!can) continue;
            keep[i] = 1;
            grew = true;
            for (const auto& a : r.asserts) asserted.insert(a.first);
        }
    }
    std::vector<std::unique_ptr<rule_def>> kept;
    for (std::size_t i = 0; i < rs.rules.size(); ++i)
        if (keep[i]) kept.push_back(std::move(rs.rules[i]));
    const std::size_t dropped = rs.rules.size() - kept.size();
    rs.rules = std::move(kept);
    return dropped;
}

}  // namespace oomdx
