// An inference engine that stops at its own start-up check (vLLM's free-memory check of its share, its KV-cache
// checks, SGLang's empty KV pool) is the engine's pool, not the training step: a log holding only that check is no
// longer "no out-of-memory error", the share or the engine's length is the lever, and the training step's levers
// (micro-batch, checkpointing, precision) are not offered (end to end, log only; skips when the binary is absent).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/unit/diagnose_text.h"

namespace engine_startup {

struct report {
    std::string headline, family;
    std::vector<std::string> actions, first_lines;
};

report diagnose(const std::string& log) {
    const auto j = oomdx::test::diagnose_log_text(log, "--explain");
    report r;
    r.headline = j["headline"].get<std::string>();
    for (const auto& f : j["explain"]["facts"])
        if (f["name"] == "diagnosis.oom_family") r.family = f["value"].get<std::string>();
    for (const auto& rec : j["recommendations"]) {
        if (r.actions.empty())
            for (const auto& l : rec["rendered"]) r.first_lines.push_back(l.get<std::string>());
        r.actions.push_back(rec["action"].get<std::string>());
    }
    return r;
}

bool has(const std::vector<std::string>& v, const std::string& x) {
    for (const auto& e : v)
        if (e == x) return true;
    return false;
}

bool training_levers(const report& r) {
    return has(r.actions, "reduce_micro_batch") || has(r.actions, "enable_full_ac") || has(r.actions, "mixed_precision");
}

}  // namespace engine_startup

TEST_CASE("vLLM's start-up check in a verl job: the share under the free part, in verl's syntax, and the trainer's states offloaded") {
    const auto r = engine_startup::diagnose(
        "(main_task pid=1234) Using verl with a vLLM rollout\n"
        "(WorkerDict pid=5678) ValueError: Free memory on device cuda:0 (62.13/79.11 GiB) on startup is less than desired GPU "
        "memory utilization (0.9, 71.2 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n");
    CHECK(r.family == "engine_pool");
    CHECK(r.headline.find("something else holds 16.98 GiB") != std::string::npos);
    REQUIRE_FALSE(r.actions.empty());
    CHECK(r.actions.front() == "memory_fraction_watermark");
    CHECK(engine_startup::has(r.first_lines, "actor_rollout_ref.rollout.gpu_memory_utilization=0.76"));
    CHECK(engine_startup::has(r.actions, "offload_or_swap_optimizer"));
    CHECK_FALSE(engine_startup::training_levers(r));
}

TEST_CASE("vLLM's start-up check with the device mostly held elsewhere: free the device first") {
    const auto r = engine_startup::diagnose(
        "ValueError: Free memory on device (7.34/139.72 GiB) on startup is less than desired GPU memory utilization (0.9, "
        "125.75 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n");
    REQUIRE_FALSE(r.actions.empty());
    CHECK(r.actions.front() == "stop_other_processes");
    CHECK_FALSE(engine_startup::training_levers(r));
}

TEST_CASE("KV-cache start-up checks: vLLM's count in tokens lowers the length, SGLang's empty pool raises the share") {
    const auto tokens = engine_startup::diagnose(
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV "
        "cache (21456). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n");
    REQUIRE_FALSE(tokens.actions.empty());
    CHECK(tokens.actions.front() == "reduce_seq_len");
    CHECK_FALSE(engine_startup::training_levers(tokens));

    const auto sglang = engine_startup::diagnose("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n");
    CHECK(sglang.family == "engine_pool");
    REQUIRE_FALSE(sglang.actions.empty());
    CHECK(sglang.actions.front() == "memory_fraction_watermark");
    CHECK_FALSE(engine_startup::training_levers(sglang));
}

TEST_CASE("a CUDA OOM while a vLLM engine generates is not a start-up check") {
    const auto r = engine_startup::diagnose(
        "INFO 03-02 10:12:01 [gpu_model_runner.py:1234] vLLM is generating\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.11 GiB of "
        "which 1.02 GiB is free.\n");
    CHECK(r.family != "engine_pool");
}
