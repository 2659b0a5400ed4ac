#include "parsers/snapshot/read_ahead.h"

#include <algorithm>
#include <system_error>

#include "engine/core/thread_priority.h"
#include "parsers/snapshot/pickle_common.h"

namespace oomdx::snap {

read_ahead::read_ahead(const unsigned char* base, std::size_t size, std::size_t window,
                       std::function<void(std::size_t)> release)
    : m_base(base), m_size(size), m_window(window), m_release(std::move(release)) {
    if (size > window && size > k_small && std::thread::hardware_concurrency() > 1) {
        try {
            m_thread = std::thread([this] { run(); });
        } catch (const std::system_error&) {
            // no helper: advance() faults the window in on the caller's thread
        }
    }
}

read_ahead::~read_ahead() {
    {
        std::lock_guard<std::mutex> lock(m_mu);
        m_stop = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

// wait=false: skipped when the other thread is releasing (the reader never waits behind the
// helper, which may be descheduled while it holds the lock).
void read_ahead::release_to(std::size_t offset, bool wait) {
    if (!m_release) return;
    std::unique_lock<std::mutex> lock(m_release_mu, std::defer_lock);
    if (wait) lock.lock();
    else if (!lock.try_lock()) return;
    if (offset <= m_released.load(std::memory_order_relaxed)) return;
    m_release(offset);
    m_released.store(offset, std::memory_order_relaxed);
}

void read_ahead::advance(std::size_t offset) {
    if (!m_thread.joinable()) {
        // Inline: release only. On the reader's own thread, populating ahead costs more than
        // the faults it saves (each maps 64 KiB, the kernel's fault-around): 8.5 MB mapped and
        // released in ~1.3 ms instead of ~1.9 ms (docs/snapshot.md, snap11).
        release_to(offset, true);
        return;
    }
    const std::size_t target = std::min(m_size, offset + m_window);
    {
        std::lock_guard<std::mutex> lock(m_mu);
        m_reader = offset;
        m_target = std::max(m_target, target);
    }
    m_cv.notify_all();
    if (offset > m_released.load(std::memory_order_relaxed) + k_max_lag) release_to(offset, false);
}

void read_ahead::run() {
    lower_this_thread_priority();
    constexpr std::size_t step = std::size_t(2) << 20;
    std::size_t done = 0;
    for (;;) {
        std::size_t from = 0, to = 0, reader = 0;
        {
            std::unique_lock<std::mutex> lock(m_mu);
            m_cv.wait(lock, [&] { return m_stop || m_target > std::max(done, m_reader) || m_reader > m_released_seen; });
            if (m_stop) return;
            reader = m_reader;
            from = std::max(done, m_reader);  // never behind the reader (it releases pages there)
            to = std::min(m_target, from + step);
            m_released_seen = reader;
        }
        release_to(reader, true);
        if (to > from) prefault_read(m_base + from, to - from);
        done = std::max(done, to);
    }
}

}  // namespace oomdx::snap
