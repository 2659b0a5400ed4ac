// In-memory model of a PyTorch / torch_npu allocator memory snapshot (pickle or JSON).
// Compact by design: strings and frames are interned once, frame lists are deduplicated by
// content, so a snapshot of hundreds of MB decodes into a model of a few tens of MB.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "parsers/snapshot/chunked_list.h"
#include "parsers/snapshot/frame_lists.h"

namespace oomdx::snap {

// All string_views below point into snapshot::m_strings (stable while the snapshot lives,
// also across moves). A snapshot is movable, not copyable.

// One stack frame: {'name', 'filename', 'line'}; innermost frame first in a list.
struct frame {
    std::string_view filename;
    std::string_view name;
    std::int64_t line = 0;
};

// Block states as written by producers; the documented alias "active_awaiting_free" reads as
// pending_free.
enum class block_state : std::uint8_t { active_allocated, active_pending_free, inactive, unknown };

struct block {
    std::int64_t address = 0;         // segment address + preceding sizes when absent (2.0 era)
    std::int64_t size = 0;            // rounded size
    std::int64_t requested_size = 0;  // falls back to size when absent
    block_state state = block_state::unknown;
    std::string_view state_text;      // the string as written
    frames_id frames = 0;             // 2.0 era: history[0].frames
    bool address_derived = false;     // address was computed, not read
    bool has_history = false;         // 2.0 era block with a 'history' list
};

struct segment {
    std::int64_t device = 0;
    std::int64_t address = 0;
    std::int64_t total_size = 0;
    std::int64_t allocated_size = 0;
    std::int64_t active_size = 0;
    std::int64_t requested_size = 0;
    std::int64_t stream = 0;
    std::int64_t pool_id_0 = 0, pool_id_1 = 0;  // segment_pool_id tuple, (0,0) = default pool
    std::string_view segment_type;              // "large" | "small" | ""
    bool is_expandable = false;
    bool has_pool_id = false;
    frames_id frames = 0;
    std::vector<block> blocks;
};

// Known trace actions; anything else is action_kind::other (see trace_list::action).
enum class action_kind : std::uint8_t {
    alloc, free_requested, free_completed, segment_alloc, segment_free, segment_map,
    segment_unmap, snapshot, oom, user_defined, annotate, workspace_snapshot, other
};
action_kind parse_action(std::string_view s);
const char* action_name(action_kind a);

// An interned NUL-terminated string in 8 bytes; reads as a std::string_view.
class text_ref {
public:
    constexpr text_ref() = default;
    explicit constexpr text_ref(const char* p) : m_p(p) {}
    operator std::string_view() const { return m_p; }
    std::string_view view() const { return m_p; }
    const char* c_str() const { return m_p; }
    bool empty() const { return *m_p == 0; }
    friend bool operator==(text_ref a, std::string_view b) { return a.view() == b; }

private:
    const char* m_p = "";
};

// Per-entry strings of newer producers, shared by all entries with the same pair.
struct entry_context {
    std::string_view compile_context;  // "" when absent ("N/A" is kept as written)
    std::string_view user_metadata;    // "" when absent
};

// 32 bytes: a 400 MB trace holds about 3 million of these. What few entries carry besides
// (the stream, device_free, the text of an unknown action) is kept by the trace_list.
struct trace_entry {
    std::int64_t addr = 0;          // 0 for oom (which has device_free instead)
    std::int64_t size = 0;          // oom: requested bytes; snapshot: total active
    std::int64_t time_us = -1;      // -1 when absent (pre-2.2, NPU)
    frames_id frames = 0;
    std::uint32_t context : 24 = 0;  // index into snapshot::entry_contexts; 0 = none
    action_kind kind : 8 = action_kind::other;
};
static_assert(sizeof(trace_entry) == 32);

// One trace entry with everything it was written with: what readers and tests append.
struct trace_event : trace_entry {
    std::int64_t stream = 0;
    std::int64_t device_free = -1;  // oom only, -1 when absent
    std::string_view action;        // as written (NUL-terminated); empty for a known kind: action_name(kind)
};

// What the size checks and the replay's first pass read of every entry of a trace, summed as
// the entries are added (snap33: two passes over the entries fewer). Sums wrap (unsigned) so
// that a hostile size is no undefined behaviour; they are read only once the sizes are checked.
struct trace_sums {
    std::array<std::int64_t, 13> kinds{};         // entries of each action_kind
    std::array<action_kind, 13> order{};          // the kinds in the order first seen
    std::uint8_t seen = 0;
    bool time = false;                            // an entry with time_us >= 0
    bool total_wrapped = false;                   // `total` went past 2^64
    std::uint64_t max_size = 0;                   // the largest size, read unsigned
    std::uint64_t total = 0;                      // sizes of alloc, segment_alloc, segment_map
    // Active bytes as if every free completes (alloc +size, free_completed -size) and their
    // extremes (the first entry at the maximum); reserved bytes (segments) and their maximum.
    std::int64_t cum = 0, max_cum = 0, min_cum = 0, max_index = -1;
    std::int64_t seg_cum = 0, seg_max = 0;

