#include "parsers/snapshot/pickle_common.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace oomdx::snap {

void intern_known_keys(string_pool& pool) {
    static const char* names[] = {
        "segments", "device_traces", "traces", "allocator_settings", "external_annotations",
        "host_segments", "host_traces", "device", "address", "total_size", "allocated_size",
        "active_size", "requested_size", "stream", "segment_type", "segment_pool_id",
        "is_expandable", "frames", "blocks", "size", "state", "history", "addr", "real_size",
        "action", "time_us", "device_free", "compile_context", "user_metadata", "name",
        "filename", "line", "stage"};
    static_assert(sizeof(names) / sizeof(names[0]) == k_key_count);
    for (const char* n : names) pool.intern(n);
}

frame_id frame_interner::intern_frame(std::uint32_t filename, std::uint32_t name,
                                      std::int64_t line) {
    key k{filename, name, line};
    auto it = m_frames.find(k);
    if (it != m_frames.end()) return it->second;
    auto id = static_cast<frame_id>(m_snap.frames.size());
    auto& pool = m_snap.strings();
    m_snap.frames.push_back(frame{pool.view(filename), pool.view(name), line});
    m_frames.emplace(k, id);
    return id;
}

std::uint64_t hash_bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    std::uint64_t a = 0x9E3779B97F4A7C15ULL ^ n, b = 0xcbf29ce484222325ULL;
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {  // two independent lanes: a short dependency chain
        std::uint64_t x, y;
        std::memcpy(&x, p + i, 8);
        std::memcpy(&y, p + i + 8, 8);
        a = (a ^ x) * 0xff51afd7ed558ccdULL;
        b = (b ^ y) * 0xc4ceb9fe1a85ec53ULL;
        a ^= a >> 32;
        b ^= b >> 29;
    }
    for (; i < n; ++i) a = (a ^ p[i]) * 0x100000001b3ULL;
    const std::uint64_t h = a ^ (b * 0x9E3779B97F4A7C15ULL);
    return h ^ (h >> 31);
}

void frame_interner::grow() {
    grow_open_table(m_table, 1024, [](const slot& s) { return s.id >= 0; });
}

frames_id frame_interner::intern_list(const frame_id* ids, std::size_t n) {
    if (n == 0) return 0;
    // A trace repeats its sequence of stacks: the list that followed the previous one last
    // time is tried before the table, whose probes miss the cache.
    if (static_cast<std::size_t>(m_prev) < m_next.size()) {
        const frames_id cand = m_next[m_prev];
        if (cand > 0) {
            const auto l = m_snap.lists[cand];
            if (l.size() == n && std::memcmp(l.data(), ids, n * sizeof(frame_id)) == 0) return follow(cand);
        }
    }
    const frames_id id = lookup(ids, n);
    if (static_cast<std::size_t>(m_prev) >= m_next.size()) m_next.resize(m_prev + 1024, 0);
    m_next[m_prev] = id;
    return follow(id);
}

// `id` is the previous list now; the list that followed it last time is fetched ahead.
frames_id frame_interner::follow(frames_id id) {
    m_prev = id;
    if (static_cast<std::size_t>(id) < m_next.size() && m_next[id] > 0) m_snap.lists.prefetch(m_next[id]);
    return id;
}

frames_id frame_interner::lookup(const frame_id* ids, std::size_t n) {
    if ((m_count + 1) * 2 > m_table.size()) grow();
    const std::uint64_t h = hash_bytes(ids, n * sizeof(frame_id));
    const std::size_t mask = m_table.size() - 1;
    std::size_t i = h & mask;
    for (; m_table[i].id >= 0; i = (i + 1) & mask) {
        const slot& e = m_table[i];
        if (e.hash == h && e.len == n &&
            std::memcmp(m_snap.lists[e.id].data(), ids, n * sizeof(frame_id)) == 0)
            return e.id;
    }
    const frames_id id = m_snap.lists.add(ids, n);
    m_table[i] = slot{h, id, static_cast<std::uint32_t>(n)};
    ++m_count;
    return id;
}

