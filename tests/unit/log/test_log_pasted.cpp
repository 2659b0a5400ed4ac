// Shapes a pasted log often has (logs59, issue 17): an elision line the poster typed between two logged
// steps, and a failure message hard-wrapped over lines with the cut inside a figure or its unit.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "parsers/log/log_analyzer.h"
#include "parsers/log/wrapped_message.h"

using namespace oomdx;

namespace {

log_analysis analyze_pasted(const std::string& text) { return analyze_log_text(text, "pasted.log"); }

bool has_role(const log_analysis& a, const std::string& role) {
    return std::any_of(a.evidence.begin(), a.evidence.end(), [&](const log_evidence& e) { return e.role == role; });
}

constexpr std::int64_t k_pasted_gib = 1LL << 30;

// PaddleDetection's iteration line (bf03's shape), one per iteration
std::string paddle_iter(int i) {
    return "[05/10 10:00:00] ppdet.engine INFO: Epoch: [0] [" + std::string(i < 10 ? "   " : "  ") + std::to_string(i) +
           "/6250] eta: 1 day, 2:00:00 lr: 0.000100 loss: 2.5 batch_cost: 0.5 sec\n";
}

const std::string k_oom_line =
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 5.00 GiB already "
    "allocated; 1.00 GiB free; 6.00 GiB reserved in total by PyTorch)\n";

}  // namespace

TEST_CASE("an elision line typed by the poster is a cut, not the logging interval") {
    std::string before;
    for (int i = 0; i <= 10; ++i) before += paddle_iter(i);
    SUBCASE("one step a line before the cut: the step after the last logged one failed") {
        for (const std::string mark : {"...", "…", "[...]", "(...)", "<snip>", "# ... 200 lines omitted", ".....", "省略"}) {
            CAPTURE(mark);
            auto a = analyze_pasted(before + mark + "\n" + paddle_iter(19) + k_oom_line);
            CHECK(a.last_logged_step == 19);
            CHECK(a.step == 20);
            CHECK(a.step_basis == "consecutive_steps");
            CHECK(has_role(a, "elision"));
        }
    }
    SUBCASE("no elision line: the gap 10 to 19 is the interval, no failing step") {
        auto a = analyze_pasted(before + paddle_iter(19) + k_oom_line);
        CHECK(a.last_logged_step == 19);
        CHECK(!a.step);
        CHECK(a.step_basis == "sparse_log");
        CHECK(!has_role(a, "elision"));
    }
    SUBCASE("a `...` inside a line (code, a loading message, a tqdm description) is no cut") {
        for (const std::string line : {"    out = model(...)", "Loading checkpoint shards...",
                                       "Training...:  50%|#####     | 5/10"}) {
            CAPTURE(line);
            auto a = analyze_pasted(before + line + "\n" + paddle_iter(19) + k_oom_line);
            CHECK(!a.step);
            CHECK(!has_role(a, "elision"));
        }
    }
    SUBCASE("a counter logged every 10 steps stays sparse across a cut") {
        std::string sparse;
        for (int i = 0; i <= 30; i += 10) sparse += paddle_iter(i);
        auto a = analyze_pasted(sparse + "...\n" + paddle_iter(60) + k_oom_line);
        CHECK(a.last_logged_step == 60);
        CHECK(!a.step);
    }
    SUBCASE("a `...` printed between every step (an array's summary) is no cut: the run has one inside") {
        std::string dotted;
        for (int i = 0; i <= 3; ++i) dotted += paddle_iter(i) + " ...\n";
        auto a = analyze_pasted(dotted + paddle_iter(19) + k_oom_line);
        CHECK(a.last_logged_step == 19);
        CHECK(!a.step);
        CHECK(!has_role(a, "elision"));
    }
}

TEST_CASE("a failure message hard-wrapped inside a figure is joined back") {
    using log_detail::join_wrapped;
    SUBCASE("a terminal cut at 120 columns, the unit cut in two (bf07's shape)") {
        std::string m =
            "An error occurred during training: CUDA out of memory. Tried to allocate 12.00 MiB. GPU 0 has a total "
            "capacity of 79.32 GiB of which 11.00 MiB is free. Including non-PyTorch memory, this process has 22.85 GiB "
            "memory in use. Of the allocated memory 20.75 GiB is allocated by PyTorch, and 627.28 MiB is reserved by "
            "PyTorch but unallocated.";
        // a filler word that puts a cut right after "20.75 G"
        const size_t at = m.find("20.75 G") + 7, of = m.find("Of the allocated");
        m.insert(of, std::string((120 - at % 120) % 120 + 119, 'y') + " ");
        REQUIRE(m.find("20.75 G") % 120 == 113);
        // the terminal's lines, their trailing blanks trimmed by the copy (a cut on a blank: 119 columns)
        std::string head, rest;
        for (size_t i = 0; i < m.size(); i += 120) {
            std::string l = m.substr(i, 120);
            while (!l.empty() && l.back() == ' ') l.pop_back();
            if (i == 0) head = l;
            else rest += (rest.empty() ? "" : "\n") + l;
        }
        CHECK(join_wrapped(head, rest) == m);
        // a line after the message's end, as wide as the terminal by chance, is not joined
        CHECK(join_wrapped(head, rest + "\n" + "Traceback (most recent call last):") == m);
    }
    SUBCASE("a figure cut after its digits (q11) or before its unit's rest, in a quoted paste") {
        CHECK(join_wrapped("> RuntimeError: CUDA out of memory. ... 2.44 MiB free; 16.9", "4 GiB reserved in total by PyTorch) ")
                  .find("16.94 GiB reserved") != std::string::npos);
        CHECK(join_wrapped("Of the allocated memory 20.75 G", "iB is allocated by PyTorch").find("20.75 GiB is") !=
              std::string::npos);
        CHECK(join_wrapped("available memory is only ", "                   416.625000MB.")
                  .find("only 416.625000MB.") != std::string::npos);
    }
    SUBCASE("two separate messages are not joined") {
        const std::string first = k_oom_line.substr(0, k_oom_line.size() - 1);
        // the next message as wide as the first: it starts a word after a sentence's end
        std::string second = "[rank1]: " + first;
        second.resize(first.size());
        CHECK(join_wrapped(first, second) == first);
        // a line that ends a sentence, a figure on the next line
        CHECK(join_wrapped("Cannot allocate 27.000000MB memory on GPU 0.", "4.062500MB free") ==
              "Cannot allocate 27.000000MB memory on GPU 0.");
        // a number that is not cut: the next line starts with a word
        CHECK(join_wrapped("step 19", "Traceback (most recent call last):") == "step 19");
    }
    SUBCASE("in a log: the allocated figure cut in its unit is read") {
        const std::string head =
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 MiB. GPU 0 has a total capacity of "
            "79.32 GiB of which 11.00 MiB is free. Of the allocated memory 20.75 G";
        auto a = analyze_pasted("step 1, loss 2.0\n" + head + "\niB is allocated by PyTorch, and 627.28 MiB is reserved "
                                                           "by PyTorch but unallocated.\n");
        REQUIRE(a.allocated_bytes);
        CHECK(*a.allocated_bytes == static_cast<std::int64_t>(20.75 * k_pasted_gib));
        // the same cut followed by another message: nothing joined
        auto b = analyze_pasted("step 1, loss 2.0\n" + head + "\nTraceback (most recent call last):\n");
        CHECK(!b.allocated_bytes);
    }
}
