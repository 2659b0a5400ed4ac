// Generator-built fixtures (tests/fixtures/snapshots): one per producer era.
#include <doctest/doctest.h>

#include <filesystem>

#include "engine/core/errors.h"
#include "engine/core/fact.h"
#include "reader_helpers.h"

using namespace oomdx;
using namespace snaptest;

static snap::snapshot load_fixture(const std::string& name) {
    return snap::load_snapshot((fixtures_dir() / name).string());
}

TEST_CASE("every fixture matches its expected totals") {
    int n = 0;
    for (const auto& ent : std::filesystem::directory_iterator(fixtures_dir())) {
        const std::string fname = ent.path().filename().string();
        const std::string suffix = ".expected.json";
        if (fname.size() <= suffix.size() || fname.substr(fname.size() - suffix.size()) != suffix) continue;
        auto want = nlohmann::json::parse(read_all(ent.path()));
        const std::string file = want["file"];
        CAPTURE(file);
        snap::snapshot s = load_fixture(file);
        totals t = sum_up(s);
        CHECK(t.segments == want["segments"].get<std::int64_t>());
        CHECK(t.blocks == want["blocks"].get<std::int64_t>());
        CHECK(t.reserved == want["reserved_bytes"].get<std::int64_t>());
        CHECK(t.allocated == want["allocated_bytes"].get<std::int64_t>());
        CHECK(t.active == want["active_bytes"].get<std::int64_t>());
        CHECK(t.requested == want["requested_bytes"].get<std::int64_t>());
        CHECK(t.pending == want["pending_free_bytes"].get<std::int64_t>());
        CHECK(t.inactive == want["inactive_bytes"].get<std::int64_t>());
        CHECK(t.largest_inactive == want["largest_inactive_block_bytes"].get<std::int64_t>());
        CHECK(t.per_device == want["trace_entries_per_device"]);
        CHECK(t.actions == want["actions"]);
        if (want.contains("era")) CHECK(s.info.era == want["era"].get<std::string>());
        if (want.contains("producer")) CHECK(s.info.producer == want["producer"].get<std::string>());
        if (want.contains("protocol")) CHECK(s.info.pickle_protocol == want["protocol"].get<int>());
        if (want.contains("format")) CHECK(s.info.format == want["format"].get<std::string>());
        if (want.contains("top_level")) CHECK(s.info.top_level == want["top_level"].get<std::string>());
        if (want.contains("has_time_us")) CHECK(s.info.has_time_us == want["has_time_us"].get<bool>());
        if (want.contains("has_history")) CHECK(s.info.has_history == want["has_history"].get<bool>());
        if (want.contains("state_only")) CHECK(s.info.state_only == want["state_only"].get<bool>());
        if (want.contains("external_annotations"))
            CHECK(s.external_annotations.size() == want["external_annotations"].get<std::size_t>());
        if (want.contains("devices")) CHECK(nlohmann::json(s.devices()) == want["devices"]);
        ++n;
    }
    CHECK(n >= 13);
}

TEST_CASE("2.0 blocks take address, frames and requested size from history") {
    auto s = load_fixture("v2_0_history.pickle");
    REQUIRE(s.segments.size() == 2);
    const auto& seg = s.segments[1];
    REQUIRE(seg.blocks.size() == 2);
    CHECK(seg.blocks[0].address_derived);
    CHECK(seg.blocks[0].address == seg.address);
    CHECK(seg.blocks[1].address == seg.address + 512);
    CHECK(seg.blocks[0].has_history);
    CHECK(seg.blocks[0].requested_size == 400);
    const snap::frame* top = s.top_frame(seg.blocks[0].frames);
    REQUIRE(top);
    CHECK(top->name == "forward");
    CHECK(top->filename == "/app/model.py");
    CHECK(top->line == 42);
    CHECK(seg.blocks[1].state == snap::block_state::active_pending_free);
    CHECK(!seg.has_pool_id);
}

TEST_CASE("shared frames are interned once and frame lists are deduplicated") {
    auto s = load_fixture("v2_1_no_time.pickle");
    CHECK(s.frames.size() == 4);
    CHECK(s.frame_list_count() == 3);  // empty, a, b
    const auto& tr = s.device_traces.at(0);
    REQUIRE(tr.size() == 5);
    CHECK(tr[0].frames == tr[1].frames);
    CHECK(tr[2].frames == tr[3].frames);
    CHECK(tr[0].frames != tr[2].frames);
    CHECK(tr[0].time_us == -1);
    CHECK(tr[2].kind == snap::action_kind::alloc);
    CHECK(tr[4].kind == snap::action_kind::free_completed);
    CHECK(tr.action(4) == "free_completed");
    CHECK(s.frame_list(tr[2].frames).size() == 2);
}