    void add(const trace_entry& e, std::uint64_t i) {
        const auto k = static_cast<std::size_t>(e.kind);
        if (kinds[k]++ == 0) [[unlikely]] order[seen++] = e.kind;
        time |= e.time_us >= 0;
        const auto u = static_cast<std::uint64_t>(e.size);
        max_size = u > max_size ? u : max_size;
        auto wrap = [](std::int64_t a, std::uint64_t b) { return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + b); };
        switch (e.kind) {
        case action_kind::alloc:
        case action_kind::free_completed:
            if (e.kind == action_kind::alloc) {
                total_wrapped |= __builtin_add_overflow(total, u, &total);
                cum = wrap(cum, u);
            } else {
                cum = wrap(cum, 0 - u);
            }
            if (cum > max_cum) {
                max_cum = cum;
                max_index = static_cast<std::int64_t>(i);
            } else if (cum < min_cum) {
                min_cum = cum;
            }
            break;
        case action_kind::segment_alloc:
        case action_kind::segment_map:
            total_wrapped |= __builtin_add_overflow(total, u, &total);
            seg_cum = wrap(seg_cum, u);
            seg_max = seg_cum > seg_max ? seg_cum : seg_max;
            break;
        case action_kind::segment_free:
        case action_kind::segment_unmap:
            seg_cum = wrap(seg_cum, 0 - u);
            seg_max = seg_cum > seg_max ? seg_cum : seg_max;
            break;
        default:
            break;
        }
    }
};

// A device's trace: compact entries in fixed chunks, plus the values most entries do not
// carry, by entry index: the stream as runs of equal values, device_free, the text of actions
// that are not one of action_kind.
class trace_list {
public:
    using value_type = trace_entry;
    using const_iterator = chunked_list<trace_entry>::const_iterator;

    std::size_t size() const { return m_entries.size(); }
    bool empty() const { return m_entries.empty(); }
    const trace_entry& operator[](std::size_t i) const { return m_entries[i]; }
    const trace_entry& front() const { return m_entries.front(); }
    const trace_entry& back() const { return m_entries.back(); }
    const_iterator begin() const { return m_entries.begin(); }
    const_iterator end() const { return m_entries.end(); }
    // f(const trace_entry* first, std::size_t n) for each run of contiguous entries, in order.
    template <class F>
    void for_each_run(F&& f) const { m_entries.for_each_run(f); }

    // `e.action` must outlive the list (a snapshot's interned string or a literal).
    void push_back(const trace_event& e) {
        if (e.stream == m_stream && e.device_free == -1 && e.action.empty() && e.kind != action_kind::other)
            [[likely]] {
            sums_to_add().add(e, m_entries.size());
            m_entries.push_back(e);
            return;
        }
        push_back_extras(e);
    }
    // push_back of e[0, n) in order, writing runs of plain entries straight into the chunks.
    void append(const trace_event* e, std::size_t n) {
        while (n > 0) {
            std::size_t room;
            trace_entry* out = m_entries.room(room);
            const std::size_t lim = room < n ? room : n;
            std::size_t k = 0;
            const std::uint64_t at = m_entries.size();
            trace_sums& sums = sums_to_add();
            for (; k < lim; ++k) {
                const trace_event& x = e[k];
                if (x.stream != m_stream || x.device_free != -1 || !x.action.empty() || x.kind == action_kind::other)
                    [[unlikely]] break;
                out[k] = x;
                sums.add(x, at + k);
            }
            m_entries.commit(k);
            e += k;
            n -= k;
            if (k < lim) {
                push_back_extras(*e++);
                --n;
            }
        }
    }
    void clear() { *this = trace_list(); }
    const trace_sums& sums() const {
        static const trace_sums none;
        return m_sums ? *m_sums : none;
    }
    // See chunked_list::first_chunk_whole: for a list expected to outgrow its first chunk.
    void first_chunk_whole() { m_entries.first_chunk_whole(); }
    static constexpr std::size_t first_chunk_size() { return chunked_list<trace_entry>::chunk_size(); }
    std::int64_t stream(std::size_t i) const;
    std::int64_t device_free(std::size_t i) const;  // -1 when absent
    std::string_view action(std::size_t i) const;   // as written
    trace_event event(std::size_t i) const;

    // Entries that carry device_free, in index order: (index, value).
    const std::vector<std::pair<std::uint64_t, std::int64_t>>& device_frees() const;

