// Pieces shared by the pickle and JSON snapshot readers: frame and frame-list interning,
// key ids, and the final pass that derives snapshot_info.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "parsers/snapshot/snapshot_model.h"

namespace oomdx::snap {

// Well-known dictionary keys, interned first so that their string ids equal these values.
enum key_id : std::uint32_t {
    k_segments, k_device_traces, k_traces, k_allocator_settings, k_external_annotations,
    k_host_segments, k_host_traces, k_device, k_address, k_total_size, k_allocated_size,
    k_active_size, k_requested_size, k_stream, k_segment_type, k_segment_pool_id,
    k_is_expandable, k_frames, k_blocks, k_size, k_state, k_history, k_addr, k_real_size,
    k_action, k_time_us, k_device_free, k_compile_context, k_user_metadata, k_name,
    k_filename, k_line, k_stage, k_key_count
};
void intern_known_keys(string_pool& pool);

// Doubles an open-addressing table (linear probing, power-of-two size; `first` slots when it is
// empty) and puts back every slot `used` accepts at its `hash`.
template <class Slot, class Used>
void grow_open_table(std::vector<Slot>& table, std::size_t first, Used used) {
    std::vector<Slot> old(table.empty() ? first : table.size() * 2);
    old.swap(table);
    const std::size_t mask = table.size() - 1;
    for (const Slot& s : old) {
        if (!used(s)) continue;
        std::size_t i = s.hash & mask;
        while (used(table[i])) i = (i + 1) & mask;
        table[i] = s;
    }
}

class frame_interner {
public:
    explicit frame_interner(snapshot& s) : m_snap(s) {}
    frame_id intern_frame(std::uint32_t filename, std::uint32_t name, std::int64_t line);
    frames_id intern_list(const frame_id* ids, std::size_t n);

private:
    struct key {
        std::uint32_t filename, name;
        std::int64_t line;
        bool operator==(const key&) const = default;
    };
    struct key_hash {
        std::size_t operator()(const key& k) const noexcept {
            std::uint64_t h = (std::uint64_t(k.filename) << 32) ^ k.name;
            h ^= static_cast<std::uint64_t>(k.line) * 0x9E3779B97F4A7C15ULL;
            h *= 0xff51afd7ed558ccdULL;
            return static_cast<std::size_t>(h ^ (h >> 33));
        }
    };
    // Open addressing over list ids: the hash and length sit in the slot, so a lookup reads
    // the slot and, on a match, the list itself.
    struct slot {
        std::uint64_t hash = 0;
        std::int32_t id = -1;
        std::uint32_t len = 0;
    };
    void grow();
    frames_id lookup(const frame_id* ids, std::size_t n);
    frames_id follow(frames_id id);
    snapshot& m_snap;
    std::unordered_map<key, frame_id, key_hash> m_frames;
    std::vector<slot> m_table;
    std::size_t m_count = 0;
    std::vector<frames_id> m_next;  // per list: the list interned after it last time
    frames_id m_prev = 0;
};

block_state parse_block_state(std::string_view s);

// A fast 64-bit hash of n bytes (for in-memory tables, not stable across versions).
std::uint64_t hash_bytes(const void* p, std::size_t n);

// Memory hints for big buffers: back [p, p+n) with huge pages and fault it in with one call
// (fewer page faults); read-ahead of a mapped input window. Best effort, no-ops on failure.
void prefault_write(void* p, std::size_t n);
void prefault_read(const void* p, std::size_t n);
// Faults [p, p+n) of fresh anonymous memory in with one call, small pages (no huge-page
// advice): a growing array's next 64 KiB, cheaper than a fault per page (docs/snapshot.md,
// snap14). Best effort.
void populate_write(void* p, std::size_t n);

// Sum without signed overflow, for values not validated yet (finish_snapshot checks ranges).
inline std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
// Checks sizes and addresses (throws input_error), then fills s.info (era, producer, flags)
// from the decoded content.
void finish_snapshot(snapshot& s);

}  // namespace oomdx::snap
