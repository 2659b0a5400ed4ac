// One real-case file of tests/cases/: a public thread's OOM log, the facts the thread states and
// the fix the thread confirms. Loading validates strictly; every problem names the file.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace oomdx::cases {

// The ids a case may use, read from the shipped knowledge (actions, devices, model presets,
// framework adapters, canonical config keys) plus the fixed list of kinds.
struct catalog {
    std::set<std::string> actions, devices, models, frameworks, config_keys, kinds;
    static const catalog& shipped();
};

struct test_case {
    std::string file;  // path as given, for messages
    std::string id, source, confirmed, kind, notes;
    std::string device, model, framework;
    std::int64_t world_size = 0;
    std::vector<std::pair<std::string, std::string>> sets;  // canonical key, value as written
    std::string log;
    std::vector<std::string> fix;
    // The job's config as the thread posted it, in the framework's own syntax (optional): the runner
    // writes `text` to a file named `config_file` (its extension picks the reader) and passes it as --config.
    std::string config_file, config_text;

    std::vector<std::string> set_args() const;  // "key=value" for diagnosis_request::sets
};

struct load_outcome {
    test_case tc;
    std::vector<std::string> errors;  // each "FILE: message"; empty when the case is valid
    bool ok() const { return errors.empty(); }
};

// Parses and validates YAML text. `file` names the source in messages and gives the expected id
// (its stem); pass a bare id such as "x.yaml" for text that has no file.
load_outcome parse_case(const std::string& text, const std::string& file, const catalog& cat);
load_outcome load_case(const std::string& path, const catalog& cat);

// The case files of a directory (every *.yaml except score_floor.yaml), sorted.
std::vector<std::string> case_files(const std::string& dir);

}  // namespace oomdx::cases
