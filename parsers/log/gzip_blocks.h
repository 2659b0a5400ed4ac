// Inflates a .gz file into 1 MiB blocks of text, on a helper thread that runs up to three
// blocks ahead of the reader (inline when the machine has one core).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <zlib.h>

namespace oomdx {

class gzip_blocks {
public:
    explicit gzip_blocks(const std::string& path);  // throws input_error when it cannot open
    ~gzip_blocks();
    gzip_blocks(const gzip_blocks&) = delete;
    gzip_blocks& operator=(const gzip_blocks&) = delete;

    // The next block (empty at the end of the data), valid until the next call. Throws
    // input_error for corrupt or truncated data, at the decompressed offset.
    std::string_view next();
    std::int64_t compressed_offset() const { return m_compressed; }  // after the last block

private:
    struct block {
        std::vector<char> bytes;
        size_t size = 0;
        std::int64_t compressed = 0;
        std::exception_ptr error;
        bool ready = false;
    };
    void inflate_into(block& b);
    void run();

    std::string m_path;
    gzFile m_gz = nullptr;
    std::int64_t m_total = 0;       // decompressed bytes inflated so far
    std::int64_t m_compressed = 0;  // of the block last returned
    std::vector<block> m_ring;
    size_t m_next = 0;  // the block next() returns
    bool m_done = false;
    std::mutex m_mu;
    std::condition_variable m_cv;
    size_t m_filled = 0, m_taken = 0;  // blocks inflated / handed out
    bool m_stop = false;
    std::thread m_thread;
};

}  // namespace oomdx
