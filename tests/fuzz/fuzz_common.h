// Shared by the fuzz targets: a scratch file per process and the errors an input may raise.
// Any other exception, crash or sanitizer report is a finding.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include <unistd.h>

#include "engine/core/errors.h"

namespace oomdx::fuzz {

// A file (or a directory holding `name`) private to this process, rewritten per input.
inline std::string scratch_path(const std::string& name) {
    static const std::string dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("oomdx_fuzz_" + std::to_string(getpid()));
        std::filesystem::create_directories(d);
        return d.string();
    }();
    return dir + "/" + name;
}

inline std::string write_scratch(const std::string& name, const std::uint8_t* data, std::size_t size) {
    const std::string path = scratch_path(name);
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) __builtin_trap();
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
    return path;
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

}  // namespace oomdx::fuzz
