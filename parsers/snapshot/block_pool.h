// Zero-filled 2 MiB blocks (2 MiB aligned: one huge page, already faulted in), prepared
// ahead on a helper thread: a reader that grows big arrays does not stop for page faults.
// The helper starts with the second block taken (small inputs never start it) and keeps one
// block ready; the first block taken is faulted in as it is used (small pages). Thread-safe;
// blocks are returned with give_back.
#pragma once

#include <condition_variable>
#include <cstddef>
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
    // A whole block faulted in at once, as one huge page where the kernel gives one (one fault
    // instead of 512): for an array known to fill it. Throws std::bad_alloc.
    static block_ptr whole_block();
    // Faults [p, p+n) of a block in with one call, small pages: a growing array's next 64 KiB,
    // cheaper than a fault per page (docs/snapshot.md, snap14). Best effort.
    static void populate(void* p, std::size_t n);

    ~block_pool();

private:
    block_pool() = default;
    static void* allocate(bool prefault);
    void run();

    std::mutex m_mu;
    std::condition_variable m_cv;
    std::deque<void*> m_ready;
    std::size_t m_taken = 0;
    bool m_stop = false;
    std::thread m_thread;
};

}  // namespace oomdx::snap
