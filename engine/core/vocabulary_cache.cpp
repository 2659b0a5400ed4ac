#include "engine/core/vocabulary_cache.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "engine/core/atomic_file.h"
#include "engine/core/binary_io.h"
#include "engine/core/text_file.h"
#include "engine/core/yaml_cache.h"
#include "engine/core/yaml_file.h"

namespace oomdx {
namespace {

using bin::get64;
using bin::put32;
using bin::put64;
using bin::put_text;
using bin::read_all;

constexpr char k_magic[8] = {'o', 'o', 'm', 'd', 'x', 'v', 'c', '1'};


using reader = bin::reader;


}  // namespace

std::string encode_vocabulary(const vocabulary& v, std::string_view key) {
    std::string payload;
    put32(payload, static_cast<std::uint32_t>(v.all().size()));
    for (const fact_decl& d : v.all()) {
        put_text(payload, d.name);
        put32(payload, static_cast<std::uint32_t>(d.kind));
        put_text(payload, d.unit);
        put_text(payload, d.desc);
        put32(payload, static_cast<std::uint32_t>(d.values.size()));
        for (const auto& x : d.values) put_text(payload, x);
        put32(payload, static_cast<std::uint32_t>(d.phrases.size()));
        for (const auto& [val, text] : d.phrases) {
            put_text(payload, val);
            put_text(payload, text);
        }
        put32(payload, d.is_override ? 1 : 0);
        put_text(payload, d.file);
        put32(payload, static_cast<std::uint32_t>(d.line));
    }
    return bin::seal(k_magic, key, payload, text_hash);
}

std::optional<vocabulary> decode_vocabulary(std::string_view stored, std::string_view key) {
    const auto payload = bin::unseal(stored, k_magic, key, text_hash);
    if (!payload) return std::nullopt;
    reader r(*payload);
    std::uint32_t count = 0;
    if (!r.u32(count)) return std::nullopt;
    vocabulary v;
    for (std::uint32_t i = 0; i < count; ++i) {
        fact_decl d;
        std::uint32_t kind = 0, n = 0, flag = 0, line = 0;
        if (!r.text(d.name) || !r.u32(kind) || kind > static_cast<std::uint32_t>(fact_kind::any) || !r.text(d.unit) ||
            !r.text(d.desc) || !r.u32(n))
            return std::nullopt;
        d.kind = static_cast<fact_kind>(kind);
        for (std::uint32_t k = 0; k < n; ++k)
            if (!r.text(d.values.emplace_back())) return std::nullopt;
        if (!r.u32(n)) return std::nullopt;
        for (std::uint32_t k = 0; k < n; ++k) {
            std::string val, text;
            if (!r.text(val) || !r.text(text)) return std::nullopt;
            d.phrases[val] = std::move(text);
        }
        if (!r.u32(flag) || flag > 1 || !r.text(d.file) || !r.u32(line) || line > 0x7fffffff) return std::nullopt;
        d.is_override = flag == 1;
        d.line = static_cast<int>(line);
        v.add(std::move(d));
    }
    if (!r.at_end()) return std::nullopt;
    return v;
}

vocabulary load_vocabulary_cached(const std::string& dir, const std::string& cache_dir) {
    if (cache_dir.empty()) return vocabulary::load_dir(dir);
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::vector<std::string> files = yaml_files_in(dir, ec);
    if (ec) return vocabulary::load_dir(dir);  // which reports the error
    // The key: each file's path, size and text hash, in load order.
    std::string key;
    for (const auto& file : files) {
        const std::string text = read_text_file(file, "a YAML file", /*allow_empty=*/true);
        key += fmt::format("{}\n{}\n{:016x}\n", file, text.size(), text_hash(text));
    }
    const fs::path abs = fs::absolute(dir, ec).lexically_normal();
    const std::string entry = fmt::format("{}/vocab-{:016x}.bin", cache_dir, text_hash(abs.string()));
    if (auto cached = decode_vocabulary(read_all(entry), key)) return std::move(*cached);
    vocabulary v = vocabulary::load_dir(dir);
    try {
        fs::create_directories(cache_dir, ec);
        write_file_atomic(entry, encode_vocabulary(v, key));
    } catch (const std::exception&) {
        // A copy that cannot be written only costs the next run a load.
    }
    return v;
}

}  // namespace oomdx
