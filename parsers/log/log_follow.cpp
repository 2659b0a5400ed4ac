#include "parsers/log/log_follow.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "parsers/log/gzip_blocks.h"
#include "parsers/log/line_splitter.h"
#include "parsers/log/log_scanner.h"
#include "parsers/log/log_signatures.h"

namespace oomdx {

using log_detail::k_match_cap;
using log_detail::scanner;

namespace {

constexpr size_t k_read = size_t{1} << 20;

bool gz_magic(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    unsigned char m[2] = {0, 0};
    const ssize_t got = ::read(fd, m, 2);
    ::close(fd);
    return got == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

}  // namespace

struct log_follower::state {
    followed_file info;
    scanner sc;
    line_splitter sp{k_match_cap};
    int fd = -1;
    ino_t inode = 0;
    dev_t device = 0;
    off_t offset = 0;
    bool done = false;      // a .gz read whole
    bool checked = false;   // the first bytes were checked for binary data
    std::int64_t cut = 0;
    std::vector<char> buf;

    explicit state(const signature_set& sigs, const std::string& path) : sc(sigs) {
        info.path = path;
        sc.begin_file(path);
    }
    ~state() {
        if (fd >= 0) ::close(fd);
    }

    void feed(const char* p, size_t n) {
        if (!checked && n > 0) {
            checked = true;
            const size_t head = std::min<size_t>(n, 4096);
            if (std::memchr(p, '\0', head) != nullptr)
                throw input_error::at_offset(info.path, static_cast<std::int64_t>(
                                                            static_cast<const char*>(std::memchr(p, '\0', head)) - p),
                                             "binary data (NUL byte), expected a text log");
        }
        sp.feed(p, n, [&](std::string_view seg, std::int64_t line, bool c) { sc.on_segment(seg, line, c); });
        info.bytes += static_cast<std::int64_t>(n);
    }

    bool open_file() {
        const int f = ::open(info.path.c_str(), O_RDONLY | O_CLOEXEC);
        if (f < 0) return false;
        struct stat st {};
        if (::fstat(f, &st) != 0) {
            ::close(f);
            return false;
        }
        fd = f;
        inode = st.st_ino;
        device = st.st_dev;
        offset = 0;
        return true;
    }

    // Everything from `offset` to the current end of the open file.
    void drain() {
        buf.resize(k_read);
        for (;;) {
            const ssize_t got = ::pread(fd, buf.data(), buf.size(), offset);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) throw input_error::in_file(info.path, std::string("read failed: ") + std::strerror(errno));
            if (got == 0) break;
            offset += got;
            feed(buf.data(), static_cast<size_t>(got));
        }
    }

    std::int64_t poll() {
        const std::int64_t before = sp.lines();
        if (done) return 0;
        if (info.compressed) {
            // read whole, once it inflates to its end: a file still being compressed (truncated)
            // is tried again next time; a complete one is then read a second time, into the scanner
            try {
                gzip_blocks check(info.path);
                while (!check.next().empty()) {
                }
            } catch (const input_error&) {
                return 0;
            }
            gzip_blocks gz(info.path);
            for (std::string_view b; !(b = gz.next()).empty();) feed(b.data(), b.size());
            done = true;
            sp.finish([&](std::string_view seg, std::int64_t line, bool c) { sc.on_segment(seg, line, c); });
            return sp.lines() - before;
        }
        if (fd < 0 && !open_file()) return 0;
        drain();
        struct stat st {};
        if (::stat(info.path.c_str(), &st) == 0) {
            if (st.st_ino != inode || st.st_dev != device) {  // rotated: the old file is drained above
                sp.finish([&](std::string_view seg, std::int64_t line, bool c) { sc.on_segment(seg, line, c); });
                ::close(fd);
                fd = -1;
                ++info.rotations;
                if (open_file()) drain();
            } else if (st.st_size < offset) {  // truncated in place (copytruncate)
                sp.finish([&](std::string_view seg, std::int64_t line, bool c) { sc.on_segment(seg, line, c); });
                offset = 0;
                ++info.rotations;
                drain();
            }
        }
        return sp.lines() - before;
    }
};

log_follower::log_follower(const std::vector<std::string>& paths, const log_options& opts)
    : m_device_capacity(opts.device_capacity_bytes) {
    if (opts.signatures_dir.empty() && opts.extra_signature_dirs.empty()) {
        m_sigs = &signature_set::shipped();
    } else {
        std::vector<std::string> dirs{opts.signatures_dir.empty() ? data_path("knowledge/log_signatures")
                                                                  : opts.signatures_dir};
        dirs.insert(dirs.end(), opts.extra_signature_dirs.begin(), opts.extra_signature_dirs.end());
        m_own_sigs = std::make_unique<signature_set>(signature_set::load(dirs));
        m_sigs = m_own_sigs.get();
    }
    for (const auto& p : paths) {
        auto st = std::make_unique<state>(*m_sigs, p);
        st->sc.set_device_capacity(m_device_capacity);
        st->info.compressed = gz_magic(p);
        if (!st->info.compressed && !st->open_file())
            throw input_error::in_file(p, std::string("cannot open: ") + std::strerror(errno));
        m_files.push_back(std::move(st));
    }
}

log_follower::~log_follower() = default;

std::int64_t log_follower::poll() {
    std::int64_t n = 0;
    for (auto& f : m_files) {
        n += f->poll();
        f->info.lines = f->sp.lines();
    }
    return n;
}

log_analysis log_follower::analysis(size_t i) {
    state& f = *m_files.at(i);
    f.sc.end_file(f.sp.lines(), f.info.bytes, f.info.compressed, f.sp.cut_segments());
    return f.sc.finish();
}

size_t log_follower::size() const { return m_files.size(); }
const followed_file& log_follower::file(size_t i) const { return m_files.at(i)->info; }
std::int64_t log_follower::oom_lines(size_t i) const { return m_files.at(i)->sc.oom_lines(); }

bool log_follower::static_only() const {
    for (const auto& f : m_files)
        if (!f->done) return false;
    return true;
}

}  // namespace oomdx
