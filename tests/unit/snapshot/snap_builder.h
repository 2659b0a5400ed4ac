// Builds small snapshot models in C++ for the analysis tests.
#pragma once

#include <initializer_list>
#include <map>
#include <utility>
#include <string>
#include <tuple>

#include <algorithm>

#include "parsers/snapshot/snapshot_model.h"

namespace oomdx::snap::test {

struct fr {
    const char* filename;
    const char* name;
    int line;
};

class builder {
public:
    snapshot s;

    builder() { s.source_file = "built.pickle"; s.info.format = "pickle"; s.info.producer = "cuda"; }

    std::string_view str(std::string_view x) { return s.strings().view(s.strings().intern(x)); }

    // A frame list, innermost frame first.
    frames_id stack(std::initializer_list<fr> frames) {
        std::vector<frame_id> ids;
        for (const auto& f : frames) {
            frame x{str(f.filename), str(f.name), f.line};
            s.frames.push_back(x);
            ids.push_back(static_cast<frame_id>(s.frames.size() - 1));
        }
        return s.lists.add(ids.data(), ids.size());
    }

    segment& seg(std::int64_t device, std::int64_t address, const char* type = "large") {
        segment g;
        g.device = device;
        g.address = address;
        g.segment_type = str(type);
        g.has_pool_id = true;
        s.segments.push_back(std::move(g));
        return s.segments.back();
    }

    // Appends a block after the previous ones; keeps the segment's size fields in step.
    void blk(segment& g, std::int64_t size, block_state st, frames_id frames = 0, std::int64_t requested = -1) {
        block b;
        b.address = g.address + g.total_size;
        b.size = size;
        b.requested_size = requested < 0 ? size : requested;
        b.state = st;
        b.frames = frames;
        g.total_size += size;
        if (st == block_state::active_allocated) {
            g.allocated_size += size;
            g.active_size += size;
            g.requested_size += b.requested_size;
        } else if (st == block_state::active_pending_free) {
            g.active_size += size;
        }
        g.blocks.push_back(b);
    }

    void ev(std::int64_t device, action_kind k, std::int64_t addr, std::int64_t size, frames_id frames = 0,
            std::int64_t device_free = -1) {
        if (static_cast<std::size_t>(device) >= s.device_traces.size()) s.device_traces.resize(device + 1);
        trace_event e;
        e.kind = k;
        e.action = str(action_name(k));
        e.addr = addr;
        e.size = size;
        e.frames = frames;
        e.device_free = device_free;
        e.time_us = static_cast<std::int64_t>(s.device_traces[device].size()) * 10;
        s.device_traces[device].push_back(e);
    }
    void alloc(std::int64_t addr, std::int64_t size, frames_id f, std::int64_t device = 0) {
        ev(device, action_kind::alloc, addr, size, f);
    }
    void free(std::int64_t addr, std::int64_t size, frames_id f, std::int64_t device = 0) {
        ev(device, action_kind::free_requested, addr, size, f);
        ev(device, action_kind::free_completed, addr, size, f);
    }

    // A tiny allocator on device 0: bump addresses from `base`, remember what is live, and
    // build the final segment (live blocks + inactive gaps) with finish().
    static constexpr std::int64_t base = 0x7f0000000000;
    std::map<std::int64_t, std::pair<std::int64_t, frames_id>> live;
    std::int64_t bump = base;

    std::int64_t a(std::int64_t size, frames_id f, bool recorded = true) {
        std::int64_t addr = bump;
        bump += size;
        live[addr] = {size, f};
        if (recorded) alloc(addr, size, f);
        return addr;
    }
    void f(std::int64_t addr) {
        auto it = live.find(addr);
        free(addr, it->second.first, it->second.second);
        live.erase(it);
    }
    // One segment of at least `size` bytes holding the live blocks.
    void finish(std::int64_t size = 0) {
        ev(0, action_kind::segment_alloc, base, std::max(size, bump - base));
        trace_list& t = s.device_traces[0];  // the segment_alloc goes first
        trace_list moved;
        moved.push_back(t.event(t.size() - 1));
        for (std::size_t i = 0; i + 1 < t.size(); ++i) moved.push_back(t.event(i));
        t = std::move(moved);
        segment& g = seg(0, base);
        std::int64_t at = base;
        for (const auto& [addr, v] : live) {
            if (addr > at) blk(g, addr - at, block_state::inactive);
            blk(g, v.first, block_state::active_allocated, v.second);
            at = addr + v.first;
        }
        std::int64_t end = base + std::max(size, bump - base);
        if (end > at) blk(g, end - at, block_state::inactive);
    }
};

}  // namespace oomdx::snap::test
