// A pickle read in pieces through a small window (pickle_source) gives what the whole input
// gives: the same analysis JSON on every fixture and corpus pickle, the same error text and byte
// offset on truncated copies, whatever the window and however short the reads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "engine/core/errors.h"
#include "parsers/snapshot/pickle_reader.h"
#include "parsers/snapshot/snapshot_analysis.h"
#include "reader_helpers.h"

using namespace oomdx;
using namespace snaptest;

namespace {

const snap::category_rules& window_test_rules() {
    static const snap::category_rules r = snap::category_rules::shipped();
    return r;
}

// Reads `data` through a window of `window` bytes; reads return at most `chunk` bytes (0: as
// many as asked) or a random 1..chunk when `random` is set.
snap::snapshot read_windowed(const std::string& data, std::size_t window, std::size_t chunk, bool random) {
    std::mt19937 rng(7);
    std::size_t at = 0;
    snap::pickle_source src;
    src.size = data.size();
    src.window = window;
    src.read = [&](std::uint8_t* dst, std::size_t n) {
        std::size_t k = std::min(n, data.size() - at);
        if (chunk) k = std::min(k, random ? 1 + rng() % chunk : chunk);
        std::memcpy(dst, data.data() + at, k);
        at += k;
        return k;
    };
    snap::snapshot s;
    s.source_file = "t.pickle";
    s.info.file_bytes = static_cast<std::int64_t>(data.size());
    snap::read_pickle(src, "t.pickle", snap::load_limits{}, s);
    return s;
}

std::string analysis_json(const snap::snapshot& s) {
    snap::analysis_options o;
    o.rules = &window_test_rules();
    return snap::to_json(snap::analyze(s, o)).dump();
}

template <class F>
std::string error_text(F&& f) {
    try {
        f();
    } catch (const input_error& e) {
        return e.what();
    }
    return "";
}

std::vector<std::filesystem::path> window_test_pickles() {
    std::vector<std::filesystem::path> out;
    for (const auto& dir : {fixtures_dir(), corpus_dir()}) {
        if (!std::filesystem::exists(dir)) continue;
        for (const auto& ent : std::filesystem::directory_iterator(dir))
            if (ent.path().extension() == ".pickle" || ent.path().extension() == ".pkl") out.push_back(ent.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("a pickle read through a window analyzes as the whole input does") {
    int files = 0;
    for (const auto& path : window_test_pickles()) {
        CAPTURE(path.string());
        const std::string data = read_all(path);
        const std::string whole = analysis_json(snap::load_snapshot_bytes(data, "t.pickle"));
        struct way { std::size_t window, chunk; bool random; };
        for (const way w : {way{64, 0, false}, way{1000, 7, true}, way{4096, 0, false}, way{65536, 0, false},
                            way{65536, 4093, true}}) {
            CAPTURE(w.window);
            CAPTURE(w.chunk);
            CHECK(analysis_json(read_windowed(data, w.window, w.chunk, w.random)) == whole);
        }
        // load_snapshot reads a small pickle file through the window
        CHECK(analysis_json(snap::load_snapshot(path.string())) ==
              analysis_json(snap::load_snapshot_bytes(data, path.string())));
        ++files;
    }
    CHECK(files >= 10);
}

TEST_CASE("a truncated pickle read through a window fails with the whole input's error") {
    int cuts = 0;
    for (const auto& path : window_test_pickles()) {
        const std::string data = read_all(path);
        for (int i = 1; i < 16; ++i) {
            const std::string cut = data.substr(0, data.size() * i / 16);
            CAPTURE(path.string());
            CAPTURE(i);
            const std::string want = error_text([&] { snap::load_snapshot_bytes(cut, "t.pickle"); });
            REQUIRE_FALSE(want.empty());
            CHECK(error_text([&] { read_windowed(cut, 256, 0, false); }) == want);
            CHECK(error_text([&] { read_windowed(cut, 65536, 13, true); }) == want);
            ++cuts;
        }
    }
    CHECK(cuts >= 10 * 15);
}

TEST_CASE("a source that ends early is a file that shrank, at its byte offset") {
    const auto pickles = window_test_pickles();
    REQUIRE_FALSE(pickles.empty());
    const std::string data = read_all(pickles.front());
    snap::pickle_source src;
    src.size = data.size() + 100;  // announces more than it gives
    std::size_t at = 0;
    src.read = [&](std::uint8_t* dst, std::size_t n) {
        const std::size_t k = std::min(n, data.size() - at);
        std::memcpy(dst, data.data() + at, k);
        at += k;
        return k;
    };
    src.window = 256;
    snap::snapshot s;
    const std::string msg = error_text([&] { snap::read_pickle(src, "t.pickle", snap::load_limits{}, s); });
    // either the reader reached STOP before it needed the missing bytes, or it names the end
    if (!msg.empty()) CHECK(msg == "t.pickle: byte " + std::to_string(data.size()) + ": file shrank while it was read");
}
