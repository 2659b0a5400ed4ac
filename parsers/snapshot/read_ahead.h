// Keeps a mapped input's resident window just around its reader, on a helper thread: faults in
// the window ahead, so the reader's thread does not stop for page faults, and releases the
// pages behind the reader (the unmapping was ~4% of the reader's time on large files). Inline
// (on the caller's thread) when the machine has one core or the input is small (up to
// k_small: no thread to start, wake and shoot TLB entries down for), where it only releases
// (the reader's own faults map the pages ahead, 64 KiB each); the reader releases itself
// when the helper falls more than k_max_lag behind (a starved low-priority thread on a busy
// machine), unless the helper is releasing at that moment (the reader never waits for it).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>

namespace oomdx::snap {

class read_ahead {
public:
    // `release(offset)` drops the pages before `offset`; it is called on one thread at a time.
    read_ahead(const unsigned char* base, std::size_t size, std::size_t window,
               std::function<void(std::size_t)> release = {});
    ~read_ahead();
    read_ahead(const read_ahead&) = delete;
    read_ahead& operator=(const read_ahead&) = delete;

    // The reader is at `offset`: [offset, offset + window) should be resident (faulted in ahead
    // by the helper; inline, by the reader as it reads), the pages before `offset` may go.
    void advance(std::size_t offset);

    static constexpr std::size_t k_max_lag = std::size_t(1) << 20;

    // How often a reader of `size` bytes calls advance(), and the window it keeps ahead:
    // 512 KiB and 1 MiB, ~1.5 MB of the input resident; 64 and 128 KiB up to 16 MiB, read
    // inline, where the window is a few percent of the peak (100k-d20: 7.4 MB, docs/snapshot.md
    // snap10) and the extra calls cost nothing measurable.
    static std::size_t step_for(std::size_t size) { return size <= k_small ? std::size_t(64) << 10 : std::size_t(512) << 10; }
    static std::size_t window_for(std::size_t size) { return size <= k_small ? std::size_t(128) << 10 : std::size_t(1) << 20; }
    static constexpr std::size_t k_small = std::size_t(16) << 20;

private:
    void run();
    void release_to(std::size_t offset, bool wait);

    const unsigned char* m_base;
    std::size_t m_size, m_window;
    std::function<void(std::size_t)> m_release;
    std::mutex m_mu;
    std::condition_variable m_cv;
    std::size_t m_reader = 0, m_target = 0;
    std::size_t m_released_seen = 0;  // the reader's offset the helper last released to
    bool m_stop = false;
    std::mutex m_release_mu;                 // held while m_release runs
    std::atomic<std::size_t> m_released{0};  // what m_release was last called with
    std::thread m_thread;
};

}  // namespace oomdx::snap
