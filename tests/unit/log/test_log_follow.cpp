// Following growing logs (oomdx watch): appended lines, a line completed by a later write,
// rotation, truncation, a closed .gz read whole, and the state kept across polls.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/errors.h"
#include "parsers/log/log_follow.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

std::string titan(int step, double gib) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "[titan] 2026-01-01 10:00:%02d,000 - root - INFO - step: %d  loss:  2.0  memory: %.2fGiB(%.2f%%)\n",
                  step % 60, step, gib, gib / 80.0 * 100);
    return buf;
}

void append(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::app) << text; }

fs::path temp_dir() {
    auto d = fs::temp_directory_path() / ("oomdx_follow_" + std::to_string(::getpid()) + "_" + std::to_string(rand()));
    fs::create_directories(d);
    return d;
}

}  // namespace

TEST_CASE("follow: appended lines, a partial line, rotation and truncation") {
    const fs::path dir = temp_dir(), p = dir / "train.log";
    append(p, titan(1, 40) + titan(2, 41));
    log_follower fol({p.string()});
    CHECK(fol.poll() == 2);
    CHECK(fol.analysis(0).last_logged_step == 2);
    CHECK(fol.poll() == 0);

    std::string l3 = titan(3, 42);
    append(p, l3.substr(0, 20));  // a line written in two pieces
    fol.poll();
    CHECK(fol.analysis(0).last_logged_step == 2);
    append(p, l3.substr(20));
    fol.poll();
    CHECK(fol.analysis(0).last_logged_step == 3);

    // rotation: the old file is renamed (and finished), a new one starts at the same path
    append(p, titan(4, 43));
    fs::rename(p, dir / "train.log.1");
    append(dir / "train.log.1", titan(5, 44));
    append(p, titan(6, 45) + titan(7, 46));
    fol.poll();
    CHECK(fol.file(0).rotations == 1);
    auto a = fol.analysis(0);
    CHECK(a.last_logged_step == 7);
    CHECK(a.memory_series.size() == 7);  // steps 1-7: nothing lost across the rotation

    // truncation in place (copytruncate)
    { std::ofstream(p, std::ios::trunc) << titan(8, 47); }
    fol.poll();
    CHECK(fol.file(0).rotations == 2);
    CHECK(fol.analysis(0).last_logged_step == 8);
    CHECK(fol.oom_lines(0) == 0);
    append(p, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n");
    fol.poll();
    CHECK(fol.oom_lines(0) == 1);
    CHECK(fol.analysis(0).source == "caching_allocator");
    fs::remove_all(dir);
}

TEST_CASE("follow: a .gz is read once, whole; several files keep their own state") {
    const fs::path dir = temp_dir();
    std::string text;
    for (int s = 1; s <= 30; ++s) text += titan(s, 40 + s);
    gzFile gz = gzopen((dir / "rank0.log.1.gz").string().c_str(), "wb");
    gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
    gzclose(gz);
    append(dir / "rank1.log", titan(1, 30));
    log_follower fol({(dir / "rank0.log.1.gz").string(), (dir / "rank1.log").string()});
    CHECK(fol.poll() == 31);
    CHECK(fol.file(0).compressed);
    CHECK(fol.analysis(0).last_logged_step == 30);
    CHECK(fol.analysis(1).last_logged_step == 1);
    CHECK_FALSE(fol.static_only());
    CHECK(fol.poll() == 0);  // the .gz is not read again
    auto f = fol.analysis(0).forecast;
    REQUIRE(f);
    CHECK(f->available);
    fs::remove_all(dir);
}

TEST_CASE("follow: a binary file is an input error") {
    const fs::path dir = temp_dir(), p = dir / "bin.log";
    { std::ofstream(p, std::ios::binary) << std::string("\0\1\2\3abc", 7); }
    log_follower fol({p.string()});
    CHECK_THROWS_AS(fol.poll(), input_error);
    fs::remove_all(dir);
}
