// The literal prefilter (signature_set::candidates, Wu-Manber): the hits a plain search gives, in
// the same order, with the exclusive stop, on text built from the shipped literals, their near
// misses, colour codes and noise, at every tail length.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <vector>

#include "parsers/log/log_signatures.h"

using namespace oomdx;

namespace {

// What candidates() promises, by brute force: positions in order, literals in load order (at one position the
// non-exclusive ones first), each signature once, stop after an exclusive one.
// A `max_line` signature (a whole-line marker such as `...`) is looked for first, by a plain search, and only
// in a line of at most its max_line bytes.
std::vector<int> reference(const signature_set& sigs, std::string_view text) {
    std::vector<int> hits;
    std::vector<char> seen(sigs.size(), 0);
    for (size_t s = 0; s < sigs.size(); ++s) {
        const auto& sg = sigs.all()[s];
        if (!sg.max_line || text.size() > static_cast<size_t>(sg.max_line)) continue;
        for (const auto& lit : sg.literals)
            if (!seen[s] && text.find(lit) != std::string_view::npos) {
                seen[s] = 1;
                hits.push_back(static_cast<int>(s));
            }
    }
    // (signature, literal) in load order, bucketed by first byte (an empty literal in every
    // bucket): the same scan as trying every literal at every position, cheap enough under ASan.
    std::array<std::vector<std::pair<int, std::string_view>>, 256> by_head;
    for (size_t s = 0; s < sigs.size(); ++s)
        for (const auto& lit : sigs.all()[s].literals) {
            if (sigs.all()[s].max_line) break;
            if (lit.empty()) {
                for (auto& b : by_head) b.emplace_back(static_cast<int>(s), lit);
            } else {
                by_head[static_cast<unsigned char>(lit[0])].emplace_back(static_cast<int>(s), lit);
            }
        }
    // At one position the literals that do not end the scan come first: one that starts at the same byte as an
    // exclusive literal is not after it.
    for (size_t i = 0; i < text.size(); ++i) {
        const std::string_view rest = text.substr(i);
        for (const bool stop : {false, true})
            for (const auto& [s, lit] : by_head[static_cast<unsigned char>(rest[0])]) {
                if (sigs.all()[s].exclusive != stop || seen[s] || rest.substr(0, lit.size()) != lit) continue;
                seen[s] = 1;
                hits.push_back(s);
                if (stop) return hits;
            }
    }
    return hits;
}

std::vector<int> run(const signature_set& sigs, std::string_view text) {
    std::vector<int> hits;
    std::vector<char> mark(sigs.size(), 0);
    sigs.candidates(text, hits, mark);
    CHECK(std::all_of(mark.begin(), mark.end(), [](char m) { return m == 0; }));  // reset for the next line
    return hits;
}

}  // namespace

TEST_CASE("prefilter: finds what a plain search finds, in its order") {
    const signature_set& sigs = signature_set::shipped();
    std::vector<std::string> lits;
    for (const auto& s : sigs.all())
        for (const auto& l : s.literals) lits.push_back(l);
    REQUIRE(lits.size() > 100);
    std::mt19937 rng(12345);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    const std::string noise = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:[]()=|,.-_/\t\x1b";
    int lines = 0, with_hits = 0;
    for (int round = 0; round < 600; ++round) {
        std::string text;
        const size_t parts = 1 + pick(8);
        for (size_t k = 0; k < parts; ++k) {
            switch (pick(4)) {
            case 0: text += lits[pick(lits.size())]; break;                 // a literal
            case 1: {                                                       // a near miss
                std::string l = lits[pick(lits.size())];
                l[pick(l.size())] ^= 0x20;
                text += l;
                break;
            }
            case 2: text += lits[pick(lits.size())].substr(0, 4); break;   // a head alone
            default:
                for (size_t c = pick(40); c > 0; --c) text += noise[pick(noise.size())];
            }
        }
        // every length from the full text down, so both paths meet every tail
        for (size_t len = text.size(); len + 24 > text.size() && len > 0; --len) {
            const std::string_view t(text.data(), len);
            const auto want = reference(sigs, t);
            CHECK(run(sigs, t) == want);
            ++lines;
            with_hits += !want.empty();
        }
    }
    CHECK(with_hits > lines / 2);
}

