// The prefilter's memo of repeated line shapes (candidate_cache): for every line, the hits that
// signature_set::candidates gives, in its order, whether the memo answers or searches; literals
// with digits (`3090`, `A100`, `error code is 20`, `Signal 9`) appearing and vanishing on lines of
// one shape; the stop at an exclusive literal; lines of no repeated shape.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "parsers/log/candidate_cache.h"
#include "parsers/log/log_signatures.h"

using namespace oomdx;

namespace {

std::vector<int> plain(const signature_set& sigs, std::string_view text) {
    std::vector<int> hits;
    std::vector<char> mark(sigs.size(), 0);
    sigs.candidates(text, hits, mark);
    return hits;
}

// Fills every '#' of the template with a random digit.
std::string fill(std::string t, std::mt19937& rng) {
    for (auto& c : t)
        if (c == '#') c = static_cast<char>('0' + rng() % 10);
    return t;
}

}  // namespace

TEST_CASE("candidate cache: the hits of a plain search on lines of repeated shapes") {
    const signature_set& sigs = signature_set::shipped();
    candidate_cache cache(sigs);
    std::vector<char> mark(sigs.size(), 0);
    // Shapes whose digits sometimes spell a literal with digits: a device name (3090 / 4090 /
    // A100), an error code, a signal number; and progress lines whose literal stops the search.
    const std::vector<std::string> shapes = {
        "[rank#]:[titan] 2026-01-01 10:00:00,123 - root - INFO - \x1b[31mstep: ## loss: #.#### memory: ##.##GiB",
        "[rank#]: iteration ###/ 1000 | consumed samples: #### | lm loss: #.####E+00 | batch size: 8 |",
        "training on #x A### GPUs with model card ####, run ## of ##, rank ## ready ok",
        "worker ## exited: Signal # received after #### steps (code ##) at host-##",
        "host-#:####:#### [#] NCCL INFO Channel ##/0 : #[#] -> #[#] via P2P/IPC/read",
        "aclrtMalloc failed, error code is ## for ### bytes on device #, see the log ####",
        "  File \"/opt/lib/python3.10/site-packages/torch/nn/modules/module.py\", line ####, in _call_impl",
        "{'loss': #.###, 'grad_norm': #.##, 'learning_rate': #.##e-05, 'epoch': #.##}",
        "dataloader: fetched batch ## from shard /data/shard-####.bin in ## ms (prefetch queue #/8)",
    };
    std::mt19937 rng(4242);
    int lines = 0, digit_hits = 0;
    for (int i = 0; i < 20000; ++i) {
        std::string line = fill(shapes[rng() % shapes.size()], rng);
        // now and then a device name or code the digit literals know, on the same shape
        if (rng() % 5 == 0) {
            const auto at = line.find_first_of("0123456789");
            static const char* names[] = {"3090", "4090", "2026", "100", "20", "9"};
            const std::string name = names[rng() % 6];
            if (at != std::string::npos && at + name.size() <= line.size()) {
                bool digits = true;
                for (size_t k = 0; k < name.size(); ++k) digits = digits && line[at + k] >= '0' && line[at + k] <= '9';
                if (digits) line.replace(at, name.size(), name);
            }
        }
        const std::vector<int> want = plain(sigs, line);
        std::vector<int> got = {-7};  // appends after what is there
        cache.candidates(line, got, mark);
        REQUIRE(got.front() == -7);
        got.erase(got.begin());
        INFO(line);
        REQUIRE(got == want);
        REQUIRE(std::all_of(mark.begin(), mark.end(), [](char m) { return m == 0; }));
        ++lines;
        for (int h : want)
            for (const auto& l : sigs.all()[static_cast<size_t>(h)].literals)
                if (l.find_first_of("0123456789") != std::string::npos && line.find(l) != std::string::npos) ++digit_hits;
    }
    CHECK(lines == 20000);
    CHECK(digit_hits > 100);                  // the digit literals did come and go
    CHECK(cache.served() > lines / 10);       // and the memo answered many lines
}

