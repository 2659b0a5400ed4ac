#include "engine/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "engine/core/errors.h"

namespace oomdx {

void write_file_atomic(const std::string& path, std::string_view text) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    // A unique name in the target's directory: mkstemp creates it exclusively.
    std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) throw input_error::in_file(path, std::string("cannot create a file beside it: ") + std::strerror(errno));
    auto fail = [&](const char* what) {
        const int err = errno;
        ::close(fd);
        ::unlink(tmpl.c_str());
        throw input_error::in_file(path, std::string(what) + ": " + std::strerror(err));
    };
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("cannot write");
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) fail("cannot write");
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw input_error::in_file(path, std::string("cannot write: ") + std::strerror(err));
    }
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw input_error::in_file(path, std::string("cannot rename the finished file into place: ") + std::strerror(err));
    }
}

}  // namespace oomdx
