// Signatures as data: the loader reports every error with file:line, the shipped example lines
// pass, and the coverage gate catches a signature without examples.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "parsers/log/signature_examples.h"

#include <re2/re2.h>

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

struct temp_dir {
    fs::path path;
    temp_dir() {
        path = fs::temp_directory_path() / ("oomdx_sigs_" + std::to_string(::getpid()) + "_" + std::to_string(rand()));
        fs::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    void write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
};

std::string load_error(const temp_dir& d) {
    try {
        signature_set::load({d.path.string()});
    } catch (const input_error& e) {
        return e.what();
    }
    return {};
}

}  // namespace

TEST_CASE("signature loader: every error of every file, with file:line") {
    temp_dir d;
    d.write("a.yaml",
            "- id: one\n  kind: oom\n  source: caching_allocator\n  literals: [\"out of memory\"]\n  example: x\n"
            "- id: two\n  kind: oom\n  source: caching_allocator\n  literals: [\"Tried to\"]\n  fields:\n    requested: 'x ([0-9]+)'\n"
            "- id: three\n  kind: progress\n  literals: [\"step \"]\n  by_total: true\n");
    d.write("b.yaml", "- id: four\n  kind: oom\n  source: somewhere\n  literals: [\"four\"]\n"
                      "- id: five\n  kind: oom\n  source: host_oom\n  literals: [\"five!\"]\n  at_start: true\n"
                      "- id: six\n  kind: phase\n  phase: forward\n  literals: [\"six!\"]\n  prefix_rank: true\n");
    const std::string e = load_error(d);
    CHECK(e.find("a.yaml:5: unknown key 'example'") != std::string::npos);
    CHECK(e.find("a.yaml:11: signature 'two': unknown field name 'requested'") != std::string::npos);
    CHECK(e.find("a.yaml:12: signature 'three': by_total needs a 'total' field") != std::string::npos);
    CHECK(e.find("b.yaml:1: signature 'four': source 'somewhere' is not in the vocabulary") != std::string::npos);
    CHECK(e.find("b.yaml:5: signature 'five': per_step, at_start, multiples, by_total, unit_advance, eval_counter, run_start, at_failure and elision are for progress lines") !=
          std::string::npos);
    CHECK(e.find("b.yaml:10: signature 'six': only context lines can give their prefix's rank") != std::string::npos);
    CHECK(e.find("6 errors") != std::string::npos);
}

TEST_CASE("signature loader: a report names the log.* fact it states; settings keep their values") {
    temp_dir d;
    d.write("r.yaml", "- id: r1\n  kind: report\n  literals: [\"ran fine\"]\n"
                      "- id: r2\n  kind: report\n  fact: training.seq_len\n  literals: [\"ran fine\"]\n"
                      "- id: r3\n  kind: report\n  fact: log.ran_before_reported\n  literals: [\"ran fine\"]\n  values: {a: b}\n"
                      "- id: r4\n  kind: phase\n  phase: eval\n  fact: log.ran_before_reported\n  literals: [\"ran fine\"]\n");
    const std::string e = load_error(d);
    CHECK(e.find("r.yaml:1: signature 'r1': a report needs 'fact' naming a log.* fact") != std::string::npos);
    CHECK(e.find("r.yaml:4: signature 'r2': a report needs 'fact' naming a log.* fact") != std::string::npos);
    CHECK(e.find("r.yaml:8: signature 'r3': 'values' are for settings") != std::string::npos);
    CHECK(e.find("r.yaml:13: signature 'r4': 'fact' and 'values' are for settings (and 'fact' for reports)") != std::string::npos);
    temp_dir ok;  // a well-formed report loads (look-alike)
    ok.write("r.yaml", "- id: r5\n  kind: report\n  fact: log.ran_before_reported\n  literals: [\"ran fine\"]\n");
    CHECK(load_error(ok).empty());
}

TEST_CASE("signature examples: unknown keys, signatures and fields are refused with file:line") {
    temp_dir d;
    d.write("s.yaml", "- id: one\n  kind: oom\n  source: caching_allocator\n  literals: [\"out of memory\"]\n");
    d.write("s.test.yaml",
            "- sig: one\n  line: 'x out of memory'\n  expect: 1\n"
            "- sig: nope\n  line: 'y'\n"
            "- sig: one\n  line: 'z out of memory'\n  fields: {requested_bytes: 1 GiB}\n");
    const signature_set sigs = signature_set::load({d.path.string()});
    try {
        load_signature_examples({d.path.string()}, sigs);
        FAIL("expected an input_error");
    } catch (const input_error& e) {
        const std::string m = e.what();
        CHECK(m.find("s.test.yaml:3: unknown key 'expect'") != std::string::npos);
        CHECK(m.find("s.test.yaml:4: unknown signature 'nope'") != std::string::npos);
        CHECK(m.find("s.test.yaml:8: signature 'one' has no field 'requested_bytes'") != std::string::npos);
    }
}

