// A deterministic model of PyTorch's CUDA caching allocator (one stream, default settings),
// replayed over a sequence of allocations and frees to find the reserved high-water mark.
// The rules it follows, with their source: knowledge/allocator.yaml (c10/cuda/CUDACachingAllocator.cpp).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace oomdx::est {

constexpr std::int64_t k_alloc_round_large = 2 << 20;  // kRoundLarge: segments above 10 MiB round up to 2 MiB

class allocator_sim {
public:
    // `limit`: bytes the allocator may reserve (device capacity less what lies outside it);
    // 0 = unlimited. Over it, cached whole segments are released and the request retried.
    explicit allocator_sim(std::int64_t limit = 0) : m_limit(limit) {}

    // Returns a handle, or -1 when the request cannot be met even after releasing the cache (OOM).
    int alloc(std::int64_t bytes);
    void free(int handle);

    std::int64_t reserved() const { return m_reserved; }
    std::int64_t peak_reserved() const { return m_peak_reserved; }
    std::int64_t allocated() const { return m_allocated; }
    std::int64_t peak_allocated() const { return m_peak_allocated; }
    int ooms() const { return m_ooms; }
    int segments() const { return m_segments; }

private:
    struct block {
        std::int64_t addr = 0, size = 0;
        int prev = -1, next = -1;   // neighbours in the same segment
        bool used = false, live = false;
    };
    using free_key = std::pair<std::int64_t, std::int64_t>;  // (size, addr)
    int new_block();
    int find_free(std::int64_t size);
    std::vector<std::pair<free_key, int>>::iterator free_slot(const free_key& k);  // first entry >= k
    void add_free(std::int64_t size, std::int64_t addr, int block);
    void remove_free(std::int64_t size, std::int64_t addr);
    bool grow(std::int64_t size);   // cudaMalloc one segment; false over the limit
    void release_cached();          // free every unsplit cached segment (the OOM retry, empty_cache)

    std::vector<block> m_blocks;
    std::vector<int> m_spare;                                   // reusable block indices
    // (size, addr) -> cached block, sorted: best fit first. A sorted vector, not a map: the cache holds
    // tens of blocks, and a replay inserts and erases once per request (no allocation per entry).
    std::vector<std::pair<free_key, int>> m_free;
    std::int64_t m_limit = 0, m_next_addr = 0;
    std::int64_t m_reserved = 0, m_peak_reserved = 0, m_allocated = 0, m_peak_allocated = 0;
    std::int64_t m_small = 0;       // <= 1 MiB requests: small pool, kept as a byte count
    int m_ooms = 0, m_segments = 0;
};

}  // namespace oomdx::est
