#include "parsers/log/log_analyzer.h"

#include <zlib.h>

#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/limits.h"
#include "engine/core/mapped_file.h"
#include "engine/core/usable_cores.h"
#include "parsers/log/chunk_prefilter.h"
#include "parsers/log/gzip_blocks.h"
#include "parsers/log/line_splitter.h"
#include "parsers/log/log_scanner.h"

namespace oomdx {

namespace {

using log_detail::k_match_cap;
using log_detail::scanner;

struct sig_holder {
    std::unique_ptr<signature_set> owned;
    const signature_set* set = nullptr;
};

sig_holder signatures_for(const log_options& o) {
    sig_holder h;
    if (o.signatures_dir.empty() && o.extra_signature_dirs.empty()) {
        h.set = &signature_set::shipped();
        return h;
    }
    std::vector<std::string> dirs{o.signatures_dir.empty() ? data_path("knowledge/log_signatures")
                                                           : o.signatures_dir};
    dirs.insert(dirs.end(), o.extra_signature_dirs.begin(), o.extra_signature_dirs.end());
    h.owned = std::make_unique<signature_set>(signature_set::load(dirs));
    h.set = h.owned.get();
    return h;
}

// A log must be text. Refused: UTF-16 (byte-order mark and NULs), a NUL byte or more than 5% control
// bytes in the first 64 KiB. A trailing run of NULs (a crash leaves them in preallocated files)
// is not counted. `at_end`: the sample is the whole file.
void check_text(const std::string& path, const char* p, size_t n, bool at_end) {
    n = std::min<size_t>(n, 64 << 10);
    const bool bom = n >= 2 && ((p[0] == '\xff' && p[1] == '\xfe') || (p[0] == '\xfe' && p[1] == '\xff'));
    if (bom && std::memchr(p, '\0', std::min<size_t>(n, 64)) != nullptr)
        throw input_error::at_offset(path, 0, "UTF-16 text (byte-order mark), expected a UTF-8 log; "
                                              "convert it with iconv -f UTF-16 -t UTF-8");
    if (at_end)
        while (n > 0 && p[n - 1] == '\0') --n;
    size_t control = 0, first_nul = n;
    for (size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(p[i]);
        if (c == 0 && first_nul == n) first_nul = i;
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != 0x1b && c != '\b')
            ++control;
    }
    if (first_nul < n && (control * 20 > n || first_nul < n / 2 || n < 4096))
        throw input_error::at_offset(path, static_cast<std::int64_t>(first_nul),
                                     "binary data (NUL byte), expected a text log");
    if (control * 20 > n)
        throw input_error::at_offset(path, 0, "binary data (control bytes), expected a text log");
}

// The limit log_file_bytes (decompressed bytes for .gz).
void check_log_size(const std::string& path, std::int64_t bytes) {
    const std::int64_t limit = current_limits().log_file_bytes;
    if (bytes > limit)
        throw input_error::at_offset(path, limit, fmt::format("log larger than {} (limit log_file_bytes; raise it "
                                                              "with --limit log_file_bytes=SIZE)",
                                                              format_bytes(limit)));
}

bool has_gz_magic(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    unsigned char m[2] = {0, 0};
    size_t got = std::fread(m, 1, 2, f);
    std::fclose(f);
    return got == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

// Files over two chunks: workers prefilter line-aligned chunks and this thread runs the
// scanner over their hits in file order; what they leave is read here.
void scan_plain(scanner& sc, const signature_set& sigs, const std::string& path, const log_options& opts) {
    mapped_file mf(path);
    const char* p = reinterpret_cast<const char*>(mf.data());
    const size_t n = mf.size();
    check_log_size(path, static_cast<std::int64_t>(n));
    if (n == 0) throw input_error::in_file(path, "empty file, no log lines to analyze");
    if (opts.stats) opts.stats->bytes += static_cast<std::int64_t>(n);
    check_text(path, p, n, n <= (64 << 10));
    bool parallel = false;  // the workers give back the parallel part's pages themselves
    auto done = [&](size_t off) {
        if (!parallel && off == n) mf.release_before(off);  // keep RSS flat on big files
        else if (!parallel) mf.release_behind(off);
        if (opts.progress) opts.progress(path, static_cast<std::int64_t>(off), static_cast<std::int64_t>(n));
    };
    prefilter_totals t;
    // Workers by default only with a core for this thread and two for them: on two cores they take turns with the
    // serial part and the run costs more CPU for no less time (perf61, bench_log.sh: --jobs 1 0.12 s, default 0.12-0.17 s).
    const bool workers = opts.threads > 1 || (opts.threads == 0 && usable_cores() > 2);
    if (workers && n > 2 * opts.chunk_bytes) {
        prefilter_plan plan;
        plan.chunk_bytes = opts.chunk_bytes;
        plan.workers = opts.threads;
        auto on_hits = [&](const prefiltered_segment& s) {
            sc.on_candidates(s.text, s.line, s.cut, s.hits, s.hit_count, s.text.data(), s.rank, s.plain, s.repeat);
        };
        parallel = true;
        t = prefilter_parallel(mf, k_match_cap, sigs, plan, on_hits, done);
        parallel = false;
        sc.read_open_block(p, n);  // a printed model config's lines: the workers kept only its header
        sc.read_open_launch(p, n);  // a launch command's continuation lines, likewise
        sc.read_open_wraps(p, n);   // the lines after each failure line, likewise
        if (opts.stats) {
            opts.stats->worker_cpu_us += t.worker_cpu_us;
            opts.stats->workers = std::max(opts.stats->workers, t.workers);
        }
    }
    // The rest in place from the mapping, 1 MiB at a time (its pages mapped in one call, like the
    // workers do: a pread copy cost about a tenth of the single-threaded scan); a line across
    // two slices is copied by the splitter (no stable view), any other is a view of the mapping.
    line_splitter sp(k_match_cap, t.newlines + 1);
    const auto lo = reinterpret_cast<std::uintptr_t>(p);
    auto fn = [&](std::string_view seg, std::int64_t line, bool cut) {
        const auto at = reinterpret_cast<std::uintptr_t>(seg.data());
        sc.on_segment(seg, line, cut, at >= lo && at - lo < n ? seg.data() : nullptr);
    };
    for (size_t off = t.end; off < n;) {
        const size_t len = std::min(size_t{1} << 20, n - off);
        mf.populate(off, len);
        sp.feed(p + off, len, fn);
        off += len;
        done(off);
    }
    sp.finish([&](std::string_view seg, std::int64_t line, bool cut) { sc.on_segment(seg, line, cut); });
    sc.end_file(sp.lines(), static_cast<std::int64_t>(n), false, t.cut + sp.cut_segments());
}

// Inflated on a helper thread (gzip_blocks) while this thread scans.
void scan_gzip(scanner& sc, const std::string& path, const log_options& opts) {
    std::int64_t compressed_size = -1;
    if (opts.progress) {
        if (FILE* f = std::fopen(path.c_str(), "rb")) {
            if (std::fseek(f, 0, SEEK_END) == 0) compressed_size = std::ftell(f);
            std::fclose(f);
        }
    }
    gzip_blocks gz(path);
    line_splitter sp(k_match_cap);
    auto fn = [&](std::string_view seg, std::int64_t line, bool cut) { sc.on_segment(seg, line, cut); };
    std::int64_t total = 0;
    bool first = true;
    for (std::string_view block; !(block = gz.next()).empty();) {
        if (first) check_text(path, block.data(), block.size(), block.size() < (size_t{1} << 20));
        first = false;
        sp.feed(block.data(), block.size(), fn);
        total += static_cast<std::int64_t>(block.size());
        check_log_size(path, total);
        if (opts.progress && (total & ((std::int64_t{1} << 26) - 1)) < static_cast<std::int64_t>(block.size()))
            opts.progress(path, gz.compressed_offset(), compressed_size);
    }
    sp.finish(fn);
    sc.end_file(sp.lines(), total, true, sp.cut_segments());
    if (opts.stats) opts.stats->bytes += total;
    if (total == 0) throw input_error::in_file(path, "empty file (after decompression), no log lines to analyze");
}

}  // namespace

log_analysis analyze_logs(const std::vector<std::string>& paths, const log_options& opts) {
    auto sigs = signatures_for(opts);
    scanner sc(*sigs.set);
    sc.set_device_capacity(opts.device_capacity_bytes);
    for (const auto& path : paths) {
        sc.begin_file(path);
        if (has_gz_magic(path)) scan_gzip(sc, path, opts);
        else scan_plain(sc, *sigs.set, path, opts);
    }
    log_analysis a = sc.finish();
    return a;
}

log_analysis analyze_log_text(std::string_view text, const std::string& name, const log_options& opts) {
    auto sigs = signatures_for(opts);
    scanner sc(*sigs.set);
    sc.set_device_capacity(opts.device_capacity_bytes);
    sc.begin_file(name);
    line_splitter sp(k_match_cap);
    auto fn = [&](std::string_view seg, std::int64_t line, bool cut) { sc.on_segment(seg, line, cut); };
    sp.feed(text.data(), text.size(), fn);
    sp.finish(fn);
    sc.end_file(sp.lines(), static_cast<std::int64_t>(text.size()), false, sp.cut_segments());
    return sc.finish();
}

}  // namespace oomdx
