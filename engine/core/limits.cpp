#include "engine/core/limits.h"

#include <cstdlib>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"

namespace oomdx {

const std::vector<limit_info>& limit_table() {
    static const std::vector<limit_info> t = {
        {"text_file_bytes", &input_limits::text_file_bytes, true, "largest config, model, rule or YAML file"},
        {"text_items", &input_limits::text_items, false,
         "lines plus list items in one such file (parsers expand each into nodes)"},
        {"log_file_bytes", &input_limits::log_file_bytes, true, "largest log (decompressed bytes for .gz)"},
        {"snapshot_file_bytes", &input_limits::snapshot_file_bytes, true, "largest snapshot file"},
        {"config_depth", &input_limits::config_depth, false, "nesting depth in configs and Python registries"},
        {"snapshot_depth", &input_limits::snapshot_depth, false, "nesting depth in a snapshot"},
        {"snapshot_stack", &input_limits::snapshot_stack, false, "values on the unpickler stack"},
        {"snapshot_memo", &input_limits::snapshot_memo, false, "memo slots of a pickle"},
        {"snapshot_string_bytes", &input_limits::snapshot_string_bytes, true, "one string in a snapshot"},
        {"snapshot_objects", &input_limits::snapshot_objects, false, "values decoded from one snapshot"},
        {"snapshot_containers", &input_limits::snapshot_containers, false,
         "generic dicts and lists alive at once while reading a snapshot"},
    };
    return t;
}

namespace {

void apply_limit(input_limits& l, const std::string& assignment) {
    const auto eq = assignment.find('=');
    const std::string name = assignment.substr(0, eq);
    for (const auto& info : limit_table()) {
        if (name != info.name) continue;
        if (eq == std::string::npos) throw usage_error(fmt::format("limit {} needs a value: {}=VALUE", name, name));
        const std::string text = assignment.substr(eq + 1);
        const auto v = parse_size(text);
        if (!v || *v <= 0)
            throw usage_error(fmt::format("limit {}: '{}' is not a positive {}", name, text,
                                          info.is_size ? "size (e.g. 512MiB)" : "integer"));
        l.*info.field = *v;
        return;
    }
    std::string names;
    for (const auto& info : limit_table()) names += (names.empty() ? "" : ", ") + std::string(info.name);
    throw usage_error(fmt::format("unknown limit '{}' (limits: {})", name, names));
}

void apply_list(input_limits& l, const std::string& list) {
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t end = list.find(',', start);
        if (end == std::string::npos) end = list.size();
        if (end > start) apply_limit(l, list.substr(start, end - start));
        start = end + 1;
    }
}

input_limits from_environment() {
    input_limits l;
    if (const char* e = std::getenv("OOMDX_LIMITS"); e && *e) {
        try {
            apply_list(l, e);
        } catch (const usage_error& err) {
            throw usage_error(std::string("OOMDX_LIMITS: ") + err.what());
        }
    }
    return l;
}

}  // namespace

input_limits& current_limits() {
    static input_limits l = from_environment();
    return l;
}

void set_limit(const std::string& assignment) { apply_limit(current_limits(), assignment); }

void set_limits_from_list(const std::string& list) { apply_list(current_limits(), list); }

std::string describe_limits() {
    std::string out;
    const input_limits& l = current_limits();
    for (const auto& info : limit_table()) {
        const std::int64_t v = l.*info.field;
        out += fmt::format("{:<22} {:>14}  {}\n", info.name, info.is_size ? format_bytes(v) : std::to_string(v), info.desc);
    }
    return out;
}

}  // namespace oomdx
