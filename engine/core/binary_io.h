// Little helpers for oomdx's own binary cache files (yaml_cache, vocabulary_cache, rule_set_cache):
// fixed-width integers in host order, length-prefixed text, a bounds-checked reader, reading an
// entry whole and pruning old entries. Readers check bounds before get64.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace oomdx::bin {

inline void put32(std::string& out, std::uint32_t v) {
    char b[4];
    std::memcpy(b, &v, 4);
    out.append(b, 4);
}

inline void put64(std::string& out, std::uint64_t v) {
    char b[8];
    std::memcpy(b, &v, 8);
    out.append(b, 8);
}

inline void put_text(std::string& out, const std::string& s) {
    put32(out, static_cast<std::uint32_t>(s.size()));
    out += s;
}

inline void put_texts(std::string& out, const std::vector<std::string>& v) {
    put32(out, static_cast<std::uint32_t>(v.size()));
    for (const auto& s : v) put_text(out, s);
}

// An int as reader::small reads it back.
inline void put_int(std::string& out, int v) { put64(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(v))); }

inline std::uint64_t get64(std::string_view s, std::size_t at) {
    std::uint64_t v;
    std::memcpy(&v, s.data() + at, 8);
    return v;
}

// A cache entry's envelope: an 8-byte magic, the key's hash, the payload's size and its hash,
// then the payload. `unseal` gives the payload only when all four agree.
constexpr std::size_t k_envelope = 8 + 3 * 8;
using hash_fn = std::uint64_t (*)(std::string_view);

inline std::string seal(const char (&magic)[8], std::string_view key, std::string_view payload, hash_fn hash) {
    std::string out(magic, 8);
    put64(out, hash(key));
    put64(out, payload.size());
    put64(out, hash(payload));
    out += payload;
    return out;
}

inline std::optional<std::string_view> unseal(std::string_view stored, const char (&magic)[8], std::string_view key,
                                              hash_fn hash) {
    if (stored.size() < k_envelope || std::memcmp(stored.data(), magic, 8) != 0) return std::nullopt;
    const std::string_view payload = stored.substr(k_envelope);
    if (get64(stored, 8) != hash(key) || get64(stored, 16) != payload.size() || get64(stored, 24) != hash(payload))
        return std::nullopt;
    return payload;
}

// A file's bytes, or nullopt when it cannot be read (plain reads: no text checks). Read into a
// string sized from the file's length: appending 64 KiB reads grew a 210 KB cache entry through
// 64, 128 and 256 KiB buffers, twice the pages (docs/snapshot.md, snap22). A file that grows or
// shrinks meanwhile is read to its end all the same.
inline std::optional<std::string> read_bytes(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return std::nullopt;
    std::string out;
    struct stat st;
    if (::fstat(::fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        out.resize(static_cast<std::size_t>(st.st_size));
    const std::size_t want = out.size();
    const std::size_t have = want > 0 ? std::fread(out.data(), 1, want, f) : 0;
    out.resize(have);
    if (have == want) {  // read on: the file grew, or its length was not known
        char buf[4096];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    }
    const bool bad = std::ferror(f) != 0;
    std::fclose(f);
    if (bad) return std::nullopt;
    return out;
}

// The whole file, or "" when it cannot be read (a cache entry that is not there).
inline std::string read_all(const std::string& path) { return read_bytes(path).value_or(""); }

// A cache entry's bytes in a buffer that is not zeroed first (read_bytes sizes a string, which
// zeroes it: 0.21 M instructions for the 200 KB stored rule set, snap35); empty when the file
// cannot be read. A file that is not regular or grows while read goes through read_bytes.
class entry_bytes {
public:
    explicit entry_bytes(const std::string& path) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return;
        struct stat st;
        bool whole = false;
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
            const auto want = static_cast<std::size_t>(st.st_size);
            m_data.reset(new char[want]);
            std::size_t have = 0;
            while (have < want) {
                const ssize_t n = ::read(fd, m_data.get() + have, want - have);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) break;
                have += static_cast<std::size_t>(n);
            }
            char more;
            ssize_t extra;
            do extra = ::read(fd, &more, 1);
            while (extra < 0 && errno == EINTR);
            whole = have == want && extra == 0;
            m_size = whole ? want : 0;
        }
        ::close(fd);
        if (whole) return;
        m_data.reset();
        if (const auto bytes = read_bytes(path); bytes && !bytes->empty()) {
            m_data.reset(new char[bytes->size()]);
            std::memcpy(m_data.get(), bytes->data(), bytes->size());
            m_size = bytes->size();
        }
    }
    std::string_view view() const { return {m_data.get(), m_size}; }

