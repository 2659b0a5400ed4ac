// Property: any valid combination of --set values estimates (no throw, sane figures), and a
// plan made for it is verified: it fits, at the figure `estimate` gives for its overrides.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "engine/core/fact_store.h"
#include "engine/estimator/plan.h"
#include "engine/estimator/preflight.h"

using namespace oomdx;

namespace {

struct model_shape {
    const char* id;
    std::int64_t heads, kv, layers, experts;
};

const model_shape k_models[] = {
    {"llama3-8b", 32, 8, 32, 0},       {"qwen3-30b-a3b", 32, 4, 48, 128}, {"deepseek-v2-lite-16b", 16, 16, 27, 64},
    {"llama3-70b", 64, 8, 80, 0},      {"mixtral-8x7b", 32, 8, 32, 8},    {"qwen2.5-7b", 28, 4, 28, 0},
};
const char* const k_frameworks[] = {"torchtitan", "torchtitan_npu", "megatron", "deepspeed", "hf_trainer"};
const char* const k_devices[] = {"h100-80gb", "a100-40gb", "910b3", "h200-141gb"};

template <class T>
T pick(std::mt19937& g, const std::vector<T>& v) {
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(g)];
}

std::vector<std::int64_t> divs(std::int64_t n) {
    std::vector<std::int64_t> d;
    for (std::int64_t i = 1; i <= n; ++i)
        if (n % i == 0) d.push_back(i);
    return d;
}

// A random request that the input checks must accept.
preflight_request random_valid(std::mt19937& g) {
    const model_shape& m = k_models[std::uniform_int_distribution<std::size_t>(0, std::size(k_models) - 1)(g)];
    const std::string fw = k_frameworks[std::uniform_int_distribution<std::size_t>(0, std::size(k_frameworks) - 1)(g)];
    const bool titan = fw.rfind("torchtitan", 0) == 0, megatron = fw == "megatron";
    preflight_request r;
    r.model = m.id;
    r.framework = fw;
    r.device = k_devices[std::uniform_int_distribution<std::size_t>(0, std::size(k_devices) - 1)(g)];
    const std::int64_t world = pick<std::int64_t>(g, {1, 2, 4, 8, 16, 32, 64});
    r.world_size = world;
    std::vector<std::int64_t> tps;
    for (auto t : divs(world))
        if (t <= 8 && m.heads % t == 0 && m.kv % t == 0) tps.push_back(t);
    const std::int64_t tp = pick(g, tps);
    std::vector<std::int64_t> pps;
    for (auto p : divs(world / tp))
        if (p <= m.layers && (!megatron || m.layers % p == 0)) pps.push_back(p);
    const std::int64_t pp = pick(g, pps);
    const std::int64_t cp = pick(g, divs(world / (tp * pp)));
    const std::int64_t dp = world / (tp * pp * cp);
    const std::int64_t seq = 2 * cp * tp * pick<std::int64_t>(g, {128, 256, 512, 1024, 2048});
    const std::int64_t local = pick<std::int64_t>(g, {1, 2, 4, 8});
    auto set = [&](const std::string& k, const std::string& v) { r.sets.push_back(k + "=" + v); };
    set("job.framework", fw);
    set("parallelism.tensor_parallel_degree", std::to_string(tp));
    set("parallelism.pipeline_parallel_degree", std::to_string(pp));
    set("parallelism.context_parallel_degree", std::to_string(cp));
    set("training.seq_len", std::to_string(seq));
    set("training.local_batch_size", std::to_string(local));
    set("activation_checkpoint.mode", pick<std::string>(g, {"none", "selective", "full"}));
    const bool ddp = titan && dp > 1 && std::uniform_int_distribution<int>(0, 1)(g);
    const std::int64_t shard = ddp ? 1 : dp;
    if (m.experts > 0) {
        std::vector<std::int64_t> eps{1};
        for (auto e : divs(m.experts)) {
            if (e == 1) continue;
            const bool ok = titan ? (shard * cp * tp) % e == 0 && e % (cp * tp) == 0
                                  : megatron ? (world / pp) % (e * tp) == 0 : dp % e == 0;
            if (ok) eps.push_back(e);
        }
        set("parallelism.expert_parallel_degree", std::to_string(pick(g, eps)));
    }
    if (fw == "deepspeed") set("parallelism.zero_stage", std::to_string(pick<std::int64_t>(g, {0, 1, 2, 3})));
    if (megatron) set("optimizer.distributed", pick<std::string>(g, {"true", "false"}));
    if (ddp) {
        set("parallelism.data_parallel_replicate_degree", std::to_string(dp));
        set("parallelism.data_parallel_shard_degree", "1");
    }
    if (fw == "torchtitan_npu") set("optimizer.swap_optimizer", pick<std::string>(g, {"true", "false"}));
    return r;
}

}  // namespace

TEST_CASE("random valid --set combinations always estimate") {
    std::mt19937 g(20260915);
    int planned = 0;
    for (int i = 0; i < 300; ++i) {
        const preflight_request r = random_valid(g);
        std::string args;
        for (const auto& s : r.sets) args += " --set " + s;
        CAPTURE(fmt::format("--model {} --device {} --world-size {}{}", r.model, r.device, r.world_size, args));
        preflight_result res;
        REQUIRE_NOTHROW(res = run_preflight(r));
        const estimate_result& e = res.estimate;
        CHECK(e.device_peak_bytes > 0);
        CHECK(e.device_peak_bytes < (std::int64_t(1) << 50));
        CHECK(e.peak_bytes <= e.reserved_peak_bytes);
        CHECK(e.reserved_peak_bytes <= e.device_peak_bytes);
        std::int64_t sum = 0;
        for (const auto& c : e.components) {
            CHECK(c.bytes >= 0);
            sum += c.bytes;
        }
        CHECK(std::llabs(sum - e.device_peak_bytes) <= 16);
        if (i % 10 == 0) {
            // A plan for it: verified, so its figure is what estimate gives for its overrides.
            plan_request pr;
            pr.search.top = 3;
            pr.max_world = 1024;
            plan_answer p;
            REQUIRE_NOTHROW(p = make_plan(res.facts, res.syntax, pr));
            if (p.fits && !p.base_fits) {
                ++planned;
                preflight_request again = r;
                again.world_size = p.world_size;
                for (const auto& o : p.overrides) again.sets.push_back(o.key + "=" + value_key(o.val));
                const preflight_result v = run_preflight(again);
                CHECK(v.estimate.fits);
                CHECK(v.estimate.device_peak_bytes == p.expected_device_peak_bytes);
            }
        }
    }
    MESSAGE(fmt::format("{} plans re-estimated", planned));
}
