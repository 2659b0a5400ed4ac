// For the adapter tests that parse a launch script: the script written to a per-process temporary folder
// (script_folder(tag), removed by the test when done), parsed with the adapter checked, and one fact checked.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>

#include <filesystem>
#include <fstream>
#include <string>

#include "parsers/config/job_config.h"

namespace oomdx::test {

inline std::filesystem::path script_folder(const std::string& tag) {
    return std::filesystem::temp_directory_path() / ("oomdx_" + tag + "_" + std::to_string(::getpid()));
}

inline std::string script_file(const std::string& tag, const std::string& name, const std::string& text) {
    const auto dir = script_folder(tag);
    std::filesystem::create_directories(dir);
    const auto p = dir / name;
    std::ofstream(p) << text;
    return p.string();
}

// The script parsed, and the adapter it chose checked.
inline job_config parsed_as(const std::string& framework, const std::string& tag, const std::string& name,
                            const std::string& text) {
    job_config job = parse_job_config(script_file(tag, name, text));
    CHECK(job.framework == framework);
    return job;
}

inline void check_fact(const job_config& job, const std::string& key, std::int64_t want) {
    const fact* f = job.find(key);
    REQUIRE_MESSAGE(f, key);
    CHECK(f->val.as_integer() == want);
}

inline void check_fact(const job_config& job, const std::string& key, const std::string& want) {
    const fact* f = job.find(key);
    REQUIRE_MESSAGE(f, key);
    CHECK(f->val.as_string() == want);
}

}  // namespace oomdx::test
