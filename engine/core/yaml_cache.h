// Parsed YAML trees of the shipped data files (rule packs, knowledge), kept between runs.
// yaml-cpp spends about a thousand instructions per byte on a parse; every command reads the
// same ~400 KB of packs, so an unchanged file is rebuilt from its stored tree instead (marks,
// tags and styles included: the loaders see the same nodes). The stored tree is checked against
// the file's current text (size and a 64-bit hash) and against damage; any mismatch parses the
// text again and stores the new tree. Nothing else depends on the cache being there.
#pragma once

#include "engine/core/yaml_node.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oomdx {

// YAML::Load(text) for a file read from disk; throws what YAML::Load throws. Files under
// data_dir() go through the cache; others are parsed directly.
YAML::Node load_yaml_cached(const std::string& file, const std::string& text);
// The same with an explicit cache folder (empty: no cache) for every file: for the tests.
YAML::Node load_yaml_cached_in(const std::string& cache_dir, const std::string& file, const std::string& text);

// The cache folder: $OOMDX_CACHE_DIR, else $XDG_CACHE_HOME/oomdx, else $HOME/.cache/oomdx;
// empty when caching is off (OOMDX_CACHE_DIR=off) or no folder is known.
std::string yaml_cache_dir();

// The stored form of a tree and back (exposed for the tests). decode returns nullopt for
// anything that is not a well-formed encoding of the given text's tree.
std::string encode_yaml_tree(const YAML::Node& root, std::string_view text);
std::optional<YAML::Node> decode_yaml_tree(std::string_view stored, std::string_view text);

// Removes the oldest entries of the cache folder beyond `keep` (run after each write).
void prune_yaml_cache(const std::string& dir, std::size_t keep);

// 64-bit FNV-1a: stable across builds, enough to tell an edited file from the stored one.
std::uint64_t text_hash(std::string_view text);

}  // namespace oomdx
