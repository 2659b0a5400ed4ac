// The rules of a set that can fire on the facts of some producers alone (a command that runs
// only those producers, e.g. `oomdx snapshot`, then decodes a fraction of the evidence set).
#pragma once

#include <string>
#include <vector>

#include "engine/rules/rule_set.h"

namespace oomdx {

// Keeps the rules of `rs` that can fire when the only facts are those whose names start with
// one of `prefixes` ("snapshot." ...) and those the kept rules assert (to a fixpoint). A rule is
// dropped only when it reads none of those facts and its condition is not true with every fact
// it reads absent, or when one conjunct of its condition reads none of them and is not true with
// its facts absent (`snapshot.x > 0 and estimate.y > 0`): then it cannot fire, so the kept set derives the same facts, findings and
// firings as the whole set on such facts. Steps, macros, lists and contradictions are kept.
// Returns the number of rules dropped.
std::size_t keep_rules_for_facts(rule_set& rs, const std::vector<std::string>& prefixes);

}  // namespace oomdx
