#include "engine/core/mapping_guard.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

namespace oomdx {

namespace {

struct guarded {
    std::atomic<std::uintptr_t> begin{0}, end{0};
    char message[768] = {};  // written before `begin` is published
    size_t length = 0;
};

guarded g_slots[16];
std::mutex g_mu;  // registration only; the handler reads the atomics

void on_sigbus(int sig, siginfo_t* info, void*) {
    const auto at = reinterpret_cast<std::uintptr_t>(info ? info->si_addr : nullptr);
    for (auto& s : g_slots) {
        const std::uintptr_t b = s.begin.load(std::memory_order_acquire);
        if (b != 0 && at >= b && at < s.end.load(std::memory_order_acquire)) {
            ssize_t ignored = ::write(STDERR_FILENO, s.message, s.length);
            (void)ignored;
            ::_exit(2);
        }
    }
    // not ours: the default action (re-raised when the faulting access runs again)
    ::signal(sig, SIG_DFL);
}

void install_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction sa {};
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGBUS, &sa, nullptr);
    });
}

}  // namespace

void guard_mapping(const void* begin, size_t size, const std::string& path) {
    if (!begin || size == 0) return;
    install_once();
    std::lock_guard<std::mutex> lock(g_mu);
    for (auto& s : g_slots) {
        if (s.begin.load(std::memory_order_relaxed) != 0) continue;
        const std::string msg = "oomdx: error: " + path + ": the file shrank while it was read (truncated meanwhile)\n";
        s.length = std::min(msg.size(), sizeof s.message);
        std::memcpy(s.message, msg.data(), s.length);
        s.end.store(reinterpret_cast<std::uintptr_t>(begin) + size, std::memory_order_release);
        s.begin.store(reinterpret_cast<std::uintptr_t>(begin), std::memory_order_release);
        return;
    }
}

void unguard_mapping(const void* begin) {
    std::lock_guard<std::mutex> lock(g_mu);
    for (auto& s : g_slots)
        if (s.begin.load(std::memory_order_relaxed) == reinterpret_cast<std::uintptr_t>(begin)) {
            s.begin.store(0, std::memory_order_release);
            s.end.store(0, std::memory_order_release);
        }
}

}  // namespace oomdx