private:
    std::unique_ptr<char[]> m_data;
    std::size_t m_size = 0;
};

// Reads an entry's payload; every read checks its bounds, and any failure makes the whole copy
// unusable (the caller compiles again).
class reader {
public:
    explicit reader(std::string_view in) : m_in(in) {}

    bool byte(std::uint8_t& v) {
        if (m_in.size() - m_at < 1) return false;
        v = static_cast<std::uint8_t>(m_in[m_at++]);
        return true;
    }
    bool u32(std::uint32_t& v) {
        if (m_in.size() - m_at < 4) return false;
        std::memcpy(&v, m_in.data() + m_at, 4);
        m_at += 4;
        return true;
    }
    bool u64(std::uint64_t& v) {
        if (m_in.size() - m_at < 8) return false;
        std::memcpy(&v, m_in.data() + m_at, 8);
        m_at += 8;
        return true;
    }
    bool i64(std::int64_t& v) {
        std::uint64_t u = 0;
        if (!u64(u)) return false;
        v = static_cast<std::int64_t>(u);
        return true;
    }
    // An int written as i64 (line numbers, counts, small enums): refused outside int's range.
    bool small(int& v) {
        std::int64_t x = 0;
        if (!i64(x) || x < INT32_MIN || x > INT32_MAX) return false;
        v = static_cast<int>(x);
        return true;
    }
    bool flag(bool& v) {
        std::uint32_t x = 0;
        if (!u32(x) || x > 1) return false;
        v = x == 1;
        return true;
    }
    // A count of items that take at least 4 bytes each: never more than what is left.
    bool count(std::uint32_t& n) { return u32(n) && n <= (m_in.size() - m_at) / 4; }
    bool text(std::string& s) {
        std::uint32_t n = 0;
        if (!u32(n) || m_in.size() - m_at < n) return false;
        s = std::string(m_in.data() + m_at, n);  // built in place: assign() went through _M_replace
        m_at += n;
        return true;
    }
    bool texts(std::vector<std::string>& v) {
        std::uint32_t n = 0;
        if (!count(n)) return false;
        v.resize(n);
        for (auto& s : v)
            if (!text(s)) return false;
        return true;
    }
    std::size_t left() const { return m_in.size() - m_at; }
    bool at_end() const { return m_at == m_in.size(); }

private:
    std::string_view m_in;
    std::size_t m_at = 0;
};

// Keeps the `keep` newest files of `dir` named <prefix>*.bin and removes the others (best
// effort: a cache that cannot be pruned still works). An entry in use is rewritten, and so
// renewed, when what it was made from changes.
inline void prune_entries(const std::string& dir, std::string_view prefix, std::size_t keep) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<std::pair<fs::file_time_type, fs::path>> entries;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (!name.starts_with(prefix) || !name.ends_with(".bin")) continue;
        std::error_code tec;
        entries.emplace_back(fs::last_write_time(e.path(), tec), e.path());
    }
    if (ec || entries.size() <= keep) return;
    std::sort(entries.begin(), entries.end());  // the oldest first
    for (std::size_t i = 0; i + keep < entries.size(); ++i) fs::remove(entries[i].second, ec);
}

}  // namespace oomdx::bin
