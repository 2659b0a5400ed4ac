// Snapshot analysis on small models built in C++: exact sums, categories, sites, replay, patterns.
#include <doctest/doctest.h>

#include <algorithm>

#include "engine/core/vocabulary.h"
#include "engine/core/errors.h"
#include "engine/report/snapshot_verdicts.h"
#include "parsers/snapshot/analysis_internal.h"
#include "parsers/snapshot/analysis_report.h"
#include "parsers/snapshot/categories.h"
#include "parsers/snapshot/snapshot_analysis.h"
#include "snap_builder.h"

using namespace oomdx;
using namespace oomdx::snap;
using oomdx::snap::test::builder;
using oomdx::snap::test::fr;

namespace {

constexpr std::int64_t MiB = 1 << 20;

const category_rules& rules() {
    static const category_rules r = category_rules::shipped();
    return r;
}

// The analysis measures; the verdicts (levels, patterns, leak) come from the rule packs.
snapshot_analysis run(const snapshot& s, std::int64_t capacity = 0) {
    analysis_options o;
    o.rules = &rules();
    o.device_capacity_bytes = capacity;
    snapshot_analysis a = analyze(s, o);
    apply_snapshot_verdicts(a, shipped_rules());
    return a;
}

const pattern* find_pattern(const device_analysis& d, const std::string& name) {
    for (const auto& p : d.patterns)
        if (p.name == name) return &p;
    return nullptr;
}

std::int64_t cat(const device_analysis& d, const std::string& name) {
    for (const auto& c : d.categories)
        if (c.name == name) return c.bytes;
    return -1;
}

// Typical stacks, innermost first.
struct stacks {
    frames_id fwd, fwd2, fwd3, attn, bwd, opt, param, comm, user_other, grad;
    explicit stacks(builder& b) {
        fwd = b.stack({{"/home/u/model.py", "forward", 40},
                       {"/opt/py/site-packages/torch/nn/modules/module.py", "_call_impl", 1527},
                       {"/home/u/train.py", "train_step", 12}});
        fwd2 = b.stack({{"/home/u/model.py", "forward", 55},
                        {"/opt/py/site-packages/torch/nn/modules/module.py", "_call_impl", 1527},
                        {"/home/u/train.py", "train_step", 12}});
        fwd3 = b.stack({{"/opt/py/site-packages/torch/nn/functional.py", "gelu", 1701},
                        {"/home/u/model.py", "forward", 61},
                        {"/home/u/train.py", "train_step", 12}});
        attn = b.stack({{"/home/u/attention.py", "forward", 88}, {"/home/u/train.py", "train_step", 12}});
        bwd = b.stack({{"/opt/py/site-packages/torch/autograd/graph.py", "_engine_run_backward", 744},
                       {"/opt/py/site-packages/torch/_tensor.py", "backward", 521},
                       {"/home/u/train.py", "train_step", 14}});
        grad = bwd;
        opt = b.stack({{"/opt/py/site-packages/torch/optim/adam.py", "_init_group", 111},
                       {"/opt/py/site-packages/torch/optim/adam.py", "step", 157},
                       {"/home/u/train.py", "train_step", 16}});
        param = b.stack({{"/opt/py/site-packages/torch/nn/modules/linear.py", "__init__", 98},
                         {"/home/u/model.py", "__init__", 20},
                         {"/home/u/train.py", "main", 3}});
        comm = b.stack({{"/opt/py/site-packages/torch/distributed/distributed_c10d.py", "all_reduce", 2050},
                        {"/home/u/train.py", "sync", 30}});
        user_other = b.stack({{"/home/u/train.py", "collect", 77}, {"/home/u/train.py", "main", 90}});
    }
};

}  // namespace

