// Helpers shared by the snapshot reader tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "parsers/snapshot/snapshot_loader.h"

namespace snaptest {

inline std::string read_all(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline std::filesystem::path corpus_dir() {
    return std::filesystem::path(OOMDX_SHARED_DIR) / "corpus" / "snapshots";
}

inline std::filesystem::path fixtures_dir() {
    return std::filesystem::path(OOMDX_TEST_DIR) / "fixtures" / "snapshots";
}

struct totals {
    std::int64_t segments = 0, blocks = 0, reserved = 0, allocated = 0, active = 0,
                 requested = 0, pending = 0, inactive = 0, largest_inactive = 0;
    nlohmann::json per_device = nlohmann::json::array();
    nlohmann::json actions = nlohmann::json::object();
};

inline totals sum_up(const oomdx::snap::snapshot& s) {
    using oomdx::snap::block_state;
    totals t;
    for (const auto& seg : s.segments) {
        ++t.segments;
        t.reserved += seg.total_size;
        for (const auto& b : seg.blocks) {
            ++t.blocks;
            switch (b.state) {
            case block_state::active_allocated:
                t.allocated += b.size;
                t.active += b.size;
                t.requested += b.requested_size;
                break;
            case block_state::active_pending_free:
                t.pending += b.size;
                t.active += b.size;
                break;
            case block_state::inactive:
                t.inactive += b.size;
                if (b.size > t.largest_inactive) t.largest_inactive = b.size;
                break;
            default: break;
            }
        }
    }
    for (const auto& tr : s.device_traces) {
        t.per_device.push_back(tr.size());
        for (std::size_t i = 0; i < tr.size(); ++i) {
            std::string a(tr.action(i));
            t.actions[a] = t.actions.value(a, 0) + 1;
        }
    }
    return t;
}

}  // namespace snaptest
