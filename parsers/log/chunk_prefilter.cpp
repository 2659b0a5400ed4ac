#include "parsers/log/chunk_prefilter.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "engine/core/thread_priority.h"
#include "engine/core/thread_cpu.h"
#include "engine/core/usable_cores.h"
#include "parsers/log/candidate_cache.h"
#include "parsers/log/line_splitter.h"
#include "parsers/log/rank_prefix.h"

namespace oomdx {

namespace {

struct segment_hits {  // 32 bytes: chunks stay under 4 GiB
    std::uint32_t offset = 0;  // from the chunk start
    std::uint32_t length = 0;
    std::uint32_t line = 0;  // from the chunk start, 1-based
    std::int32_t rank = -1;
    std::uint64_t hit_begin = 0;
    std::uint32_t hit_count = 0;
    bool cut = false;
    bool plain = false;  // no escape byte (looked for only where the caller strips colour codes)
    bool repeat = false;  // an NCCL peer line, the same bytes as the previous one (NCCL repeats lines)
};

struct chunk_result {
    std::vector<segment_hits> segments;
    std::vector<int> hits;
    std::int64_t newlines = 0, cut = 0;
    std::exception_ptr error;
    bool ready = false;
};

// Per signature, what a worker needs to know of its hits (a byte each, read per hit line).
enum hit_flag : std::uint8_t {
    // the caller reads the line without its colour codes: a hit that is not a progress or
    // memory line, or a framework marker with a pattern (progress lines are kept raw)
    needs_plain = 1,
    nccl_peer = 2,  // an NCCL peer line (the caller caches its fields)
    // the caller reads the line's rank (progress, memory, failures); other lines leave it -2
    // (not read: the caller's rank_of reads it if it ever asks)
    needs_rank = 4,
};

std::vector<std::uint8_t> hit_flags(const signature_set& sigs) {
    std::vector<std::uint8_t> f(sigs.size(), 0);
    for (size_t i = 0; i < sigs.size(); ++i) {
        const signature& s = sigs.all()[i];
        const bool ranked = s.kind == sig_kind::progress || s.kind == sig_kind::memory || s.kind == sig_kind::oom ||
                            s.kind == sig_kind::not_oom || s.kind == sig_kind::crash;
        f[i] = static_cast<std::uint8_t>((reads_raw_line(s) ? 0 : needs_plain) | (s.kind == sig_kind::nccl_peer ? nccl_peer : 0) |
                                         (ranked ? needs_rank : 0));
    }
    return f;
}

std::uint8_t flags_of(const std::vector<std::uint8_t>& flags, const int* hits, size_t n) {
    std::uint8_t f = 0;
    for (size_t i = 0; i < n; ++i) f |= flags[static_cast<size_t>(hits[i])];
    return f;
}

// The chunk is read in place from the mapping, its pages mapped in one call: a pread copy
// cost a quarter of a worker's time.
void prefilter_chunk(const mapped_file& mf, size_t offset, size_t len, size_t cap, const signature_set& sigs,
                     candidate_cache& cache, const std::vector<std::uint8_t>& flags, chunk_result& r) {
    mf.populate(offset, len);
    const char* begin = mf.view().data() + offset;
    r.segments.clear();
    r.hits.clear();
    std::vector<char> mark(sigs.size(), 0);
    line_splitter sp(cap);
    std::string_view prev_peer;  // the previous NCCL peer line
    sp.feed(begin, len, [&](std::string_view seg, std::int64_t line, bool cut) {
        const size_t first = r.hits.size();
        cache.candidates(seg, r.hits, mark);
        if (r.hits.size() == first) return;
        const std::uint8_t f = flags_of(flags, r.hits.data() + first, r.hits.size() - first);
        // compared here, where both lines are likely still in this core's cache
        bool repeat = false;
        if (f & nccl_peer) {
            repeat = prev_peer.data() != nullptr && prev_peer.size() == seg.size() &&
                     std::memcmp(prev_peer.data(), seg.data(), seg.size()) == 0;
            prev_peer = seg;
        }
        r.segments.push_back({static_cast<std::uint32_t>(seg.data() - begin), static_cast<std::uint32_t>(seg.size()),
                              static_cast<std::uint32_t>(line), (f & needs_rank) ? static_cast<std::int32_t>(rank_prefix(seg)) : -2, first,
                              static_cast<std::uint32_t>(r.hits.size() - first), cut,
                              (f & needs_plain) && std::memchr(seg.data(), '\x1b', seg.size()) == nullptr,
                              repeat});
    });
    r.newlines = sp.lines();
    r.cut = sp.cut_segments();
}

}  // namespace

prefilter_totals prefilter_parallel(const mapped_file& mf, size_t cap, const signature_set& sigs,
                                    const prefilter_plan& plan, const prefilter_fn& fn,
                                    const std::function<void(size_t)>& done) {
    prefilter_totals t;
    const char* data = mf.view().data();
    const size_t size = mf.size();
    const size_t chunk = std::clamp<size_t>(plan.chunk_bytes, 64, size_t{256} << 20);  // 5 chunks < 4 GiB
    unsigned workers = plan.workers ? plan.workers : std::max(2u, usable_cores() - 1);  // a core left for the serial part
    const size_t window = 2 * static_cast<size_t>(workers) + 1;  // chunks in flight: bounds memory

    struct slot {
        size_t begin = 0, end = 0;
        chunk_result r;
    };
    std::vector<slot> slots(window);
    const std::vector<std::uint8_t> flags = hit_flags(sigs);
    std::mutex mu;
    std::condition_variable cv_work, cv_ready;
    size_t scheduled = 0, taken = 0, consumed = 0;
    size_t consumed_end = 0;  // bytes the caller is done with
    size_t frontier = 0;  // end of the last scheduled chunk
    bool no_more = false, abort = false;

    // The next '\n' at or after `from`, before `limit`; read with pread (touching the mapping
    // would fault in a page per chunk on this thread). `size` when there is none.
    std::vector<char> probe(16 << 10);
    auto next_newline = [&](size_t from, size_t limit) {
        for (size_t at = from; at < limit; at += probe.size()) {
            const size_t len = std::min(probe.size(), limit - at);
            mf.read_at(at, probe.data(), len);
            if (const void* nl = std::memchr(probe.data(), '\n', len))
                return at + static_cast<size_t>(static_cast<const char*>(nl) - probe.data());
        }
        return size;
    };
    // Under the lock: the next chunks end just after the first '\n' past `chunk` bytes. A
    // line over four chunks long, or the bytes after the last '\n', end the parallel part
    // (the caller reads on sequentially).
    auto schedule = [&] {
        while (!no_more && scheduled < consumed + window) {
            const size_t from = frontier + chunk - 1;
            const size_t nl = from < size ? next_newline(from, std::min(size, from + 4 * chunk)) : size;
            if (nl >= size) {
                no_more = true;
                break;
            }
            slot& s = slots[scheduled % window];
            s.begin = frontier;
            s.end = frontier = nl + 1;
            ++scheduled;
        }
    };
    std::atomic<std::int64_t> worker_cpu_us{0};
    auto work = [&] {
        lower_this_thread_priority();
        struct account {  // this thread's CPU time, added up when it ends
            std::atomic<std::int64_t>& sum;
            ~account() { sum += thread_cpu_us(); }
        } acc{worker_cpu_us};
        candidate_cache cache(sigs);  // this thread's memo of repeated line shapes
        for (;;) {
            size_t k = 0;
            {
                std::unique_lock<std::mutex> lock(mu);
                cv_work.wait(lock, [&] { return abort || taken < scheduled || no_more; });
                if (abort || taken >= scheduled) {
                    if (abort || no_more) return;
                    continue;
                }
                k = taken++;
            }
            slot& s = slots[k % window];
            try {
                prefilter_chunk(mf, s.begin, s.end - s.begin, cap, sigs, cache, flags, s.r);
            } catch (...) {
                s.r.error = std::current_exception();
            }
            size_t behind = 0;  // what the caller has consumed
            {
                std::lock_guard<std::mutex> lock(mu);
                s.r.ready = true;
                behind = consumed_end;
            }
            cv_ready.notify_all();
            // Give back the pages behind the caller (keeps RSS flat); here, so the page-table
            // work stays off the caller's thread.
            mf.release_behind(behind);
        }
    };
    std::vector<std::thread> pool;
    auto stop = [&] {
        {
            std::lock_guard<std::mutex> lock(mu);
            abort = true;
        }
        cv_work.notify_all();
        for (auto& th : pool)
            if (th.joinable()) th.join();
    };
    try {
        {
            std::lock_guard<std::mutex> lock(mu);
            schedule();
        }
        for (unsigned i = 0; i < workers; ++i) {
            try {
                pool.emplace_back(work);
            } catch (const std::system_error&) {
                break;  // no more threads: the started ones do the work
            }
        }
        if (pool.empty()) return prefilter_totals{};  // none: the caller reads it all
        std::int64_t base = 0;
        for (size_t k = 0;; ++k) {
            slot* s = nullptr;
            {
                std::unique_lock<std::mutex> lock(mu);
                if (k >= scheduled) break;  // schedule() ran after every consumed chunk
                s = &slots[k % window];
                cv_ready.wait(lock, [&] { return s->r.ready; });
            }
            chunk_result& r = s->r;
            if (r.error) std::rethrow_exception(r.error);
            const char* mapped = data + s->begin;
            for (const auto& seg : r.segments)
                fn({std::string_view(mapped + seg.offset, seg.length), base + seg.line, seg.cut, seg.rank,
                    r.hits.data() + seg.hit_begin, seg.hit_count, seg.plain, seg.repeat});
            base += r.newlines;
            t.cut += r.cut;
            t.end = s->end;
            {
                std::lock_guard<std::mutex> lock(mu);
                r.ready = false;
                consumed = k + 1;
                consumed_end = s->end;
                schedule();
            }
            cv_work.notify_all();
            if (done) done(t.end);
        }
        t.newlines = base;
    } catch (...) {
        stop();
        throw;
    }
    stop();
    t.worker_cpu_us = worker_cpu_us.load();
    t.workers = static_cast<unsigned>(pool.size());
    return t;
}

}  // namespace oomdx
