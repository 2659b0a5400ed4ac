// Page work for a reader, on a helper thread, so that the reader's thread does not stop for
// it: faulting in the pages a growing array will write next (the first blocks of the trace
// entries and of the memo are fresh small pages, ~1 us of kernel time each, 780 of them for
// 100 k trace entries), and a small input's pages ahead of the cursor and their release behind
// it (read_ahead inline; docs/snapshot.md, snap13). An array asks for the next 64 KiB step of a
// block as it enters the current one, so what is faulted in and never written is at most one
// step per array. Best effort: with one core, or when the queue is full, a request is refused
// and the caller does the work itself (or the writer faults the pages as before). Thread-safe.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

namespace oomdx::snap {

class page_warmer {
public:
    static constexpr std::size_t k_step = std::size_t(64) << 10;

    // Fault in [p, p + n) for writing, soon. Faulting in never changes what memory holds
    // (MADV_POPULATE_WRITE), so a request that comes after its memory was freed costs at most
    // some resident pages.
    static void warm(void* p, std::size_t n);
    // Runs fn(ctx, arg) on the helper; false when refused (do the work on the caller's
    // thread). Whatever ctx points to must outlive the job: drain() first.
    using job_fn = void (*)(void* ctx, std::size_t arg);
    static bool post(job_fn fn, void* ctx, std::size_t arg);
    // Returns once every job accepted so far is done.
    static void drain();

    ~page_warmer();

private:
    page_warmer() = default;
    static page_warmer& shared();
    bool push(job_fn fn, void* ctx, std::size_t arg);
    void run();

    struct job {
        job_fn fn;
        void* ctx;
        std::size_t arg;
    };
    std::mutex m_mu;
    std::condition_variable m_cv, m_idle;
    std::array<job, 32> m_queue{};
    std::size_t m_head = 0, m_count = 0;
    bool m_stop = false, m_waiting = false, m_tried = false, m_busy = false;
    std::thread m_thread;
};

}  // namespace oomdx::snap
