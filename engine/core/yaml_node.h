// yaml-cpp, included through here by every file of ours that reads YAML.
//
// A lookup of a key a map does not have (`node["unit"]` on an entry without a unit) returns a
// node that remembers the key for its error text; yaml-cpp 0.7 formats that key through a
// std::stringstream, whose locale set-up costs about 3000 instructions: a third of the
// vocabulary's load time and a tenth of the rule packs' went to absent optional keys. The
// specializations below give yaml-cpp the same text for the key types we use (a string
// literal, a C string, a std::string) without the stream.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>

// yaml-cpp 0.7 declares streamable_to_string in the global namespace.
template <std::size_t N>
struct streamable_to_string<char[N], true> {
    static std::string impl(const char (&key)[N]) { return std::string(key); }
};
template <>
struct streamable_to_string<const char*, true> {
    static std::string impl(const char* key) { return key ? std::string(key) : std::string(); }
};
template <>
struct streamable_to_string<std::string, true> {
    static std::string impl(const std::string& key) { return key; }
};
