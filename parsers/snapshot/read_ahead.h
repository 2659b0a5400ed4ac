// Faults in the window of a mapped input just ahead of its reader, on a helper thread, so the
// reader's thread does not stop for page faults. Inline (on the caller's thread) when the
// machine has one core.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

namespace oomdx::snap {

class read_ahead {
public:
    read_ahead(const unsigned char* base, std::size_t size, std::size_t window);
    ~read_ahead();
    read_ahead(const read_ahead&) = delete;
    read_ahead& operator=(const read_ahead&) = delete;

    // The reader is at `offset`: [offset, offset + window) should be resident.
    void advance(std::size_t offset);

private:
    void run();

    const unsigned char* m_base;
    std::size_t m_size, m_window;
    std::mutex m_mu;
    std::condition_variable m_cv;
    std::size_t m_reader = 0, m_target = 0;
    bool m_stop = false;
    std::thread m_thread;
};

}  // namespace oomdx::snap
