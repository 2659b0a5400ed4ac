// What oomdx's stored caches (compiled rules, log signatures) are keyed by: the build that made
// the copy (a new build may compile differently) and a hash of the files it was made from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oomdx {

// A 64-bit hash of a cache key's files and of the stored payload, eight bytes a step (FNV-1a,
// yaml_cache's text_hash, takes one multiply a byte: 1.9 M instructions for the evidence set).
std::uint64_t cache_hash(std::string_view bytes);

// What identifies this build of the program (its ELF build id, else the executable's size and
// modification time); empty when unknown, and then nothing is stored.
const std::string& build_identity();

}  // namespace oomdx
