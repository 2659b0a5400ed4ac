// Internals shared by the analysis files: per-frame-list caches (category, site) and the
// replay details that pattern detection needs but reports do not show directly.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "parsers/snapshot/categories.h"
#include "parsers/snapshot/snapshot_analysis.h"
#include "parsers/snapshot/snapshot_model.h"

namespace oomdx::snap::detail {

// What a frame list's frames show (rev28: backward, optimizer and generation frames tell a training
// process from an inference one; the rules decide what that means).
inline constexpr std::uint8_t k_flag_fsdp = 1, k_flag_ddp = 2, k_flag_backward = 4, k_flag_optimizer = 8,
                              k_flag_generate = 16, k_flag_stack = 32;

// Sets the measures' frame kinds from a list's flags.
inline void note_code_kinds(pattern_measures& m, std::uint8_t flags) {
    if (flags & k_flag_stack) m.stack_frames = true;
    if (flags & k_flag_backward) m.backward_frames = true;
    if (flags & k_flag_optimizer) m.optimizer_frames = true;
    if (flags & k_flag_generate) m.generate_frames = true;
}

// Category and site of every frame list, computed once per list (lists are shared widely).
class attribution {
public:
    attribution(const snapshot& s, const category_rules& rules);

    int category(frames_id id) { ensure(id); return m_cat[id]; }
    int site(frames_id id) { ensure(id); return m_site[id]; }
    bool fsdp(frames_id id) { ensure(id); return m_flags[id] & 1; }
    bool ddp(frames_id id) { ensure(id); return m_flags[id] & 2; }
    // Every flag of a list (k_flag_*): what kind of code its frames show.
    std::uint8_t flags(frames_id id) { ensure(id); return m_flags[id]; }
    // All of the above at once (one check that the list is computed).
    struct of_list {
        int category, site;
        bool fsdp, ddp;
    };
    of_list all(frames_id id) {
        ensure(id);
        return {m_cat[id], m_site[id], (m_flags[id] & 1) != 0, (m_flags[id] & 2) != 0};
    }

    std::size_t site_count() const { return m_site_frame.size(); }
    // Site description; site 0 is "<no stack>".
    site_total describe_site(int site) const;
    const category_rules& rules() const { return m_rules; }

private:
    void ensure(frames_id id) {
        if (id < 0 || static_cast<std::size_t>(id) >= m_cat.size()) id = 0;
        if (m_cat[id] < 0) compute(id);
    }
    void compute(frames_id id);

    const snapshot& m_s;
    const category_rules& m_rules;
    std::vector<frame_text> m_text;       // per frame, filename normalised
    std::deque<std::string> m_storage;    // normalised filenames that differ from the original
    std::vector<std::int16_t> m_cat;      // per frame list, -1 = not computed
    std::vector<std::int32_t> m_site;     // per frame list
    std::vector<std::uint8_t> m_flags;    // per frame list: k_flag_* bits
    std::vector<std::int32_t> m_site_of_frame;  // per frame, -1 = none yet
    // Per-frame rule results, computed on first use (frames are shared by many lists).
    struct frame_info {
        std::uint64_t any_mask = 0;
        std::int16_t frame_cat = -1;
        std::uint8_t python = 0, site_ok = 0, flags = 0, done = 0;
    };
    std::vector<frame_info> m_finfo;
    const frame_info& info(frame_id f);
    std::vector<frame_id> m_site_frame;   // per site, -1 for "<no stack>"
    std::vector<frame_text> m_buf;
};

struct site_epochs {
    int site = 0;
    int category = 0;
    std::int64_t bytes = 0, blocks = 0;
    int distinct_epochs = 0;
    std::string site_name;
};

struct replay_extras {
    int epochs = 1;                 // release legs + 1 (or 16 time slices when few cycles)
    bool epochs_from_cycles = false;
    std::vector<site_epochs> accumulating;  // sites with live-at-end blocks from >= 3 epochs
    std::int64_t opt_alloc_bytes = 0, opt_allocs = 0;
    std::int64_t opt_first_index = -1, opt_last_index = -1;
    int opt_epochs = 0;
    std::int64_t opt_first_epoch_bytes = 0;
    std::vector<std::int64_t> growth_alloc_by_cat;  // bytes allocated during growth legs
    std::int64_t growth_alloc_total = 0;
    std::int64_t bulk_frees = 0, bulk_bytes = 0, bulk_epoch_span = 0, bulk_index = -1;
    std::int64_t range_bytes = 0;   // max - min of the live curve
    std::int64_t forward_live_max = 0;  // most forward-pass bytes (activation, attention, loss, moe) live at once
    bool fsdp_frames = false, ddp_frames = false;
    std::uint8_t stack_flags = 0;      // k_flag_* bits over the allocations' stacks
    std::int64_t gradient_allocs = 0;  // allocations attributed to gradients
};

void replay_trace(const snapshot& s, const trace_list& trace,
                  const std::vector<const segment*>& segs, attribution& attr,
                  const analysis_options& opt, device_analysis& d, replay_extras& x);

// Undoes the trace backwards from the final segments to measure free blocks at each OOM.
void replay_free_blocks(const trace_list& trace,
                        const std::vector<const segment*>& segs, device_analysis& d);

// Fills d.measures and d.pattern_candidates (the rules decide which patterns apply).
void describe_patterns(const snapshot_analysis& a, device_analysis& d, const replay_extras& x,
                       const analysis_options& opt);

std::vector<site_total> top_sites_of(const std::vector<std::int64_t>& bytes,
                                     const std::vector<std::int64_t>& blocks,
                                     const std::vector<int>& site_cat, attribution& attr,
                                     std::int64_t total, std::size_t limit);

}  // namespace oomdx::snap::detail
