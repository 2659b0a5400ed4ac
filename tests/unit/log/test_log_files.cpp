// File-level behaviour: fixtures, gzip, CRLF, several ranks, memory series, extra signature
// directories, JSON, facts, and hostile inputs.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/vocabulary.h"
#include "engine/report/log_verdicts.h"
#include "parsers/log/log_analyzer.h"
#include "tests/unit/run_oomdx.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) { return std::string(OOMDX_TEST_DIR) + "/fixtures/logs/" + name; }

fs::path temp_dir() {
    auto d = fs::temp_directory_path() / ("oomdx_log_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

void write_gz(const fs::path& p, const std::string& text) {
    gzFile g = gzopen(p.c_str(), "wb");
    REQUIRE(g);
    gzwrite(g, text.data(), static_cast<unsigned>(text.size()));
    gzclose(g);
}

std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

struct collect : fact_sink {
    std::vector<fact> facts;
    void emit(fact f) override { facts.push_back(std::move(f)); }
    const fact* get(const std::string& n) const {
        for (const auto& f : facts)
            if (f.name == n) return &f;
        return nullptr;
    }
};

}  // namespace

TEST_CASE("torchtitan: colours stripped, growing memory before a late OOM is a leak signal") {
    auto a = analyze_logs({fixture("torchtitan_leak.log")});
    judge_log(a);
    CHECK(a.source == "caching_allocator");
    CHECK(a.framework == "torchtitan");
    CHECK(a.rank == 0);
    CHECK(a.last_logged_step == 40);
    CHECK(a.step == 41);
    CHECK(a.timing == "late");
    REQUIRE(a.memory_series.size() == 40);
    CHECK(a.memory_series.front().statistic == "max_reserved");
    CHECK(a.growth_bytes_per_step);
    CHECK(std::llabs(static_cast<std::int64_t>(*a.growth_bytes_per_step) - (1LL << 30)) < (1LL << 24));
    CHECK(a.series_monotonic == true);
    CHECK(a.leak_signal);
    CHECK(a.launch_line.find("--training.local_batch_size 8") != std::string::npos);
    CHECK(a.launch_line_no == 1);
    for (const auto& e : a.evidence) CHECK(e.text.find('\x1b') == std::string::npos);
    CHECK(render_text(a, false, false).find("Leak signal") != std::string::npos);
}

TEST_CASE("megatron: memory lines, old message, world size") {
    auto a = analyze_logs({fixture("megatron_old_format.log")});
    judge_log(a);
    CHECK(a.source == "caching_allocator");
    CHECK(a.framework == "megatron");
    CHECK(a.device_index == 3);
    CHECK(a.last_logged_step == 2);
    CHECK(a.step == 3);
    CHECK(a.step_basis == "consecutive_steps");
    CHECK(a.timing == "mid");  // step 3: past the method's steps 0-2, before step 10
    CHECK(a.world_size == 16);
    REQUIRE(a.memory_series.size() == 2);
    CHECK(a.memory_series[1].bytes == static_cast<std::int64_t>(50000.0 * 1024 * 1024));
    CHECK(a.memory_series[1].statistic == "allocated");
}

TEST_CASE("several ranks: first failure, all failed, torchrun root cause") {
    auto a = analyze_logs({fixture("multi_rank.log")});
    CHECK(a.rank == 2);
    CHECK(a.device_index == 2);
    CHECK(a.ranks_failed == std::vector<std::int64_t>{2, 0, 1, 3});
    CHECK(a.world_size == 4);
    CHECK(a.all_ranks_failed == true);
    CHECK(a.last_logged_step == 5);
    CHECK(a.step == 6);
}

TEST_CASE("CRLF and gzip give the same result") {
    const std::string p = fixture("deepspeed_npu_crlf.log");
    auto a = analyze_logs({p});
    CHECK(a.source == "caching_allocator");
    CHECK(a.device_kind == "npu");
    CHECK(a.device_index == 1);
    CHECK(a.framework == "deepspeed");
    CHECK(a.last_logged_step == 4);
    CHECK(a.memory_series.size() == 4);
    CHECK(a.message.find('\r') == std::string::npos);
    CHECK(a.files.at(0).lines == 10);
    auto dir = temp_dir();
    write_gz(dir / "x.log.gz", slurp(p));
    auto b = analyze_logs({(dir / "x.log.gz").string()});
    CHECK(b.files.at(0).compressed);
    auto ja = to_json(a)["oom"], jb = to_json(b)["oom"];
    for (const char* k : {"source", "requested_bytes", "free_bytes", "device_index", "line", "step", "timing"})
        CHECK(ja[k] == jb[k]);
    CHECK(b.memory_series.size() == a.memory_series.size());
    fs::remove_all(dir);
}

TEST_CASE("a new message family from an extra signature directory, no recompiling") {
    const std::string text = "boot\nFROB pool exhausted: wanted 4096 bytes on card 5\n";
    CHECK(analyze_log_text(text, "f.log").source == "none");
    log_options o;
    o.extra_signature_dirs = {fixture("extra_signatures")};
    auto a = analyze_log_text(text, "f.log", o);
    CHECK(a.source == "workspace");
    CHECK(a.signature == "frobnicator_pool_exhausted");
    CHECK(a.requested_bytes == 4096);
    CHECK(a.device_index == 5);
    CHECK(a.line == 2);
}

TEST_CASE("bad signature files are clear errors") {
    auto dir = temp_dir();
    std::ofstream(dir / "bad.yaml") << "- id: x\n  kind: oom\n  source: caching_allocator\n  literals: [\"abcd\"]\n  regex: '(unclosed'\n";
    log_options o;
    o.extra_signature_dirs = {dir.string()};
    CHECK_THROWS_AS(analyze_log_text("x", "f", o), input_error);
    try {
        analyze_log_text("x", "f", o);
    } catch (const input_error& e) {
        CHECK(std::string(e.what()).find("bad.yaml:5") != std::string::npos);
    }
    fs::remove_all(dir);
}

TEST_CASE("JSON schema and facts") {
    auto a = analyze_logs({fixture("multi_rank.log")});
    auto j = to_json(a);
    CHECK(j["schema"] == "oomdx.log/1");
    for (const char* k : {"source", "requested_bytes", "capacity_bytes", "free_bytes", "allocated_bytes",
                          "reserved_unallocated_bytes", "device_index", "rank", "step", "last_logged_step",
                          "step_basis", "step_stride", "phase", "timing", "evidence"})
        CHECK(j["oom"].contains(k));
    CHECK(j.contains("framework"));
    CHECK(j["memory_series"].is_array());
    CHECK(j["oom"]["evidence"][0]["line"].is_number());
    collect c;
    emit_facts(a, c);
    REQUIRE(c.get("oom.source"));
    CHECK(c.get("oom.source")->val.as_string() == "caching_allocator");
    CHECK(c.get("oom.source")->prov.producer == "log");
    CHECK(c.get("oom.source")->prov.line > 0);
    CHECK(c.get("oom.requested_bytes")->val.as_integer() == 512LL << 20);
    CHECK(c.get("oom.rank")->val.as_integer() == 2);
    collect none;
    emit_facts(analyze_log_text("all good\n", "ok.log"), none);
    REQUIRE(none.get("oom.source"));
    CHECK(none.get("oom.source")->val.as_string() == "none");
}

TEST_CASE("hostile inputs: empty, binary, invalid UTF-8, 100 MB line, truncated gzip") {
    auto dir = temp_dir();
    SUBCASE("empty") {
        std::ofstream(dir / "empty.log").close();
        CHECK_THROWS_WITH_AS(analyze_logs({(dir / "empty.log").string()}),
                             doctest::Contains("empty file"), input_error);
    }
    SUBCASE("binary garbage") {
        std::string junk(1 << 20, '\0');
        std::mt19937 rng(7);
        for (auto& ch : junk) ch = static_cast<char>(rng());
        std::ofstream(dir / "bin.log", std::ios::binary) << junk;
        CHECK_THROWS_WITH_AS(analyze_logs({(dir / "bin.log").string()}),
                             doctest::Contains("binary data"), input_error);
    }
    SUBCASE("a trailing run of NULs (crash in a preallocated file) is still a log") {
        std::string t = "step 1 loss 2.0\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB\n";
        t += std::string(8192, '\0');
        std::ofstream(dir / "nul_tail.log", std::ios::binary) << t;
        CHECK(analyze_logs({(dir / "nul_tail.log").string()}).source == "caching_allocator");
    }
    SUBCASE("invalid UTF-8 around an OOM") {
        std::string t = "\xff\xfe\xc3(RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 1.00 GiB total capacity; 0.50 GiB already allocated; 1.00 MiB free; 0.60 GiB reserved in total by PyTorch) \xe2\x82\n";
        std::ofstream(dir / "utf.log", std::ios::binary) << t;
        auto a = analyze_logs({(dir / "utf.log").string()});
        CHECK(a.source == "caching_allocator");
        CHECK(a.requested_bytes == 2LL << 20);
        std::string js;
        CHECK_NOTHROW(js = to_json(a).dump());
        CHECK(js.find("\\ufffd") == std::string::npos);  // replaced by U+FFFD bytes, valid JSON
    }
    SUBCASE("100 MB on one line") {
        {
            std::ofstream f(dir / "long.log", std::ios::binary);
            std::string block(1 << 20, 'x');
            f << "RuntimeError: CUDA error: out of memory ";
            for (int i = 0; i < 100; ++i) f << block;
        }
        auto a = analyze_logs({(dir / "long.log").string()});
        CHECK(a.source == "driver_or_kernel");
        CHECK(a.files.at(0).long_lines == 1);
        CHECK(a.message.size() <= 1024);
        CHECK_FALSE(a.warnings.empty());
    }
    SUBCASE("truncated gzip") {
        std::string text;
        for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i) + " of a long training log\n";
        write_gz(dir / "t.log.gz", text);
        auto z = slurp((dir / "t.log.gz").string());
        std::ofstream(dir / "cut.log.gz", std::ios::binary) << z.substr(0, z.size() / 2);
        CHECK_THROWS_AS(analyze_logs({(dir / "cut.log.gz").string()}), input_error);
        try {
            analyze_logs({(dir / "cut.log.gz").string()});
        } catch (const input_error& e) {
            CHECK(std::string(e.what()).find("cut.log.gz") != std::string::npos);
        }
    }
    SUBCASE("missing file") { CHECK_THROWS_AS(analyze_logs({(dir / "nope.log").string()}), input_error); }
    fs::remove_all(dir);
}

