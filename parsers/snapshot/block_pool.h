// Zero-filled 2 MiB blocks (2 MiB aligned: one huge page, already faulted in), prepared
// ahead on a helper thread: a reader that grows big arrays does not stop for page faults.
// From the second block taken on, the helper keeps one block ready; the first is faulted in as it is
// used (small pages), its next 64 KiB touched by the helper ahead of the writer (warm). Thread-safe;
// blocks are returned with give_back.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace oomdx::snap {

class block_pool {
public:
    // One huge page: what a growing array leaves unused at its end, and what the helper keeps
    // ready (one block), stays small.
    static constexpr std::size_t k_block = std::size_t(2) << 20;

    static block_pool& shared();
    void* take(bool* faulted = nullptr);  // throws std::bad_alloc
    static void give_back(void* block);

    // One owned block of a growing array (chunked_list, the pickle memo): the first block of an
    // array comes from the heap, zero-filled (small inputs never reach the pool), later ones
    // from the shared pool. Throws std::bad_alloc.
    struct release {
        bool pooled = false;
        bool faulted = false;  // every page already faulted in (a block prepared ahead)
        void operator()(void* p) const;
    };
    using block_ptr = std::unique_ptr<void, release>;
    static block_ptr array_block(bool first);
    // Faults [p, p+n) of a block in with one call, small pages: a growing array's next 64 KiB,
    // cheaper than a fault per page (docs/snapshot.md, snap14). Best effort.
    static void populate(void* p, std::size_t n);

    // The next 64 KiB of a growing array's small pages, faulted in and touched on the helper
    // thread while the writer fills the current 64 KiB. On a guest with shadow page tables the
    // first access to a 4 KiB page traps to the hypervisor even after MADV_POPULATE_WRITE
    // (~10-40 us); a page another thread has touched costs the writer nothing
    // (docs/snapshot.md, snap20). Returns a ticket (0: not taken, no helper).
    static std::uint32_t warm(void* p, std::size_t n);
    // Settles ticket t before its range is touched: waits while the helper is on it; true when
    // the range is ready, false when the helper had not started it (then it never will; the
    // caller populates it). A ticket must be settled before its memory is freed. 0: false.
    static bool settle(std::uint32_t t);

    ~block_pool();

private:
    block_pool() = default;
    static void* allocate(bool prefault);
    void run();
    void start_helper();  // with m_mu held

    // Warm requests: a ticket's slot is ticket % k_warm_slots.
    enum class warm_state : std::uint8_t { free, pending, working, done };
    struct warm_req {
        void* p = nullptr;
        std::size_t n = 0;
        std::uint32_t ticket = 0;
        warm_state state = warm_state::free;
    };
    static constexpr std::size_t k_warm_slots = 8;
    std::array<warm_req, k_warm_slots> m_warm{};
    std::uint32_t m_next_ticket = 0;
    std::size_t m_warm_pending = 0;

    std::mutex m_mu;
    std::condition_variable m_cv;
    std::deque<void*> m_ready;
    std::size_t m_taken = 0;
    bool m_stop = false;
    std::thread m_thread;
};

}  // namespace oomdx::snap
