#include "parsers/snapshot/snapshot_loader.h"

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/core/fact.h"
#include "engine/core/mapped_file.h"
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "parsers/snapshot/json_reader.h"
#include "parsers/snapshot/pickle_common.h"
#include "parsers/snapshot/pickle_reader.h"
#include "parsers/snapshot/read_ahead.h"

namespace oomdx::snap {

bool looks_like_pickle(std::string_view head) {
    return !head.empty() && static_cast<unsigned char>(head[0]) == 0x80;
}

static bool looks_like_json(std::string_view head) {
    for (char c : head.substr(0, 4096)) {
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
        return c == '{' || c == '[';
    }
    return false;
}

static snapshot load_any(std::string_view data, const std::string& name,
                         const load_limits& limits,
                         const std::function<void(std::size_t)>& release) {
    snapshot s;
    s.source_file = name;
    s.info.file_bytes = static_cast<std::int64_t>(data.size());
    if (data.empty()) throw input_error::in_file(name, "empty file, expected a memory snapshot");
    if (static_cast<std::int64_t>(data.size()) > limits.max_file_bytes)
        throw input_error::in_file(name, fmt::format("file of {} is above the limit snapshot_file_bytes={} "
                                                     "(raise it with --limit)",
                                                     format_bytes(static_cast<std::int64_t>(data.size())),
                                                     format_bytes(limits.max_file_bytes)));
    if (looks_like_pickle(data)) {
        read_pickle(data, name, limits, s, release);
    } else if (looks_like_json(data)) {
        read_json(data, name, limits, s);
    } else {
        throw input_error::at_offset(
            name, 0,
            "not a memory snapshot: expected a pickle (protocol 2-5) or JSON");
    }
    return s;
}

namespace {

// An open file descriptor, closed at the end of its scope.
struct snap_fd {
    int fd = -1;
    ~snap_fd() {
        if (fd >= 0) ::close(fd);
    }
};

// A pickle of up to read_ahead::k_small bytes read with read() into one reused 64 KiB window
// instead of mapped: no page faults on the input and no release calls, which cost more than
// copying the bytes (docs/snapshot.md, snap14). Anything else (a larger, empty, unreadable,
// JSON or odd file) is nullopt: the mapped path reads it and reports its errors as before.
std::optional<snapshot> load_small_pickle(const std::string& path, const load_limits& limits,
                                          const std::function<void(std::size_t, std::size_t)>& progress) {
    snap_fd f;
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (f.fd < 0 || ::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size == 0 || size > read_ahead::k_small || static_cast<std::int64_t>(size) > limits.max_file_bytes)
        return std::nullopt;
    unsigned char first = 0;
    if (::pread(f.fd, &first, 1, 0) != 1 || first != 0x80) return std::nullopt;
    pickle_source src;
    src.size = size;
    src.read = [&f, &path, off = std::uint64_t(0)](std::uint8_t* dst, std::size_t n) mutable -> std::size_t {
        for (;;) {
            const ssize_t got = ::read(f.fd, dst, n);
            if (got >= 0) {
                off += static_cast<std::uint64_t>(got);
                return static_cast<std::size_t>(got);
            }
            if (errno != EINTR)
                throw input_error::at_offset(path, static_cast<std::int64_t>(off),
                                             std::string("read error: ") + std::strerror(errno));
        }
    };
    snapshot s;
    s.source_file = path;
    s.info.file_bytes = static_cast<std::int64_t>(size);
    std::function<void(std::size_t)> at;
    if (progress) at = [&](std::size_t off) { progress(off, static_cast<std::size_t>(size)); };
    read_pickle(src, path, limits, s, at);
    return s;
}

}  // namespace

snapshot load_snapshot(const std::string& path, const load_limits& limits) {
    return load_snapshot(path, limits, {});
}

snapshot load_snapshot(const std::string& path, const load_limits& limits,
                       const std::function<void(std::size_t, std::size_t)>& progress) {
    if (auto s = load_small_pickle(path, limits, progress)) return std::move(*s);
    mapped_file mf(path);
    // Every 512 KiB (64 KiB for a small JSON file, inline): the pages behind the cursor are dropped;
    // a helper thread (large files) faults in the MiB ahead.
    read_ahead ahead(mf.data(), mf.size(), read_ahead::window_for(mf.size()),
                     [&mf](std::size_t off) { mf.release_before(off); });
    auto release = [&](std::size_t off) {
        if (progress) progress(off, mf.size());
        ahead.advance(off);
    };
    ahead.advance(0);
    return load_any(mf.view(), path, limits, release);
}

snapshot load_snapshot_bytes(std::string_view data, const std::string& name,
                             const load_limits& limits) {
    return load_any(data, name, limits, {});
}

void emit_file_facts(const snapshot& s, fact_sink& sink) {
    const auto& in = s.info;
    std::int64_t entries = 0;
    for (const auto& t : s.device_traces) entries += static_cast<std::int64_t>(t.size());
    auto prov = [&](std::string excerpt) {
        provenance p;
        p.producer = "snapshot.reader";
        p.file = s.source_file;
        p.offset = 0;
        p.excerpt = std::move(excerpt);
        return p;
    };
    const std::string shape = in.format + (in.format == "pickle" ? " protocol " + std::to_string(in.pickle_protocol) : "") +
                              ", top-level " + in.top_level;
    sink.emit("snapshot_file.format", in.format, prov(shape));
    sink.emit("snapshot_file.pickle_protocol", in.pickle_protocol, prov(shape));
    sink.emit("snapshot_file.era", in.era, prov(shape));
    sink.emit("snapshot_file.producer", in.producer, prov(shape));
    sink.emit("snapshot_file.bytes", in.file_bytes, prov(shape));
    sink.emit("snapshot_file.has_time_us", in.has_time_us, prov(shape));
    sink.emit("snapshot_file.state_only", in.state_only, prov(shape));
    sink.emit("snapshot_file.has_history", in.has_history, prov(shape));
    sink.emit("snapshot_file.trace_entries", entries, prov(shape));
    sink.emit("snapshot_file.unique_frames", static_cast<std::int64_t>(s.frames.size()), prov(shape));
}

}  // namespace oomdx::snap