TEST_CASE("signature examples: the coverage gate") {
    temp_dir d;
    d.write("s.yaml",
            "- id: covered\n  kind: oom\n  source: caching_allocator\n  literals: [\"out of memory\"]\n  regex: 'CUDA out of memory'\n"
            "- id: bare\n  kind: oom\n  source: host_oom\n  literals: [\"Killed\"]\n");
    d.write("s.test.yaml", "- sig: covered\n  line: 'CUDA out of memory'\n- sig: covered\n  match: false\n  line: 'NPU out of memory'\n");
    const signature_set sigs = signature_set::load({d.path.string()});
    auto r = run_signature_examples(sigs, load_signature_examples({d.path.string()}, sigs));
    CHECK(r.failures.empty());
    REQUIRE(r.uncovered.size() == 1);
    CHECK(r.uncovered[0].find("bare: no example line") != std::string::npos);
    CHECK_FALSE(r.ok());
}

TEST_CASE("signature examples: the cost gate refuses literals that sit on progress lines") {
    // 20 progress example lines; a report whose literal is a step word runs on all of them
    auto write = [](const temp_dir& d, const std::string& literal) {
        d.write("s.yaml",
                "- id: steps\n  kind: progress\n  literals: [\"step \"]\n  regex: 'step [0-9]+'\n"
                "  fields:\n    step: 'step ([0-9]+)'\n"
                "- id: late\n  kind: report\n  fact: log.late_failure_reported\n  literals: [\"" + literal + "\"]\n"
                "  regex: 'OOM after [0-9]+ steps'\n");
        std::string t = "- sig: late\n  line: 'OOM after 300 steps'\n- sig: late\n  match: false\n  line: 'OOM after steps'\n"
                        "- sig: steps\n  match: false\n  line: 'step one'\n";
        for (int i = 1; i <= 20; ++i) t += "- sig: steps\n  line: 'step " + std::to_string(i) + " loss 2.1'\n";
        d.write("s.test.yaml", t);
    };
    temp_dir cheap, costly;
    write(cheap, "OOM after");
    write(costly, "step");
    const signature_set a = signature_set::load({cheap.path.string()});
    CHECK(run_signature_examples(a, load_signature_examples({cheap.path.string()}, a)).ok());
    const signature_set b = signature_set::load({costly.path.string()});
    auto r = run_signature_examples(b, load_signature_examples({costly.path.string()}, b));
    REQUIRE(r.failures.size() == 1);
    CHECK(r.failures[0].find("late: its literals are on 20 of 20 progress example lines ('step' on 20)") != std::string::npos);
}

TEST_CASE("signature examples: a wrong expectation fails with the values") {
    temp_dir d;
    d.write("s.yaml",
            "- id: sized\n  kind: oom\n  source: caching_allocator\n  literals: [\"allocate\"]\n"
            "  fields:\n    requested_bytes: 'allocate ([0-9.]+ [KMG]iB)'\n");
    d.write("s.test.yaml", "- sig: sized\n  line: 'tried to allocate 2.00 GiB'\n  fields: {requested_bytes: 3 GiB}\n");
    const signature_set sigs = signature_set::load({d.path.string()});
    auto r = run_signature_examples(sigs, load_signature_examples({d.path.string()}, sigs));
    REQUIRE(r.failures.size() == 1);
    CHECK(r.failures[0].find("field requested_bytes: expected 3 GiB, got 2147483648") != std::string::npos);
}

TEST_CASE("the shipped signatures: every example passes, every signature is covered") {
    const std::string dir = data_path("knowledge/log_signatures");
    const signature_set sigs = signature_set::load({dir});
    auto r = run_signature_examples(sigs, load_signature_examples({dir}, sigs));
    for (const auto& f : r.failures) MESSAGE(f);
    for (const auto& u : r.uncovered) MESSAGE(u);
    CHECK(r.ok());
    CHECK(r.examples > r.signatures);
}

