// Caching-allocator replay (allocator_sim.h); the rules: knowledge/allocator.yaml.
#include "engine/estimator/allocator_sim.h"

#include <algorithm>

namespace oomdx::est {
namespace {
constexpr std::int64_t k_min_block = 512;            // kMinBlockSize: every request rounds up to 512 B
constexpr std::int64_t k_small_size = 1 << 20;       // kSmallSize: <= 1 MiB goes to the small pool
constexpr std::int64_t k_large_buffer = 20 << 20;    // kLargeBuffer: 1-10 MiB requests get a 20 MiB segment
constexpr std::int64_t k_min_large_alloc = 10 << 20; // kMinLargeAlloc

std::int64_t round_up(std::int64_t v, std::int64_t m) { return (v + m - 1) / m * m; }
}  // namespace

int allocator_sim::new_block() {
    if (!m_spare.empty()) {
        const int i = m_spare.back();
        m_spare.pop_back();
        m_blocks[i] = block{};
        return i;
    }
    m_blocks.emplace_back();
    return int(m_blocks.size()) - 1;
}

std::vector<std::pair<allocator_sim::free_key, int>>::iterator allocator_sim::free_slot(const free_key& k) {
    return std::lower_bound(m_free.begin(), m_free.end(), k, [](const auto& e, const free_key& x) { return e.first < x; });
}

int allocator_sim::find_free(std::int64_t size) {
    // get_free_block: the smallest cached block that fits (size order, then address)
    const auto it = free_slot({size, 0});
    if (it == m_free.end()) return -1;
    const int i = it->second;
    m_free.erase(it);
    return i;
}

void allocator_sim::add_free(std::int64_t size, std::int64_t addr, int block) {
    const free_key k{size, addr};
    const auto it = free_slot(k);
    if (it != m_free.end() && it->first == k) return;  // a key is cached once (as the map kept it)
    m_free.insert(it, {k, block});
}

void allocator_sim::remove_free(std::int64_t size, std::int64_t addr) {
    const free_key k{size, addr};
    const auto it = free_slot(k);
    if (it != m_free.end() && it->first == k) m_free.erase(it);
}

bool allocator_sim::grow(std::int64_t size) {
    const std::int64_t seg = size < k_min_large_alloc ? k_large_buffer : round_up(size, k_alloc_round_large);
    if (m_limit > 0 && m_reserved + seg > m_limit) return false;
    const int i = new_block();
    m_blocks[i].addr = m_next_addr;
    m_blocks[i].size = seg;
    m_blocks[i].live = true;
    m_next_addr += seg;
    add_free(seg, m_blocks[i].addr, i);
    m_reserved += seg;
    m_peak_reserved = std::max(m_peak_reserved, m_reserved);
    ++m_segments;
    return true;
}

void allocator_sim::release_cached() {
    std::size_t kept = 0;
    for (std::size_t j = 0; j < m_free.size(); ++j) {
        block& b = m_blocks[m_free[j].second];
        if (b.prev < 0 && b.next < 0) {  // a whole segment: cudaFree
            m_reserved -= b.size;
            --m_segments;
            b.live = false;
            m_spare.push_back(m_free[j].second);
        } else {
            m_free[kept++] = m_free[j];
        }
    }
    m_free.resize(kept);
}

int allocator_sim::alloc(std::int64_t bytes) {
    const std::int64_t size = round_up(std::max<std::int64_t>(bytes, 1), k_min_block);
    if (size <= k_small_size) {  // small pool: packed in 2 MiB segments, not modelled block by block
        m_small += size;
        m_allocated += size;
        m_peak_allocated = std::max(m_peak_allocated, m_allocated);
        const int i = new_block();
        m_blocks[i].size = size;
        m_blocks[i].used = true;
        m_blocks[i].live = true;
        m_blocks[i].addr = -1;
        return i;
    }
    int i = find_free(size);
    if (i < 0) {
        // cudaMalloc; over the limit, release the cached segments and retry (malloc's retry path)
        if (!grow(size)) {
            release_cached();
            if (!grow(size)) {
                ++m_ooms;
                return -1;
            }
        }
        i = find_free(size);
    }
    // should_split (large pool): split when more than kSmallSize would remain
    if (m_blocks[i].size - size > k_small_size) {
        const int r = new_block();
        block& b = m_blocks[i];
        block& rest = m_blocks[r];
        rest.addr = b.addr + size;
        rest.size = b.size - size;
        rest.prev = i;
        rest.next = b.next;
        rest.live = true;
        if (b.next >= 0) m_blocks[b.next].prev = r;
        b.next = r;
        b.size = size;
        add_free(rest.size, rest.addr, r);
    }
    m_blocks[i].used = true;
    m_allocated += m_blocks[i].size;
    m_peak_allocated = std::max(m_peak_allocated, m_allocated);
    return i;
}

void allocator_sim::free(int h) {
    if (h < 0 || h >= int(m_blocks.size()) || !m_blocks[h].used) return;
    block* b = &m_blocks[h];
    m_allocated -= b->size;
    b->used = false;
    if (b->addr < 0) {  // small pool
        m_small -= b->size;
        b->live = false;
        m_spare.push_back(h);
        return;
    }
    // free_block: merge with free neighbours of the same segment
    for (int side = 0; side < 2; ++side) {
        const int n = side == 0 ? b->prev : b->next;
        if (n < 0 || m_blocks[n].used) continue;
        block& o = m_blocks[n];
        remove_free(o.size, o.addr);
        if (side == 0) {
            b->addr = o.addr;
            b->prev = o.prev;
            if (o.prev >= 0) m_blocks[o.prev].next = h;
        } else {
            b->next = o.next;
            if (o.next >= 0) m_blocks[o.next].prev = h;
        }
        b->size += o.size;
        o.live = false;
        m_spare.push_back(n);
        b = &m_blocks[h];
    }
    add_free(b->size, b->addr, h);
}

}  // namespace oomdx::est
