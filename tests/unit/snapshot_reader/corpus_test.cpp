// Every real snapshot in ../shared/corpus/snapshots parses and matches manifest.json; damaged
// copies of them fail with a clean input_error.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>

#include "engine/core/errors.h"
#include "reader_helpers.h"

using namespace oomdx;
using namespace snaptest;

TEST_CASE("corpus snapshots match the manifest") {
    const auto dir = corpus_dir();
    if (!std::filesystem::exists(dir / "manifest.json")) {
        MESSAGE("skipped: no snapshot corpus at " << dir.string());
        return;
    }
    auto manifest = nlohmann::json::parse(read_all(dir / "manifest.json"));
    int checked = 0;
    for (const auto& m : manifest) {
        const std::string file = m["file"];
        const auto& want = m["summary"];
        CAPTURE(file);
        snap::snapshot s = snap::load_snapshot((dir / file).string());
        totals t = sum_up(s);
        CHECK(t.segments == want["segments"].get<std::int64_t>());
        CHECK(t.blocks == want["blocks"].get<std::int64_t>());
        CHECK(t.per_device == want["trace_entries_per_device"]);
        CHECK(t.reserved == want["reserved_bytes"].get<std::int64_t>());
        CHECK(t.allocated == want["active_allocated_block_bytes"].get<std::int64_t>());
        CHECK(t.actions == want.value("actions", nlohmann::json::object()));
        CHECK(s.info.pickle_protocol == want["protocol"].get<int>());
        if (want.contains("external_annotations_count"))
            CHECK(s.external_annotations.size() == want["external_annotations_count"].get<std::size_t>());
        if (want.contains("allocator_settings"))
            CHECK(!s.allocator_settings.is_null());
        ++checked;
    }
    CHECK(checked == 26);
}

TEST_CASE("real producers keep the documented invariants") {
    const auto dir = corpus_dir();
    if (!std::filesystem::exists(dir)) {
        MESSAGE("skipped: no snapshot corpus");
        return;
    }
    for (const auto& ent : std::filesystem::directory_iterator(dir)) {
        const std::string name = ent.path().filename().string();
        if (name.find("mosaic") != std::string::npos) continue;  // synthetic, violates them
        if (ent.path().extension() != ".pickle" && ent.path().extension() != ".pkl") continue;
        CAPTURE(name);
        snap::snapshot s = snap::load_snapshot(ent.path().string());
        for (const auto& seg : s.segments) {
            std::int64_t sum = 0, alloc = 0;
            std::int64_t next = seg.address;
            for (const auto& b : seg.blocks) {
                sum += b.size;
                if (b.state == snap::block_state::active_allocated) alloc += b.size;
                CHECK(b.address == next);
                next = b.address + b.size;
            }
            CHECK(sum == seg.total_size);
            CHECK(alloc == seg.allocated_size);
        }
    }
}

static void expect_clean_failure_or_success(const std::string& data, const std::string& what) {
    try {
        snap::load_snapshot_bytes(data, what);
    } catch (const input_error& e) {
        const std::string msg = e.what();
        CHECK(msg.find(what) == 0);
        CHECK(msg.find('\n') == std::string::npos);
    }
}

TEST_CASE("truncated corpus files fail at every 1/16 with a byte offset") {
    const auto dir = corpus_dir();
    if (!std::filesystem::exists(dir)) {
        MESSAGE("skipped: no snapshot corpus");
        return;
    }
    int failures = 0;
    for (const auto& ent : std::filesystem::directory_iterator(dir)) {
        if (ent.path().extension() != ".pickle" && ent.path().extension() != ".pkl") continue;
        const std::string data = read_all(ent.path());
        for (int i = 0; i < 16; ++i) {
            const std::string cut = data.substr(0, data.size() * i / 16);
            CAPTURE(ent.path().filename().string());
            CAPTURE(i);
            try {
                snap::load_snapshot_bytes(cut, "cut.pickle");
                FAIL("a truncated snapshot loaded");
            } catch (const input_error& e) {
                const std::string msg = e.what();
                CHECK(msg.rfind("cut.pickle", 0) == 0);
                if (!cut.empty()) CHECK(msg.find("byte ") != std::string::npos);
                ++failures;
            }
        }
    }
    CHECK(failures == 26 * 16);
}

TEST_CASE("flipped opcodes never crash the reader") {
    const auto dir = corpus_dir();
    const auto file = dir / "Constructor-Sun__code_location__52e52b22__memory_snapshot.pickle";
    std::string data;
    if (std::filesystem::exists(file)) {
        data = read_all(file);
    } else {
        data = read_all(fixtures_dir() / "v2_7_oom_expandable.pickle");
    }
    std::mt19937 rng(7);
    const unsigned char replacements[] = {'c', 'R', 'b', 0x93, 0x81, 'h', 'j', 'e', 'u', 'a', '(',
                                          '.', 0x8a, 'X', 0x95, 0x94, 0x00, 0xff, ']', '}', '0', '2'};
    int runs = 0;
    for (int i = 0; i < 300; ++i) {
        std::string bad = data;
        const std::size_t pos = 2 + rng() % (bad.size() - 2);
        bad[pos] = static_cast<char>(replacements[rng() % sizeof(replacements)]);
        expect_clean_failure_or_success(bad, "flipped.pickle");
        ++runs;
    }
    CHECK(runs == 300);
}