TEST_CASE("overview totals are exact byte sums") {
    builder b;
    auto f = b.stack({{"/home/u/m.py", "forward", 1}});
    segment& g = b.seg(0, 0x1000000, "large");
    b.blk(g, 4 * MiB, block_state::active_allocated, f, 4 * MiB - 100);
    b.blk(g, 2 * MiB, block_state::inactive);
    b.blk(g, 3 * MiB, block_state::active_pending_free, f);
    b.blk(g, 512 * 1024, block_state::inactive);
    segment& h = b.seg(0, 0x9000000, "small");
    b.blk(h, 512, block_state::active_allocated, 0, 500);
    b.blk(h, 2 * MiB - 512, block_state::inactive);
    auto a = run(b.s);
    REQUIRE(a.devices.size() == 1);
    const auto& d = a.devices[0];
    CHECK(d.segments == 2);
    CHECK(d.blocks == 6);
    CHECK(d.large_segments == 1);
    CHECK(d.small_segments == 1);
    CHECK(d.reserved_bytes == 4 * MiB + 2 * MiB + 3 * MiB + 512 * 1024 + 2 * MiB);
    CHECK(d.allocated_bytes == 4 * MiB + 512);
    CHECK(d.requested_bytes == 4 * MiB - 100 + 500);
    CHECK(d.rounding_bytes == 112);
    CHECK(d.pending_free_bytes == 3 * MiB);
    CHECK(d.active_bytes == 7 * MiB + 512);
    CHECK(d.inactive_bytes == 2 * MiB + 512 * 1024 + 2 * MiB - 512);
    CHECK(d.reserved_bytes == d.active_bytes + d.inactive_bytes);
    CHECK(d.largest_inactive_block_bytes == 2 * MiB);
    CHECK(d.free_blocks == 4);
    CHECK(d.small_free_blocks == 1);
    CHECK(d.small_free_block_share == doctest::Approx(0.25));
    CHECK(d.fragmentation_rate == doctest::Approx(1.0 - double(d.allocated_bytes) / double(d.reserved_bytes)));
    CHECK(d.fragmentation_level == "severe");
    CHECK(d.inconsistencies.empty());
    CHECK_FALSE(d.has_trace);
    CHECK(d.peak_bytes == d.active_bytes);
}

TEST_CASE("segment fields that disagree with the blocks are reported") {
    builder b;
    segment& g = b.seg(0, 0x1000000);
    b.blk(g, MiB, block_state::active_allocated);
    g.total_size += 4096;  // like the synthetic Mosaic file
    g.allocated_size = 7;
    auto a = run(b.s);
    CHECK(a.devices[0].inconsistencies.size() == 2);
    CHECK_FALSE(a.warnings.empty());
}

TEST_CASE("categories follow the knowledge rules") {
    builder b;
    stacks st(b);
    auto unknown = frames_id{0};
    auto loss = b.stack({{"/opt/py/site-packages/torch/nn/functional.py", "cross_entropy", 3104},
                         {"/home/u/train.py", "compute", 9}});
    auto moe = b.stack({{"/home/u/moe_layer.py", "route_tokens", 12}, {"/home/u/model.py", "forward", 5}});
    auto fsdp = b.stack({{"/home/u/model.py", "forward", 1},
                         {"/opt/py/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py", "forward", 800}});
    auto to_dev = b.stack({{"/opt/py/site-packages/torch/nn/modules/module.py", "convert", 1150},
                           {"/opt/py/site-packages/torch/nn/modules/module.py", "_apply", 825},
                           {"/home/u/train.py", "main", 5}});
    auto cpp_only = b.stack({{"??", "at::native::empty_cuda", 0}, {"", "c10::cuda::CUDACachingAllocator::malloc", 0}});
    struct expect {
        frames_id f;
        const char* cat;
    } cases[] = {{st.fwd, "activation"},  {st.fwd3, "activation"},    {st.attn, "attention"},
                 {st.bwd, "gradient"},    {st.opt, "optimizer_state"}, {st.param, "parameter"},
                 {st.comm, "communication"}, {st.user_other, "other"}, {unknown, "unknown"},
                 {loss, "loss"},          {moe, "moe"},                {fsdp, "communication"},
                 {to_dev, "parameter"},   {cpp_only, "other"}};
    detail::attribution attr(b.s, rules());
    for (const auto& c : cases) {
        CAPTURE(c.cat);
        CHECK(rules().names()[attr.category(c.f)] == c.cat);
    }
}

