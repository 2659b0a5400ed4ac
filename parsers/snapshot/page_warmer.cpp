#include "parsers/snapshot/page_warmer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <system_error>

#include "engine/core/thread_priority.h"

namespace oomdx::snap {

page_warmer& page_warmer::shared() {
    static page_warmer w;
    return w;
}

page_warmer::~page_warmer() {
    {
        std::lock_guard<std::mutex> lock(m_mu);
        m_stop = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

void page_warmer::warm(void* p, std::size_t n) {
#ifdef MADV_POPULATE_WRITE
    if (n > 0) shared().push(p, n);
#else
    (void)p, (void)n;
#endif
}

void page_warmer::push(void* p, std::size_t n) {
    bool wake = false;
    {
        std::lock_guard<std::mutex> lock(m_mu);
        if (!m_thread.joinable()) {
            if (m_tried) return;  // one core, or no thread: the writer faults its pages itself
            m_tried = true;
            if (std::thread::hardware_concurrency() < 2) return;
            try {
                m_thread = std::thread([this] { run(); });
            } catch (const std::system_error&) {
                return;
            }
        }
        if (m_count == m_queue.size()) return;  // the helper is late: the writer faults them
        m_queue[(m_head + m_count++) % m_queue.size()] = range{p, n};
        wake = m_waiting;
    }
    if (wake) m_cv.notify_one();
}

void page_warmer::run() {
    lower_this_thread_priority();
    for (;;) {
        range r{};
        {
            std::unique_lock<std::mutex> lock(m_mu);
            m_waiting = true;
            m_cv.wait(lock, [&] { return m_stop || m_count > 0; });
            m_waiting = false;
            if (m_stop) return;
            r = m_queue[m_head];
            m_head = (m_head + 1) % m_queue.size();
            --m_count;
        }
#ifdef MADV_POPULATE_WRITE
        // Whole pages inside the range only: a page shared with other data is left alone.
        const auto ps = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
        const auto a = reinterpret_cast<std::uintptr_t>(r.p);
        const std::uintptr_t b = (a + ps - 1) & ~(ps - 1), e = (a + r.n) & ~(ps - 1);
        if (e > b) (void)::madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_WRITE);
#endif
    }
}

}  // namespace oomdx::snap
