// The shipped log signatures from a stored copy. Loading them from YAML (even the cached trees,
// engine/core/yaml_cache.h) was ~67 M of the ~92 M instructions a `oomdx log` run spends before
// its workers start: the tree decode, ~30 key lookups a signature through yaml-cpp, the
// teardown. The stored set is read back in a small fraction of that. The copy is keyed by the
// binary's build and every signature file's path, size and content hash (an edited, added or
// removed file loads the directory again, with all its checks and errors, and stores the new
// set); a damaged, truncated or foreign copy is ignored the same way. Patterns stay lazy: a
// stored set compiles a pattern on first use, as the loaded one does.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/log/log_signatures.h"

namespace oomdx {

// signature_set::load(dirs, patterns::lazy), through the copy stored in cache_dir (empty: no
// copy). A set that does not load throws as load does, and nothing is stored.
signature_set load_signatures_cached(const std::vector<std::string>& dirs, const std::string& cache_dir);

// The key of `dirs`' current files (empty when a directory or file cannot be read, or the
// build is unknown: then nothing is stored), and the entry's file name in cache_dir.
std::string signature_cache_key(const std::vector<std::string>& dirs);
std::string signature_cache_entry(const std::vector<std::string>& dirs, const std::string& cache_dir);

// The stored form and back (exposed for the tests). decode returns nullopt for anything that is
// not a well-formed encoding made for `key`; the set it returns is finished (its prefilter built).
std::string encode_signatures(const signature_set& set, std::string_view key);
std::optional<signature_set> decode_signatures(std::string_view stored, std::string_view key);

}  // namespace oomdx