TEST_CASE("sites: first user frame, torch frames skipped, Windows paths normalised") {
    builder b;
    auto win = b.stack({{"C:\\py\\Lib\\site-packages\\torch\\nn\\modules\\linear.py", "forward", 116},
                        {"C:\\py\\Lib\\site-packages\\torch\\nn\\modules\\module.py", "_call_impl", 1520},
                        {"D:\\work\\net.py", "forward", 33}});
    auto torch_only = b.stack({{"/opt/py/site-packages/torch/optim/adam.py", "_init_group", 111},
                               {"/opt/py/site-packages/torch/optim/adam.py", "step", 157}});
    auto frozen = b.stack({{"<frozen importlib._bootstrap>", "_call_with_frames_removed", 228},
                           {"/usr/lib/python3.10/runpy.py", "_run_code", 86},
                           {"/home/u/run.py", "<module>", 4}});
    detail::attribution attr(b.s, rules());
    CHECK(attr.describe_site(attr.site(win)).site == "D:/work/net.py:33:forward");
    CHECK(attr.describe_site(attr.site(torch_only)).site ==
          "/opt/py/site-packages/torch/optim/adam.py:111:_init_group");
    CHECK(attr.describe_site(attr.site(frozen)).site == "/home/u/run.py:4:<module>");
    CHECK(attr.describe_site(attr.site(0)).site == "<no stack>");
    CHECK(attr.site(win) == attr.site(win));
}

TEST_CASE("user category rules: Mosaic custom profile runs first") {
    auto user = category_rules::parse("{hccl_buffers: 'hccl|HCCL', expert: 'expert'}", "profile.yaml");
    category_rules r = category_rules::shipped();
    r.prepend(user);
    builder b;
    auto h = b.stack({{"/home/u/model.py", "forward", 3}, {"/x/torch_npu/distributed/hccl_utils.py", "hccl_alloc", 5}});
    detail::attribution attr(b.s, r);
    CHECK(r.names()[attr.category(h)] == "hccl_buffers");
    CHECK(r.find("expert") >= cat_builtin_count);
    auto ours = category_rules::parse(
        "frame:\n  - {category: kv, name_contains: [kv_update]}\nsite_skip: [/home/lib/]\n", "x.yaml");
    CHECK(ours.rule_count() == 1);
    CHECK_THROWS_AS(category_rules::parse("frame:\n  - {category: x, bogus: 1}\n", "bad.yaml"), input_error);
    CHECK_THROWS_AS(category_rules::parse("{a: '(unclosed'}", "bad.yaml"), input_error);
    CHECK_THROWS_AS(category_rules::load("/nonexistent/rules.yaml"), input_error);
}

TEST_CASE("category rules: ignore_case, name_equals and relative filenames match as before") {
    auto r = category_rules::parse(
        "frame:\n"
        "  - {category: eq, name_equals: [Step], ignore_case: true}\n"
        "  - {category: eqcase, name_equals: [Exact]}\n"
        "  - {category: fn, filename_contains: [/Pkg/Mod], ignore_case: true}\n"
        "  - {category: name, name_contains: [KV_Update], ignore_case: true}\n"
        "  - {category: cased, name_contains: [Upper]}\n"
        "  - {category: both, name_contains: [fwd], filename_contains: [/lib/], ignore_case: true}\n"
        "  - {category: cpp, name_contains: [cudaMalloc], cpp: true}\n",
        "x.yaml");
    auto cat = [&](std::string_view fn, std::string_view name) {
        frame_text f{name, fn, 1};
        const int c = r.frame_category(f);
        CHECK(r.classify(&f, 1) == (c < 0 ? cat_other : c));
        return c < 0 ? std::string("-") : r.names()[c];
    };
    CHECK(cat("/a/train.py", "STEP") == "eq");
    CHECK(cat("/a/train.py", "steps") == "-");        // equals, not contains
    CHECK(cat("/a/train.py", "Exact") == "eqcase");
    CHECK(cat("/a/train.py", "exact") == "-");        // case-sensitive without ignore_case
    CHECK(cat("pkg/MOD/x.py", "f") == "fn");          // relative path: the leading '/' is implied
    CHECK(cat("/srv/pkg/mod/x.py", "f") == "fn");
    CHECK(cat("/srv/pkgmod/x.py", "f") == "-");
    CHECK(cat("/a/m.py", "do_kv_update") == "name");
    CHECK(cat("/a/m.py", "Upper") == "cased");
    CHECK(cat("/a/m.py", "upper") == "-");
    CHECK(cat("LIB/m.py", "FWD") == "both");
    CHECK(cat("/a/m.py", "fwd") == "-");
    CHECK(cat("??", "cudaMalloc") == "cpp");          // C++ frame, rule allows it
    CHECK(cat("??", "STEP") == "-");                  // Python-only rule skips C++ frames
}

