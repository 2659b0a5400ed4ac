// The shipped fact vocabulary from a stored copy of its declarations. Building it from the
// YAML trees (even the cached ones, engine/core/yaml_cache.h) costs about 22 M instructions,
// a third of a snapshot run's fixed cost; the stored declarations are read back in a small
// fraction of that. The copy is keyed by every file's path, size and text hash: an edited,
// added or removed file loads the directory again (with its checks and errors) and stores the
// new copy. A damaged copy is ignored the same way.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/core/vocabulary.h"

namespace oomdx {

// vocabulary::load_dir(dir), through the copy stored in cache_dir (empty: no copy).
vocabulary load_vocabulary_cached(const std::string& dir, const std::string& cache_dir);

// The stored form and back (exposed for the tests); decode returns nullopt for anything that
// is not a well-formed encoding made for `key`.
std::string encode_vocabulary(const vocabulary& v, std::string_view key);
std::optional<vocabulary> decode_vocabulary(std::string_view stored, std::string_view key);

}  // namespace oomdx
