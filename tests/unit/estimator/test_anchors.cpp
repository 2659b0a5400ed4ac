// Accuracy over the published anchors: every expressible row's estimate next to the measured
// figure of the same allocator statistic. Skips when ../shared is absent.
#include <doctest/doctest.h>
#include "engine/core/yaml_node.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <vector>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"
#include "tests/unit/estimator/test_util.h"

using namespace oomdx;

TEST_CASE("estimator accuracy over the dev anchors") {
    const std::string anchors = std::string(OOMDX_SHARED_DIR) + "/corpus/estimation/dev-anchors.yaml";
    if (!std::filesystem::exists(anchors)) {
        MESSAGE("skipped: " << anchors << " not present");
        return;
    }
    const YAML::Node rows = YAML::LoadFile(anchors);
    const YAML::Node cfg = YAML::LoadFile(std::string(OOMDX_TEST_DIR) + "/unit/estimator/anchor_configs.yaml");
    std::vector<double> errors;
    int covered_rows = 0;  // beyond 15 % but inside the estimate's interval
    int known_misses = 0;
    std::printf("\n%-36s %-9s %10s %10s %8s\n", "anchor", "statistic", "measured", "estimate", "error");
    for (const auto& row : rows) {
        const std::string id = row["id"].as<std::string>();
        YAML::Node c;
        for (const auto& x : cfg["rows"])
            if (x["id"].as<std::string>() == id) c.reset(static_cast<const YAML::Node&>(x));
        if (!c) {
            std::printf("%-36s SKIP: no configuration mapping\n", id.c_str());
            continue;
        }
        if (c["skip"]) {
            std::printf("%-36s SKIP: %s\n", id.c_str(), c["skip"].as<std::string>().c_str());
            continue;
        }
        fact_store facts;
        test_util::emit_map(facts, cfg["models"][c["model"].as<std::string>()]);
        if (c["base"]) test_util::emit_map(facts, c["base"]);
        test_util::emit_map(facts, c["set"]);
        const estimate_input in = from_facts(facts);
        const estimate_result r = estimate(in);
        const std::string metric = row["metric"].as<std::string>();
        const bool reserved = metric.find("reserved") != std::string::npos;
        std::int64_t bytes = reserved ? r.reserved_peak_bytes : r.peak_bytes;
        if (c["stage"] && c["stage"].as<std::string>() == "last" && !r.stages.empty()) {
            const double stage_peak = double(r.stages.back().peak_bytes);
            bytes = std::int64_t(reserved ? stage_peak * double(r.reserved_peak_bytes) / double(std::max<std::int64_t>(1, r.peak_bytes))
                                          : stage_peak);
        }
        const double measured = row["measured_peak_gib"].as<double>();
        const double est = double(bytes) / 1073741824.0;
        const double err = (est - measured) / measured;
        // the device-peak interval moved onto the compared statistic
        const double lo = est + double(r.low_bytes - r.device_peak_bytes) / 1073741824.0;
        const double hi = est + double(r.high_bytes - r.device_peak_bytes) / 1073741824.0;
        const bool covered = hi > lo && lo <= measured && measured <= hi;
        errors.push_back(std::fabs(err));
        if (covered && std::fabs(err) > 0.15) ++covered_rows;
        std::printf("%-36s %-9s %8.2f G %8.2f G %+7.1f%%  [%s, peak at %s, stage %s]%s\n", id.c_str(),
                    reserved ? "reserved" : "allocated", measured, est, 100.0 * err,
                    test_util::brief(r).c_str(), r.peak_phase.c_str(), r.worst_stage.c_str(),
                    hi > lo ? fmt::format(" interval {:.1f}..{:.1f}{}", lo, hi, covered ? " covers" : "").c_str() : "");
        // rows the model is known to miss stay in the table and the statistics, reported by name
        if (c["known_miss"] && std::fabs(err) > 0.15 && !covered) {
            std::printf("%-36s KNOWN MISS: %s\n", "", c["known_miss"].as<std::string>().c_str());
            ++known_misses;
        } else {
            CHECK_MESSAGE((std::fabs(err) <= 0.15 || covered), id << " error " << err);
        }
    }
    REQUIRE(!errors.empty());
    std::vector<double> sorted = errors;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    std::printf("rows compared: %zu, median |error| %.1f%%, worst %.1f%%, %d row(s) beyond 15%% covered by the interval, "
                "%d known miss(es)\n", n, 100.0 * median, 100.0 * sorted.back(), covered_rows, known_misses);
    CHECK(median <= 0.05);
}