TEST_CASE("live attribution: shares, sites, representative site") {
    builder b;
    stacks st(b);
    segment& g = b.seg(0, 0x1000000);
    b.blk(g, 6 * MiB, block_state::active_allocated, st.fwd);
    b.blk(g, 2 * MiB, block_state::active_allocated, st.fwd);
    b.blk(g, 2 * MiB, block_state::active_allocated, st.opt);
    b.blk(g, 10 * MiB, block_state::inactive);
    auto a = run(b.s);
    const auto& d = a.devices[0];
    CHECK(cat(d, "activation") == 8 * MiB);
    CHECK(cat(d, "optimizer_state") == 2 * MiB);
    REQUIRE(d.sites.size() == 2);
    CHECK(d.sites[0].site == "/home/u/model.py:40:forward");
    CHECK(d.sites[0].blocks == 2);
    CHECK(d.sites[0].bytes == 8 * MiB);
    CHECK(d.sites[0].share == doctest::Approx(0.8));
    CHECK(d.sites[0].category == "activation");
    CHECK(d.categories.front().name == "activation");
    CHECK(d.categories.front().share == doctest::Approx(0.8));
}

TEST_CASE("trace replay: allocations before the trace, peak and what was live there") {
    builder b;
    stacks st(b);
    b.a(10 * MiB, st.param, /*recorded=*/false);  // model weights, before recording
    auto pre = b.a(4 * MiB, st.user_other, false);  // freed during the trace
    auto x1 = b.a(8 * MiB, st.fwd);
    auto x2 = b.a(8 * MiB, st.fwd2);
    b.f(pre);
    b.f(x1);
    b.f(x2);
    b.a(2 * MiB, st.opt);
    b.finish(64 * MiB);
    auto a = run(b.s);
    const auto& d = a.devices[0];
    CHECK(d.has_trace);
    CHECK(d.allocated_bytes == 12 * MiB);
    CHECK(d.initial_active_bytes == 14 * MiB);
    CHECK(d.peak_bytes == 30 * MiB);
    REQUIRE(d.peak_index >= 0);
    CHECK(bool(b.s.device_traces[0][d.peak_index].kind == action_kind::alloc));
    std::int64_t act = 0, par = 0, oth = 0;
    for (const auto& c : d.peak_categories) {
        if (c.name == "activation") act = c.bytes;
        if (c.name == "parameter") par = c.bytes;
        if (c.name == "other") oth = c.bytes;
    }
    CHECK(act == 16 * MiB);
    CHECK(par == 10 * MiB);
    CHECK(oth == 4 * MiB);
    CHECK(d.pending.unmatched_frees == 1);
    CHECK(d.pending.free_requested == 3);
    CHECK(d.pending.free_completed == 3);
    CHECK(d.pending.immediate == 3);
    CHECK(d.peak_reserved_bytes == 64 * MiB);
    CHECK_FALSE(d.timeline.empty());
    std::int64_t total = 0;
    for (const auto& [k, v] : d.actions) total += v;
    CHECK(total == d.trace_entries);
}

TEST_CASE("pending frees: deferred completion is measured") {
    builder b;
    stacks st(b);
    auto x = b.a(4 * MiB, st.fwd);
    b.ev(0, action_kind::free_requested, x, 4 * MiB, st.fwd);
    b.a(MiB, st.fwd2);
    b.a(MiB, st.fwd2);
    b.ev(0, action_kind::free_completed, x, 4 * MiB, st.fwd);
    b.live.erase(x);
    b.finish(16 * MiB);
    auto d = run(b.s).devices[0];
    CHECK(d.pending.deferred == 1);
    CHECK(d.pending.max_pending_bytes == 4 * MiB);
    CHECK(d.pending.max_delay_events == 3);
    CHECK(d.pending.max_delay_us == 30);
}

