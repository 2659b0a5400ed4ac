#include "engine/rules/rule_scope.h"

#include <set>

#include "engine/core/fact_store.h"
#include "engine/rules/expression.h"

namespace oomdx {

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
