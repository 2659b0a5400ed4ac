// The forecast from a log that has not failed: timestamps, the per-rank fit, capacity from the
// log's percentages or the device, flat memory, and its facts.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "engine/core/fact_store.h"
#include "engine/report/log_verdicts.h"
#include "parsers/log/log_analyzer.h"
#include "parsers/log/log_time.h"
#include "parsers/log/memory_forecast.h"

using namespace oomdx;

namespace {

constexpr std::int64_t GiB = 1LL << 30;

std::string titan(int step, double gib, double capacity_gib, int second, int rank = 0) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "[rank%d]:[titan] 2026-01-01 10:%02d:%02d,000 - root - INFO - step: %d  loss:  2.0  memory: %.2fGiB(%.2f%%)  tps: 1\n",
                  rank, second / 60, second % 60, step, gib, gib / capacity_gib * 100);
    return buf;
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

TEST_CASE("timestamps of the common loggers") {
    const std::int64_t base = *log_line_time_ms("2026-01-01 10:00:00,000 x");
    CHECK(*log_line_time_ms("[titan] 2026-01-01 10:00:01,250 - root") - base == 1250);
    CHECK(*log_line_time_ms("[2026-01-01 10:00:02] iteration 5/ 10 |") - base == 2000);
    CHECK(*log_line_time_ms("2026-01-01T10:00:03.5 step=4") - base == 3500);
    CHECK(*log_line_time_ms("[ERROR] 2026-01-01-10:00:04 (PID:1)") - base == 4000);
    CHECK(log_line_time_ms("[04/27 13:03:34 d2.utils.events]:  iter: 19"));
    CHECK(log_line_time_ms("I0909 21:01:55.118000 4012 api.py:897] x"));
    CHECK_FALSE(log_line_time_ms("step 10, loss 2.0"));
    CHECK_FALSE(log_line_time_ms("version 2026-13-01 99:00:00"));
}

TEST_CASE("forecast: capacity from the log's percentages, eta from the timestamps") {
    std::string log;
    for (int s = 1; s <= 40; ++s) log += titan(s, 30.0 + s, 80.0, 2 * s);
    auto a = analyze_log_text(log, "run.log");
    REQUIRE(a.forecast);
    const auto& f = *a.forecast;
    CHECK(f.projected);
    const fact_store facts = judge_log(a);
    CHECK(facts.get("log.forecast.available")->prov.rule_id == "evidence_forecast_growing");
    CHECK(f.available);
    CHECK(f.capacity_from == "log_percent");
    CHECK(std::llabs(f.capacity_bytes - 80 * GiB) < GiB / 100);
    CHECK(std::llround(f.capacity_step) == 50);
    CHECK(std::llround(f.budget_step) == 46);
    REQUIRE(f.seconds_per_step);
    CHECK(*f.seconds_per_step == doctest::Approx(2.0));
    CHECK(*f.eta_seconds == doctest::Approx(20.0).epsilon(0.01));
    CHECK(render_text(a, false, false).find("forecast: rank 0 reaches 95% of 80.00 GiB") != std::string::npos);
    auto j = to_json(a)["forecast"];
    CHECK(j["capacity_step"] == 50);
    CHECK(j["interval_steps"].size() == 2);
    CHECK(j["basis"]["points"] == 40);
    collect c;
    emit_facts(a, c);
    REQUIRE(c.get("log.forecast.steps_to_budget"));
    CHECK(c.get("log.forecast.steps_to_budget")->val.as_integer() == 6);
    CHECK(c.get("log.capacity_bytes"));
}

TEST_CASE("forecast: the rank that reaches capacity first; the device's capacity wins") {
    std::string log;
    for (int s = 1; s <= 30; ++s) {
        log += titan(s, 40.0 + 0.5 * s, 80.0, s, 0);
        log += titan(s, 40.0 + 1.0 * s, 80.0, s, 1);
    }
    auto a = analyze_log_text(log, "run.log");
    REQUIRE(a.forecast);
    CHECK(a.forecast->rank == 1);
    log_options o;
    o.device_capacity_bytes = 60 * GiB;
    auto b = analyze_log_text(log, "run.log", o);
    CHECK(b.forecast->capacity_from == "device");
    CHECK(std::llround(b.forecast->capacity_step) == 20);
}

TEST_CASE("forecast: flat memory, too few readings, unknown capacity say so") {
    std::string flat;
    for (int s = 1; s <= 50; ++s) flat += titan(s, 50.0 + ((s * 7) % 5) * 0.05, 80.0, s);
    auto a = analyze_log_text(flat, "flat.log");
    REQUIRE(a.forecast);
    // the analyzer measures the line against its scatter; the evidence rules call it flat
    CHECK(a.forecast->fitted);
    CHECK(a.forecast->rise_bytes < 2 * a.forecast->noise_bytes);
    collect c;
    emit_facts(a, c);
    CHECK_FALSE(c.get("log.forecast.available"));
    REQUIRE(c.get("log.forecast.rise_bytes"));
    REQUIRE(c.get("log.forecast.noise_bytes"));
    const fact_store facts = judge_log(a);
    CHECK(facts.get("log.forecast.available")->prov.rule_id == "evidence_forecast_flat");
    CHECK_FALSE(a.forecast->available);
    CHECK(a.forecast->reason.rfind("flat memory", 0) == 0);
    CHECK(render_text(a, false, false).find("forecast: none for rank 0 - flat memory") != std::string::npos);

    auto few = analyze_log_text(titan(1, 40, 80, 1) + titan(2, 41, 80, 2) + titan(3, 42, 80, 3), "few.log");
    CHECK(few.forecast->reason.rfind("too few memory readings", 0) == 0);
    // rev34: two steps printed five times (torchtitan#2389's paste) are two steps, not five readings
    auto repeated = analyze_log_text(titan(2, 175.54, 178.3, 2) + titan(2, 175.54, 178.3, 2) + titan(2, 175.54, 178.3, 2) +
                                         titan(3, 175.60, 178.3, 3) + titan(3, 175.62, 178.3, 3),
                                     "repeated.log");
    REQUIRE(repeated.forecast);
    CHECK_FALSE(repeated.forecast->available);
    CHECK(repeated.forecast->reason.rfind("too few memory readings after the warm-up (2 steps", 0) == 0);

    std::string megatron;  // no percentage, no OOM message: capacity unknown
    for (int s = 1; s <= 20; ++s)
        megatron += "[Rank 0] (after " + std::to_string(s) + " iterations) memory (MB) | allocated: " +
                    std::to_string(10000 + 100 * s) + ".0 | max allocated: 1.0\n";
    auto m = analyze_log_text(megatron, "m.log");
    REQUIRE(m.forecast);
    CHECK(m.forecast->reason.rfind("capacity unknown", 0) == 0);
}