    trace_list() = default;
    trace_list(trace_list&&) noexcept = default;
    trace_list& operator=(trace_list&&) noexcept = default;
    trace_list(const trace_list& o)
        : m_entries(o.m_entries),
          m_stream(o.m_stream),
          m_side(o.m_side ? std::make_unique<side>(*o.m_side) : nullptr),
          m_sums(o.m_sums ? std::make_unique<trace_sums>(*o.m_sums) : nullptr) {}
    trace_list& operator=(const trace_list& o) {
        if (this != &o) *this = trace_list(o);
        return *this;
    }

private:
    // Kept apart (and made on first use) so that an empty list stays small: the reader holds
    // one per container it builds.
    struct side {
        std::vector<std::pair<std::uint64_t, std::int64_t>> streams;  // (first index, stream)
        std::vector<std::pair<std::uint64_t, std::int64_t>> device_free;
        std::vector<std::pair<std::uint64_t, const char*>> actions;
    };
    side& extras() {
        if (!m_side) m_side = std::make_unique<side>();
        return *m_side;
    }
    void push_back_extras(const trace_event& e);
    trace_sums& sums_to_add() {
        if (!m_sums) [[unlikely]] m_sums = std::make_unique<trace_sums>();
        return *m_sums;
    }
    chunked_list<trace_entry> m_entries;
    std::int64_t m_stream = 0;  // the stream of the last entry (0 before the first)
    std::unique_ptr<side> m_side;
    std::unique_ptr<trace_sums> m_sums;  // made at the first entry, as `side`: an empty list stays small
};

// external_annotations entry: {'name', 'stage': START|END, 'device', 'time_us'}.
struct annotation {
    std::string_view name;
    std::string_view stage;
    std::int64_t device = -1;
    std::int64_t time_us = -1;
};

// What the reader found, for reports and era detection.
struct snapshot_info {
    std::string format;          // "pickle" | "json"
    int pickle_protocol = 0;     // 2..5, 0 for JSON
    std::string top_level;       // "dict" | "list" (bare list of segments)
    std::string producer;        // "cuda" | "npu" | "unknown" (from frames / actions / keys)
    std::string era;             // "2.0-history", "2.1", "2.2+", "2.5+", "2.6+", "2.7+", "2.9+", "list-only", ...
    bool has_traces_key = false;        // device_traces (or traces) present
    bool has_time_us = false;
    bool has_history = false;           // 2.0-era blocks
    bool has_block_address = false;
    bool has_allocator_settings = false;
    bool has_external_annotations = false;
    bool has_compile_context = false;
    bool has_user_metadata = false;
    bool has_workspace_snapshot = false;
    bool state_only = false;            // every device trace has <= 1 entry and some has one
    std::vector<std::string> unknown_top_keys;
    std::int64_t file_bytes = 0;
};

// Interns strings into stable storage (each followed by a NUL); ids are dense from 0.
class string_pool {
public:
    string_pool();
    ~string_pool();
    std::uint32_t intern(std::string_view s);
    std::string_view view(std::uint32_t id) const { return m_views[id]; }
    std::size_t size() const { return m_views.size(); }
    std::size_t bytes() const { return m_bytes; }

private:
    struct index;
    std::vector<std::unique_ptr<char[]>> m_chunks;
    std::size_t m_used = 0, m_cap = 0, m_bytes = 0;
    std::vector<std::string_view> m_views;
    std::unique_ptr<index> m_index;
};

struct snapshot {
    snapshot();
    ~snapshot();
    snapshot(snapshot&&) noexcept;
    snapshot& operator=(snapshot&&) noexcept;
    snapshot(const snapshot&) = delete;
    snapshot& operator=(const snapshot&) = delete;

    std::string source_file;
    snapshot_info info;

    std::vector<segment> segments;                      // in file order (all devices)
    std::vector<trace_list> device_traces;  // index = device; may be empty lists
    std::vector<annotation> external_annotations;
    std::vector<entry_context> entry_contexts{entry_context{}};  // [0] = none
    nlohmann::json allocator_settings;                  // null when absent
    std::vector<segment> host_segments;                 // pinned host allocator (newest torch)

    // Frames: unique frames and content-deduplicated frame lists.
    std::vector<frame> frames;
    std::span<const frame_id> frame_list(frames_id id) const { return lists[id]; }
    std::size_t frame_list_count() const { return lists.size(); }
    // First frame of a list, or nullptr when the list is empty.
    const frame* top_frame(frames_id id) const {
        auto l = frame_list(id);
        return l.empty() ? nullptr : &frames[l.front()];
    }

    // Devices that appear in segments or traces (sorted, unique).
    std::vector<std::int64_t> devices() const;

    // Storage of the frame lists (filled by the loaders through frame_interner).
    frame_lists lists;
    string_pool& strings() { return *m_strings; }

private:
    std::unique_ptr<string_pool> m_strings;
};

}  // namespace oomdx::snap
