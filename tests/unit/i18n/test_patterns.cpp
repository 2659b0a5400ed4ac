// Every snapshot pattern the analysis can name has a Chinese template that matches what it
// writes (summary and evidence): small snapshots built in C++ raise each pattern (the analysis
// measures the candidates, the rules' evidence step names the patterns).
#include <doctest/doctest.h>

#include "engine/core/translations.h"
#include "engine/report/snapshot_verdicts.h"
#include "parsers/snapshot/categories.h"
#include "parsers/snapshot/snapshot_analysis.h"
#include "tests/unit/snapshot/snap_builder.h"

using namespace oomdx;
using namespace oomdx::snap;
using oomdx::snap::test::builder;

namespace {

constexpr std::int64_t MiB = 1 << 20;

device_analysis run(const snapshot& s, std::int64_t capacity = 0) {
    static const category_rules rules = category_rules::shipped();
    analysis_options o;
    o.rules = &rules;
    o.device_capacity_bytes = capacity;
    snapshot_analysis a = analyze(s, o);
    apply_snapshot_verdicts(a, shipped_rules());
    return a.devices.at(0);
}

struct stacks {
    frames_id fwd, fwd2, fwd3, grad, opt, param, other;
    explicit stacks(builder& b) {
        fwd = b.stack({{"/u/model.py", "forward", 40}, {"/u/train.py", "train_step", 12}});
        fwd2 = b.stack({{"/u/model.py", "forward", 55}, {"/u/train.py", "train_step", 12}});
        fwd3 = b.stack({{"/u/model.py", "forward", 61}, {"/u/train.py", "train_step", 12}});
        grad = b.stack({{"/opt/py/site-packages/torch/autograd/graph.py", "_engine_run_backward", 744},
                        {"/u/train.py", "train_step", 14}});
        opt = b.stack({{"/opt/py/site-packages/torch/optim/adam.py", "_init_group", 111},
                       {"/opt/py/site-packages/torch/optim/adam.py", "step", 157}, {"/u/train.py", "train_step", 16}});
        param = b.stack({{"/opt/py/site-packages/torch/nn/modules/linear.py", "__init__", 98}, {"/u/model.py", "__init__", 20}});
        other = b.stack({{"/u/train.py", "collect", 77}, {"/u/train.py", "main", 90}});
    }
};

void steps(builder& b, stacks& st, int n, bool retain, bool container, bool optimizer) {
    for (int s = 0; s < n; ++s) {
        std::vector<std::int64_t> acts;
        for (int k = 0; k < 4; ++k) {
            acts.push_back(b.a(16 * MiB, st.fwd));
            acts.push_back(b.a(8 * MiB, st.fwd2));
            acts.push_back(b.a(8 * MiB, st.fwd3));
        }
        auto g = b.a(4 * MiB, st.grad);
        if (container) b.a(MiB, st.other);
        if (optimizer && s == 0)
            for (int k = 0; k < 8; ++k) b.a(4 * MiB, st.opt);
        for (std::size_t k = retain ? 3 : 0; k < acts.size(); ++k) b.f(acts[k]);
        b.f(g);
    }
}

void check_all(const device_analysis& d, const char* want) {
    const translation_table& zh = translation_table::shipped("zh");
    bool found = false;
    for (const auto& p : d.patterns) {
        found = found || p.name == want;
        INFO("pattern " << p.name << ": " << p.summary);
        CHECK(zh.translate_produced("snapshot.pattern.", p.summary));
        for (const auto& e : p.evidence) {
            INFO("evidence: " << e);
            CHECK(zh.translate_produced("snapshot.evidence.", e));
        }
    }
    // Every variant the analysis measured, chosen or not.
    for (const auto& c : d.pattern_candidates) {
        INFO("candidate " << c.p.name << " (" << c.variant << "): " << c.p.summary);
        CHECK(zh.translate_produced("snapshot.pattern.", c.p.summary));
        for (const auto& e : c.p.evidence) CHECK(zh.translate_produced("snapshot.evidence.", e));
    }
    CHECK_MESSAGE(found, "the scenario no longer raises " << want);
}

}  // namespace

