#include "parsers/log/gzip_blocks.h"

#include <system_error>

#include "engine/core/errors.h"

namespace oomdx {

namespace {
constexpr size_t k_block = size_t{1} << 20;
constexpr size_t k_ring = 4;  // the reader's block and three ahead
}  // namespace

gzip_blocks::gzip_blocks(const std::string& path) : m_path(path), m_ring(k_ring) {
    m_gz = gzopen(path.c_str(), "rb");
    if (!m_gz) throw input_error::in_file(path, "cannot open gzip file");
    gzbuffer(m_gz, 1 << 18);
    for (auto& b : m_ring) b.bytes.resize(k_block);
    if (std::thread::hardware_concurrency() > 1) {
        try {
            m_thread = std::thread([this] { run(); });
        } catch (const std::system_error&) {
            // no helper: next() inflates on the caller's thread
        }
    }
}

gzip_blocks::~gzip_blocks() {
    {
        std::lock_guard<std::mutex> lock(m_mu);
        m_stop = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable()) m_thread.join();
    gzclose(m_gz);
}

// One block; size 0 at the end. Errors are stored in the block, for the reader to throw.
void gzip_blocks::inflate_into(block& b) {
    b.size = 0;
    b.error = nullptr;
    try {
        const int got = gzread(m_gz, b.bytes.data(), static_cast<unsigned>(b.bytes.size()));
        int err = 0;
        const char* msg = nullptr;
        if (got < 0) {
            msg = gzerror(m_gz, &err);
            throw input_error::at_offset(m_path, m_total, std::string("corrupt gzip data: ") + (msg ? msg : "read error"));
        }
        if (got == 0) {
            msg = gzerror(m_gz, &err);
            if (err != Z_OK && err != Z_STREAM_END)
                throw input_error::at_offset(m_path, m_total,
                                             std::string("truncated or corrupt gzip: ") + (msg ? msg : ""));
        }
        b.size = static_cast<size_t>(got);
        m_total += got;
        b.compressed = gzoffset(m_gz);
    } catch (...) {
        b.error = std::current_exception();
    }
}

void gzip_blocks::run() {
    for (size_t k = 0;; ++k) {
        {
            std::unique_lock<std::mutex> lock(m_mu);
            m_cv.wait(lock, [&] { return m_stop || k < m_taken + k_ring - 1; });  // the reader's block stays
            if (m_stop) return;
        }
        block& b = m_ring[k % k_ring];
        inflate_into(b);
        const bool last = b.size == 0 || b.error;
        {
            std::lock_guard<std::mutex> lock(m_mu);
            b.ready = true;
            ++m_filled;
        }
        m_cv.notify_all();
        if (last) return;
    }
}

std::string_view gzip_blocks::next() {
    if (m_done) return {};
    block& b = m_ring[m_next % k_ring];
    if (!m_thread.joinable()) {
        inflate_into(b);
    } else {
        std::unique_lock<std::mutex> lock(m_mu);
        if (m_next > 0) {  // the previous block goes back to the helper
            m_ring[(m_next - 1) % k_ring].ready = false;
            ++m_taken;
            m_cv.notify_all();
        }
        m_cv.wait(lock, [&] { return b.ready; });
    }
    ++m_next;
    if (b.error) {
        m_done = true;
        std::rethrow_exception(b.error);
    }
    if (b.size == 0) m_done = true;
    m_compressed = b.compressed;
    return {b.bytes.data(), b.size};
}

}  // namespace oomdx
