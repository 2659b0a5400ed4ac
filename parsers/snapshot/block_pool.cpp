#include "parsers/snapshot/block_pool.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <system_error>

#include "engine/core/thread_priority.h"
#include "parsers/snapshot/pickle_common.h"

namespace oomdx::snap {

namespace {
constexpr std::size_t k_ready = 1;  // one block ahead: 2 MiB of zero pages unused at the end
constexpr std::size_t k_align = std::size_t(2) << 20;
}  // namespace

block_pool& block_pool::shared() {
    static block_pool pool;
    return pool;
}

block_pool::~block_pool() {
    {
        std::lock_guard<std::mutex> lock(m_mu);
        m_stop = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable()) m_thread.join();
    for (void* b : m_ready) give_back(b);
}

// Fresh anonymous pages are zero: no fill pass. Over-mapped by 2 MiB to align, then trimmed.
// Not prefaulted: small pages touched as they are used (what a small input's array leaves of
// its second block stays out of the resident set).
void* block_pool::allocate(bool prefault) {
    void* raw = ::mmap(nullptr, k_block + k_align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto a = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t b = (a + k_align - 1) & ~(k_align - 1);
    if (b > a) ::munmap(raw, b - a);
    if (const std::uintptr_t tail = a + k_block + k_align - (b + k_block); tail > 0)
        ::munmap(reinterpret_cast<void*>(b + k_block), tail);
    void* block = reinterpret_cast<void*>(b);
    if (prefault) prefault_write(block, k_block);  // huge pages, faulted in with one call
    return block;
}

void block_pool::populate(void* p, std::size_t n) {
    populate_write(p, n);
}

void block_pool::give_back(void* block) {
    if (block) ::munmap(block, k_block);
}

void block_pool::release::operator()(void* p) const {
    if (pooled) give_back(p);
    else std::free(p);
}

block_pool::block_ptr block_pool::array_block(bool first) {
    if (!first) {
        bool faulted = false;
        void* b = shared().take(&faulted);
        return block_ptr(b, release{true, faulted});
    }
    void* p = std::calloc(1, k_block);  // big: fresh zero pages, no fill pass
    if (!p) throw std::bad_alloc();
    return block_ptr(p, release{false});
}

block_pool::block_ptr block_pool::whole_block() {
    return block_ptr(allocate(true), release{true, true});
}

void* block_pool::take(bool* faulted) {
    bool first = false;
    if (faulted) *faulted = true;
    {
        std::lock_guard<std::mutex> lock(m_mu);
        first = ++m_taken == 1;
        if (!m_ready.empty()) {
            void* b = m_ready.front();
            m_ready.pop_front();
            m_cv.notify_all();
            return b;
        }
        if (m_taken >= 2 && !m_thread.joinable() && std::thread::hardware_concurrency() > 1) {
            try {
                m_thread = std::thread([this] { run(); });
            } catch (const std::system_error&) {
                // no helper: every block is made on the caller's thread
            }
        }
    }
    m_cv.notify_all();
    // The first pooled block is most of what a small input (100 k events) uses beyond the
    // first blocks: faulted in as it fills (2 MiB prefaulted cost 100k-d20 0.8 MB unused).
    if (faulted) *faulted = !first;
    return allocate(!first);
}

void block_pool::run() {
    lower_this_thread_priority();
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(m_mu);
            m_cv.wait(lock, [&] { return m_stop || m_ready.size() < k_ready; });
            if (m_stop) return;
        }
        void* b = nullptr;
        try {
            b = allocate(true);
        } catch (const std::bad_alloc&) {
            return;  // out of memory: the caller's own allocation will report it
        }
        std::lock_guard<std::mutex> lock(m_mu);
        m_ready.push_back(b);
    }
}

}  // namespace oomdx::snap
