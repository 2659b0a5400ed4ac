// chunked_list / trace_list: the first chunk moved to a block faulted in whole keeps its entries; append matches push_back.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "parsers/snapshot/chunked_list.h"
#include "parsers/snapshot/snapshot_model.h"

using oomdx::snap::chunked_list;
using oomdx::snap::trace_event;
using oomdx::snap::trace_list;

namespace {
trace_event entry(std::size_t i) {
    trace_event e;
    e.addr = static_cast<std::int64_t>(i) * 512;
    e.size = static_cast<std::int64_t>(i % 1000) + 1;
    e.time_us = static_cast<std::int64_t>(i);
    e.kind = oomdx::snap::action_kind::alloc;
    return e;
}
}  // namespace

TEST_CASE("trace_list: the first chunk moved whole keeps every entry, before and after") {
    constexpr std::size_t chunk = trace_list::first_chunk_size();
    trace_list l;
    l.first_chunk_whole();  // no chunk yet: nothing to move
    for (std::size_t i = 0; i < 3000; ++i) l.push_back(entry(i));
    l.first_chunk_whole();
    l.first_chunk_whole();  // a second call changes nothing
    for (std::size_t i = 3000; i < chunk + 5000; ++i) l.push_back(entry(i));
    l.first_chunk_whole();  // two chunks: nothing moves
    REQUIRE(l.size() == chunk + 5000);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < l.size(); ++i) {
        const trace_event want = entry(i);
        if (l[i].addr != want.addr || l[i].size != want.size || l[i].time_us != want.time_us ||
            l[i].kind != want.kind)
            ++bad;
    }
    CHECK(bad == 0);
    trace_list copy = l;  // copies read the moved chunk like any other
    CHECK(copy.size() == l.size());
    CHECK(copy[chunk - 1].addr == l[chunk - 1].addr);
}

TEST_CASE("chunked_list: a full first chunk moved whole, then grown") {
    chunked_list<std::uint64_t> c;
    constexpr std::size_t n = chunked_list<std::uint64_t>::chunk_size();
    for (std::size_t i = 0; i < n; ++i) c.push_back(i * 3);
    c.first_chunk_whole();
    c.push_back(7);
    REQUIRE(c.size() == n + 1);
    CHECK(c[0] == 0);
    CHECK(c[n - 1] == (n - 1) * 3);
    CHECK(c[n] == 7);
}

TEST_CASE("trace_list: append gives what push_back of each entry gives, extras and chunk ends included") {
    constexpr std::size_t chunk = trace_list::first_chunk_size();
    std::vector<trace_event> es;
    for (std::size_t i = 0; i < chunk + 3000; ++i) {
        trace_event e = entry(i);
        if (i % 997 == 5) e.stream = static_cast<std::int64_t>(i % 3);  // stream runs
        if (i % 1301 == 7) e.device_free = static_cast<std::int64_t>(i);
        if (i % 1703 == 9) {
            e.kind = oomdx::snap::action_kind::other;
            e.action = "snapshot";
        }
        es.push_back(e);
    }
    es[chunk - 1].device_free = 42;  // an entry with extras as a chunk's last
    es[chunk].stream = 9;            // and as the next chunk's first
    trace_list one, bulk, odd;
    for (const trace_event& e : es) one.push_back(e);
    bulk.append(es.data(), 1000);  // batches of Python's size, and one across the chunk end
    for (std::size_t i = 1000; i < es.size(); i += 1000) bulk.append(es.data() + i, std::min<std::size_t>(1000, es.size() - i));
    for (std::size_t i = 0; i < es.size(); i += 7) odd.append(es.data() + i, std::min<std::size_t>(7, es.size() - i));
    for (const trace_list* l : {&bulk, &odd}) {
        REQUIRE(l->size() == one.size());
        std::size_t bad = 0;
        for (std::size_t i = 0; i < one.size(); ++i) {
            const trace_event a = one.event(i), b = l->event(i);
            if (a.addr != b.addr || a.size != b.size || a.time_us != b.time_us || a.kind != b.kind ||
                a.stream != b.stream || a.device_free != b.device_free || a.action != b.action)
                ++bad;
        }
        CHECK(bad == 0);
    }
}

// (snap33) The list sums what the size checks and the replay's first pass read as entries are
// added, on every path (push_back, append, an entry with extras): the sums of one pass over them.
TEST_CASE("trace_list: the sums kept as entries are added are those of one pass over them") {
    using oomdx::snap::action_kind;
    constexpr std::size_t chunk = trace_list::first_chunk_size();
    const action_kind kinds[] = {action_kind::alloc,         action_kind::free_requested, action_kind::free_completed,
                                 action_kind::segment_alloc, action_kind::segment_free,   action_kind::segment_map,
                                 action_kind::segment_unmap, action_kind::oom,            action_kind::workspace_snapshot};
    std::vector<trace_event> es;
    for (std::size_t i = 0; i < chunk + 2500; ++i) {
        trace_event e = entry(i);
        e.kind = kinds[(i * 7 + i / 13) % 9];
        e.size = static_cast<std::int64_t>((i * 37) % 5000);
        if (i % 11 == 0) e.time_us = -1;
        if (i % 2000 == 3) e.stream = static_cast<std::int64_t>(i % 5);  // extras
        if (e.kind == action_kind::oom) e.device_free = 5;
        es.push_back(e);
    }
    oomdx::snap::trace_sums want;
    for (std::size_t i = 0; i < es.size(); ++i) {
        const trace_event& e = es[i];
        if (want.kinds[static_cast<std::size_t>(e.kind)]++ == 0) want.order[want.seen++] = e.kind;
        want.time |= e.time_us >= 0;
        want.max_size = std::max(want.max_size, static_cast<std::uint64_t>(e.size));
        if (e.kind == action_kind::alloc || e.kind == action_kind::free_completed) {
            want.cum += e.kind == action_kind::alloc ? e.size : -e.size;
            if (want.cum > want.max_cum) {
                want.max_cum = want.cum;
                want.max_index = static_cast<std::int64_t>(i);
            }
            want.min_cum = std::min(want.min_cum, want.cum);
        }
        if (e.kind == action_kind::alloc || e.kind == action_kind::segment_alloc || e.kind == action_kind::segment_map)
            want.total += static_cast<std::uint64_t>(e.size);
        if (e.kind == action_kind::segment_alloc || e.kind == action_kind::segment_map) want.seg_cum += e.size;
        if (e.kind == action_kind::segment_free || e.kind == action_kind::segment_unmap) want.seg_cum -= e.size;
        want.seg_max = std::max(want.seg_max, want.seg_cum);
    }
    trace_list one, bulk;
    for (const trace_event& e : es) one.push_back(e);
    for (std::size_t i = 0; i < es.size(); i += 1000) bulk.append(es.data() + i, std::min<std::size_t>(1000, es.size() - i));
    auto all = [](const oomdx::snap::trace_sums& s) {
        return std::tie(s.kinds, s.order, s.seen, s.time, s.total_wrapped, s.max_size, s.total, s.cum, s.max_cum,
                        s.min_cum, s.max_index, s.seg_cum, s.seg_max);
    };
    CHECK(all(one.sums()) == all(want));
    CHECK(all(bulk.sums()) == all(want));
    CHECK(want.seen == 9);  // every kind of the list, in the order first seen
    CHECK(want.max_cum > 0);  // the trace moves both curves
    CHECK(want.min_cum < 0);
    CHECK(want.seg_max > 0);
}
