// file_stamps (engine/core/file_stamps.h): a file's stored hash is used only while its stat
// matches the stamp and it is not racy; anything else reads the file (snap35).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/core/cache_key.h"
#include "engine/core/file_stamps.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

struct stamp_dir {
    fs::path dir = fs::temp_directory_path() / ("oomdx_file_stamps_" + std::to_string(::getpid()));
    stamp_dir() {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~stamp_dir() { fs::remove_all(dir); }
    // Writes `text` with one fixed modification time (its change time is now).
    std::string put(const std::string& name, const std::string& text) const {
        const std::string p = (dir / name).string();
        std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
        struct timespec t[2];
        t[0].tv_sec = 1700000000;
        t[0].tv_nsec = 123456789;
        t[1] = t[0];
        ::utimensat(AT_FDCWD, p.c_str(), t, 0);
        return p;
    }
};

// Stamps as a later run finds them, taken at `taken`, with every hash replaced by 42 so that a
// hash taken from the stamp (not the file) shows.
file_stamps::stored planted(const file_stamps::hashed& h, std::int64_t taken) {
    file_stamps::stored s{h.stamps, taken};
    for (auto& f : s.stamps) f.hash = 42;
    return s;
}

}  // namespace

TEST_CASE("file stamps: stored ahead of an entry and split off again; a damaged block gives none") {
    const file_stamps::stored s{{{"a/b.yaml", 10, 1, 2, 3, 4, 5}, {"c.yaml", 0, 6, 7, -8, 9, 10}}, 123456789};
    const std::string entry = file_stamps::join(s, "BODY");
    const auto [back, body] = file_stamps::split(entry);
    CHECK(body == "BODY");
    CHECK(back.taken_ns == s.taken_ns);
    REQUIRE(back.stamps.size() == 2);
    CHECK(back.stamps[1].path == "c.yaml");
    CHECK(back.stamps[1].mtime_ns == -8);
    CHECK(back.stamps[0].hash == 5);
    const std::size_t block = entry.size() - 4;
    for (std::size_t n = 0; n < block; ++n) {
        const auto [cut, rest] = file_stamps::split(std::string_view(entry).substr(0, n));
        CHECK(cut.stamps.empty());
        CHECK(rest.empty());
    }
    for (std::size_t at = 0; at < block; ++at) {
        std::string bad = entry;
        bad[at] = static_cast<char>(bad[at] ^ 0x10);
        const auto [got, rest] = file_stamps::split(bad);
        CHECK(got.stamps.empty());
        CHECK(rest.empty());
    }
}

TEST_CASE("file stamps: an unchanged file's hash comes from its stamp; an edit, a touch or a racy stamp reads it") {
    const stamp_dir d;
    const std::string a = d.put("a.yaml", "alpha: 1\n");
    const std::string b = d.put("b.yaml", "beta: 2\n");
    const std::vector<std::string> files{a, b};
    ::usleep(30000);  // past the clock tick of the writes' change times

    // No stamps: both read and hashed, and worth storing.
    const std::int64_t taken = file_stamps::now_ns();
    const auto first = file_stamps::hash_files(files, {}, taken);
    REQUIRE(first);
    REQUIRE(first->stamps.size() == 2);
    CHECK(first->stamps[0].hash == cache_hash("alpha: 1\n"));
    CHECK(first->stamps[1].size == 8);
    CHECK(first->refresh);

    // Unchanged: neither read (the planted hash is used), nothing to store.
    const auto known = planted(*first, taken);
    const auto same = file_stamps::hash_files(files, known, file_stamps::now_ns());
    REQUIRE(same);
    CHECK(same->stamps[0].hash == 42);
    CHECK(same->stamps[1].hash == 42);
    CHECK_FALSE(same->refresh);
    // Found by path when the list's order changed.
    const auto swapped = file_stamps::hash_files({b, a}, known, file_stamps::now_ns());
    REQUIRE(swapped);
    CHECK(swapped->stamps[0].hash == 42);
    CHECK(swapped->stamps[0].path == b);

    // The same size and modification time: the change time (now at or after `taken`) tells.
    d.put("a.yaml", "alpha: 3\n");
    const auto edited = file_stamps::hash_files(files, known, file_stamps::now_ns());
    REQUIRE(edited);
    CHECK(edited->stamps[0].hash == cache_hash("alpha: 3\n"));
    CHECK(edited->stamps[1].hash == 42);

    // Racy: a stamp whose file was modified at or after the stamps were taken is not trusted,
    // even when every field matches.
    const auto now = file_stamps::hash_files(files, {}, file_stamps::now_ns());
    REQUIRE(now);
    file_stamps::stored racy = planted(*now, 0);
    racy.taken_ns = racy.stamps[0].ctime_ns;  // a changed in the tick the stamps were taken, b before
    const auto racy_read = file_stamps::hash_files(files, racy, file_stamps::now_ns());
    REQUIRE(racy_read);
    CHECK(racy_read->stamps[0].hash == cache_hash("alpha: 3\n"));
    CHECK(racy_read->stamps[1].hash == 42);

    // A file replaced by another (a new inode, as an editor's save-by-rename makes): read.
    const std::string tmp = d.put("b.tmp", "beta: 2\n");
    fs::rename(tmp, b);
    const auto renamed = file_stamps::hash_files(files, planted(*now, file_stamps::now_ns()), file_stamps::now_ns());
    REQUIRE(renamed);
    CHECK(renamed->stamps[1].hash == cache_hash("beta: 2\n"));

    // A file that is gone: no hashes at all.
    fs::remove(a);
    CHECK_FALSE(file_stamps::hash_files(files, planted(*now, file_stamps::now_ns()), file_stamps::now_ns()));
}
