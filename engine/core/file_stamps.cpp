#include "engine/core/file_stamps.h"

#include <sys/stat.h>

#include <ctime>

#include "engine/core/binary_io.h"
#include "engine/core/cache_key.h"

namespace oomdx::file_stamps {

namespace {

constexpr char k_magic[8] = {'O', 'X', 'S', 'T', 'A', 'M', 'P', '1'};

std::int64_t ns(const struct timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

bool stat_of(const std::string& path, stamp& s) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    s.path = path;
    s.size = static_cast<std::uint64_t>(st.st_size);
    s.dev = static_cast<std::uint64_t>(st.st_dev);
    s.ino = static_cast<std::uint64_t>(st.st_ino);
    s.mtime_ns = ns(st.st_mtim);
    s.ctime_ns = ns(st.st_ctim);
    return true;
}

bool racy(const stamp& s, std::int64_t taken_ns) { return s.mtime_ns >= taken_ns || s.ctime_ns >= taken_ns; }

bool same_stat(const stamp& a, const stamp& b) {
    return a.size == b.size && a.dev == b.dev && a.ino == b.ino && a.mtime_ns == b.mtime_ns && a.ctime_ns == b.ctime_ns;
}

}  // namespace

std::int64_t now_ns() {
    // File times come from the kernel's coarse clock; a fine clock could read ahead of it and
    // take a file written in this tick for an older one.
    struct timespec t;
    if (::clock_gettime(CLOCK_REALTIME_COARSE, &t) != 0) return 0;
    return ns(t);
}

std::string join(const stored& s, std::string_view body) {
    std::string block;
    bin::put64(block, static_cast<std::uint64_t>(s.taken_ns));
    bin::put32(block, static_cast<std::uint32_t>(s.stamps.size()));
    for (const auto& f : s.stamps) {
        bin::put_text(block, f.path);
        for (std::uint64_t v : {f.size, f.dev, f.ino, static_cast<std::uint64_t>(f.mtime_ns),
                                static_cast<std::uint64_t>(f.ctime_ns), f.hash})
            bin::put64(block, v);
    }
    std::string out(k_magic, 8);
    bin::put64(out, block.size());
    bin::put64(out, cache_hash(block));
    out += block;
    out += body;
    return out;
}

std::pair<stored, std::string_view> split(std::string_view entry) {
    constexpr std::size_t head = 8 + 2 * 8;
    if (entry.size() < head || std::memcmp(entry.data(), k_magic, 8) != 0) return {};
    const std::uint64_t len = bin::get64(entry, 8);
    if (len > entry.size() - head) return {};
    const std::string_view block = entry.substr(head, len);
    if (cache_hash(block) != bin::get64(entry, 16)) return {};
    bin::reader r(block);
    stored s;
    std::uint32_t n = 0;
    if (!r.i64(s.taken_ns) || !r.count(n)) return {};
    s.stamps.resize(n);
    for (auto& f : s.stamps) {
        std::uint64_t m = 0, c = 0;
        if (!r.text(f.path) || !r.u64(f.size) || !r.u64(f.dev) || !r.u64(f.ino) || !r.u64(m) || !r.u64(c) ||
            !r.u64(f.hash))
            return {};
        f.mtime_ns = static_cast<std::int64_t>(m);
        f.ctime_ns = static_cast<std::int64_t>(c);
    }
    if (!r.at_end()) return {};
    return {std::move(s), entry.substr(head + len)};
}

std::optional<hashed> hash_files(const std::vector<std::string>& files, const stored& known, std::int64_t taken_now) {
    hashed out;
    out.stamps.reserve(files.size());
    for (std::size_t i = 0; i < files.size(); ++i) {
        const std::string& path = files[i];
        stamp s;
        const bool have_stat = stat_of(path, s);
        // The stamps are stored in the order of the files, so the i-th is the one to look at first.
        const stamp* k = i < known.stamps.size() && known.stamps[i].path == path ? &known.stamps[i] : nullptr;
        for (std::size_t j = 0; !k && j < known.stamps.size(); ++j)
            if (known.stamps[j].path == path) k = &known.stamps[j];
        if (have_stat && k && same_stat(s, *k) && !racy(*k, known.taken_ns)) {
            s.hash = k->hash;
            out.stamps.push_back(std::move(s));
            continue;
        }
        const auto bytes = bin::read_bytes(path);
        if (!bytes) return std::nullopt;
        s.path = path;
        if (!have_stat || s.size != bytes->size()) s.size = bytes->size(), s.mtime_ns = s.ctime_ns = taken_now;  // racy next time
        s.hash = cache_hash(*bytes);
        if (!racy(s, taken_now)) out.refresh = true;
        out.stamps.push_back(std::move(s));
    }
    return out;
}

}  // namespace oomdx::file_stamps
