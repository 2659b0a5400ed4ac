#include "parsers/snapshot/frame_lists.h"

#include <cstring>

namespace oomdx::snap {

frames_id frame_lists::add(const frame_id* ids, std::size_t n) {
    std::uint64_t pos = 0;
    if (n > k_block) {  // a block of its own; the next short list starts a new block
        m_blocks.push_back(std::make_unique_for_overwrite<frame_id[]>(n));
        m_used = k_block;
        pos = std::uint64_t(m_blocks.size() - 1) << 32;
    } else if (n > 0) {
        if (m_used + n > k_block) {
            m_blocks.push_back(std::make_unique_for_overwrite<frame_id[]>(k_block));
            m_used = 0;
        }
        pos = std::uint64_t(m_blocks.size() - 1) << 32 | m_used;
        m_used += n;
    }
    if (n) std::memcpy(m_blocks[pos >> 32].get() + (pos & 0xffffffffu), ids, n * sizeof(frame_id));
    m_pos.push_back(pos);
    m_len.push_back(static_cast<std::uint32_t>(n));
    return static_cast<frames_id>(m_len.size() - 1);
}

}  // namespace oomdx::snap
