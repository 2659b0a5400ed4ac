// The line splitter (line_splitter.h): the segments a plain split gives, whichever break mask
// (AVX2 256 bytes at a time, SSE2 or bytewise 64) finds the breaks, at every feed size.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "engine/core/usable_cores.h"
#include "parsers/log/line_splitter.h"

using namespace oomdx;

namespace {

using seg = std::tuple<std::string, std::int64_t, bool>;

std::vector<seg> plain_split(const std::string& text) {
    std::vector<seg> out;
    std::int64_t line = 1;
    std::string cur;
    for (char c : text) {
        if (c == '\n' || c == '\r') {
            if (!cur.empty()) out.emplace_back(cur, line, false);
            cur.clear();
            if (c == '\n') ++line;
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) out.emplace_back(cur, line, false);
    return out;
}

std::vector<seg> split(const std::string& text, size_t feed) {
    std::vector<seg> out;
    line_splitter sp(size_t{1} << 20);
    auto fn = [&](std::string_view s, std::int64_t line, bool cut) { out.emplace_back(std::string(s), line, cut); };
    for (size_t off = 0; off < text.size(); off += feed) sp.feed(text.data() + off, std::min(feed, text.size() - off), fn);
    sp.finish(fn);
    return out;
}

}  // namespace

TEST_CASE("line splitter: the segments of a plain split at every feed size") {
    std::mt19937 rng(4242);
    for (int round = 0; round < 40; ++round) {
        std::string text;
        const size_t n = rng() % 3000;
        for (size_t i = 0; i < n; ++i) {
            const unsigned r = rng() % 100;
            text += r < 3 ? '\n' : r < 5 ? '\r' : static_cast<char>('a' + r % 26);
        }
        const auto want = plain_split(text);
        for (size_t feed : {1, 7, 63, 64, 65, 255, 256, 257, 1000, 4096}) CHECK(split(text, feed) == want);
    }
}

TEST_CASE("usable cores: at least one") { CHECK(usable_cores() >= 1); }
