// The parallel half of a log scan: worker threads split line-aligned chunks of a mapped
// file into segments and run the literal prefilter; the caller's thread receives the
// segments with hits in file order, so the sequential scanner sees exactly what a
// single-threaded pass would show it.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "engine/core/mapped_file.h"
#include "parsers/log/log_signatures.h"

namespace oomdx {

struct prefilter_plan {
    size_t chunk_bytes = size_t{1} << 20;
    unsigned workers = 0;  // 0 = one per hardware thread
};

struct prefilter_totals {
    std::int64_t newlines = 0;  // '\n' bytes in [0, end)
    std::int64_t cut = 0;       // segments longer than the cap
    size_t end = 0;             // bytes covered, just after a '\n' (0 = none)
    std::int64_t worker_cpu_us = 0;  // CPU time of the worker threads (user + system)
    unsigned workers = 0;            // worker threads started
};

// A segment with literal hits; `text` lies in the file's mapping.
struct prefiltered_segment {
    std::string_view text;
    std::int64_t line = 0;
    bool cut = false;
    std::int64_t rank = -1;  // rank_prefix(text); -2 where no hit of the line reads it (not looked for)
    const int* hits = nullptr;
    size_t hit_count = 0;
    bool plain = false;  // holds no escape byte (no colour codes to strip)
    bool repeat = false;  // an NCCL peer line with the same bytes as the chunk's previous one
};

// fn(segment) for every segment of [0, end) with a literal hit, in file order, on the calling
// thread; done(end so far) after each chunk. The parallel part stops before the bytes after
// the last '\n' and before a line over four chunks long: the caller reads the rest from `end`.
using prefilter_fn = std::function<void(const prefiltered_segment&)>;
prefilter_totals prefilter_parallel(const mapped_file& mf, size_t cap, const signature_set& sigs,
                                    const prefilter_plan& plan, const prefilter_fn& fn,
                                    const std::function<void(size_t)>& done);

}  // namespace oomdx
