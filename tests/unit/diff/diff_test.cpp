// oomdx diff: the component deltas add up exactly to the peak difference, each side equals the
// estimate of that config alone, the changed keys are exactly those whose effective values differ
// (framework defaults included), and the attribution steps add up the same way.
#include <doctest/doctest.h>

#include <numeric>
#include <string>

#include "engine/core/vocabulary.h"
#include "engine/estimator/config_diff.h"
#include "engine/estimator/preflight.h"

using namespace oomdx;

namespace {

const std::string examples = std::string(OOMDX_SOURCE_DIR) + "/examples/";

fact_store facts_of(const std::string& config, const std::string& model, const std::string& device, std::int64_t world,
                    const std::vector<std::string>& sets = {}, const std::string& framework = "") {
    preflight_request r;
    r.config = config;
    r.model = model;
    r.device = device;
    r.world_size = world;
    r.sets = sets;
    r.framework = framework;
    fact_store f(&vocabulary::shipped());
    gather_facts(r, f);
    return f;
}

void check_adds_up(const config_diff& d) {
    std::int64_t sum = 0;
    for (const auto& c : d.components) sum += c.b_bytes - c.a_bytes;
    CHECK(sum == d.b.device_peak_bytes - d.a.device_peak_bytes);
    std::int64_t steps = 0;
    for (const auto& s : d.attribution) {
        steps += s.device_peak_delta;
        std::int64_t comps = 0;
        for (const auto& [id, v] : s.deltas) comps += v;
        CHECK(comps == s.device_peak_delta);
    }
    CHECK(steps == d.b.device_peak_bytes - d.a.device_peak_bytes);
    if (!d.attribution.empty()) CHECK(d.attribution.back().device_peak_after == d.b.device_peak_bytes);
}

}  // namespace

TEST_CASE("diff of two shipped example configs: deltas add up, each side is its own estimate") {
    const fact_store a = facts_of(examples + "late_oom_growing_memory/llama3_8b.toml", "llama3-8b", "h100-80gb", 8);
    const fact_store b = facts_of(examples + "fragmentation_snapshot/llama3_8b_varlen.toml", "llama3-8b", "h100-80gb", 8);
    const config_diff d = diff_configs(a, b);
    check_adds_up(d);
    CHECK(d.a.device_peak_bytes == estimate(from_facts(a)).device_peak_bytes);
    CHECK(d.b.device_peak_bytes == estimate(from_facts(b)).device_peak_bytes);
    for (const auto& c : d.changed) CHECK_FALSE(c.a == c.b);
}

TEST_CASE("diff of a config with itself plus --set: exactly the keys set, defaults compared as effective values") {
    const std::string cfg = examples + "config_far_too_big/llama3_70b.toml";
    const fact_store a = facts_of(cfg, "llama3-70b", "h100-80gb", 8);
    SUBCASE("two changes") {
        const fact_store b = facts_of(cfg, "llama3-70b", "h100-80gb", 8,
                                      {"activation_checkpoint.mode=full", "training.local_batch_size=1"});
        const config_diff d = diff_configs(a, b);
        REQUIRE(d.changed.size() == 2);
        CHECK(d.changed[0].key == "training.local_batch_size");  // batch before checkpointing in the documented order
        CHECK(d.changed[1].key == "activation_checkpoint.mode");
        check_adds_up(d);
        CHECK(d.b.device_peak_bytes < d.a.device_peak_bytes);
    }
    SUBCASE("a key set to the value it already has is no change") {
        const fact_store b = facts_of(cfg, "llama3-70b", "h100-80gb", 8, {"training.local_batch_size=4"});
        const config_diff d = diff_configs(a, b);
        for (const auto& c : d.changed) CHECK(c.key != "training.local_batch_size");
        CHECK(d.a.device_peak_bytes == d.b.device_peak_bytes);
    }
}

TEST_CASE("a framework default on one side and an explicit different value on the other is a change") {
    // No config: torchtitan's defaults apply (local batch 8); B sets 2.
    const fact_store a = facts_of("", "llama3-8b", "h100-80gb", 8, {}, "torchtitan");
    const fact_store b = facts_of("", "llama3-8b", "h100-80gb", 8, {"training.local_batch_size=2"}, "torchtitan");
    const config_diff d = diff_configs(a, b);
    bool found = false;
    for (const auto& c : d.changed)
        if (c.key == "training.local_batch_size") found = true;
    CHECK(found);
    check_adds_up(d);
}
