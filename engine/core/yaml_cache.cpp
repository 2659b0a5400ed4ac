#include "engine/core/yaml_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "engine/core/atomic_file.h"
#include "engine/core/binary_io.h"
#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/yaml_guard.h"

namespace oomdx {
struct yaml_tree_access;
}

// yaml-cpp builds a Node around a detail::node only for its friends (its own NodeBuilder
// does exactly what decode does below); as_if is a friend template, so a specialization for a
// type of ours may call the private constructor.
template <>
struct YAML::as_if<oomdx::yaml_tree_access, void> {
    static YAML::Node wrap(YAML::detail::node& n, YAML::detail::shared_memory_holder memory) {
        return YAML::Node(n, std::move(memory));
    }
};

namespace oomdx {
namespace {

using bin::get64;
using bin::put32;
using bin::put64;
using bin::put_text;
using bin::read_all;

constexpr char k_magic[8] = {'o', 'o', 'm', 'd', 'x', 'y', 'c', '1'};
constexpr int k_max_depth = 512;
// Entries kept: the shipped data is ~60 files; checkouts, installs and tests with their own
// data directories add theirs, and the oldest beyond this go.
constexpr std::size_t k_max_entries = 512;
// magic, text size, text hash, payload size, payload hash
constexpr std::size_t k_header = 8 + 4 * 8;

enum : std::uint8_t { t_null = 1, t_scalar, t_sequence, t_map };


void encode_node(const YAML::Node& n, std::string& out) {
    const YAML::NodeType::value type = n.Type();
    std::uint8_t t = t_null;
    if (type == YAML::NodeType::Scalar) t = t_scalar;
    else if (type == YAML::NodeType::Sequence) t = t_sequence;
    else if (type == YAML::NodeType::Map) t = t_map;
    else if (type != YAML::NodeType::Null) throw std::runtime_error("undefined node");
    out += static_cast<char>(t);
    out += static_cast<char>(n.Style());
    const YAML::Mark m = n.Mark();
    put32(out, static_cast<std::uint32_t>(m.pos));
    put32(out, static_cast<std::uint32_t>(m.line));
    put32(out, static_cast<std::uint32_t>(m.column));
    put_text(out, n.Tag());
    if (t == t_scalar) put_text(out, n.Scalar());
    if (t == t_sequence || t == t_map) {
        put32(out, static_cast<std::uint32_t>(n.size()));
        for (const auto& item : n) {
            if (t == t_sequence) {
                encode_node(item, out);
            } else {
                encode_node(item.first, out);
                encode_node(item.second, out);
            }
        }
    }
}

// Reads the payload with a bounds check on every field; false on anything malformed.
class decoder : public bin::reader {
public:
    decoder(std::string_view in, YAML::detail::shared_memory_holder memory)
        : bin::reader(in), m_memory(std::move(memory)) {}

    YAML::detail::node* node(int depth) {
        if (depth > k_max_depth) return nullptr;
        std::uint8_t t = 0, style = 0;
        std::uint32_t pos = 0, line = 0, column = 0;
        std::string tag;
        if (!byte(t) || !byte(style) || !u32(pos) || !u32(line) || !u32(column) || !text(tag)) return nullptr;
        if (t < t_null || t > t_map || style > YAML::EmitterStyle::Flow) return nullptr;
        YAML::detail::node& n = m_memory->create_node();
        YAML::Mark mark;
        mark.pos = static_cast<int>(pos);
        mark.line = static_cast<int>(line);
        mark.column = static_cast<int>(column);
        n.set_mark(mark);
        if (t == t_null) {
            n.set_null();
        } else if (t == t_scalar) {
            std::string s;
            if (!text(s)) return nullptr;
            n.set_scalar(s);
        } else {
            std::uint32_t count = 0;
            if (!u32(count) || count > left()) return nullptr;  // each child takes bytes
            n.set_type(t == t_sequence ? YAML::NodeType::Sequence : YAML::NodeType::Map);
            for (std::uint32_t i = 0; i < count; ++i) {
                YAML::detail::node* first = node(depth + 1);
                if (!first) return nullptr;
                if (t == t_sequence) {
                    n.push_back(*first, m_memory);
                    continue;
                }
                YAML::detail::node* second = node(depth + 1);
                if (!second) return nullptr;
                n.insert(*first, *second, m_memory);
            }
        }
        n.set_tag(tag);
        n.set_style(static_cast<YAML::EmitterStyle::value>(style));
        return &n;
    }

private:
    YAML::detail::shared_memory_holder m_memory;
};


bool under(const std::filesystem::path& file, const std::filesystem::path& dir) {
    auto f = file.begin();
    for (auto d = dir.begin(); d != dir.end(); ++d, ++f) {
        if (d->empty()) continue;  // a trailing separator
        if (f == file.end() || *f != *d) return false;
    }
    return true;
}


}  // namespace

void prune_yaml_cache(const std::string& dir, std::size_t keep) { bin::prune_entries(dir, "yaml-", keep); }

std::uint64_t text_hash(std::string_view text) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char c : text) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