TEST_CASE("newest CUDA fields: oom device_free, compile_context, user_metadata, awaiting_free") {
    auto s = load_fixture("v2_7_oom_expandable.pickle");
    const auto& tr = s.device_traces.at(0);
    REQUIRE(tr.size() == 4);
    CHECK(tr[2].kind == snap::action_kind::oom);
    CHECK(tr.device_free(2) == 52428800);
    CHECK(tr[2].size == 1073741824);
    CHECK(tr[0].time_us > 0);
    CHECK(tr[1].time_us > tr[0].time_us);
    CHECK(s.entry_contexts[tr[0].context].compile_context == "N/A");
    CHECK(s.entry_contexts[tr[3].context].compile_context == "Torch-Compiled Region: 0/0");
    CHECK(s.segments[0].is_expandable);
    CHECK(s.allocator_settings["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True");
    CHECK(s.info.has_compile_context);
    // C++ frame first in the oom stack
    CHECK(s.top_frame(tr[2].frames)->filename == "??");

    auto u = load_fixture("v2_9_user_metadata_p5.pickle");
    CHECK(u.info.pickle_protocol == 5);
    const auto& ut = u.device_traces.at(0);
    CHECK(u.entry_contexts[ut[0].context].user_metadata == "step 3");
    CHECK(ut[1].kind == snap::action_kind::annotate);
    CHECK(u.segments[0].blocks[1].state == snap::block_state::active_pending_free);
    CHECK(u.segments[0].blocks[1].state_text == "active_awaiting_free");
}

TEST_CASE("NPU: workspace_snapshot prepended, no time_us, non-zero default stream") {
    auto s = load_fixture("npu_workspace.pickle");
    CHECK(s.info.producer == "npu");
    CHECK(s.info.has_workspace_snapshot);
    CHECK(s.device_traces.size() == 8);
    const auto& tr = s.device_traces[0];
    REQUIRE(tr.size() == 5);
    CHECK(tr[0].kind == snap::action_kind::workspace_snapshot);
    CHECK(tr[0].time_us == -1);
    CHECK(tr.stream(0) == 1276474240);
    CHECK(s.segments[0].has_pool_id);
}

TEST_CASE("protocol 2, 9-byte LONG1 and negative ints") {
    auto s = load_fixture("protocol2_long.pickle");
    CHECK(s.info.pickle_protocol == 2);
    CHECK(s.segments[0].stream == -1);  // MAX_UINT64 read as its int64 bit pattern
    CHECK(s.device_traces[0].stream(0) == -1);
    CHECK(s.device_traces[0].stream(1) == -5);
}

TEST_CASE("multi-device files with empty device lists in between") {
    auto s = load_fixture("multi_device_gaps.pickle");
    CHECK(s.device_traces.size() == 4);
    CHECK(s.device_traces[0].empty());
    CHECK(s.device_traces[2].empty());
    CHECK(s.device_traces[3].size() == 2);
    CHECK(s.devices() == std::vector<std::int64_t>{1, 3});
}

TEST_CASE("annotations and allocator settings") {
    auto s = load_fixture("v2_6_annotations.pickle");
    REQUIRE(s.external_annotations.size() == 2);
    CHECK(s.external_annotations[0].stage == "START");
    CHECK(s.external_annotations[1].name == "Optimizer.step#AdamW.step");
    CHECK(s.external_annotations[1].time_us == 1757253256033999);
    const auto& ud = s.device_traces[0][1];
    CHECK(ud.kind == snap::action_kind::user_defined);
    CHECK(s.top_frame(ud.frames)->name == "START");

    auto a = load_fixture("v2_5_allocator_settings.pickle");
    CHECK(a.allocator_settings["max_split_size"] == -1);
    CHECK(a.allocator_settings["garbage_collection_threshold"] == 0.0);
    CHECK(a.allocator_settings["roundup_power2_divisions"]["8"] == 0);
}

TEST_CASE("generator output is reproducible") {
    // The committed fixtures are what gen_snapshots.py writes today.
    const std::string cmd = "python3 " + (fixtures_dir() / "gen_snapshots.py").string() + " --check >/dev/null 2>&1";
    if (std::system("python3 -c 'import pickle' >/dev/null 2>&1") != 0) {
        MESSAGE("skipped: no python3");
        return;
    }
    // Another Python version may frame or memoize differently: report, do not fail.
    WARN_MESSAGE(std::system(cmd.c_str()) == 0, "committed fixtures differ from gen_snapshots.py output");
}

namespace {
struct collect : oomdx::fact_sink {
    std::vector<oomdx::fact> got;
    void emit(oomdx::fact f) override { got.push_back(std::move(f)); }
    using oomdx::fact_sink::emit;
};
}  // namespace

TEST_CASE("file facts carry provenance") {
    auto s = load_fixture("npu_workspace.pickle");
    collect c;
    snap::emit_file_facts(s, c);
    REQUIRE(c.got.size() == 10);
    bool seen = false;
    for (const auto& f : c.got) {
        CHECK(f.prov.file == s.source_file);
        CHECK(f.prov.producer == "snapshot.reader");
        if (f.name == "snapshot_file.producer") {
            CHECK(f.val.as_string() == "npu");
            seen = true;
        }
    }
    CHECK(seen);
}
