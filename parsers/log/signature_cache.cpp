#include "parsers/log/signature_cache.h"

#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "engine/core/atomic_file.h"
#include "engine/core/binary_io.h"
#include "engine/core/cache_key.h"
#include "engine/core/yaml_cache.h"

namespace oomdx {
namespace {

namespace fs = std::filesystem;
using bin::put32;
using bin::put64;
using bin::put_text;
using bin::put_int;
using bin::put_texts;

constexpr char k_magic[8] = {'o', 'o', 'm', 'd', 'x', 'l', 's', '5'};  // 3: at_failure (logs53), needs_report (rev27); 4: elision, max_line (logs59); 5: field billions
constexpr std::size_t k_max_entries = 8;

void put_regex(std::string& out, const sig_regex* re) {
    put32(out, re ? 1 : 0);
    if (!re) return;
    put_text(out, re->pattern());
    put_text(out, re->where());
    put_int(out, re->min_groups());
}

void put_signature(std::string& out, const signature& s) {
    put_text(out, s.id);
    put_text(out, s.file);
    put_int(out, s.line);
    put32(out, static_cast<std::uint32_t>(s.kind));
    put_texts(out, s.literals);
    put_regex(out, s.regex.get());
    put_regex(out, s.unless.get());
    put_text(out, s.source);
    put_text(out, s.device_kind);
    put_text(out, s.framework);
    put_text(out, s.phase);
    put_text(out, s.statistic);
    put_texts(out, s.applies_to);
    for (bool b : {s.weak, s.fallback, s.per_step, s.at_start, s.multiples, s.by_total, s.unit_advance,
                   s.eval_counter, s.run_start, s.at_failure, s.exclusive, s.prefix_rank, s.elision})
        put32(out, b ? 1 : 0);
    put_int(out, s.max_line);
    put_int(out, s.priority);
    put_int(out, s.weight);
    put_int(out, s.window);
    put_text(out, s.fact);
    put_text(out, s.needs_report);
    put32(out, static_cast<std::uint32_t>(s.values.size()));
    for (const auto& [k, v] : s.values) {
        put_text(out, k);
        put_text(out, v);
    }
    put32(out, static_cast<std::uint32_t>(s.fields.size()));
    for (const auto& f : s.fields) {
        put_text(out, f.name);
        put32(out, static_cast<std::uint32_t>(f.patterns.size()));
        for (const auto& p : f.patterns) put_regex(out, p.get());
        std::uint64_t bits;
        std::memcpy(&bits, &f.unit, 8);
        put64(out, bits);
        put32(out, f.billions ? 1 : 0);
    }
}

// ---- reading: every read checks its bounds; any failure makes the whole copy unusable ----

class reader : public bin::reader {
public:
    using bin::reader::reader;
    bool regex(std::unique_ptr<sig_regex>& out) {
        bool present = false;
        if (!flag(present)) return false;
        if (!present) return true;
        std::string pattern, where;
        int min_groups = 0;
        if (!text(pattern) || !text(where) || !small(min_groups)) return false;
        out = std::make_unique<sig_regex>(std::move(pattern), std::move(where), min_groups);
        return true;
    }
    bool signature(oomdx::signature& s) {
        std::uint32_t kind = 0;
        if (!text(s.id) || !text(s.file) || !small(s.line) || !u32(kind) ||
            kind > static_cast<std::uint32_t>(sig_kind::model_config) || !texts(s.literals) || s.literals.empty() ||
            !regex(s.regex) || !regex(s.unless) || !text(s.source) || !text(s.device_kind) || !text(s.framework) ||
            !text(s.phase) || !text(s.statistic) || !texts(s.applies_to))
            return false;
        s.kind = static_cast<sig_kind>(kind);
        for (bool* b : {&s.weak, &s.fallback, &s.per_step, &s.at_start, &s.multiples, &s.by_total, &s.unit_advance,
                        &s.eval_counter, &s.run_start, &s.at_failure, &s.exclusive, &s.prefix_rank, &s.elision})
            if (!flag(*b)) return false;
        if (!small(s.max_line) || s.max_line < 0) return false;
        for (const auto& l : s.literals)  // the multi-literal search reads a literal's first 4 bytes
            if (l.empty() || (l.size() < 4 && !s.max_line)) return false;
        std::uint32_t n = 0;
        if (!small(s.priority) || !small(s.weight) || !small(s.window) || !text(s.fact) || !text(s.needs_report) ||
            !count(n))
            return false;
        s.values.resize(n);
        for (auto& [k, v] : s.values)
            if (!text(k) || !text(v)) return false;
        if (!count(n)) return false;
        s.fields.resize(n);
        for (auto& f : s.fields) {
            std::uint32_t m = 0;
            if (!text(f.name) || !count(m)) return false;
            f.patterns.resize(m);
            for (auto& p : f.patterns)
                if (!regex(p) || !p) return false;
            std::uint64_t bits = 0;
            std::uint32_t billions = 0;
            if (!u64(bits) || !u32(billions) || billions > 1) return false;
            std::memcpy(&f.unit, &bits, 8);
            f.billions = billions == 1;
        }
        return true;
    }
};

signature_set load_lazy(const std::vector<std::string>& dirs) {
    return signature_set::load(dirs, signature_set::patterns::lazy);
}

}  // namespace

std::string encode_signatures(const signature_set& set, std::string_view key) {
    std::string p;
    put32(p, static_cast<std::uint32_t>(set.size()));
    for (const auto& s : set.all()) put_signature(p, s);
    return bin::seal(k_magic, key, p, cache_hash);
}

std::optional<signature_set> decode_signatures(std::string_view stored, std::string_view key) {
    const auto payload = bin::unseal(stored, k_magic, key, cache_hash);
    if (!payload) return std::nullopt;
    reader r(*payload);
    std::uint32_t n = 0;
    if (!r.count(n)) return std::nullopt;
    signature_set set;
    for (std::uint32_t i = 0; i < n; ++i) {
        signature s;
        if (!r.signature(s)) return std::nullopt;
        set.add(std::move(s));
    }
    if (!r.at_end()) return std::nullopt;
    set.finish();
    return set;
}

std::string signature_cache_key(const std::vector<std::string>& dirs) {
    if (build_identity().empty()) return {};
    std::string key = fmt::format("oomdx log signatures 4\n{}\n", build_identity());
    for (const auto& dir : dirs) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) return {};
        const std::vector<std::string> files = signature_files(dir, ec);
        if (ec) return {};
        key += fmt::format("dir {}\n", dir);
        for (const auto& f : files) {
            const auto bytes = bin::read_bytes(f);
            if (!bytes) return {};
            key += fmt::format("{}\n{}\n{:016x}\n", f, bytes->size(), cache_hash(*bytes));
        }
    }
    return key;
}

std::string signature_cache_entry(const std::vector<std::string>& dirs, const std::string& cache_dir) {
    std::string names;
    for (const auto& dir : dirs) {
        std::error_code ec;
        names += fs::absolute(dir, ec).lexically_normal().string() + "\n";
    }
    return fmt::format("{}/logsig-{:016x}.bin", cache_dir, text_hash(names));
}

signature_set load_signatures_cached(const std::vector<std::string>& dirs, const std::string& cache_dir) {
    if (cache_dir.empty()) return load_lazy(dirs);
    const std::string key = signature_cache_key(dirs);
    if (key.empty()) return load_lazy(dirs);  // which reports what cannot be read
    const std::string entry = signature_cache_entry(dirs, cache_dir);
    if (auto stored = decode_signatures(bin::read_all(entry), key)) return std::move(*stored);
    signature_set set = load_lazy(dirs);
    try {
        std::error_code ec;
        fs::create_directories(cache_dir, ec);
        write_file_atomic(entry, encode_signatures(set, key));
        bin::prune_entries(cache_dir, "logsig-", k_max_entries);
    } catch (const std::exception&) {
        // A copy that cannot be written only costs the next run a load.
    }
    return set;
}

}  // namespace oomdx
