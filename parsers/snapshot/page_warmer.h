// Faults in, on a helper thread, the pages a growing array will write next, so that the
// reader's thread does not stop for them: the first blocks of the trace entries and of the
// memo are fresh small pages (block_pool), ~1 us of kernel time each on the reader's thread,
// 780 of them for 100 k trace entries (docs/snapshot.md, snap13). An array asks for the next
// step of a block as it enters the current one, so what is faulted in and never written is at
// most one step per array. Best effort: with one core, or when the helper is late or its
// queue full, the writer faults the pages itself as before. Thread-safe.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

namespace oomdx::snap {

class page_warmer {
public:
    static constexpr std::size_t k_step = std::size_t(64) << 10;

    // Fault in [p, p + n) for writing, soon, on the helper thread.
    static void warm(void* p, std::size_t n);

    ~page_warmer();

private:
    page_warmer() = default;
    static page_warmer& shared();
    void push(void* p, std::size_t n);
    void run();

    struct range {
        void* p;
        std::size_t n;
    };
    std::mutex m_mu;
    std::condition_variable m_cv;
    std::array<range, 16> m_queue{};
    std::size_t m_head = 0, m_count = 0;
    bool m_stop = false, m_waiting = false, m_tried = false;
    std::thread m_thread;
};

}  // namespace oomdx::snap
