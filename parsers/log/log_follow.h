// Following growing training logs (`oomdx watch`): every file keeps its own streaming scanner,
// whose state is bounded, and is read from where the last poll stopped. A file replaced at its
// path (rotation) is drained to its end and the new one read from the start; a truncated file
// is read again from the start; line numbers go on counting across both. A .gz input is a
// closed, rotated log: it is read once, whole (a .gz still being written is retried).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parsers/log/log_analysis.h"
#include "parsers/log/log_analyzer.h"
#include "parsers/log/log_signatures.h"

namespace oomdx {

struct followed_file {
    std::string path;
    std::int64_t lines = 0;
    std::int64_t bytes = 0;  // read so far (decompressed for .gz), all rotations
    int rotations = 0;       // replaced or truncated files followed
    bool compressed = false;
};

class log_follower {
public:
    // Throws input_error when a file cannot be opened or is not text.
    explicit log_follower(const std::vector<std::string>& paths, const log_options& opts = {});
    ~log_follower();
    log_follower(const log_follower&) = delete;
    log_follower& operator=(const log_follower&) = delete;

    // Reads what the files gained since the last call; returns the number of new lines.
    std::int64_t poll();
    // The analysis of one file so far (its scanner keeps its state).
    log_analysis analysis(size_t file);
    size_t size() const;
    const followed_file& file(size_t i) const;
    std::int64_t oom_lines(size_t file) const;  // OOM-message lines seen in that file
    bool static_only() const;  // every input was read whole (.gz): nothing more will come

private:
    struct state;
    std::vector<std::unique_ptr<state>> m_files;
    std::unique_ptr<signature_set> m_own_sigs;
    const signature_set* m_sigs = nullptr;
    std::int64_t m_device_capacity = 0;
};

}  // namespace oomdx
