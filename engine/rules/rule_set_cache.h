// A compiled rule set stored between runs. Compiling the evidence packs (their YAML trees,
// then every condition parsed and type-checked against the vocabulary) was ~26 M instructions,
// the fixed cost that decided `oomdx snapshot` on a small file; the stored set is read back in
// a small fraction of that. The copy is keyed by the text of everything the compilation reads
// (each pack, the fact vocabulary, knowledge/actions.yaml), the steps asked for, and the
// binary's build (a new build may compile differently): any change compiles the packs again,
// with all their checks, and stores the new set; a damaged copy is ignored the same way. The
// files' hashes are stored with their stat ahead of the set (file_stamps.h): a run reads only
// the files whose stat changed or that were written in the tick the stamps were taken.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/core/cache_key.h"  // cache_hash, build_identity
#include "engine/rules/rule_set.h"

namespace oomdx {

// The stored form and back (exposed for the tests). decode returns nullopt for anything that is
// not a well-formed encoding made for `key`. The translations are not stored: the caller
// attaches them again (rule_set::lazy_i18n).
std::string encode_rule_set(const rule_set& rs, std::string_view key);
std::optional<rule_set> decode_rule_set(std::string_view stored, std::string_view key);

// Removes the oldest stored rule sets (rules-*.bin) of the cache folder beyond `keep` (run after
// each write: data folders of other checkouts and tests add entries of their own).
void prune_rule_sets(const std::string& dir, std::size_t keep);

}  // namespace oomdx
