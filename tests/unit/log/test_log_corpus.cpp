// Scores the log analyzer on the labelled corpus ../shared/corpus/oom-logs/dev.yaml.
#include <doctest/doctest.h>
#include "engine/core/yaml_node.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "parsers/log/log_analyzer.h"

using namespace oomdx;

namespace {

std::optional<std::int64_t> opt_int(const YAML::Node& n) {
    if (!n || n.IsNull()) return std::nullopt;
    try {
        return n.as<std::int64_t>();
    } catch (...) {
        return std::nullopt;
    }
}

// Half a display unit of the printed 2-decimal size (binary units).
std::int64_t tolerance(std::int64_t v) {
    const double g = 1024.0 * 1024 * 1024, m = 1024.0 * 1024, k = 1024.0;
    if (v >= g) return static_cast<std::int64_t>(0.005 * g) + 1;
    if (v >= m) return static_cast<std::int64_t>(0.005 * m) + 1;
    if (v >= k) return static_cast<std::int64_t>(0.005 * k) + 1;
    return 1;
}

}  // namespace

TEST_CASE("corpus: dev.yaml source accuracy, sizes, rank and step") {
    const std::string path = std::string(OOMDX_SHARED_DIR) + "/corpus/oom-logs/dev.yaml";
    if (!std::filesystem::exists(path)) {
        MESSAGE("skipped: " << path << " not found");
        return;
    }
    YAML::Node root = YAML::LoadFile(path);
    int n = 0, source_ok = 0, size_checks = 0, size_ok = 0, rank_checks = 0, rank_ok = 0,
        step_checks = 0, step_ok = 0, dev_checks = 0, dev_ok = 0, phase_checks = 0, phase_ok = 0;
    std::string failures, phases;
    for (const auto& e : root) {
        const std::string id = e["id"].as<std::string>();
        log_analysis a = analyze_log_text(e["log"].as<std::string>(), id + ".log");
        ++n;
        std::string want = e["oom_source"].as<std::string>();
        if (want == "not_oom") want = "none";
        if (want == "unknown") want = "unknown_oom";
        if (a.source == want) ++source_ok;
        else failures += "  source " + id + ": got " + a.source + ", want " + want + "\n";

        const bool derived = e["reserved_unallocated_derived"] && !e["reserved_unallocated_derived"].IsNull() &&
                             e["reserved_unallocated_derived"].as<bool>();
        struct sz { const char* label; std::optional<std::int64_t> got; int units; };
        sz sizes[] = {{"requested_bytes", a.requested_bytes, 1},
                      {"capacity_bytes", a.capacity_bytes, 1},
                      {"free_bytes", a.free_bytes, 1},
                      {"allocated_by_pytorch_bytes", a.allocated_bytes, 1},
                      {"reserved_total_bytes", a.reserved_bytes, 1},
                      {"reserved_unallocated_bytes", a.reserved_unallocated_bytes, derived ? 2 : 1},
                      {"process_memory_in_use_bytes", a.process_in_use_bytes, 1}};
        for (const auto& s : sizes) {
            auto want_v = opt_int(e[s.label]);
            if (!want_v) continue;
            ++size_checks;
            if (s.got && std::llabs(*s.got - *want_v) <= s.units * tolerance(*want_v)) ++size_ok;
            else
                failures += "  size " + id + " " + s.label + ": got " +
                            (s.got ? std::to_string(*s.got) : "null") + ", want " + std::to_string(*want_v) + "\n";
        }
        if (auto r = opt_int(e["rank"])) {
            ++rank_checks;
            if (a.rank == r) ++rank_ok;
            else failures += "  rank " + id + ": got " + (a.rank ? std::to_string(*a.rank) : "null") +
                             ", want " + std::to_string(*r) + "\n";
        }
        if (auto d = opt_int(e["device_index"]); d && want != "none") {
            ++dev_checks;
            if (a.device_index == d) ++dev_ok;
            else failures += "  device " + id + ": got " + (a.device_index ? std::to_string(*a.device_index) : "null") +
                             ", want " + std::to_string(*d) + "\n";
        }
        // The phase label is informative (not gated): its first word, in the analyzer's names.
        if (e["phase"] && e["phase"].IsScalar() && want != "none") {
            std::string ph = e["phase"].as<std::string>();
            ph = ph.substr(0, ph.find(" ("));
            if (ph == "init/model load" || ph == "model load") ph = "model_load";
            if (ph == "data loading") ph = "data_loading";
            if (ph == "optimizer step") ph = "optimizer_step";
            if (ph == "checkpoint save") ph = "checkpoint_save";
            if (ph == "inference") ph = "forward";
            ++phase_checks;
            if (a.phase == ph) ++phase_ok;
            else phases += "  phase " + id + ": got " + (a.phase.empty() ? "-" : a.phase) + ", label " + ph + "\n";
        }
        for (auto [label, got] : {std::pair{"last_logged_step", a.last_logged_step}, std::pair{"oom_step", a.step}}) {
            auto s = opt_int(e[label]);
            if (!s) continue;
            ++step_checks;
            if (got == s) ++step_ok;
            else failures += std::string("  ") + label + " " + id + ": got " + (got ? std::to_string(*got) : "null") +
                             ", want " + std::to_string(*s) + "\n";
        }
    }
    const double acc = n ? static_cast<double>(source_ok) / n : 0;
    std::printf("log corpus: %d excerpts; source %d/%d (%.1f%%); sizes %d/%d; rank %d/%d; steps %d/%d; device %d/%d; "
                "phase %d/%d (informative)\n%s%s",
                n, source_ok, n, 100 * acc, size_ok, size_checks, rank_ok, rank_checks, step_ok, step_checks,
                dev_ok, dev_checks, phase_ok, phase_checks, failures.c_str(), phases.c_str());
    CHECK(acc >= 0.95);
    // Ratchet (issue 17: the dev score must not drop): one known miss, unknown-megatron-iterations-60.
    CHECK(n - source_ok <= 1);
    CHECK(dev_ok == dev_checks);
    CHECK(size_ok == size_checks);
    CHECK(rank_ok == rank_checks);
    CHECK(step_ok == step_checks);
}
