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

bool looks_binary(const char* p, size_t n) {
    n = std::min<size_t>(n, 4096);
    return n > 0 && std::memchr(p, '\0', n) != nullptr;
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

void scan_plain(scanner& sc, const std::string& path, std::vector<std::string>& warnings,
                const log_options& opts) {
    mapped_file mf(path);
    line_splitter sp(k_match_cap);
    auto fn = [&](std::string_view seg, std::int64_t line, bool cut) { sc.on_segment(seg, line, cut); };
    const char* p = reinterpret_cast<const char*>(mf.data());
    const size_t n = mf.size();
    check_log_size(path, static_cast<std::int64_t>(n));
    if (looks_binary(p, n)) warnings.push_back(path + ": looks like a binary file (NUL bytes); scanned as text");
    constexpr size_t chunk = size_t{16} << 20;
    for (size_t off = 0; off < n; off += chunk) {
        sp.feed(p + off, std::min(chunk, n - off), fn);
        mf.release_before(off);  // keep RSS flat on big files
        if (opts.progress)
            opts.progress(path, static_cast<std::int64_t>(std::min(n, off + chunk)), static_cast<std::int64_t>(n));
    }
    sp.finish(fn);
    sc.end_file(sp.lines(), static_cast<std::int64_t>(n), false, sp.cut_segments());
    if (n == 0) warnings.push_back(path + ": empty file");
}

void scan_gzip(scanner& sc, const std::string& path, std::vector<std::string>& warnings,
               const log_options& opts) {
    std::int64_t compressed_size = -1;
    if (opts.progress) {
        if (FILE* f = std::fopen(path.c_str(), "rb")) {
            if (std::fseek(f, 0, SEEK_END) == 0) compressed_size = std::ftell(f);
            std::fclose(f);
        }
    }
    gzFile gz = gzopen(path.c_str(), "rb");
    if (!gz) throw input_error::in_file(path, "cannot open gzip file");
    std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(gz, gzclose);
    gzbuffer(gz, 1 << 18);
    line_splitter sp(k_match_cap);
    auto fn = [&](std::string_view seg, std::int64_t line, bool cut) { sc.on_segment(seg, line, cut); };
    std::vector<char> buf(size_t{1} << 20);
    std::int64_t total = 0;
    bool first = true;
    for (;;) {
        int got = gzread(gz, buf.data(), static_cast<unsigned>(buf.size()));
        if (got < 0) {
            int err = 0;
            const char* msg = gzerror(gz, &err);
            throw input_error::at_offset(path, total,
                                         std::string("corrupt gzip data: ") + (msg ? msg : "read error"));
        }
        if (got == 0) {
            int err = 0;
            const char* msg = gzerror(gz, &err);
            if (err != Z_OK && err != Z_STREAM_END)
                throw input_error::at_offset(path, total,
                                             std::string("truncated or corrupt gzip: ") + (msg ? msg : ""));
            break;
        }
        if (first && looks_binary(buf.data(), static_cast<size_t>(got)))
            warnings.push_back(path + ": looks like a binary file (NUL bytes); scanned as text");
        first = false;
        sp.feed(buf.data(), static_cast<size_t>(got), fn);
        total += got;
        check_log_size(path, total);
        if (opts.progress && (total & ((std::int64_t{1} << 26) - 1)) < got)
            opts.progress(path, static_cast<std::int64_t>(gzoffset(gz)), compressed_size);
    }
    sp.finish(fn);
    sc.end_file(sp.lines(), total, true, sp.cut_segments());
    if (total == 0) warnings.push_back(path + ": empty file");
}

}  // namespace

log_analysis analyze_logs(const std::vector<std::string>& paths, const log_options& opts) {
    auto sigs = signatures_for(opts);
    scanner sc(*sigs.set);
    std::vector<std::string> warnings;
    for (const auto& path : paths) {
        sc.begin_file(path);
        if (has_gz_magic(path)) scan_gzip(sc, path, warnings, opts);
        else scan_plain(sc, path, warnings, opts);
    }
    log_analysis a = sc.finish();
    a.warnings.insert(a.warnings.begin(), warnings.begin(), warnings.end());
    return a;
}

log_analysis analyze_log_text(std::string_view text, const std::string& name, const log_options& opts) {
    auto sigs = signatures_for(opts);
    scanner sc(*sigs.set);
    sc.begin_file(name);
    line_splitter sp(k_match_cap);
    auto fn = [&](std::string_view seg, std::int64_t line, bool cut) { sc.on_segment(seg, line, cut); };
    sp.feed(text.data(), text.size(), fn);
    sp.finish(fn);
    sc.end_file(sp.lines(), static_cast<std::int64_t>(text.size()), false, sp.cut_segments());
    return sc.finish();
}

}  // namespace oomdx