namespace {

// `steps` training steps: forward activations at three sites, backward frees them.
void train_steps(builder& b, stacks& st, int steps, bool retain_graph, bool container, bool optimizer) {
    for (int s = 0; s < steps; ++s) {
        std::vector<std::int64_t> acts;
        for (int k = 0; k < 4; ++k) {
            acts.push_back(b.a(16 * MiB, st.fwd));
            acts.push_back(b.a(8 * MiB, st.fwd2));
            acts.push_back(b.a(8 * MiB, st.fwd3));
        }
        auto g = b.a(4 * MiB, st.grad);
        if (container) b.a(MiB, st.user_other);
        if (optimizer && s == 0)
            for (int k = 0; k < 8; ++k) b.a(4 * MiB, st.opt);
        if (retain_graph) {
            // Keep one block of each forward site alive per step (as a retained graph would).
            for (std::size_t k = 3; k < acts.size(); ++k) b.f(acts[k]);
        } else {
            for (auto x : acts) b.f(x);
        }
        b.f(g);
    }
}

}  // namespace

TEST_CASE("pattern: activation sawtooth") {
    builder b;
    stacks st(b);
    b.a(32 * MiB, st.param, false);
    train_steps(b, st, 5, false, false, false);
    b.finish(256 * MiB);
    auto d = run(b.s).devices[0];
    CHECK(d.cycles >= 4);
    const pattern* p = find_pattern(d, "activation_sawtooth");
    REQUIRE(p);
    CHECK_FALSE(p->evidence.empty());
    CHECK_FALSE(find_pattern(d, "retained_graph"));
    CHECK_FALSE(find_pattern(d, "growing_container"));
    CHECK_FALSE(d.leak_suspected);
    CHECK(d.peak_bytes == 32 * MiB + 4 * (16 + 8 + 8) * MiB + 4 * MiB);
}

TEST_CASE("pattern: retained autograd graph") {
    builder b;
    stacks st(b);
    train_steps(b, st, 6, true, false, false);
    b.finish(512 * MiB);
    auto d = run(b.s).devices[0];
    const pattern* p = find_pattern(d, "retained_graph");
    REQUIRE(p);
    CHECK(p->leak);
    CHECK(d.leak_suspected);
    CHECK_FALSE(find_pattern(d, "growing_container"));
}

TEST_CASE("pattern: growing container") {
    builder b;
    stacks st(b);
    train_steps(b, st, 6, false, true, false);
    b.finish(512 * MiB);
    auto d = run(b.s).devices[0];
    const pattern* p = find_pattern(d, "growing_container");
    REQUIRE(p);
    CHECK(p->evidence.front().find("/home/u/train.py:77:collect") != std::string::npos);
    CHECK_FALSE(find_pattern(d, "retained_graph"));
    CHECK(d.leak_suspected);
}

TEST_CASE("pattern: first-step optimizer spike is expected, not a leak") {
    builder b;
    stacks st(b);
    train_steps(b, st, 5, false, false, true);
    b.finish(512 * MiB);
    auto d = run(b.s).devices[0];
    const pattern* p = find_pattern(d, "optimizer_first_step_spike");
    REQUIRE(p);
    CHECK(p->expected);
    CHECK_FALSE(p->leak);
    CHECK_FALSE(d.leak_suspected);
    CHECK(cat(d, "optimizer_state") == 32 * MiB);
}

TEST_CASE("pattern: fragmentation OOM (request > largest inactive block < total inactive)") {
    builder b;
    stacks st(b);
    auto f = st.fwd;
    segment& g = b.seg(0, 0x10000000);
    for (int k = 0; k < 8; ++k) {
        b.blk(g, 20 * MiB, block_state::active_allocated, f);
        b.blk(g, 10 * MiB, block_state::inactive);
    }
    b.ev(0, action_kind::oom, 0, 40 * MiB, st.fwd2, 100 * MiB);
    auto d = run(b.s, 0).devices[0];
    REQUIRE(d.ooms.size() == 1);
    const auto& o = d.ooms[0];
    CHECK(o.requested_bytes == 40 * MiB);
    CHECK(o.device_free_bytes == 100 * MiB);
    CHECK(o.largest_inactive_block_bytes == 10 * MiB);
    CHECK(o.inactive_bytes == 80 * MiB);
    CHECK(o.fragmentation);
    CHECK(o.site == "/home/u/model.py:55:forward");
    REQUIRE(find_pattern(d, "fragmentation_oom"));
    CHECK(d.oom_count == 1);
    // rev34: the text's main finding names where the failed request came from
    CHECK(render_text(run(b.s, 0), false, false, 5).find("an allocation of 40.00 MiB from /home/u/model.py:55:forward failed") !=
          std::string::npos);
}