static void page_range(const void* p, std::size_t n, std::uintptr_t& b, std::uintptr_t& e) {
    const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    b = (reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1);
    e = (reinterpret_cast<std::uintptr_t>(p) + n) & ~(page - 1);
}

void prefault_write(void* p, std::size_t n) {
    std::uintptr_t b, e;
    page_range(p, n, b, e);
    if (e <= b) return;
#ifdef MADV_HUGEPAGE
    ::madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
    ::madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_WRITE);
#endif
}

void populate_write(void* p, std::size_t n) {
#ifdef MADV_POPULATE_WRITE
    std::uintptr_t b, e;
    page_range(p, n, b, e);
    if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}

void prefault_read(const void* p, std::size_t n) {
    std::uintptr_t b, e;
    page_range(p, n, b, e);
    if (e <= b) return;
#ifdef MADV_POPULATE_READ
    ::madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_READ);
#else
    ::madvise(reinterpret_cast<void*>(b), e - b, MADV_WILLNEED);
#endif
}

block_state parse_block_state(std::string_view s) {
    if (s == "active_allocated") return block_state::active_allocated;
    if (s == "active_pending_free" || s == "active_awaiting_free")
        return block_state::active_pending_free;
    if (s == "inactive") return block_state::inactive;
    return block_state::unknown;
}

namespace {

// Sizes a real allocator can report: 0 to 1 PiB per field, totals below 2^62 so that every sum
// the analysis takes stays inside int64.
constexpr std::int64_t k_max_size = std::int64_t{1} << 50;
constexpr std::int64_t k_max_total = std::int64_t{1} << 62;
constexpr std::int64_t k_max_address = std::int64_t{1} << 62;  // real ones are below 2^57

// `where` builds the item's name only when a check fails (a snapshot has millions of items).
template <class Where>
void check_size(const snapshot& s, std::int64_t v, const Where& where, const char* field) {
    if (v >= 0 && v <= k_max_size) [[likely]] return;
    throw input_error::in_file(s.source_file, fmt::format("{}: {} = {} is out of range (0 to 1 PiB): "
                                                          "not a real allocator size", where(), field, v));
}

template <class Where>
void check_address(const snapshot& s, std::int64_t v, const Where& where) {
    if (v >= 0 && v < k_max_address) [[likely]] return;
    throw input_error::in_file(s.source_file, fmt::format("{}: address {} is out of range (0 to 2^62): "
                                                          "not a real device address", where(), v));
}

void check_total(const snapshot& s, std::int64_t& total, std::int64_t v, const char* what) {
    total += v;
    if (total > k_max_total)
        throw input_error::in_file(s.source_file,
                                   fmt::format("{} add up to more than 4 EiB: not a real snapshot", what));
}

// The trace checks of validate_sizes without naming anything, from the sums the list kept as
// its entries were added (trace_sums; snap33: before, one pass over the entries): true when every
// size is in range and the allocations' total stays below k_max_total (then the flags are set);
// false sends the caller to the exact loop, which names the first bad entry. The total only
// grows (the sizes are not negative once in range), so its end value decides, and a sum past
// 2^64 is flagged.
bool trace_in_range(const trace_list& t, bool& time_us, bool& workspace) {
    const trace_sums& s = t.sums();
    if (s.max_size > static_cast<std::uint64_t>(k_max_size) || s.total_wrapped ||
        s.total > static_cast<std::uint64_t>(k_max_total))
        return false;
    time_us = s.time;
    workspace = s.kinds[static_cast<std::size_t>(action_kind::workspace_snapshot)] > 0;
    return true;
}

// Also notes what the trace entries hold (time_us, workspace_snapshot), in the same pass.
void validate_sizes(snapshot& s) {
    std::int64_t seg_total = 0, block_total = 0;
    for (std::size_t i = 0; i < s.segments.size(); ++i) {
        const auto& seg = s.segments[i];
        const auto where = [i] { return fmt::format("segment {}", i); };
        check_size(s, seg.total_size, where, "total_size");
        check_size(s, seg.allocated_size, where, "allocated_size");
        check_size(s, seg.active_size, where, "active_size");
        check_size(s, seg.requested_size, where, "requested_size");
        check_total(s, seg_total, seg.total_size, "segment sizes");
        check_address(s, seg.address, where);
        for (std::size_t j = 0; j < seg.blocks.size(); ++j) {
            const auto& b = seg.blocks[j];
            const auto bw = [i, j] { return fmt::format("segment {}, block {}", i, j); };
            check_size(s, b.size, bw, "size");
            check_size(s, b.requested_size, bw, "requested_size");
            check_total(s, block_total, b.size, "block sizes");
            check_address(s, b.address, bw);
        }
    }
    for (std::size_t d = 0; d < s.device_traces.size(); ++d) {
        std::int64_t trace_total = 0;
        const auto& t = s.device_traces[d];
        const auto& frees = t.device_frees();
        std::size_t next_free = 0;
        bool time_us = false, workspace = false;
        if (frees.empty() && trace_in_range(t, time_us, workspace)) [[likely]] {
            if (time_us) s.info.has_time_us = true;
            if (workspace) s.info.has_workspace_snapshot = true;
            continue;
        }
        for (std::size_t k = 0; k < t.size(); ++k) {
            const auto& e = t[k];
            time_us |= e.time_us >= 0;
            workspace |= e.kind == action_kind::workspace_snapshot;
            const auto ew = [d, k] { return fmt::format("device_traces[{}][{}]", d, k); };
            check_size(s, e.size, ew, "size");
            if (next_free < frees.size() && frees[next_free].first == k) {
                const std::int64_t device_free = frees[next_free++].second;
                if (device_free >= 0) check_size(s, device_free, ew, "device_free");  // -1: absent
            }
            if (e.kind == action_kind::alloc || e.kind == action_kind::segment_alloc ||
                e.kind == action_kind::segment_map)
                check_total(s, trace_total, e.size, "trace allocations");
        }
        if (time_us) s.info.has_time_us = true;
        if (workspace) s.info.has_workspace_snapshot = true;
    }
}

}  // namespace

