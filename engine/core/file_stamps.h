// The content hashes that key a stored cache entry (the compiled rule set, the category rules),
// taken without reading a file whose stat says it has not changed since the entry was made.
// Each file's stamp is its size, device, inode, modification and change times (nanoseconds)
// and the hash of its bytes. A file is hashed again when any of these differ or when it is
// "racy" (git's rule): modified or changed at or after the time the stamps were taken, when an
// edit in the same clock tick could leave every field as it was. So an edit is noticed on the
// next run unless it keeps the size, inode and both times to the nanosecond (docs/snapshot.md,
// snap35).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oomdx::file_stamps {

struct stamp {
    std::string path;
    std::uint64_t size = 0, dev = 0, ino = 0;
    std::int64_t mtime_ns = 0, ctime_ns = 0;
    std::uint64_t hash = 0;  // cache_hash of the bytes
};

// The stamps stored ahead of an entry, and the time they were taken.
struct stored {
    std::vector<stamp> stamps;
    std::int64_t taken_ns = 0;
};

// The clock file times are set from, now (sampled before the files are looked at).
std::int64_t now_ns();

// An entry is the stamps block, then the entry's own bytes (`body`).
std::string join(const stored& s, std::string_view body);
// Splits what `join` wrote; a damaged or missing block gives no stamps and an empty body.
std::pair<stored, std::string_view> split(std::string_view entry);

struct hashed {
    std::vector<stamp> stamps;  // one per file, in order
    bool refresh = false;       // a file was read whose stamp is now trustworthy: store the new stamps
};

// The stamps of `files`: those of `known` (by path) where the file's stat matches and it is not
// racy against `known.taken_ns`, else read and hashed. `taken_now` is this run's now_ns().
// nullopt when a file cannot be read.
std::optional<hashed> hash_files(const std::vector<std::string>& files, const stored& known, std::int64_t taken_now);

}  // namespace oomdx::file_stamps