TEST_CASE("OOM free-block replay undoes later events") {
    builder b;
    stacks st(b);
    auto x = b.a(30 * MiB, st.fwd);
    b.ev(0, action_kind::oom, 0, 50 * MiB, st.fwd2, 0);
    b.f(x);  // after the OOM the 30 MiB block is freed: at the OOM it was live
    b.finish(64 * MiB);
    auto d = run(b.s).devices[0];
    REQUIRE(d.ooms.size() == 1);
    CHECK(d.ooms[0].inactive_bytes == 34 * MiB);
    CHECK(d.ooms[0].largest_inactive_block_bytes == 34 * MiB);
    CHECK_FALSE(d.ooms[0].fragmentation);
    CHECK(d.ooms[0].live_bytes == 30 * MiB);
    REQUIRE_FALSE(d.ooms[0].holders.empty());
    CHECK(d.ooms[0].holders[0].site == "/home/u/model.py:40:forward");
}

TEST_CASE("pattern: non-PyTorch memory gap at the OOM") {
    const std::int64_t GiB = 1LL << 30;
    builder b;
    stacks st(b);
    b.a(8 * GiB, st.fwd);
    b.ev(0, action_kind::oom, 0, 2 * GiB, st.fwd2, GiB);
    b.finish(10 * GiB);
    auto d = run(b.s, 80 * GiB).devices[0];
    CHECK(d.non_pytorch_gap_bytes == 69 * GiB);
    REQUIRE(find_pattern(d, "non_pytorch_gap"));
    auto d2 = run(b.s, 0).devices[0];
    CHECK(d2.non_pytorch_gap_bytes == -1);
    CHECK_FALSE(find_pattern(d2, "non_pytorch_gap"));
}

TEST_CASE("pattern: DDP-replicated vs FSDP-sharded gradients") {
    builder b;
    stacks st(b);
    segment& g = b.seg(0, 0x1000000);
    b.blk(g, 100 * MiB, block_state::active_allocated, st.param);
    b.blk(g, 100 * MiB, block_state::active_allocated, st.grad);
    b.blk(g, 200 * MiB, block_state::active_allocated, st.opt);
    b.blk(g, 50 * MiB, block_state::active_allocated, st.fwd);
    auto d = run(b.s).devices[0];
    CHECK(find_pattern(d, "ddp_replicated_gradients"));
    CHECK_FALSE(find_pattern(d, "fsdp_sharded_gradients"));

    builder c;
    auto fs = c.stack({{"/opt/py/site-packages/torch/distributed/fsdp/_flat_param.py", "_alloc_storage", 10},
                       {"/opt/py/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py", "forward", 800}});
    auto x = c.a(64 * MiB, fs);
    c.a(MiB, fs);
    c.f(x);
    c.finish(128 * MiB);
    auto e = run(c.s).devices[0];
    CHECK(find_pattern(e, "fsdp_sharded_gradients"));
    CHECK_FALSE(find_pattern(e, "ddp_replicated_gradients"));
}

TEST_CASE("pattern: reference cycles (old allocations of many steps freed at once)") {
    builder b;
    stacks st(b);
    b.a(64 * MiB, st.param, false);  // weights stay: not a teardown
    std::vector<std::int64_t> kept;
    for (int s = 0; s < 6; ++s) {
        std::vector<std::int64_t> acts;
        for (int k = 0; k < 4; ++k) acts.push_back(b.a(16 * MiB, st.fwd));
        for (int k = 0; k < 8; ++k) kept.push_back(b.a(MiB, st.user_other));
        for (auto x : acts) b.f(x);
    }
    for (auto x : kept) b.f(x);  // the collector runs
    b.a(MiB, st.fwd2);
    b.finish(256 * MiB);
    auto d = run(b.s).devices[0];
    const pattern* p = find_pattern(d, "reference_cycles");
    REQUIRE(p);
    CHECK(p->confidence == "low");
}

