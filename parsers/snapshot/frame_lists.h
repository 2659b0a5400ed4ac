// Frame lists stored back to back in 1 MiB blocks: no reallocation copy (and no doubled peak)
// while a trace with hundreds of thousands of distinct stacks is read. Each list lies within
// one block; a list longer than a block gets a block of its own. List 0 is the empty list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace oomdx::snap {

using frame_id = std::int32_t;   // index into snapshot::frames
using frames_id = std::int32_t;  // index of a frame list; 0 is always the empty list

class frame_lists {
public:
    frame_lists() { add(nullptr, 0); }
    std::size_t size() const { return m_len.size(); }
    std::span<const frame_id> operator[](frames_id id) const {
        if (m_len[id] == 0) return {};
        const std::uint64_t p = m_pos[id];
        return {m_blocks[p >> 32].get() + (p & 0xffffffffu), m_len[id]};
    }
    // Starts loading a list into the cache (its items may be compared soon).
    void prefetch(frames_id id) const {
        if (static_cast<std::size_t>(id) >= m_len.size() || m_len[id] == 0) return;
        const std::uint64_t p = m_pos[id];
        const char* b = reinterpret_cast<const char*>(m_blocks[p >> 32].get() + (p & 0xffffffffu));
        const char* e = b + m_len[id] * sizeof(frame_id);
        for (; b < e; b += 64) __builtin_prefetch(b);
    }
    // Appends a list (no deduplication: see frame_interner) and returns its id.
    frames_id add(const frame_id* ids, std::size_t n);

private:
    static constexpr std::size_t k_block = std::size_t(1) << 18;  // frame ids per block
    std::vector<std::unique_ptr<frame_id[]>> m_blocks;
    std::size_t m_used = k_block;     // ids used in the last block
    std::vector<std::uint64_t> m_pos;  // block << 32 | offset
    std::vector<std::uint32_t> m_len;
};

}  // namespace oomdx::snap