std::string encode_yaml_tree(const YAML::Node& root, std::string_view text) {
    std::string payload;
    encode_node(root, payload);
    std::string out(k_magic, sizeof k_magic);
    put64(out, text.size());
    put64(out, text_hash(text));
    put64(out, payload.size());
    put64(out, text_hash(payload));
    return out + payload;
}

std::optional<YAML::Node> decode_yaml_tree(std::string_view stored, std::string_view text) {
    if (stored.size() < k_header || std::memcmp(stored.data(), k_magic, sizeof k_magic) != 0) return std::nullopt;
    const std::string_view payload = stored.substr(k_header);
    if (get64(stored, 8) != text.size() || get64(stored, 16) != text_hash(text) ||
        get64(stored, 24) != payload.size() || get64(stored, 32) != text_hash(payload))
        return std::nullopt;
    auto memory = std::make_shared<YAML::detail::memory_holder>();
    decoder d(payload, memory);
    YAML::detail::node* root = d.node(0);
    if (!root || !d.at_end()) return std::nullopt;
    return YAML::as_if<yaml_tree_access, void>::wrap(*root, memory);
}

std::string yaml_cache_dir() {
    auto env = [](const char* name) -> std::string {
        const char* v = std::getenv(name);
        return v ? v : "";
    };
    const std::string own = env("OOMDX_CACHE_DIR");
    if (own == "off") return "";
    if (!own.empty()) return own;
    if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/oomdx";
    if (const std::string home = env("HOME"); !home.empty()) return home + "/.cache/oomdx";
    return "";
}

namespace {

// The entry of the file at `abs` (an absolute, normal path) in `dir`.
YAML::Node load_entry(const std::string& dir, const std::filesystem::path& abs, const std::string& text) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // One entry per data file: an edited file replaces its entry instead of adding one.
    const std::string entry = fmt::format("{}/yaml-{:016x}.bin", dir, text_hash(abs.string()));
    if (auto cached = decode_yaml_tree(read_all(entry), text)) return *cached;
    YAML::Node root = load_yaml_text(text, abs.string());
    try {
        fs::create_directories(dir, ec);
        write_file_atomic(entry, encode_yaml_tree(root, text));
        prune_yaml_cache(dir, k_max_entries);
    } catch (const std::exception&) {
        // A cache that cannot be written only costs the next run a parse.
    }
    return root;
}

}  // namespace

YAML::Node load_yaml_cached_in(const std::string& dir, const std::string& file, const std::string& text) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(file, ec).lexically_normal();
    if (dir.empty() || ec) return load_yaml_text(text, file);
    return load_entry(dir, abs, text);
}

YAML::Node load_yaml_cached(const std::string& file, const std::string& text) {
    namespace fs = std::filesystem;
    static const std::string dir = yaml_cache_dir();
    std::error_code ec;
    const fs::path abs = fs::absolute(file, ec).lexically_normal();
    if (dir.empty() || ec || !under(abs, fs::path(data_dir()).lexically_normal())) return load_yaml_text(text, file);
    return load_entry(dir, abs, text);
}

}  // namespace oomdx
