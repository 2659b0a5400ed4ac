// Benchmark / debugging driver: loads snapshots with the oomdx reader and prints a summary as
// JSON (counts per device, action histogram, model sizes), to time the reader alone. Build:
//   c++ -O2 -std=c++20 -I. tests/bench/snapshot/snapshot_load_main.cpp build/liboomdx_snapshot.a \
//       build/liboomdx_core.a -lfmt -lyaml-cpp -lz -o load
#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "parsers/snapshot/snapshot_loader.h"

int main(int argc, char** argv) {
    using namespace oomdx::snap;
    nlohmann::json all = nlohmann::json::array();
    int rc = 0;
    for (int i = 1; i < argc; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        try {
            snapshot s = load_snapshot(argv[i]);
            double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            std::size_t blocks = 0;
            std::int64_t reserved = 0, allocated = 0;
            for (const auto& seg : s.segments) {
                blocks += seg.blocks.size();
                reserved += seg.total_size;
                for (const auto& b : seg.blocks)
                    if (b.state == block_state::active_allocated) allocated += b.size;
            }
            nlohmann::json per_dev = nlohmann::json::array();
            std::map<std::string, std::int64_t> actions;
            for (const auto& t : s.device_traces) {
                per_dev.push_back(t.size());
                for (std::size_t i = 0; i < t.size(); ++i) ++actions[std::string(t.action(i))];
            }
            all.push_back({{"file", argv[i]},
                           {"ms", ms},
                           {"protocol", s.info.pickle_protocol},
                           {"era", s.info.era},
                           {"producer", s.info.producer},
                           {"segments", s.segments.size()},
                           {"blocks", blocks},
                           {"reserved_bytes", reserved},
                           {"active_allocated_block_bytes", allocated},
                           {"trace_entries_per_device", per_dev},
                           {"actions", actions},
                           {"frames", s.frames.size()},
                           {"frame_lists", s.frame_list_count()},
                           {"strings", s.strings().size()},
                           {"string_bytes", s.strings().bytes()}});
        } catch (const oomdx::input_error& e) {
            std::fprintf(stderr, "oomdx: error: %s\n", e.what());
            rc = 2;
        }
    }
    std::printf("%s\n", all.dump(1).c_str());
    return rc;
}
