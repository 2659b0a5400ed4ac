// The namespaces of the facts the snapshot producers emit.
#pragma once

#include <string>
#include <vector>

namespace oomdx::snap {

// Every fact the snapshot producers emit (the analyses, the reader, diff, trend and ranks) is
// named under one of these (tests/unit/snapshot/test_rule_scope.cpp checks it on every fixture
// and corpus snapshot): `oomdx snapshot` loads only the evidence rules that can fire on them
// (engine/rules/rule_scope.h).
inline const std::vector<std::string>& fact_prefixes() {
    static const std::vector<std::string> p = {"snapshot.", "snapshot_file."};
    return p;
}

}  // namespace oomdx::snap
