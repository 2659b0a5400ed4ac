#include "engine/core/mapped_file.h"

#include <algorithm>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/errors.h"
#include "engine/core/mapping_guard.h"

namespace oomdx {

mapped_file::mapped_file(const std::string& path) : m_path(path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw input_error::in_file(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int e = errno;
        ::close(fd);
        throw input_error::in_file(path, std::string("cannot stat: ") + std::strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        throw input_error::in_file(path, "is a directory, expected a file");
    }
    m_size = static_cast<size_t>(st.st_size);
    if (m_size > 0) {
        m_data = ::mmap(nullptr, m_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m_data == MAP_FAILED) {
            int e = errno;
            ::close(fd);
            m_data = nullptr;
            throw input_error::in_file(path, std::string("cannot map: ") + std::strerror(e));
        }
        ::madvise(m_data, m_size, MADV_SEQUENTIAL);
        guard_mapping(m_data, m_size, path);
    }
    m_fd = fd;
}

mapped_file::~mapped_file() {
    if (m_data) {
        unguard_mapping(m_data);
        ::munmap(m_data, m_size);
    }
    if (m_fd >= 0) ::close(m_fd);
}

void mapped_file::read_at(size_t offset, char* dst, size_t len) const {
    while (len > 0) {
        const ssize_t got = ::pread(m_fd, dst, len, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0)
            throw input_error::at_offset(m_path, static_cast<std::int64_t>(offset),
                                         got < 0 ? std::string("read error: ") + std::strerror(errno)
                                                 : std::string("file shrank while it was read"));
        offset += static_cast<size_t>(got);
        dst += got;
        len -= static_cast<size_t>(got);
    }
}

void mapped_file::populate(size_t offset, size_t len) const {
#ifndef MADV_POPULATE_READ
    constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14
#endif
    if (!m_data || len == 0) return;
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t from = offset / page * page;
    char* at = static_cast<char*>(m_data) + from;
    if (::madvise(at, std::min(offset + len, m_size) - from, MADV_POPULATE_READ) == 0 || errno != EFAULT) return;
    throw input_error::at_offset(m_path, static_cast<std::int64_t>(offset), "the file shrank while it was read");
}

void mapped_file::release_before(size_t offset) const {
    if (!m_data) return;
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t end = (std::min(offset, m_size) / page) * page;
    if (end <= m_released) return;
    ::madvise(static_cast<char*>(m_data) + m_released, end - m_released, MADV_DONTNEED);
    m_released = end;
}

}  // namespace oomdx