namespace {

struct collect_sink : fact_sink {
    std::vector<fact> facts;
    void emit(fact f) override { facts.push_back(std::move(f)); }
    using fact_sink::emit;
    const fact* get(const std::string& n) const {
        for (const auto& f : facts)
            if (f.name == n) return &f;
        return nullptr;
    }
};

}  // namespace

TEST_CASE("facts are declared in the vocabulary and carry provenance") {
    builder b;
    stacks st(b);
    train_steps(b, st, 6, true, false, true);
    b.ev(0, action_kind::oom, 0, 512 * MiB, st.fwd, 0);
    b.finish(1024 * MiB);
    auto a = run(b.s, 80LL << 30);
    collect_sink sink;
    emit_facts(a, sink);
    const auto& vocab = vocabulary::shipped();
    for (const auto& f : sink.facts) {
        CAPTURE(f.name);
        CHECK_NOTHROW(vocab.check(f.name, f.val));
        CHECK(f.prov.producer == "snapshot");
        CHECK(f.prov.file == "built.pickle");
    }
    const char* required[] = {"snapshot.reserved_bytes", "snapshot.allocated_bytes", "snapshot.active_bytes",
                              "snapshot.inactive_bytes", "snapshot.pending_free_bytes", "snapshot.peak_bytes",
                              "snapshot.fragmentation_rate", "snapshot.largest_inactive_block_bytes",
                              "snapshot.activation_share", "snapshot.optimizer_share", "snapshot.gradient_share",
                              "snapshot.parameter_share", "snapshot.communication_share", "snapshot.other_share",
                              "snapshot.oom_events", "snapshot.oom_requested_bytes", "snapshot.oom.requested_bytes",
                              "snapshot.oom.live_bytes", "snapshot.oom.reserved_bytes", "snapshot.trace.cycles",
                              "snapshot.trace.growth_phases", "snapshot.trace.gradient_allocs",
                              "snapshot.retention.forward_sites", "snapshot.non_pytorch_gap_bytes", "snapshot.top_site",
                              "snapshot.count"};
    for (const char* n : required) {
        CAPTURE(n);
        CHECK(sink.get(n));
    }
    // Verdicts are not measured: the evidence step derives them.
    for (const char* n : {"snapshot.fragmentation_level", "snapshot.leak_suspected", "snapshot.fragmentation_oom",
                          "snapshot.pattern.retained_graph"}) {
        CAPTURE(n);
        CHECK_FALSE(sink.get(n));
    }
    CHECK(sink.get("snapshot.oom_requested_bytes")->val.as_integer() == 512 * MiB);
    double share = sink.get("snapshot.activation_share")->val.as_number();
    CHECK(share >= 0.0);
    CHECK(share <= 1.0);

    fact_store facts;
    emit_facts(a, facts);
    run_evidence(shipped_rules(), facts);
    CHECK(facts.boolean("snapshot.pattern.retained_graph") == std::optional<bool>(true));
    CHECK(facts.boolean("snapshot.leak_suspected") == std::optional<bool>(true));
    CHECK(facts.string("snapshot.fragmentation_level").has_value());
    CHECK(facts.boolean("snapshot.fragmentation_oom").has_value());
    CHECK(facts.string("snapshot.oom.phase") == std::optional<std::string>("forward"));
}

TEST_CASE("retained_graph does not fire on a trace that ends inside its first forward pass") {
    builder b;
    stacks st(b);
    // One forward pass: activations of three forward sites allocated all along the trace and
    // still live at its end; no release, no gradient.
    for (int k = 0; k < 24; ++k) {
        b.a(4 * MiB, st.fwd);
        b.a(2 * MiB, st.fwd2);
        b.a(2 * MiB, st.fwd3);
    }
    b.finish(512 * MiB);
    auto d = run(b.s).devices[0];
    CHECK(d.measures.retention_forward_sites >= 3);  // the blocks come from many slices ...
    CHECK(d.measures.growth_phases <= 1);            // ... of one growth phase
    CHECK(d.measures.gradient_allocs == 0);
    CHECK_FALSE(find_pattern(d, "retained_graph"));
    CHECK_FALSE(find_pattern(d, "growing_container"));
    CHECK_FALSE(d.leak_suspected);
}

