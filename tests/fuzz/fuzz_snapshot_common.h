// Loads bytes as a snapshot (pickle or JSON, as the target asks) and runs every analysis output.
#pragma once

#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "parsers/snapshot/snapshot_analysis.h"
#include "parsers/snapshot/snapshot_loader.h"
#include "tests/fuzz/fuzz_common.h"

namespace oomdx::fuzz {

inline int run_snapshot(const std::uint8_t* data, std::size_t size, bool want_pickle) {
    const std::string_view bytes = as_text(data, size);
    if (snap::looks_like_pickle(bytes.substr(0, 16)) != want_pickle) return -1;  // the other target's input
    snap::load_limits limits;  // small bounds keep each run fast; the defaults are tested elsewhere
    limits.max_memo = 1 << 16;
    limits.max_string = 1 << 20;
    limits.max_objects = 1 << 20;
    try {
        snap::snapshot s = snap::load_snapshot_bytes(bytes, "fuzz.pickle", limits);
        snap::snapshot_analysis a = snap::analyze(s);
        (void)snap::to_json(a).dump();
        (void)snap::render_text(a, true, false);
        fact_store facts(&vocabulary::shipped());
        snap::emit_file_facts(s, facts);
        snap::emit_facts(a, facts);
    } catch (const input_error&) {
    }
    return 0;
}

}  // namespace oomdx::fuzz
