// Trace replay: live bytes (alloc .. free_completed) with allocations made before the trace,
// the peak and what was live there, phases, pending frees, OOM events; and the backward
// free-block replay that measures the largest inactive block at each OOM.
#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "parsers/snapshot/analysis_internal.h"

namespace oomdx::snap::detail {

namespace {

struct pivot {
    std::int64_t index;
    std::int64_t value;  // cumulative delta after the event
};

// The change of active bytes an entry makes (alloc +size, the completing free -size).
inline std::int64_t active_delta(const trace_entry& e, action_kind free_kind) {
    return e.kind == action_kind::alloc ? e.size : e.kind == free_kind ? -e.size : 0;
}

// f(i, entry) for each entry in order, walking the chunks with a pointer (no per-entry
// chunk look-up).
template <class F>
inline void each_entry(const trace_list& trace, F&& f) {
    std::size_t i = 0;
    trace.for_each_run([&](const trace_entry* run, std::size_t m) {
        for (std::size_t r = 0; r < m; ++r, ++i) f(i, run[r]);
    });
}

// Turning points of the cumulative-delta curve with hysteresis h (> 0). The curve is summed again
// from the trace (not kept: 8 bytes an entry).
std::vector<pivot> zigzag(const trace_list& trace, action_kind free_kind, std::int64_t h) {
    std::vector<pivot> pv;
    pv.push_back({-1, 0});
    if (trace.empty()) return pv;
    int dir = 0;
    pivot lo{-1, 0}, hi{-1, 0}, ext{-1, 0};
    std::int64_t v = 0;
    each_entry(trace, [&](std::size_t i, const trace_entry& e) {
        // An entry that leaves v as it was cannot turn the curve (h > 0): skipped.
        if (e.kind != action_kind::alloc && e.kind != free_kind) return;
        v += e.kind == action_kind::alloc ? e.size : -e.size;
        std::int64_t ii = static_cast<std::int64_t>(i);
        if (dir == 0) {
            if (v < lo.value) lo = {ii, v};
            if (v > hi.value) hi = {ii, v};
            if (hi.value - lo.value >= h) {
                if (hi.index > lo.index) {
                    if (lo.index >= 0) pv.push_back(lo);
                    dir = 1;
                    ext = hi;
                } else {
                    if (hi.index >= 0) pv.push_back(hi);
                    dir = -1;
                    ext = lo;
                }
            }
        } else if (dir > 0) {
            if (v > ext.value) ext = {ii, v};
            else if (ext.value - v >= h) {
                pv.push_back(ext);
                dir = -1;
                ext = {ii, v};
            }
        } else {
            if (v < ext.value) ext = {ii, v};
            else if (v - ext.value >= h) {
                pv.push_back(ext);
                dir = 1;
                ext = {ii, v};
            }
        }
    });
    if (dir != 0 && ext.index != pv.back().index) pv.push_back(ext);
    std::int64_t last = static_cast<std::int64_t>(trace.size()) - 1;
    if (pv.back().index != last) pv.push_back({last, v});
    return pv;
}

struct live_alloc {
    std::int64_t size = 0;
    std::int64_t index = 0;
    std::int64_t req_index = -1;
    std::int64_t req_time = -1;
    std::int32_t site = 0;
    std::int16_t cat = 0;
    std::int32_t epoch = 0;
    bool pending = false;
    bool preexisting = false;  // seen first as a free: allocated before the trace
};

// Live allocations by address: open addressing with linear probing and backward-shift
// erase (a trace has millions of alloc/free pairs; node-based maps spend their time in malloc).
// Slots read like std::pair (first = address, second = the allocation).
class live_map {
public:
    struct slot {
        std::int64_t first = 0;
        live_alloc second;
        bool used = false;
    };
    live_map() : m_tab(std::size_t(1) << m_bits) {}
    slot* end() const { return nullptr; }
    slot* find(std::int64_t addr) {
        for (std::size_t i = home(addr);; i = (i + 1) & mask()) {
            if (!m_tab[i].used) return nullptr;
            if (m_tab[i].first == addr) return &m_tab[i];
        }
    }
    // The slot of addr; a fresh one (second = true) holds stale bytes: the caller writes it whole.
    std::pair<slot*, bool> insert_raw(std::int64_t addr) {
        if ((m_size + 1) * 2 > m_tab.size()) grow();
        std::size_t i = home(addr);
        for (; m_tab[i].used; i = (i + 1) & mask())
            if (m_tab[i].first == addr) return {&m_tab[i], false};
        m_tab[i].used = true;
        m_tab[i].first = addr;
        ++m_size;
        return {&m_tab[i], true};
    }
    std::pair<slot*, bool> emplace(std::int64_t addr, const live_alloc& la) {
        auto r = insert_raw(addr);
        if (r.second) r.first->second = la;
        return r;
    }
    void erase(slot* s) {
        std::size_t i = static_cast<std::size_t>(s - m_tab.data());
        for (std::size_t j = (i + 1) & mask(); m_tab[j].used; j = (j + 1) & mask()) {
            const std::size_t k = home(m_tab[j].first);
            const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
            if (stays) continue;
            m_tab[i] = m_tab[j];
            i = j;
        }
        m_tab[i].used = false;
        --m_size;
    }
    template <class F>
    void for_each(F&& f) const {
        for (const auto& sl : m_tab)
            if (sl.used) f(sl.first, sl.second);
    }

private:
    std::size_t mask() const { return m_tab.size() - 1; }
    std::size_t home(std::int64_t addr) const {  // Fibonacci hashing: the high bits of the product
        return static_cast<std::size_t>((static_cast<std::uint64_t>(addr) * 0x9E3779B97F4A7C15ULL) >> (64 - m_bits));
    }
    void grow() {
        std::vector<slot> old(m_tab.size() * 2);
        old.swap(m_tab);
        ++m_bits;
        m_size = 0;
        for (const auto& sl : old)
            if (sl.used) emplace(sl.first, sl.second);
    }
    unsigned m_bits = 8;  // 256 slots (16 KiB) to start: a small trace touches few fresh pages
    std::vector<slot> m_tab;
    std::size_t m_size = 0;
};

}  // namespace

void replay_trace(const snapshot& s, const trace_list& trace,
                  const std::vector<const segment*>& segs, attribution& attr,
                  const analysis_options& opt, device_analysis& d, replay_extras& x) {
    const std::size_t ncat = attr.rules().names().size();
    x.growth_alloc_by_cat.assign(ncat, 0);
    d.trace_entries = static_cast<std::int64_t>(trace.size());

    // Pass A: action counts, the cumulative delta of active bytes and of reserved bytes.
    // One loop: the counts, and the curve summed as if frees complete (free_completed), which
    // is summed again below in the rare trace that only requests frees.
    std::array<std::int64_t, 13> kind_count{};  // action_kind has 13 values
    static_assert(static_cast<int>(action_kind::other) == 12);
    std::map<std::string_view, std::int64_t> other_actions;
    std::vector<std::string_view> first_seen;
    std::int64_t cum = 0, seg_cum = 0, maxd = 0, mind = 0, max_index = -1, seg_max = 0;
    bool has_time = false;
    const std::size_t chunk = trace_list::first_chunk_size();
    const trace_sums& sums = trace.sums();
    const bool summed = sums.kinds[static_cast<std::size_t>(action_kind::other)] == 0;
    if (summed) {
        // No unknown action (whose texts are counted apart): the list summed this as it was read.
        for (std::size_t k = 0; k < kind_count.size(); ++k) kind_count[k] = sums.kinds[k];
        for (std::size_t k = 0; k < sums.seen; ++k) first_seen.push_back(action_name(sums.order[k]));
        has_time = sums.time;
        cum = sums.cum;
        maxd = sums.max_cum;
        mind = sums.min_cum;
        max_index = sums.max_index;
        seg_cum = sums.seg_cum;
        seg_max = sums.seg_max;
    }
    for (std::size_t base = 0; !summed && base < trace.size(); base += chunk) {
        const trace_entry* run = &trace[base];
        const std::size_t m = std::min(chunk, trace.size() - base);
        for (std::size_t r = 0; r < m; ++r) {
            const trace_entry& e = run[r];
            const auto k = static_cast<std::size_t>(e.kind);
            if (kind_count[k]++ == 0 && e.kind != action_kind::other) [[unlikely]]
                first_seen.push_back(action_name(e.kind));
            has_time |= e.time_us >= 0;
            // Only the kinds that move a curve test its extremes (the others leave it as it was).
            switch (e.kind) {
                case action_kind::alloc:
                case action_kind::free_completed:
                    cum += e.kind == action_kind::alloc ? e.size : -e.size;
                    if (cum > maxd) {
                        maxd = cum;
                        max_index = static_cast<std::int64_t>(base + r);
                    } else if (cum < mind) {
                        mind = cum;
                    }
                    break;
                case action_kind::segment_alloc:
                case action_kind::segment_map:
                    seg_cum += e.size;
                    seg_max = std::max(seg_max, seg_cum);
                    break;
                case action_kind::segment_free:
                case action_kind::segment_unmap:
                    seg_cum -= e.size;
                    seg_max = std::max(seg_max, seg_cum);
                    break;
                case action_kind::other: {
                    const std::string_view text = trace.action(base + r);
                    if (other_actions[text]++ == 0) first_seen.push_back(text);
                    break;
                }
                default:
                    break;
            }
        }
    }
    if (has_time) d.has_time = true;
    if (has_time && trace.size() > 0) {
        d.trace_first_time_us = trace[0].time_us;
        d.trace_last_time_us = trace[trace.size() - 1].time_us;
    }
    for (auto name : first_seen) {
        action_kind k = parse_action(name);
        std::int64_t n = k == action_kind::other ? other_actions[name] : kind_count[static_cast<std::size_t>(k)];
        d.actions.emplace_back(std::string(name), n);
    }
    auto count = [&](action_kind k) { return kind_count[static_cast<std::size_t>(k)]; };
    const bool free_on_request = count(action_kind::free_completed) == 0 && count(action_kind::free_requested) > 0;
    const action_kind free_kind = free_on_request ? action_kind::free_requested : action_kind::free_completed;
    d.has_trace = count(action_kind::alloc) + count(action_kind::free_requested) + count(action_kind::free_completed) > 0;
    d.pending.free_requested = count(action_kind::free_requested);
    d.pending.free_completed = count(action_kind::free_completed);
    d.oom_count = count(action_kind::oom);

    if (!d.has_trace) {
        d.peak_bytes = d.active_bytes;
        d.peak_reserved_bytes = d.reserved_bytes;
        d.peak_categories.clear();
        for (const auto& c : d.categories) {
            category_total t = c;
            t.share = d.active_bytes > 0 ? double(c.bytes) / double(d.active_bytes) : 0;
            d.peak_categories.push_back(t);
        }
        d.peak_sites.assign(d.sites.begin(), d.sites.begin() + std::min<std::size_t>(d.sites.size(), opt.top));
    }

    if (free_kind != action_kind::free_completed) {  // the curve again with the requests as frees
        cum = maxd = mind = 0;
        max_index = -1;
        for (std::size_t i = 0; i < trace.size(); ++i) {
            cum += active_delta(trace[i], free_kind);  // the curve zigzag and the free runs sum again
            if (cum > maxd) {
                maxd = cum;
                max_index = static_cast<std::int64_t>(i);
            }
            mind = std::min(mind, cum);
        }
    }
    std::int64_t l0 = d.active_bytes - cum;
    if (l0 < 0) {
        d.inconsistencies.push_back(fmt::format(
            "the trace frees {} bytes more than the final state can explain", -l0));
        l0 = 0;
    }
    std::int64_t r0 = std::max<std::int64_t>(0, d.reserved_bytes - seg_cum);
    if (d.has_trace) {
        d.initial_active_bytes = l0;
        d.peak_bytes = l0 + maxd;
        d.peak_index = max_index;
        if (max_index >= 0) d.peak_time_us = trace[max_index].time_us;
        d.peak_reserved_bytes = std::max(r0 + seg_max, d.reserved_bytes);
    }
    x.range_bytes = maxd - mind;

    // Phases: legs between turning points (hysteresis 10% of the range, at least 1 MiB).
    std::int64_t h = std::max<std::int64_t>((maxd - mind) / 10, 1 << 20);
    std::vector<pivot> pv = d.has_trace ? zigzag(trace, free_kind, h) : std::vector<pivot>{};
    std::vector<std::int64_t> peaks;  // indices of turning points that start a release
    for (std::size_t k = 1; k < pv.size(); ++k) {
        phase p;
        p.start_index = pv[k - 1].index + 1;
        p.end_index = pv[k].index;
        p.start_bytes = l0 + pv[k - 1].value;
        p.end_bytes = l0 + pv[k].value;
        if (p.end_bytes == p.start_bytes) continue;
        p.kind = p.end_bytes > p.start_bytes ? "growth" : "release";
        if (p.start_index >= 0 && p.start_index < static_cast<std::int64_t>(trace.size()))
            p.start_time_us = trace[p.start_index].time_us;
        if (p.end_index >= 0) p.end_time_us = trace[p.end_index].time_us;
        if (p.kind == "release" && p.end_bytes - p.start_bytes <= -h) {
            if (!d.phases.empty() && d.phases.back().kind == "growth") ++d.cycles;
            peaks.push_back(pv[k - 1].index);
        }
        d.phases.push_back(std::move(p));
    }
    x.epochs_from_cycles = d.cycles >= 3;
    x.epochs = x.epochs_from_cycles ? static_cast<int>(peaks.size()) + 1 : 16;
    const std::int64_t n = static_cast<std::int64_t>(trace.size());
    auto epoch_of = [&](std::int64_t i, std::size_t& cursor) -> int {
        if (!x.epochs_from_cycles) return n > 0 ? static_cast<int>(i * 16 / n) : 0;
        while (cursor < peaks.size() && peaks[cursor] < i) ++cursor;
        return static_cast<int>(cursor);
    };
    auto growing_at = [&](std::int64_t i, std::size_t& cursor) -> bool {
        while (cursor + 1 < pv.size() && pv[cursor + 1].index < i) ++cursor;
        return cursor + 1 < pv.size() && pv[cursor + 1].value > pv[cursor].value;
    };

    // Timeline slices.
    const std::int64_t nslices = std::min<std::int64_t>(16, n);
    if (d.has_trace) {
        for (std::int64_t k = 0; k < nslices; ++k) {
            timeline_slice t;
            t.start_index = k * n / nslices;
            t.end_index = (k + 1) * n / nslices - 1;
            d.timeline.push_back(t);
        }
    }

    if (!d.has_trace && d.oom_count == 0) return;

    // Pass B: replay with the live map.
    live_map live;
    std::vector<std::int64_t> site_live, site_blocks, site_big;
    std::vector<int> site_cat;
    auto grow_sites = [&](int st) {
        if (static_cast<std::size_t>(st) >= site_live.size()) {
            std::size_t m = std::max<std::size_t>(st + 1, site_live.size() * 2);
            site_live.resize(m, 0);
            site_blocks.resize(m, 0);
            site_big.resize(m, 0);
            site_cat.resize(m, -1);
        }
    };
    std::vector<std::int64_t> cat_live(ncat, 0), cat_blocks(ncat, 0);
    std::vector<std::int64_t> peak_site_bytes, peak_site_blocks, peak_cat_bytes, peak_cat_blocks;
    std::vector<std::int64_t> pre_site_bytes, pre_site_blocks;  // preexisting, live at the peak
    std::vector<std::int64_t> pre_cat_bytes(ncat, 0), pre_cat_blocks(ncat, 0);
    std::int64_t pending_bytes = 0, reserved = r0;
    std::int64_t recorded_live = 0;
    std::size_t ep_cursor = 0, grow_cursor = 0;
    int last_opt_epoch = -1;
    // Bulk free runs (consecutive frees without allocations).
    std::int64_t fwd_live = 0;
    auto fwd_cat = [](int c) { return c == cat_activation || c == cat_attention || c == cat_loss || c == cat_moe; };
    std::int64_t run_frees = 0, run_bytes = 0, run_start = -1, run_last = -1, run_last_cum = 0;
    std::int64_t cum_i = 0;  // the cumulative delta after entry i (pass A's curve, summed again)
    int run_min_epoch = 1 << 30, run_max_epoch = -1;
    bool unwinding = false, run_unwinding = false;  // frees right after an OOM unwind the stack
    auto close_run = [&]() {
        // A run that frees (nearly) everything is a teardown (del model / end of program).
        bool teardown = run_last >= 0 && l0 + run_last_cum <= (l0 + maxd) / 20;
        if (run_frees > x.bulk_frees && !run_unwinding && !teardown) {
            x.bulk_frees = run_frees;
            x.bulk_bytes = run_bytes;
            x.bulk_epoch_span = run_max_epoch >= run_min_epoch ? run_max_epoch - run_min_epoch : 0;
            x.bulk_index = run_start;
        }
        run_frees = run_bytes = 0;
        run_start = -1;
        run_min_epoch = 1 << 30;
        run_max_epoch = -1;
    };
    auto add_pre = [&](int st, int c, std::int64_t size) {
        if (static_cast<std::size_t>(st) >= pre_site_bytes.size()) {
            pre_site_bytes.resize(st + 1, 0);
            pre_site_blocks.resize(st + 1, 0);
        }
        pre_site_bytes[st] += size;
        ++pre_site_blocks[st];
        pre_cat_bytes[c] += size;
        ++pre_cat_blocks[c];
        if (static_cast<std::size_t>(st) >= site_cat.size()) grow_sites(st);
        if (site_cat[st] < 0) site_cat[st] = c;
    };
    std::size_t slice = 0;
    // The slice of entry i: looked up again only past the current one's end.
    timeline_slice* ts = d.timeline.empty() ? nullptr : &d.timeline[0];
    std::int64_t slice_end = d.timeline.size() > 1 ? d.timeline[0].end_index : n;
    auto holders_now = [&](std::int64_t live_total) {
        std::int64_t pre = live_total - recorded_live;
        std::vector<site_total> out = top_sites_of(site_live, site_blocks, site_cat, attr, live_total, opt.top);
        if (pre > 0) {
            site_total t;
            t.site = "<allocated before the trace>";
            t.bytes = pre;
            t.share = live_total > 0 ? double(pre) / double(live_total) : 0;
            out.push_back(t);
            std::stable_sort(out.begin(), out.end(),
                             [](const site_total& a, const site_total& b) { return a.bytes > b.bytes; });
            if (out.size() > static_cast<std::size_t>(opt.top)) out.resize(opt.top);
        }
        return out;
    };

    const std::int64_t peak_i = d.peak_index;  // a local: the loop writes through d
    live_map::slot* req_slot = nullptr;  // the slot the last free request found, while the map is unchanged
    std::int64_t req_addr = 0;
    const std::size_t step = trace_list::first_chunk_size();
    for (std::int64_t base = 0; base < n; base += static_cast<std::int64_t>(step)) {
        const trace_entry* run = &trace[static_cast<std::size_t>(base)];
        const std::int64_t end = std::min(n, base + static_cast<std::int64_t>(step));
        for (std::int64_t i = base; i < end; ++i) {
            const trace_entry& e = run[i - base];
            if (i > slice_end) [[unlikely]] {
                if (ts) ts->live_end_bytes = l0 + cum_i;  // after the slice's last entry (i - 1)
                while (slice + 1 < d.timeline.size() && i > d.timeline[slice].end_index) ++slice;
                ts = d.timeline.empty() ? nullptr : &d.timeline[slice];
                slice_end = slice + 1 < d.timeline.size() ? d.timeline[slice].end_index : n;
            }
            cum_i += active_delta(e, free_kind);
            switch (e.kind) {
                case action_kind::alloc: {
                    if (run_frees) close_run();
                    unwinding = false;
                    const auto a = attr.all(e.frames);
                    const int c = a.category, st = a.site;
                    if (a.fsdp) x.fsdp_frames = true;
                    if (a.ddp) x.ddp_frames = true;
                    x.stack_flags |= attr.flags(e.frames);
                    grow_sites(st);
                    auto [it, fresh] = live.insert_raw(e.addr);
                    req_slot = nullptr;  // the map changes
                    if (!fresh && !it->second.preexisting) {  // a free we never saw
                        site_live[it->second.site] -= it->second.size;
                        --site_blocks[it->second.site];
                        cat_live[it->second.cat] -= it->second.size;
                        --cat_blocks[it->second.cat];
                        recorded_live -= it->second.size;
                        if (it->second.pending) pending_bytes -= it->second.size;
                    }
                    live_alloc& la = it->second;
                    la = live_alloc{e.size, i, -1, -1, st, static_cast<std::int16_t>(c), epoch_of(i, ep_cursor),
                                    false, false};
                    site_live[st] += e.size;
                    ++site_blocks[st];
                    if (e.size > site_big[st]) {
                        site_big[st] = e.size;
                        site_cat[st] = c;
                    }
                    cat_live[c] += e.size;
                    ++cat_blocks[c];
                    recorded_live += e.size;
                    if (c == cat_gradient) ++x.gradient_allocs;
                    if (fwd_cat(c)) {
                        fwd_live += e.size;
                        x.forward_live_max = std::max(x.forward_live_max, fwd_live);
                    }
                    if (growing_at(i, grow_cursor)) {
                        x.growth_alloc_by_cat[c] += e.size;
                        x.growth_alloc_total += e.size;
                    }
                    if (c == cat_optimizer_state) {
                        x.opt_alloc_bytes += e.size;
                        ++x.opt_allocs;
                        if (x.opt_first_index < 0) x.opt_first_index = i;
                        x.opt_last_index = i;
                        if (la.epoch != last_opt_epoch) {
                            if (last_opt_epoch < 0) x.opt_first_epoch_bytes = 0;
                            ++x.opt_epochs;
                            last_opt_epoch = la.epoch;
                        }
                        if (x.opt_epochs == 1) x.opt_first_epoch_bytes += e.size;
                    }
                    if (ts) {
                        ++ts->allocs;
                        ts->alloc_bytes += e.size;
                    }
                    break;
                }
                case action_kind::free_requested:
                case action_kind::free_completed: {
                    bool completes = e.kind == free_kind;
                    // A completion right after its request (no change to the map between) reuses its slot.
                    auto it = req_slot && e.addr == req_addr ? req_slot : live.find(e.addr);
                    if (e.kind == action_kind::free_requested) {
                        if (it == live.end()) {
                            live_alloc la;
                            la.size = e.size;
                            la.index = -1;
                            la.preexisting = true;
                            la.site = attr.site(e.frames);
                            la.cat = static_cast<std::int16_t>(attr.category(e.frames));
                            la.epoch = 0;
                            it = live.emplace(e.addr, la).first;
                            ++d.pending.unmatched_frees;
                        }
                        req_slot = it;
                        req_addr = e.addr;
                        if (!free_on_request && !it->second.pending) {
                            it->second.pending = true;
                            it->second.req_index = i;
                            it->second.req_time = e.time_us;
                            pending_bytes += it->second.size;
                            if (pending_bytes > d.pending.max_pending_bytes) {
                                d.pending.max_pending_bytes = pending_bytes;
                                d.pending.max_pending_index = i;
                            }
                            if (ts) ts->max_pending_bytes = std::max(ts->max_pending_bytes, pending_bytes);
                        }
                    }
                    if (!completes) break;
                    if (run_frees == 0) {
                        run_start = i;
                        run_unwinding = unwinding;
                    }
                    ++run_frees;
                    run_bytes += e.size;
                    run_last = i;
                    run_last_cum = cum_i;
                    if (ts) {
                        ++ts->frees;
                        ts->free_bytes += e.size;
                    }
                    if (it == live.end()) {
                        // Freed without a recorded alloc: it was live since before the trace.
                        ++d.pending.unmatched_frees;
                        if (i > peak_i) add_pre(attr.site(e.frames), attr.category(e.frames), e.size);
                        break;
                    }
                    const live_alloc& la = it->second;  // erased at the end (erase moves slots)
                    if (la.pending) {
                        pending_bytes -= la.size;
                        std::int64_t delay = i - la.req_index;
                        if (delay <= 1) ++d.pending.immediate;
                        else ++d.pending.deferred;
                        d.pending.max_delay_events = std::max(d.pending.max_delay_events, delay);
                        if (la.req_time >= 0 && e.time_us >= 0)
                            d.pending.max_delay_us = std::max(d.pending.max_delay_us, e.time_us - la.req_time);
                    } else if (free_on_request) {
                        ++d.pending.immediate;
                    }
                    if (la.preexisting) {
                        if (i > peak_i) add_pre(la.site, la.cat, la.size);
                        live.erase(it);
                        req_slot = nullptr;
                        break;
                    }
                    site_live[la.site] -= la.size;
                    --site_blocks[la.site];
                    cat_live[la.cat] -= la.size;
                    --cat_blocks[la.cat];
                    recorded_live -= la.size;
                    if (fwd_cat(la.cat)) fwd_live -= la.size;
                    run_min_epoch = std::min(run_min_epoch, la.epoch);
                    run_max_epoch = std::max(run_max_epoch, la.epoch);
                    live.erase(it);
                    req_slot = nullptr;
                    break;
                }
                case action_kind::segment_alloc:
                case action_kind::segment_map:
                    reserved += e.size;
                    break;
                case action_kind::segment_free:
                case action_kind::segment_unmap:
                    reserved -= e.size;
                    break;
                case action_kind::oom: {
                    unwinding = true;
                    if (static_cast<std::int64_t>(d.ooms.size()) >= opt.max_detailed_ooms) break;
                    oom_event o;
                    o.trace_index = i;
                    o.requested_bytes = e.size;
                    o.device_free_bytes = trace.device_free(static_cast<std::size_t>(i));
                    o.time_us = e.time_us;
                    o.live_bytes = l0 + cum_i;
                    o.reserved_bytes = std::max<std::int64_t>(reserved, 0);
                    int st = attr.site(e.frames);
                    o.site = e.frames ? attr.describe_site(st).site : std::string();
                    o.category = attr.rules().names()[attr.category(e.frames)];
                    o.holders = holders_now(o.live_bytes);
                    d.ooms.push_back(std::move(o));
                    break;
                }
                default:
                    break;
            }
            if (i == peak_i) {
                peak_site_bytes = site_live;
                peak_site_blocks = site_blocks;
                peak_cat_bytes = cat_live;
                peak_cat_blocks = cat_blocks;
            }
        }
    }
    if (ts && n > 0) ts->live_end_bytes = l0 + cum_i;
    if (run_frees) close_run();
    for (auto& t : d.timeline) {
        if (t.allocs > 1.5 * double(t.frees)) t.label = "growth";
        else if (t.frees > 1.5 * double(t.allocs)) t.label = "release";
        else t.label = "steady";
    }
    if (!d.has_trace) return;

    // What was live at the peak: recorded allocations + allocations made before the trace
    // (freed after the peak, or still live at the end).
    std::vector<std::int64_t> end_sites_pre_b, end_sites_pre_k;
    for (const segment* sg : segs) {
        for (const block& b : sg->blocks) {
            if (b.state != block_state::active_allocated && b.state != block_state::active_pending_free)
                continue;
            auto it = live.find(b.address);
            if (it != live.end() && !it->second.preexisting) continue;
            add_pre(attr.site(b.frames), attr.category(b.frames), b.size);
        }
    }
    peak_site_bytes.resize(std::max(peak_site_bytes.size(), pre_site_bytes.size()), 0);
    peak_site_blocks.resize(peak_site_bytes.size(), 0);
    for (std::size_t k = 0; k < pre_site_bytes.size(); ++k) {
        peak_site_bytes[k] += pre_site_bytes[k];
        peak_site_blocks[k] += pre_site_blocks[k];
    }
    peak_cat_bytes.resize(ncat, 0);
    peak_cat_blocks.resize(ncat, 0);
    for (std::size_t c = 0; c < ncat; ++c) {
        peak_cat_bytes[c] += pre_cat_bytes[c];
        peak_cat_blocks[c] += pre_cat_blocks[c];
    }
    d.peak_categories.clear();
    for (std::size_t c = 0; c < ncat; ++c) {
        category_total t;
        t.name = attr.rules().names()[c];
        t.bytes = peak_cat_bytes[c];
        t.blocks = peak_cat_blocks[c];
        t.share = d.peak_bytes > 0 ? double(t.bytes) / double(d.peak_bytes) : 0;
        d.peak_categories.push_back(t);
    }
    std::stable_sort(d.peak_categories.begin(), d.peak_categories.end(),
                     [](const category_total& a, const category_total& b) { return a.bytes > b.bytes; });
    if (site_cat.size() < peak_site_bytes.size()) site_cat.resize(peak_site_bytes.size(), -1);
    d.peak_sites = top_sites_of(peak_site_bytes, peak_site_blocks, site_cat, attr, d.peak_bytes, opt.top);

    // Live at the end of the trace, recorded in it: leak heuristic and accumulation per site.
    struct acc {
        int site, cat, epoch;
        std::int64_t size;
    };
    std::vector<acc> ends;
    std::vector<std::int64_t> end_cat(ncat, 0);
    live.for_each([&](std::int64_t, const live_alloc& la) {
        if (la.preexisting || la.pending) return;
        ends.push_back({la.site, la.cat, la.epoch, la.size});
        end_cat[la.cat] += la.size;
        d.end_live_recorded_bytes += la.size;
    });
    if (d.end_live_recorded_bytes > 0)
        d.end_other_unknown_share = double(end_cat[cat_other] + end_cat[cat_unknown]) /
                                    double(d.end_live_recorded_bytes);
    std::sort(ends.begin(), ends.end(), [](const acc& a, const acc& b) {
        return a.site != b.site ? a.site < b.site : a.epoch < b.epoch;
    });
    for (std::size_t i = 0; i < ends.size();) {
        std::size_t j = i;
        site_epochs se;
        se.site = ends[i].site;
        int last = -1;
        std::int64_t big = 0;
        for (; j < ends.size() && ends[j].site == ends[i].site; ++j) {
            se.bytes += ends[j].size;
            ++se.blocks;
            if (ends[j].epoch != last) {
                ++se.distinct_epochs;
                last = ends[j].epoch;
            }
            if (ends[j].size > big) {
                big = ends[j].size;
                se.category = ends[j].cat;
            }
        }
        if (se.distinct_epochs >= 3 && se.blocks >= 3) {
            se.site_name = attr.describe_site(se.site).site;
            x.accumulating.push_back(se);
        }
        i = j;
    }
    std::sort(x.accumulating.begin(), x.accumulating.end(),
              [](const site_epochs& a, const site_epochs& b) { return a.bytes > b.bytes; });
}

// ---- free blocks at each OOM (backward undo from the final state) --------------------------

namespace {

class free_space {
public:
    void add_segment(std::int64_t a, std::int64_t size) { m_segs[a] = a + size; }
    void remove_segment(std::int64_t a, std::int64_t size) {
        take(a, size);
        m_segs.erase(a);
    }
    // Marks [a, a+size) free, merging with free neighbours inside the same segment.
    void give(std::int64_t a, std::int64_t size) {
        if (size <= 0) return;
        take(a, size);  // never double-count
        std::int64_t b = a + size;
        auto seg = segment_of(a);
        auto next = m_free.lower_bound(a);
        if (next != m_free.end() && next->first == b && seg && segment_of(next->first) == seg) {
            b = next->second;
            m_total -= next->second - next->first;
            next = m_free.erase(next);
        }
        if (next != m_free.begin()) {
            auto prev = std::prev(next);
            if (prev->second == a && seg && segment_of(prev->first) == seg) {
                a = prev->first;
                m_total -= prev->second - prev->first;
                m_free.erase(prev);
            }
        }
        m_free[a] = b;
        m_total += b - a;
    }
    // Marks [a, a+size) not free.
    void take(std::int64_t a, std::int64_t size) {
        if (size <= 0) return;
        std::int64_t b = a + size;
        auto it = m_free.upper_bound(a);
        if (it != m_free.begin()) --it;
        while (it != m_free.end() && it->first < b) {
            std::int64_t s = it->first, e = it->second;
            if (e <= a) {
                ++it;
                continue;
            }
            m_total -= e - s;
            it = m_free.erase(it);
            if (s < a) {
                m_free[s] = a;
                m_total += a - s;
            }
            if (e > b) {
                m_free[b] = e;
                m_total += e - b;
            }
        }
    }
    std::int64_t largest() const {
        std::int64_t m = 0;
        for (const auto& [s, e] : m_free) m = std::max(m, e - s);
        return m;
    }
    std::int64_t total() const { return m_total; }

private:
    const std::int64_t* segment_of(std::int64_t a) const {
        auto it = m_segs.upper_bound(a);
        if (it == m_segs.begin()) return nullptr;
        --it;
        return a < it->second ? &it->first : nullptr;
    }
    std::map<std::int64_t, std::int64_t> m_segs, m_free;
    std::int64_t m_total = 0;
};

}  // namespace

void replay_free_blocks(const trace_list& trace,
                        const std::vector<const segment*>& segs, device_analysis& d) {
    if (d.ooms.empty()) return;
    for (const segment* sg : segs)
        if (sg->blocks.empty() && sg->total_size > 0) return;  // layout unknown
    free_space fs;
    for (const segment* sg : segs) fs.add_segment(sg->address, sg->total_size);
    for (const segment* sg : segs)
        for (const block& b : sg->blocks)
            if (b.state == block_state::inactive) fs.give(b.address, b.size);
    std::size_t k = d.ooms.size();
    for (std::int64_t i = static_cast<std::int64_t>(trace.size()) - 1; i >= 0 && k > 0; --i) {
        // Events after i are undone: this is the state right after event i.
        while (k > 0 && d.ooms[k - 1].trace_index >= i) {
            if (d.ooms[k - 1].trace_index == i) {
                d.ooms[k - 1].largest_inactive_block_bytes = fs.largest();
                d.ooms[k - 1].inactive_bytes = fs.total();
            }
            --k;
        }
        if (k == 0) break;
        const trace_entry& e = trace[i];
        switch (e.kind) {
            case action_kind::alloc: fs.give(e.addr, e.size); break;
            case action_kind::free_completed: fs.take(e.addr, e.size); break;
            case action_kind::segment_alloc: fs.remove_segment(e.addr, e.size); break;
            case action_kind::segment_free:
                fs.add_segment(e.addr, e.size);
                fs.give(e.addr, e.size);
                break;
            case action_kind::segment_map: fs.take(e.addr, e.size); break;
            case action_kind::segment_unmap: fs.give(e.addr, e.size); break;
            default: break;
        }
    }
}

}  // namespace oomdx::snap::detail
