// Little helpers for oomdx's own binary cache files (yaml_cache, vocabulary_cache): fixed-width
// integers in host order, length-prefixed text, and reading an entry whole. Readers check bounds before get64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace oomdx::bin {

inline void put32(std::string& out, std::uint32_t v) {
    char b[4];
    std::memcpy(b, &v, 4);
    out.append(b, 4);
}

inline void put64(std::string& out, std::uint64_t v) {
    char b[8];
    std::memcpy(b, &v, 8);
    out.append(b, 8);
}

inline void put_text(std::string& out, const std::string& s) {
    put32(out, static_cast<std::uint32_t>(s.size()));
    out += s;
}

inline std::uint64_t get64(std::string_view s, std::size_t at) {
    std::uint64_t v;
    std::memcpy(&v, s.data() + at, 8);
    return v;
}

// The whole file, or "" when it cannot be read (a cache entry that is not there).
inline std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace oomdx::bin