TEST_CASE("every snapshot pattern translates") {
    {
        builder b;
        stacks st(b);
        b.a(32 * MiB, st.param, false);
        steps(b, st, 5, false, false, false);
        b.finish(256 * MiB);
        check_all(run(b.s), "activation_sawtooth");
    }
    {
        builder b;
        stacks st(b);
        b.a(2048 * MiB, st.param, false);  // the peak is the weights: checkpointing alone will not lower it
        steps(b, st, 5, false, false, false);
        b.finish(4096 * MiB);
        check_all(run(b.s), "activation_sawtooth");
    }
    for (bool retain : {true, false}) {
        builder b;
        stacks st(b);
        steps(b, st, 6, retain, !retain, false);
        b.finish(512 * MiB);
        check_all(run(b.s), retain ? "retained_graph" : "growing_container");
    }
    {
        builder b;
        stacks st(b);
        steps(b, st, 5, false, false, true);
        b.finish(512 * MiB);
        check_all(run(b.s), "optimizer_first_step_spike");
    }
    {
        builder b;
        stacks st(b);
        segment& g = b.seg(0, 0x1000000);
        b.blk(g, 100 * MiB, block_state::active_allocated, st.param);
        b.blk(g, 100 * MiB, block_state::active_allocated, st.grad);
        b.blk(g, 200 * MiB, block_state::active_allocated, st.opt);
        b.blk(g, 50 * MiB, block_state::active_allocated, st.fwd);
        check_all(run(b.s), "ddp_replicated_gradients");
        check_all(run(b.s), "optimizer_first_step_spike");
    }
    {
        builder c;
        auto fs = c.stack({{"/opt/py/site-packages/torch/distributed/fsdp/_flat_param.py", "_alloc_storage", 10},
                           {"/opt/py/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py", "forward", 800}});
        auto x = c.a(64 * MiB, fs);
        c.a(MiB, fs);
        c.f(x);
        c.finish(128 * MiB);
        check_all(run(c.s), "fsdp_sharded_gradients");
    }
    {
        builder b;
        stacks st(b);
        b.a(64 * MiB, st.param, false);
        std::vector<std::int64_t> kept;
        for (int s = 0; s < 6; ++s) {
            std::vector<std::int64_t> acts;
            for (int k = 0; k < 4; ++k) acts.push_back(b.a(16 * MiB, st.fwd));
            for (int k = 0; k < 8; ++k) kept.push_back(b.a(MiB, st.other));
            for (auto x : acts) b.f(x);
        }
        for (auto x : kept) b.f(x);
        b.a(MiB, st.fwd2);
        b.finish(256 * MiB);
        check_all(run(b.s), "reference_cycles");
    }
    {
        builder b;
        stacks st(b);
        segment& g = b.seg(0, 0x10000000);
        for (int k = 0; k < 8; ++k) {
            b.blk(g, 20 * MiB, block_state::active_allocated, st.fwd);
            b.blk(g, 10 * MiB, block_state::inactive);
        }
        b.ev(0, action_kind::oom, 0, 40 * MiB, st.fwd2, 100 * MiB);
        check_all(run(b.s, std::int64_t(80) << 30), "fragmentation_oom");
    }
    {
        builder b;
        stacks st(b);
        segment& g = b.seg(0, 0x10000000);
        for (int k = 0; k < 8; ++k) {
            b.blk(g, 20 * MiB, block_state::active_allocated, st.fwd);
            b.blk(g, 10 * MiB, block_state::inactive);
        }
        check_all(run(b.s), "fragmentation");
    }
    {
        const std::int64_t GiB = 1LL << 30;
        builder b;
        stacks st(b);
        b.a(8 * GiB, st.fwd);
        b.ev(0, action_kind::oom, 0, 2 * GiB, st.fwd2, GiB);
        b.finish(10 * GiB);
        check_all(run(b.s, 80 * GiB), "non_pytorch_gap");
    }
}