TEST_CASE("signature patterns: checked at load, or (lazily loaded) at first use with file:line") {
    temp_dir d;
    d.write("a.yaml",
            "- id: good\n  kind: oom\n  source: caching_allocator\n  literals: [\"out of memory\"]\n"
            "  regex: 'out of memory'\n"
            "- id: bad\n  kind: oom\n  source: caching_allocator\n  literals: [\"OOM here\"]\n"
            "  regex: 'OOM (here'\n");
    const std::string eager = load_error(d);
    CHECK(eager.find("a.yaml:10: bad RE2 pattern") != std::string::npos);

    const signature_set lazy = signature_set::load({d.path.string()}, signature_set::patterns::lazy);
    REQUIRE(lazy.size() == 2);
    CHECK(lazy.all()[0].regex->compile().empty());
    CHECK(RE2::PartialMatch("CUDA out of memory.", lazy.all()[0].regex->re()));
    std::string first_use;
    try {
        (void)lazy.all()[1].regex->re();
    } catch (const input_error& e) {
        first_use = e.what();
    }
    CHECK(first_use.find("a.yaml:10: bad RE2 pattern") != std::string::npos);
    CHECK_FALSE(lazy.all()[1].regex->compile().empty());  // the same answer every time
}

TEST_CASE("signature patterns: every shipped pattern compiles (what the lazy shipped set relies on)") {
    const signature_set& sigs = signature_set::shipped();
    int patterns = 0;
    for (const auto& s : sigs.all()) {
        for (const auto* re : {s.regex.get(), s.unless.get()})
            if (re) {
                CHECK_MESSAGE(re->compile().empty(), s.id);
                ++patterns;
            }
        for (const auto& f : s.fields)
            for (const auto& re : f.patterns) {
                CHECK_MESSAGE(re->compile().empty(), std::string(s.id + " field " + f.name));
                ++patterns;
            }
    }
    CHECK(patterns > 100);
}

TEST_CASE("signature loader: literals under 4 bytes only for a max_line signature, looked for in short lines") {
    temp_dir d;
    d.write("a.yaml", "- id: dots\n  kind: progress\n  literals: [\"...\"]\n"
                      "- id: long\n  kind: progress\n  elision: true\n  max_line: 65\n  literals: [\"...\"]\n"
                      "- id: cut\n  kind: context\n  elision: true\n  literals: [\"<snip>\"]\n");
    const std::string e = load_error(d);
    CHECK(e.find("a.yaml:3: literal '...' is shorter than 4 bytes (only a max_line signature's may be)") != std::string::npos);
    CHECK(e.find("a.yaml:7: signature 'long': max_line must be 1 to 64") != std::string::npos);
    CHECK(e.find("signature 'cut': per_step, at_start") != std::string::npos);

    temp_dir ok;
    ok.write("a.yaml", "- id: dots\n  kind: progress\n  elision: true\n  max_line: 8\n  literals: [\"...\"]\n");
    const signature_set sigs = signature_set::load({ok.path.string()});
    std::vector<int> hits;
    std::vector<char> mark(sigs.size(), 0);
    sigs.candidates("  ...", hits, mark);
    CHECK(hits == std::vector<int>{0});
    hits.clear();
    sigs.candidates("Loading...", hits, mark);  // longer than its max_line: not looked at
    CHECK(hits.empty());
}

// RE2 2022-06-01 (Debian 12) in Latin-1 mode: an alternation whose branches share leading non-ASCII bytes is factored
// into a literal prefix that loses the Latin-1 flag, and the search accelerator then looks for its UTF-8 spelling; the
// loader compiles around it. Each of these failed to match its line before.
TEST_CASE("signature patterns: a factored non-ASCII alternation at the start still matches (RE2 Latin-1 prefix)") {
    const std::pair<const char*, const char*> cases[] = {
        {"(?:进程|进行)被", "训练进程被杀掉了"},
        {"进程被杀|进行被杀", "进程被杀"},
        {"^(?:进程|进行)被", "进程被杀"},
        {"(?:杀死|杀掉|杀了)", "进程被杀掉"},
        {"(?:━|─)+ (\\d+)", "━━━━ 12"},
    };
    for (const auto& [pattern, line] : cases) {
        const std::string shown = pattern;
        CAPTURE(shown);
        const sig_regex re(pattern, "test:1", 0);
        REQUIRE(re.compile().empty());
        CHECK(RE2::PartialMatch(line, re.re()));
    }
    // and the empty group changes nothing else: no match where there was none, the groups as written
    const sig_regex re("(?:进程|进行)被(\\S+)", "test:2", 1);
    std::string word;
    CHECK(RE2::PartialMatch("进程被杀掉", re.re(), &word));
    CHECK(word == "杀掉");
    CHECK_FALSE(RE2::PartialMatch("进度被", re.re()));
    CHECK(re.re().NumberOfCapturingGroups() == 1);
}