TEST_CASE("JSON oomdx.snapshot/1 has the documented keys; text and markdown render") {
    builder b;
    stacks st(b);
    train_steps(b, st, 4, false, false, true);
    b.ev(0, action_kind::oom, 0, 512 * MiB, st.fwd, 0);
    b.finish(512 * MiB);
    auto a = run(b.s);
    auto j = to_json(a, 5);
    CHECK(j["schema"] == "oomdx.snapshot/1");
    REQUIRE(j["devices"].size() == 1);
    const auto& d = j["devices"][0];
    for (const char* k : {"device", "segments", "blocks", "reserved_bytes", "allocated_bytes", "active_bytes",
                          "pending_free_bytes", "inactive_bytes", "requested_bytes", "largest_inactive_block_bytes",
                          "trace_entries", "actions", "oom_events", "peak_bytes", "categories", "top_sites"}) {
        CAPTURE(k);
        CHECK(d.contains(k));
    }
    CHECK(d["oom_events"][0].contains("trace_index"));
    CHECK(d["oom_events"][0]["requested_bytes"] == 512 * MiB);
    CHECK(d["oom_events"][0].contains("device_free_bytes"));
    CHECK(d["top_sites"].size() <= 5);
    CHECK(d["top_sites"][0].contains("site"));
    CHECK(d["actions"]["alloc"].get<std::int64_t>() > 0);
    std::string text = render_text(a, false, false, 5);
    CHECK(text.find("live allocated") != std::string::npos);
    CHECK(text.find("OOM events") != std::string::npos);
    std::string md = render_text(a, true, false, 5);
    CHECK(md.find("| category |") != std::string::npos);
    CHECK(md.find("## Device 0") != std::string::npos);
}

TEST_CASE("empty and list-only snapshots analyze") {
    builder b;
    auto a = run(b.s);
    CHECK(a.devices.empty());
    CHECK(a.primary == -1);
    collect_sink sink;
    emit_facts(a, sink);
    CHECK(sink.get("snapshot.count"));
    CHECK(to_json(a)["devices"].empty());
    CHECK_FALSE(render_text(a, false, false).empty());
    // rev34: the text says the file is empty and what to capture instead, not only "0 device(s)"
    CHECK(render_text(a, false, false).find("Main finding: the snapshot is empty") != std::string::npos);
}

TEST_CASE("several devices with gaps: primary is the largest") {
    builder b;
    segment& g0 = b.seg(0, 0x1000000);
    b.blk(g0, MiB, block_state::active_allocated);
    segment& g2 = b.seg(2, 0x2000000);
    b.blk(g2, 8 * MiB, block_state::active_allocated);
    auto a = run(b.s);
    REQUIRE(a.devices.size() == 2);
    CHECK(a.devices[0].device == 0);
    CHECK(a.devices[1].device == 2);
    CHECK(a.primary == 1);
}

TEST_CASE("text main finding: a dump far below the trace's peak names the peak's largest category too") {
    // Weights (no stack, before the trace) stay; one step's activations are freed (one cycle, no
    // named pattern): the dump holds 32 MiB, the peak 164 MiB of which 128 MiB are activations.
    builder b;
    stacks st(b);
    b.a(32 * MiB, st.param, false);
    train_steps(b, st, 1, false, false, false);
    b.finish(256 * MiB);
    auto a = run(b.s);
    REQUIRE(a.devices.size() == 1);
    const std::string text = render_text(a, false, false, 5);
    CHECK(text.find("Main finding: at the trace's live peak") != std::string::npos);
    CHECK(text.find("at the dump, with 32.00 MiB live") != std::string::npos);

    // A dump within 25% of the peak keeps the one-moment wording (the same weights, one 4 MiB
    // allocation that is never freed: peak 36 MiB, live 36 MiB).
    builder c;
    stacks sc(c);
    c.a(32 * MiB, sc.param, false);
    c.a(4 * MiB, sc.fwd);
    c.finish(64 * MiB);
    const std::string one = render_text(run(c.s), false, false, 5);
    CHECK(one.find("at the trace's live peak") == std::string::npos);
}