TEST_CASE("every emitted fact is declared in knowledge/facts with its type") {
    auto voc = vocabulary::load_dir(data_path("knowledge/facts"));
    for (const char* f : {"torchtitan_leak.log", "megatron_old_format.log", "multi_rank.log", "deepspeed_npu_crlf.log"}) {
        collect c;
        emit_facts(analyze_logs({fixture(f)}), c);
        for (const auto& x : c.facts) {
            INFO(x.name);
            CHECK_NOTHROW(voc.check(x.name, x.val));
            CHECK(!x.prov.file.empty());
        }
    }
}

TEST_CASE("oomdx log CLI: json, exit codes") {
    const std::string bin = OOMDX_BINARY;
    if (!fs::exists(bin)) {
        MESSAGE("skipped: " << bin << " not built");
        return;
    }
    auto run = [](const std::string& args, std::string& out) {
        const auto r = oomdx::test::run_oomdx(args);
        out += r.out;
        return r.rc;
    };
    std::string out;
    CHECK(run("log --format json " + fixture("multi_rank.log"), out) == 0);
    auto j = nlohmann::json::parse(out);
    CHECK(j["schema"] == "oomdx.log/1");
    CHECK(j["oom"]["rank"] == 2);
    std::string md;
    CHECK(run("log --format markdown " + fixture("torchtitan_leak.log"), md) == 0);
    CHECK(md.find("## Log analysis") != std::string::npos);
    auto dir = temp_dir();
    std::ofstream(dir / "cut.gz", std::ios::binary) << std::string("\x1f\x8b\x08\x00", 4);
    std::string err;
    CHECK(run("log " + (dir / "cut.gz").string(), err) == 2);
    CHECK(err.find("oomdx: error:") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("a key=value logger is no framework; its step peak is a memory reading") {
    auto dir = temp_dir();
    std::ofstream(dir / "kv.log") << "step=0 TRAIN alloc=10.33 peak=68.03 GiB\n"
                                      "step=1 TRAIN alloc=10.33 peak=73.94 GiB\n";
    auto a = analyze_logs({(dir / "kv.log").string()});
    CHECK(a.framework == "unknown");  // "step=" is DeepSpeed's literal, not its format
    REQUIRE(a.memory_series.size() == 2);
    CHECK(a.memory_series.back().statistic == "max_allocated");
    CHECK(a.memory_series.back().bytes == std::llround(73.94 * 1024 * 1024 * 1024));  // sizes round to the nearest byte
    fs::remove_all(dir);
}

TEST_CASE("memory readings kept per series: 512 up to 32 ranks, a share of 16384 (at least 256) beyond") {
    auto log_of = [](int ranks, int steps) {
        std::string t;
        for (int s = 1; s <= steps; ++s)
            for (int r = 0; r < ranks; ++r)
                t += fmt::format("[rank{}]:[titan] 2026-01-01 10:00:00,123 - root - INFO - step: {:2}  loss:  2.0  "
                                 "memory: {:.2f}GiB(50.00%)  tps: 1,234\n",
                                 r, s, 40.0 + s * 0.001);
        return t;
    };
    auto few = analyze_log_text(log_of(8, 1200), "few.log");
    CHECK(few.memory_series.size() > 256);
    CHECK(few.memory_series.size() <= 513);  // the newest reading may come on top
    auto many = analyze_log_text(log_of(64, 1200), "many.log");
    CHECK(many.memory_series.size() > 128);
    CHECK(many.memory_series.size() <= 257);
    CHECK(many.memory_series.back().step == 1200);  // the newest reading is always there
}

TEST_CASE("sampled readings parsed at the end of the file keep their own line's figures") {
    // Most readings are thinned out before the end; the later ones are parsed there, from the
    // line they were taken from (a view of the mapping, or a copy for text and gzip input).
    std::string t;
    auto gib = [](int s) { return 40.0 + s * 0.01; };
    for (int s = 1; s <= 6000; ++s)
        t += fmt::format("[rank0]:[titan] 2026-01-01 10:{:02}:{:02},000 - root - INFO - \x1b[31mstep: {:5}  "
                         "\x1b[32mloss:  2.0  \x1b[38;2;180;60;0mmemory: {:.2f}GiB(50.00%)  tps: 1,234\x1b[39m\n",
                         s / 60 % 60, s % 60, s, gib(s));
    auto check = [&](const log_analysis& a) {
        REQUIRE(a.memory_series.size() > 256);
        for (const auto& p : a.memory_series) {
            CHECK(std::llabs(p.bytes - std::llround(gib(static_cast<int>(p.step)) * 1024 * 1024 * 1024)) <= 1);
            CHECK(p.line == p.step);
            REQUIRE(p.time_ms.has_value());
            CHECK(*p.time_ms % 60000 == (p.step % 60) * 1000);
        }
        CHECK(a.memory_series.back().step == 6000);
        CHECK(a.capacity_from_log_bytes.has_value());
    };
    check(analyze_log_text(t, "text.log"));
    // lines over 1 KiB do not wait (their copies would be the memory): parsed as they come
    std::string long_lines;
    for (std::size_t at = 0, nl; (nl = t.find('\n', at)) != std::string::npos; at = nl + 1)
        long_lines += t.substr(at, nl - at) + "  extra: " + std::string(1200, 'x') + "\n";
    check(analyze_log_text(long_lines, "long.log"));
    const auto dir = temp_dir();
    std::ofstream(dir / "mapped.log") << t;
    write_gz(dir / "packed.log.gz", t);
    check(analyze_logs({(dir / "mapped.log").string()}));
    check(analyze_logs({(dir / "packed.log.gz").string()}));
    fs::remove_all(dir);
}

TEST_CASE("sampled readings without their own step take the progress step of their moment") {
    // DeepSpeed's memory line prints no step; a Megatron memory line may omit it: both take the
    // iteration logged before them (a resumed run: iteration 100 + line / 2, not the reading's
    // count), also when parsed at the end of the file.
    std::string ds, mg;
    for (int s = 1; s <= 4000; ++s) {
        ds += fmt::format(" iteration {:8}/   10000 | consumed samples: {} | lm loss: 2.0 |\n", 100 + s, s * 8);
        ds += fmt::format("MA {:.2f} GB         Max_MA 14.02 GB         CA 15.3 GB         Max_CA 16 GB \n", 10.0 + s * 0.001);
        mg += fmt::format(" iteration {:8}/   10000 | consumed samples: {} | lm loss: 2.0 |\n", 100 + s, s * 8);
        mg += fmt::format("[Rank 0] memory (MB) | allocated: {}.0 | max allocated: 9000.0\n", 1000 + s);
    }
    // (the newest reading, added at the end, counts on from the sample: not checked here)
    const auto a = analyze_log_text(ds, "ds.log");
    REQUIRE(a.memory_series.size() > 256);
    for (size_t i = 0; i + 1 < a.memory_series.size(); ++i) CHECK(a.memory_series[i].step == 100 + a.memory_series[i].line / 2);
    const auto b = analyze_log_text(mg, "mg.log");
    REQUIRE(b.memory_series.size() > 256);
    for (size_t i = 0; i + 1 < b.memory_series.size(); ++i) {
        const auto& p = b.memory_series[i];
        CHECK(p.step == 100 + p.line / 2);
        CHECK(p.bytes == (1000 + p.line / 2) * 1024 * 1024);
    }
}

TEST_CASE("--stats: the run's figures on stderr, the report on stdout unchanged") {
    const auto dir = temp_dir();
    const fs::path big = dir / "stats.log";
    {
        std::ofstream f(big);
        for (int s = 1; s <= 30000; ++s)  // ~3 MB: over two chunks, so the prefilter threads run
            f << "[rank0]:[titan] 2026-01-01 10:00:00,123 - root - INFO - step: " << s
              << "  loss:  2.0  memory: 40.00GiB(50.00%)  tps: 1,234\n";
    }
    const auto plain = oomdx::test::run_oomdx("log --format json " + big.string(), oomdx::test::stderr_to::discard);
    // stdout is flushed before the stats line, so the joined output is the report, then the line
    const auto with = oomdx::test::run_oomdx("log --stats --jobs 2 --format json " + big.string());
    CHECK(with.rc == 0);
    REQUIRE(with.out.size() > plain.out.size());
    CHECK(with.out.compare(0, plain.out.size(), plain.out) == 0);
    const std::string err = with.out.substr(plain.out.size());
    CHECK(err.find("oomdx: stats: ") == 0);
    CHECK(err.find("on the main thread") != std::string::npos);
    CHECK(err.find("on 2 prefilter threads") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("a launch command over several lines: continuation lines that start with a flag join it") {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("oomdx_launch_{}", std::random_device{}());
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "cont.log") << "CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 train.py \\\n"
                                       "    --finetuning_type full \\\n"
                                       "    --per_device_train_batch_size 1 \\\n"
                                       "    --fp16\n"
                                       "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n";
    std::ofstream(dir / "cut.log") << "torchrun --nproc_per_node=1 train.py \\\n"
                                      "--lora_rank 0 \\\n"
                                      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB\n";
    auto a = analyze_logs({(dir / "cont.log").string()});
    CHECK(a.launch_line_no == 1);
    CHECK(a.launch_line.find("--fp16") == std::string::npos);  // the evidence keeps the first line
    CHECK(a.launch_command.find("--finetuning_type full") != std::string::npos);
    CHECK(a.launch_command.find("--fp16") != std::string::npos);
    CHECK(a.launch_command.find("RuntimeError") == std::string::npos);
    auto b = analyze_logs({(dir / "cut.log").string()});
    CHECK(b.launch_command.find("--lora_rank 0") != std::string::npos);
    CHECK(b.launch_command.find("OutOfMemoryError") == std::string::npos);  // an error line after a cut paste
    // the script on a line of its own (R1-V#71): the flags after it are the same command
    std::ofstream(dir / "script.log") << "torchrun --nproc_per_node=\"4\" \\\n"
                                         "    --nnodes=\"1\" \\\n"
                                         "    src/open_r1/grpo.py \\\n"
                                         "    --per_device_train_batch_size 1 \\\n"
                                         "    --gradient_checkpointing false\n"
                                         "4*A100 80G OOM at the first step\n";
    auto c = analyze_logs({(dir / "script.log").string()});
    CHECK(c.launch_command.find("grpo.py") != std::string::npos);
    CHECK(c.launch_command.find("--gradient_checkpointing false") != std::string::npos);
    CHECK(c.launch_command.find("OOM at the first step") == std::string::npos);
    // a log line after a cut paste that names a path is not a script line unless it is the script itself
    std::ofstream(dir / "cut2.log") << "python train.py \\\n"
                                       "  File \"/opt/x/train.py\", line 3, in <module>\n";
    CHECK(analyze_logs({(dir / "cut2.log").string()}).launch_command.find("File") == std::string::npos);
    std::filesystem::remove_all(dir);
}