void finish_snapshot(snapshot& s) {
    validate_sizes(s);
    auto& in = s.info;
    bool npu = false, cuda = false;
    std::size_t with_entries = 0, max_entries = 0;
    for (const auto& t : s.device_traces) {
        if (!t.empty()) ++with_entries;
        max_entries = std::max(max_entries, t.size());
    }
    in.state_only = with_entries > 0 && max_entries <= 1;
    for (const auto& seg : s.segments)
        for (const auto& b : seg.blocks) {
            if (b.has_history) in.has_history = true;
            if (!b.address_derived) in.has_block_address = true;
        }
    for (const auto& f : s.frames) {
        if (f.filename.find("torch_npu") != std::string_view::npos) npu = true;
        else if (f.filename.find("torch/cuda") != std::string_view::npos ||
                 f.name.find("cuda") != std::string_view::npos ||
                 f.name.find("CUDA") != std::string_view::npos)
            cuda = true;
    }
    if (in.has_workspace_snapshot) npu = true;
    if (in.has_time_us || in.has_allocator_settings || in.has_external_annotations ||
        in.has_compile_context || in.has_user_metadata)
        cuda = true;
    in.producer = npu ? "npu" : cuda ? "cuda" : "unknown";
    if (in.top_level == "list") in.era = "list-only";
    else if (in.has_history) in.era = "2.0-history";
    else if (in.has_user_metadata) in.era = "2.9+";
    else if (in.has_compile_context) in.era = "2.7+";
    else if (in.has_external_annotations) in.era = "2.6+";
    else if (in.has_allocator_settings) in.era = "2.5+";
    else if (in.has_time_us) in.era = "2.2+";
    else if (npu) in.era = "npu";
    else in.era = "2.1";
}

}  // namespace oomdx::snap
