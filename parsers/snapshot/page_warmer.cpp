#include "parsers/snapshot/page_warmer.h"

#include <sys/mman.h>
#include <unistd.h>

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

namespace {
// Whole pages inside [p, p + n) only: a page shared with other data is left alone.
void populate_write(void* p, std::size_t n) {
#ifdef MADV_POPULATE_WRITE
    const auto ps = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t b = (a + ps - 1) & ~(ps - 1), e = (a + n) & ~(ps - 1);
    if (e > b) (void)::madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_WRITE);
#else
    (void)p, (void)n;
#endif
}
}  // namespace

void page_warmer::warm(void* p, std::size_t n) {
    if (n > 0) (void)shared().push(populate_write, p, n);
}

bool page_warmer::post(job_fn fn, void* ctx, std::size_t arg) { return shared().push(fn, ctx, arg); }

void page_warmer::drain() {
    page_warmer& w = shared();
    std::unique_lock<std::mutex> lock(w.m_mu);
    w.m_idle.wait(lock, [&] { return !w.m_thread.joinable() || (w.m_count == 0 && !w.m_busy); });
}

bool page_warmer::push(job_fn fn, void* ctx, std::size_t arg) {
    bool wake = false;
    {
        std::lock_guard<std::mutex> lock(m_mu);
        if (!m_thread.joinable()) {
            if (m_tried) return false;  // one core, or no thread
            m_tried = true;
            if (std::thread::hardware_concurrency() < 2) return false;
            try {
                m_thread = std::thread([this] { run(); });
            } catch (const std::system_error&) {
                return false;
            }
        }
        if (m_count == m_queue.size()) return false;  // the helper is late
        m_queue[(m_head + m_count++) % m_queue.size()] = job{fn, ctx, arg};
        wake = m_waiting;
    }
    if (wake) m_cv.notify_one();
    return true;
}

void page_warmer::run() {
    lower_this_thread_priority();
    for (;;) {
        job j{};
        {
            std::unique_lock<std::mutex> lock(m_mu);
            m_busy = false;
            if (m_count == 0) m_idle.notify_all();
            m_waiting = true;
            m_cv.wait(lock, [&] { return m_stop || m_count > 0; });
            m_waiting = false;
            if (m_stop) return;
            j = m_queue[m_head];
            m_head = (m_head + 1) % m_queue.size();
            --m_count;
            m_busy = true;
        }
        j.fn(j.ctx, j.arg);
    }
}

}  // namespace oomdx::snap
