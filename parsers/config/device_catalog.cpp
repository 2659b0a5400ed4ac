// Device catalog: knowledge/devices.yaml, spelling-tolerant lookup.
#include "parsers/config/device_catalog.h"

#include "engine/core/yaml_node.h"

#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/yaml_file.h"

namespace oomdx {

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

// Lowercase alphanumerics without vendor words: "NVIDIA H100 80GB HBM3" -> "h10080gbhbm3".
std::string normalize(std::string_view s) {
    std::string low;
    for (char c : s) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* w : {"nvidia", "tesla", "geforce", "huawei", "amd", "instinct", "(tm)"}) {
        for (auto p = low.find(w); p != std::string::npos; p = low.find(w)) low.erase(p, std::string(w).size());
    }
    std::string out;
    for (char c : low)
        if (std::isalnum(static_cast<unsigned char>(c))) out += c;
    return out;
}

struct catalog {
    std::vector<device_info> devices;
    std::map<std::string, std::size_t> by_spelling;
};

catalog load_catalog() {
    catalog c;
    const std::string file = data_path("knowledge/devices.yaml");
    const YAML::Node root = load_yaml_file(file);
    if (!root.IsSequence()) throw input_error::in_file(file, "expected a list of devices");
    for (const auto& n : root) {
        const int line = n.Mark().line + 1;
        if (!n.IsMap() || !n["id"] || !n["nominal_gb"])
            throw input_error::at_line(file, line, "a device needs id and nominal_gb");
        device_info d;
        try {
            d.id = n["id"].as<std::string>();
            d.name = n["name"] ? n["name"].as<std::string>() : d.id;
            d.kind = n["kind"] ? n["kind"].as<std::string>() : "cuda";
            d.nominal_bytes = static_cast<std::int64_t>(std::llround(n["nominal_gb"].as<double>() * gib));
            d.confidence = n["confidence"] ? n["confidence"].as<std::string>() : "unverified";
            d.bf16 = n["bf16"] ? n["bf16"].as<bool>() : true;
            if (n["torch_gib"] && !n["torch_gib"].IsNull()) {
                d.capacity_bytes = static_cast<std::int64_t>(std::llround(n["torch_gib"].as<double>() * gib));
            } else if (n["torch_gib_estimate"]) {
                d.capacity_bytes =
                    static_cast<std::int64_t>(std::llround(n["torch_gib_estimate"].as<double>() * gib));
                d.confidence = "estimated";
            }
        } catch (const YAML::Exception& e) {
            throw input_error::at_line(file, e.mark.line + 1, e.msg);
        }
        d.source = fmt::format("{}:{}", file, line);
        const std::size_t idx = c.devices.size();
        c.by_spelling.emplace(normalize(d.id), idx);
        c.by_spelling.emplace(normalize(d.name), idx);
        if (n["spellings"])
            for (const auto& s : n["spellings"]) c.by_spelling.emplace(normalize(s.as<std::string>()), idx);
        c.devices.push_back(std::move(d));
    }
    return c;
}

const catalog& the_catalog() {
    static const catalog c = load_catalog();
    return c;
}

}  // namespace

std::optional<device_info> lookup_device(std::string_view spelling) {
    const catalog& c = the_catalog();
    std::string key = normalize(spelling);
    if (key.empty()) return std::nullopt;
    if (auto it = c.by_spelling.find(key); it != c.by_spelling.end()) return c.devices[it->second];
    // Drop trailing memory words ("hbm3", "pcie", "sxm", "sxm5") and retry.
    for (const char* tail : {"hbm3e", "hbm3", "hbm2e", "hbm2", "sxm5", "sxm4", "sxm"}) {
        const std::string t(tail);
        if (key.size() > t.size() && key.compare(key.size() - t.size(), t.size(), t) == 0) {
            if (auto d = lookup_device(key.substr(0, key.size() - t.size()))) return d;
        }
    }
    // "Ascend910B3 (64GB)" style: find the longest known spelling the text starts with.
    std::size_t best_len = 0, best = 0;
    for (const auto& [s, idx] : c.by_spelling)
        if (s.size() >= 3 && s.size() > best_len && key.rfind(s, 0) == 0) {
            best_len = s.size();
            best = idx;
        }
    if (best_len > 0) return c.devices[best];
    return std::nullopt;
}

std::vector<device_info> all_devices() { return the_catalog().devices; }

device_info device_from_capacity(std::int64_t total_bytes, std::string_view kind) {
    const device_info* best = nullptr;
    double best_err = 0.015;
    for (const auto& d : the_catalog().devices) {
        if (d.capacity_bytes <= 0 || (!kind.empty() && d.kind != kind)) continue;
        const double err = std::fabs(double(d.capacity_bytes - total_bytes)) / double(d.capacity_bytes);
        if (err < best_err) {
            best_err = err;
            best = &d;
        }
    }
    device_info out;
    if (best) out = *best;
    else {
        out.id = "unknown";
        out.name = fmt::format("unknown {} device", kind);
        out.kind = std::string(kind);
    }
    out.capacity_bytes = total_bytes;
    out.confidence = "observed";
    return out;
}

void emit_facts(const device_info& d, fact_sink& sink, const std::string& source) {
    provenance p;
    p.producer = "device." + source;
    if (auto colon = d.source.rfind(':'); colon != std::string::npos && source == "catalog") {
        p.file = d.source.substr(0, colon);
        p.line = std::atoll(d.source.c_str() + colon + 1);
    }
    p.excerpt = fmt::format("{} ({}, capacity {})", d.name, d.id, d.confidence);
    sink.emit("device.id", d.id, p);
    sink.emit("device.name", d.name, p);
    sink.emit("device.kind", d.kind, p);
    if (d.capacity_bytes > 0) sink.emit("device.capacity_bytes", d.capacity_bytes, p);
    if (d.nominal_bytes > 0) sink.emit("device.nominal_bytes", d.nominal_bytes, p);
    sink.emit("device.capacity_source", source, p);
    if (d.bf16) sink.emit("device.bf16", *d.bf16, p);
}

}  // namespace oomdx