// The slide is compiled for window lengths 4-8 and a generic one: sets whose shortest literal
// has each of those lengths (and 12), random literals over a small alphabet so hits, near misses
// and exclusive stops are common.
TEST_CASE("prefilter: every window length finds what a plain search finds") {
    std::mt19937 rng(777);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    const std::string alpha = "ab c:[";
    for (size_t shortest : {4, 5, 6, 7, 8, 9, 12}) {
        signature_set sigs;
        for (int i = 0; i < 24; ++i) {
            signature s;
            s.id = "s" + std::to_string(i);
            s.exclusive = pick(5) == 0;
            for (size_t k = 1 + pick(3); k > 0; --k) {
                std::string l;
                for (size_t c = shortest + (i == 0 ? 0 : pick(9)); c > 0; --c) l += alpha[pick(alpha.size())];
                s.literals.push_back(l);
            }
            sigs.add(std::move(s));
        }
        sigs.finish();
        int with_hits = 0;
        for (int round = 0; round < 400; ++round) {
            std::string text;
            for (size_t parts = 1 + pick(6); parts > 0; --parts) {
                if (pick(2) == 0) {
                    const auto& lits = sigs.all()[pick(sigs.size())].literals;
                    text += lits[pick(lits.size())];
                } else {
                    for (size_t c = pick(20); c > 0; --c) text += alpha[pick(alpha.size())];
                }
            }
            const auto want = reference(sigs, text);
            CHECK(run(sigs, text) == want);
            with_hits += !want.empty();
        }
        CHECK(with_hits > 200);
    }
}

TEST_CASE("prefilter: a torchtitan step line wakes only the signatures meant for it") {
    // Every line of a torchtitan log starts with "[titan]" (and the bench log's step lines are all of that kind): a
    // setting signature whose literal that prefix holds ran its regex on every line. rev27's card signature had
    // "titan" (for TITAN X/V/RTX), and the 300 MB bench went from 0.75x to 2.67x grep's time; a literal with the
    // card's model put it at 0.53x.
    const signature_set& sigs = signature_set::shipped();
    const std::string line =
        "[rank3]:[titan] 2026-01-01 10:00:00,123 - root - INFO - step: 12  loss:  2.00012  grad_norm:  0.53  "
        "memory: 40.00GiB(50.00%)  tps: 1,234  tflops: 200.12  mfu: 20.25%";
    std::vector<int> hits;
    std::vector<char> mark(sigs.size(), 0);
    sigs.candidates(line, hits, mark);
    for (int h : hits) {
        CAPTURE(sigs.all()[static_cast<size_t>(h)].id);
        CHECK(sigs.all()[static_cast<size_t>(h)].kind != sig_kind::setting);
    }
}

TEST_CASE("prefilter: the bench log's lines wake only progress, memory, framework and NCCL signatures") {
    // perf61: cases63's report of a smaller batch that did not help had the literal "batch", so the data loader's
    // "fetched batch N" line (one in 13 of the bench log) ran that signature's case-blind pattern: 5.59 -> 6.65
    // instructions a byte. A signature read in words (report, setting, growth ...) has no business on these lines.
    const signature_set& sigs = signature_set::shipped();
    const char* lines[] = {  // one of each line shape tests/bench/gen_log.py writes at every step
        "[rank3]:[titan] 2026-01-01 10:00:00,123 - root - INFO - \x1b[31mstep: 12  \x1b[32mloss:  2.00012  "
        "\x1b[33mgrad_norm:  0.53  \x1b[38;2;180;60;0mmemory: 40.00GiB(50.00%)  \x1b[34mtps: 1,234  "
        "\x1b[36mtflops: 200.12  \x1b[35mmfu: 20.25%\x1b[39m",
        "[rank0]: iteration       12/  100000 | consumed samples:         6144 | elapsed time per iteration (ms): "
        "1234.5 | learning rate: 1.000000E-04 | global batch size:   512 | lm loss: 2.345678E+00 | loss scale: 1.0 | "
        "grad norm: 0.512 | number of skipped iterations:   0 | number of nan iterations:   0 |",
        "[rank1]: MA 12.52 GB         Max_MA 14.02 GB         CA 15.3 GB         Max_CA 16 GB ",
        "[rank1]: {'loss': 1.942, 'grad_norm': 0.53, 'learning_rate': 1.99e-05, 'epoch': 0.12}",
        "host-0:10002:20002 [2] NCCL INFO Channel 03/0 : 2[2] -> 3[3] via P2P/IPC/read",
        "[rank2]: dataloader: fetched batch 12 from shard /data/shard-0012.bin in 12 ms (prefetch queue 4/8)",
    };
    for (const char* line : lines) {
        std::vector<int> hits;
        std::vector<char> mark(sigs.size(), 0);
        sigs.candidates(line, hits, mark);
        for (int h : hits) {
            const signature& s = sigs.all()[static_cast<size_t>(h)];
            CAPTURE(line);
            CAPTURE(s.id);
            CHECK((s.kind == sig_kind::progress || s.kind == sig_kind::memory || s.kind == sig_kind::framework ||
                   s.kind == sig_kind::nccl_peer));
        }
    }
}
