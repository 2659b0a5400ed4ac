// A read-only memory-mapped file (empty files map to an empty view).
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>

namespace oomdx {

class mapped_file {
public:
    // Throws input_error naming the path when it cannot be opened or mapped.
    explicit mapped_file(const std::string& path);
    ~mapped_file();
    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;

    std::string_view view() const { return {static_cast<const char*>(m_data), m_size}; }
    const unsigned char* data() const { return static_cast<const unsigned char*>(m_data); }
    size_t size() const { return m_size; }
    const std::string& path() const { return m_path; }
    // Copies [offset, offset + len) with pread: no page mapping, so a big sequential read
    // streams faster than first touches of the mapping. Throws input_error on a read error.
    void read_at(size_t offset, char* dst, size_t len) const;
    // Maps [offset, offset + len) in one call (cheaper than a fault per 64 KiB); throws
    // input_error when the file has shrunk below it. Reads of the mapping are guarded anyway
    // (mapping_guard.h): a file truncated later ends the run with a one-line error.
    void populate(size_t offset, size_t len) const;
    // Tell the kernel these pages will not be read again (keeps RSS flat on big inputs).
    // Thread-safe: each range is given back once, by whichever thread gets there first.
    void release_before(size_t offset) const;
    // release_before(offset) once at least k_release_step bytes before it are still mapped in
    // (readers call it as they go; fewer, larger calls).
    void release_behind(size_t offset) const {
        if (offset >= m_released.load(std::memory_order_relaxed) + k_release_step) release_before(offset);
    }
    static constexpr size_t k_release_step = size_t{8} << 20;

private:
    std::string m_path;
    void* m_data = nullptr;
    size_t m_size = 0;
    int m_fd = -1;
    mutable std::atomic<size_t> m_released{0};  // bytes from the start already given back
};

}  // namespace oomdx