TEST_CASE("candidate cache: a digit literal on a remembered shape is found exactly") {
    const signature_set& sigs = signature_set::shipped();
    candidate_cache cache(sigs);
    std::vector<char> mark(sigs.size(), 0);
    auto run = [&](const std::string& line) {
        std::vector<int> hits;
        cache.candidates(line, hits, mark);
        CHECK(hits == plain(sigs, line));
        return hits;
    };
    const std::string base = "the job ran on 8x 3080 cards for 1234 steps and then stopped";
    for (int i = 0; i < 4; ++i) run(base);  // remembered, then served
    const auto served = cache.served();
    CHECK(served >= 1);
    const auto with = run("the job ran on 8x 3090 cards for 1234 steps and then stopped");  // same shape
    CHECK(with != plain(sigs, base));  // the device name is a hit the base line does not have
    run("the job ran on 8x 3080 cards for 3090 steps and then stopped");
    run(base);  // searched (a remembered line held a device name where this one holds none) and remembered
    run(base);
    CHECK(cache.served() > served);
}

TEST_CASE("candidate cache: lines of no repeated shape") {
    const signature_set& sigs = signature_set::shipped();
    candidate_cache cache(sigs);
    std::vector<char> mark(sigs.size(), 0);
    std::mt19937 rng(7);
    const std::string abc = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ:[]()=|,.-_/";
    for (int i = 0; i < 10000; ++i) {
        std::string line(16 + rng() % 120, ' ');
        for (auto& c : line) c = abc[rng() % abc.size()];
        if (i % 3 == 0) line += " CUDA out of memory. Tried to allocate 2.00 GiB";
        std::vector<int> hits;
        cache.candidates(line, hits, mark);
        REQUIRE(hits == plain(sigs, line));
    }
    CHECK(cache.served() == 0);
}

TEST_CASE("candidate cache: digits that spell only another shape's literal keep a line served") {
    // `EL0004`'s digits sit in `EL0000` places only: a step number or a loss whose digits read
    // 0004 does not hold it, so the remembered line answers (a filter over every literal's digits
    // searched and remembered such lines again: 5,167 of them on the 300 MB bench log).
    const signature_set& sigs = signature_set::shipped();
    candidate_cache cache(sigs);
    std::vector<char> mark(sigs.size(), 0);
    std::mt19937 rng(11);
    const std::string shape =
        "[rank#]:[titan] 2026-01-01 10:00:00,123 - root - INFO - step: ######  loss:  2.0####  memory: ##.##GiB";
    int spelled = 0;
    for (int i = 0; i < 2000; ++i) {
        std::string line = fill(shape, rng);
        if (i % 4 == 0) {  // the loss's digits spell 0004
            const auto at = line.find("2.0") + 2;
            line.replace(at, 5, i % 8 == 0 ? "00004" : "00040");
            ++spelled;
        }
        std::vector<int> hits;
        cache.candidates(line, hits, mark);
        INFO(line);
        REQUIRE(hits == plain(sigs, line));
    }
    CHECK(spelled == 500);
    CHECK(cache.served() >= 1990);  // every line after the first two (a line is remembered on its second miss)
}

TEST_CASE("candidate cache: two shapes that alternate are both remembered") {
    // Pairs of random shapes, alternating line by line: some pairs fall into the same set of the
    // memo, whose two places hold both (with one place per set such a pair evicted each other on
    // every line and was never served).
    const signature_set& sigs = signature_set::shipped();
    std::vector<char> mark(sigs.size(), 0);
    std::mt19937 rng(5);
    const std::string abc = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ:[]()=|,.-_/ ";
    constexpr int pairs = 300, per_pair = 40;
    std::int64_t served = 0;
    for (int pair = 0; pair < pairs; ++pair) {
        candidate_cache cache(sigs);
        std::string shapes[2];
        for (auto& s : shapes) {
            s.assign(24 + rng() % 60, ' ');
            for (auto& c : s) c = abc[rng() % abc.size()];
            s += " step: ###### loss: #.####";
        }
        for (int i = 0; i < per_pair; ++i) {
            const std::string line = fill(shapes[i % 2], rng);
            std::vector<int> hits;
            cache.candidates(line, hits, mark);
            REQUIRE(hits == plain(sigs, line));
        }
        INFO(shapes[0] << " | " << shapes[1]);
        // each shape searched twice, then served (a step that spells 3090 is searched too)
        REQUIRE(cache.served() >= per_pair - 4 - 6);
        served += cache.served();
    }
    CHECK(served >= pairs * (per_pair - 4) - 60);
}
