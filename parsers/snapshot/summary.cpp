#include "parsers/snapshot/summary.h"

#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/json_file.h"

namespace oomdx::snap {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {


bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

const json& at(const json& j, const char* key, const std::string& path) {
    auto it = j.find(key);
    if (it == j.end()) throw input_error::in_file(path, fmt::format("not an oomdx.snapshot/1 analysis: no key '{}'", key));
    return *it;
}

std::int64_t int_at(const json& j, const char* key, const std::string& path, std::int64_t absent = 0) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return absent;
    if (!it->is_number_integer())
        throw input_error::in_file(path, fmt::format("key '{}' is not an integer", key));
    return it->get<std::int64_t>();
}

double num_at(const json& j, const char* key, const std::string& path) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return 0;
    if (!it->is_number()) throw input_error::in_file(path, fmt::format("key '{}' is not a number", key));
    return it->get<double>();
}

std::string str_at(const json& j, const char* key, const std::string& path) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    if (!it->is_string()) throw input_error::in_file(path, fmt::format("key '{}' is not a string", key));
    return it->get<std::string>();
}

bool bool_at(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_boolean() && it->get<bool>();
}

void check_document(const json& j, const std::string& path) {
    if (!j.is_object()) throw input_error::in_file(path, "not an oomdx.snapshot/1 document: not a JSON object");
    if (str_at(j, "schema", path) != "oomdx.snapshot/1")
        throw input_error::in_file(path, "not an oomdx.snapshot/1 document (key 'schema')");
    if (str_at(j, "kind", path) != "analysis")
        throw input_error::in_file(path, fmt::format("kind '{}' is not a per-file summary (expected 'analysis': "
                                                     "oomdx snapshot FILE --format json)",
                                                     str_at(j, "kind", path)));
}

// The device object of the summary's primary device, or nullptr.
const json* primary_device(const json& j, const std::string& path) {
    const json& devs = at(j, "devices", path);
    if (!devs.is_array()) throw input_error::in_file(path, "key 'devices' is not a list");
    auto pit = j.find("primary_device");
    if (pit == j.end() || pit->is_null()) return nullptr;
    for (const auto& d : devs)
        if (d.is_object() && d.contains("device") && d["device"] == *pit) return &d;
    throw input_error::in_file(path, "key 'primary_device' names no device of 'devices'");
}

}  // namespace

std::vector<std::string> expand_summary_inputs(const std::vector<std::string>& args) {
    std::vector<std::string> out;
    for (const auto& a : args) {
        std::error_code ec;
        if (!a.empty() && a[0] == '@') {
            std::ifstream in(a.substr(1));
            if (!in) throw input_error::in_file(a.substr(1), "cannot read the list of summaries");
            std::string line;
            while (std::getline(in, line)) {
                line = trim(line);
                if (!line.empty() && line[0] != '#') out.push_back(line);
            }
        } else if (fs::is_directory(a, ec)) {
            std::vector<std::string> files;
            for (const auto& e : fs::directory_iterator(a, ec))
                if (e.is_regular_file(ec) && e.path().extension() == ".json") files.push_back(e.path().string());
            if (ec) throw input_error::in_file(a, "cannot list the directory: " + ec.message());
            std::sort(files.begin(), files.end());
            out.insert(out.end(), files.begin(), files.end());
        } else if (has_glob_chars(a) && !fs::exists(a, ec)) {
            glob_t g{};
            const int rc = ::glob(a.c_str(), 0, nullptr, &g);
            if (rc == 0)
                for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
            ::globfree(&g);
            if (rc != 0 && rc != GLOB_NOMATCH) throw input_error::in_file(a, "cannot expand the pattern");
        } else {
            out.push_back(a);
        }
    }
    return out;
}

namespace {

rank_row rank_row_of_cross_rank(const json& c, const std::string& path, std::int64_t fallback_rank) {
    rank_row r;
    r.file = str_at(c, "file", path);
    const std::int64_t rank = int_at(c, "rank", path, -1);
    r.rank = rank >= 0 ? rank : rank_from_name(r.file, fallback_rank);
    r.device = int_at(c, "device", path);
    r.peak = int_at(c, "peak_bytes", path);
    r.live = int_at(c, "allocated_bytes", path);
    r.reserved = int_at(c, "reserved_bytes", path);
    r.inactive = int_at(c, "inactive_bytes", path);
    r.fragmentation = num_at(c, "fragmentation_rate", path);
    r.oom_events = int_at(c, "oom_events", path);
    r.first_oom_time_us = int_at(c, "first_oom_time_us", path, -1);
    r.top_site = str_at(c, "top_site", path);
    r.top_category = str_at(c, "top_category", path);
    return r;
}

}  // namespace

rank_row rank_row_of_summary(const json& j, const std::string& path, std::int64_t fallback_rank) {
    check_document(j, path);
    if (auto c = j.find("cross_rank"); c != j.end() && c->is_object()) return rank_row_of_cross_rank(*c, path, fallback_rank);
    rank_row r;
    r.file = str_at(j, "file", path);
    const std::int64_t rank = int_at(j, "rank", path, -1);
    r.rank = rank >= 0 ? rank : rank_from_name(r.file, fallback_rank);
    const json* d = primary_device(j, path);
    if (!d) return r;
    r.device = int_at(*d, "device", path);
    r.peak = int_at(*d, "peak_bytes", path);
    r.live = int_at(*d, "allocated_bytes", path);
    r.reserved = int_at(*d, "reserved_bytes", path);
    r.inactive = int_at(*d, "inactive_bytes", path);
    r.fragmentation = num_at(*d, "fragmentation_rate", path);
    r.oom_events = int_at(*d, "oom_count", path);
    auto oi = d->find("oom_events");
    if (oi != d->end() && oi->is_array() && !oi->empty()) r.first_oom_time_us = int_at(oi->front(), "time_us", path, -1);
    auto si = d->find("top_sites");
    if (si != d->end() && si->is_array() && !si->empty()) r.top_site = str_at(si->front(), "site", path);
    auto ci = d->find("categories");
    if (ci != d->end() && ci->is_array() && !ci->empty() && int_at(ci->front(), "bytes", path) > 0)
        r.top_category = str_at(ci->front(), "name", path);
    return r;
}

namespace {

// Reads the "cross_rank" object of a summary with SAX (nothing else is built) and stops at its
// end: it comes near the start (keys are in alphabetical order), so the device details after it
// are never parsed.
class row_scanner : public nlohmann::json_sax<json> {
public:
    json row = json::object();
    bool stopped = false;  // cross_rank was read
    std::string error;
    std::size_t error_byte = 0;

    bool null() override { return value(json(nullptr)); }
    bool boolean(bool v) override { return value(json(v)); }
    bool number_integer(number_integer_t v) override { return value(json(v)); }
    bool number_unsigned(number_unsigned_t v) override { return value(json(v)); }
    bool number_float(number_float_t v, const string_t&) override { return value(json(v)); }
    bool string(string_t& v) override { return value(json(v)); }
    bool binary(binary_t&) override { return value(json(nullptr)); }
    bool key(string_t& k) override {
        m_key = k;
        return true;
    }
    bool start_object(std::size_t) override {
        m_in_row = m_depth == 1 && m_key == "cross_rank";
        ++m_depth;
        return true;
    }
    bool end_object() override {
        --m_depth;
        if (m_in_row && m_depth == 1) {
            stopped = true;
            return false;
        }
        return true;
    }
    bool start_array(std::size_t) override {
        ++m_depth;
        return true;
    }
    bool end_array() override {
        --m_depth;
        return true;
    }
    bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) override {
        error = e.what();
        error_byte = byte;
        return false;
    }

private:
    int m_depth = 0;
    bool m_in_row = false;
    std::string m_key;
    bool value(json v) {
        if (m_in_row && m_depth == 2) row[m_key] = std::move(v);
        return true;
    }
};

// Reads the head of a summary (the row's values come first) and its last bytes (a summary ends
// with its closing brace: a cut file is refused though the scan stops early); the whole file only
// when the head is not enough.
rank_row scan_row(const std::string& path, std::int64_t fallback_rank) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) throw input_error::in_file(path, "missing summary: no such file");
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) throw input_error::in_file(path, "cannot read: " + ec.message());
    if (size > k_summary_max_bytes)
        throw input_error::in_file(path, fmt::format("{} bytes: too large for a summary (at most {} MiB)", size,
                                                     k_summary_max_bytes >> 20));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_error::in_file(path, "cannot open");
    std::string tail(static_cast<std::size_t>(std::min<std::uintmax_t>(size, 64)), '\0');
    in.seekg(static_cast<std::streamoff>(size - tail.size()));
    if (!in.read(tail.data(), static_cast<std::streamsize>(tail.size()))) throw input_error::in_file(path, "cannot read");
    const auto last = tail.find_last_not_of(" \t\r\n");
    if (last == std::string::npos && size <= tail.size())
        throw input_error::in_file(path, "empty file: an unfinished or failed summary");
    if (last == std::string::npos || tail[last] != '}')
        throw input_error::at_offset(path, static_cast<std::int64_t>(size),
                                     "invalid JSON: the document does not end (a cut or unfinished summary)");
    for (std::uintmax_t want = std::min<std::uintmax_t>(size, 16 << 10);; want = size) {
        std::string text(static_cast<std::size_t>(want), '\0');
        in.clear();
        in.seekg(0);
        if (!in.read(text.data(), static_cast<std::streamsize>(want))) throw input_error::in_file(path, "cannot read");
        row_scanner sc;
        json::sax_parse(text, &sc);
        if (sc.stopped) return rank_row_of_cross_rank(sc.row, path, fallback_rank);
        if (want < size) continue;  // cross_rank not in the head: the whole file
        if (!sc.error.empty())
            throw input_error::at_offset(path, static_cast<std::int64_t>(sc.error_byte), "invalid JSON: " + sc.error);
        return rank_row_of_summary(json::parse(text), path, fallback_rank);  // a summary without cross_rank
    }
}

}  // namespace

merge_result merge_summaries(const std::vector<std::string>& files,
                             const std::function<void(std::size_t, std::size_t)>& progress, std::int64_t world_size) {
    merge_result m;
    m.inputs = files.size();
    std::vector<rank_row> rows;
    rows.reserve(files.size());
    bool have_peak = false;
    for (std::size_t i = 0; i < files.size(); ++i) {
        try {
            rows.push_back(scan_row(files[i], static_cast<std::int64_t>(i)));
            const rank_row& r = rows.back();
            if (!have_peak || r.peak > m.peak_bytes || (r.peak == m.peak_bytes && r.rank < m.peak_rank)) {
                have_peak = true;
                std::error_code ec;
                const fs::path abs = fs::absolute(files[i], ec);
                m.peak_summary = ec ? files[i] : abs.lexically_normal().string();
                m.peak_rank = r.rank;
                m.peak_bytes = r.peak;
            }
        } catch (const input_error& e) {
            m.bad.push_back({files[i], rank_from_name(files[i], -1), e.what()});
        }
        if (progress) progress(i + 1, files.size());
    }
    m.table = rank_table_of(std::move(rows));
    // Missing: every number up to the highest rank seen (a bad summary's too) or world_size - 1.
    std::int64_t top = m.table.rows.empty() ? -1 : m.table.rows.back().rank;
    const std::int64_t rows_top = top;
    for (const auto& b : m.bad) top = std::max(top, b.rank);
    top = std::max(top, world_size - 1);
    for (std::int64_t r = rows_top + 1; r <= top; ++r) m.table.add_missing(r);
    return m;
}

// ---- a summary back into an analysis --------------------------------------------------------

namespace {

std::vector<category_total> cats_of(const json& a, const std::string& path) {
    std::vector<category_total> out;
    if (!a.is_array()) return out;
    for (const auto& c : a)
        out.push_back({str_at(c, "name", path), int_at(c, "bytes", path), int_at(c, "blocks", path), num_at(c, "share", path)});
    return out;
}

std::vector<site_total> sites_of(const json& a, const std::string& path) {
    std::vector<site_total> out;
    if (!a.is_array()) return out;
    for (const auto& s : a) {
        site_total t;
        t.site = str_at(s, "site", path);
        t.file = str_at(s, "file", path);
        t.line = int_at(s, "line", path);
        t.function = str_at(s, "function", path);
        t.category = str_at(s, "category", path);
        t.bytes = int_at(s, "bytes", path);
        t.blocks = int_at(s, "blocks", path);
        t.share = num_at(s, "share", path);
        out.push_back(std::move(t));
    }
    return out;
}

const json& arr(const json& j, const char* key) {
    static const json empty = json::array();
    auto it = j.find(key);
    return it != j.end() && it->is_array() ? *it : empty;
}

device_analysis device_of(const json& j, const std::string& path) {
    device_analysis d;
    d.device = int_at(j, "device", path);
    d.segments = int_at(j, "segments", path);
    d.blocks = int_at(j, "blocks", path);
    d.large_segments = int_at(j, "large_segments", path);
    d.small_segments = int_at(j, "small_segments", path);
    d.expandable_segments = int_at(j, "expandable_segments", path);
    d.private_pool_segments = int_at(j, "private_pool_segments", path);
    d.reserved_bytes = int_at(j, "reserved_bytes", path);
    d.allocated_bytes = int_at(j, "allocated_bytes", path);
    d.active_bytes = int_at(j, "active_bytes", path);
    d.pending_free_bytes = int_at(j, "pending_free_bytes", path);
    d.inactive_bytes = int_at(j, "inactive_bytes", path);
    d.requested_bytes = int_at(j, "requested_bytes", path);
    d.rounding_bytes = int_at(j, "rounding_bytes", path);
    d.allocated_blocks = int_at(j, "allocated_blocks", path);
    d.pending_free_blocks = int_at(j, "pending_free_blocks", path);
    d.inactive_blocks = int_at(j, "inactive_blocks", path);
    d.largest_inactive_block_bytes = int_at(j, "largest_inactive_block_bytes", path);
    d.largest_allocated_block_bytes = int_at(j, "largest_allocated_block_bytes", path);
    d.free_blocks = int_at(j, "free_blocks", path);
    d.small_free_blocks = int_at(j, "small_free_blocks", path);
    d.small_free_block_share = num_at(j, "small_free_block_share", path);
    d.fragmentation_rate = num_at(j, "fragmentation_rate", path);
    d.fragmentation_level = str_at(j, "fragmentation_level", path);
    for (const auto& s : arr(j, "inconsistencies"))
        if (s.is_string()) d.inconsistencies.push_back(s.get<std::string>());
    d.categories = cats_of(arr(j, "categories"), path);
    d.sites = sites_of(arr(j, "top_sites"), path);  // the listed sites only
    d.trace_entries = int_at(j, "trace_entries", path);
    if (auto it = j.find("actions"); it != j.end() && it->is_object())
        for (auto a = it->begin(); a != it->end(); ++a)
            if (a->is_number_integer()) d.actions.emplace_back(a.key(), a->get<std::int64_t>());
    d.has_trace = bool_at(j, "has_trace");
    d.initial_active_bytes = int_at(j, "initial_active_bytes", path);
    d.peak_bytes = int_at(j, "peak_bytes", path);
    d.peak_index = int_at(j, "peak_index", path, -1);
    d.peak_time_us = int_at(j, "peak_time_us", path, -1);
    d.peak_reserved_bytes = int_at(j, "peak_reserved_bytes", path);
    d.peak_categories = cats_of(arr(j, "peak_categories"), path);
    d.peak_sites = sites_of(arr(j, "peak_sites"), path);
    for (const auto& p : arr(j, "phases"))
        d.phases.push_back({str_at(p, "kind", path), int_at(p, "start_index", path), int_at(p, "end_index", path),
                            int_at(p, "start_bytes", path), int_at(p, "end_bytes", path),
                            int_at(p, "start_time_us", path, -1), int_at(p, "end_time_us", path, -1)});
    d.cycles = int_at(j, "cycles", path);
    for (const auto& t : arr(j, "timeline"))
        d.timeline.push_back({int_at(t, "start_index", path), int_at(t, "end_index", path), int_at(t, "allocs", path),
                              int_at(t, "frees", path), int_at(t, "alloc_bytes", path), int_at(t, "free_bytes", path),
                              int_at(t, "live_end_bytes", path), int_at(t, "max_pending_bytes", path),
                              str_at(t, "label", path)});
    if (auto it = j.find("pending_free"); it != j.end() && it->is_object()) {
        const json& p = *it;
        d.pending = {int_at(p, "free_requested", path), int_at(p, "free_completed", path), int_at(p, "immediate", path),
                     int_at(p, "deferred", path), int_at(p, "max_pending_bytes", path),
                     int_at(p, "max_pending_index", path, -1), int_at(p, "max_delay_events", path),
                     int_at(p, "max_delay_us", path, -1), int_at(p, "unmatched_frees", path)};
    }
    d.oom_count = int_at(j, "oom_count", path);
    for (const auto& o : arr(j, "oom_events")) {
        oom_event e;
        e.trace_index = int_at(o, "trace_index", path);
        e.requested_bytes = int_at(o, "requested_bytes", path);
        e.device_free_bytes = int_at(o, "device_free_bytes", path, -1);
        e.time_us = int_at(o, "time_us", path, -1);
        e.live_bytes = int_at(o, "live_bytes", path);
        e.reserved_bytes = int_at(o, "reserved_bytes", path);
        e.inactive_bytes = int_at(o, "inactive_bytes", path, -1);
        e.largest_inactive_block_bytes = int_at(o, "largest_inactive_block_bytes", path, -1);
        e.fragmentation = bool_at(o, "fragmentation");
        e.site = str_at(o, "site", path);
        e.category = str_at(o, "category", path);
        for (const auto& h : arr(o, "holders"))
            e.holders.push_back({str_at(h, "site", path), "", 0, "", "", int_at(h, "bytes", path), int_at(h, "blocks", path), 0});
        d.ooms.push_back(std::move(e));
    }
    d.end_live_recorded_bytes = int_at(j, "end_live_recorded_bytes", path);
    d.end_other_unknown_share = num_at(j, "end_other_unknown_share", path);
    d.non_pytorch_gap_bytes = int_at(j, "non_pytorch_gap_bytes", path, -1);
    for (const auto& p : arr(j, "patterns")) {
        pattern q;
        q.name = str_at(p, "name", path);
        q.leak = bool_at(p, "leak");
        q.expected = bool_at(p, "expected");
        q.confidence = str_at(p, "confidence", path);
        q.summary = str_at(p, "summary", path);
        for (const auto& e : arr(p, "evidence"))
            if (e.is_string()) q.evidence.push_back(e.get<std::string>());
        d.patterns.push_back(std::move(q));
    }
    d.leak_suspected = bool_at(j, "leak_suspected");
    if (auto it = j.find("measures"); it != j.end() && it->is_object()) {
        const json& m = *it;
        auto& x = d.measures;
        x.growth_phases = int_at(m, "growth_phases", path);
        x.release_phases = int_at(m, "release_phases", path);
        x.last_phase = str_at(m, "last_phase", path);
        x.gradient_allocs = int_at(m, "gradient_allocs", path);
        x.steps_from_cycles = bool_at(m, "steps_from_cycles");
        x.retention_forward_sites = int_at(m, "retention_forward_sites", path);
        x.retention_other_sites = int_at(m, "retention_other_sites", path);
        x.retention_forward_bytes = int_at(m, "retention_forward_bytes", path);
        x.retention_other_bytes = int_at(m, "retention_other_bytes", path);
        x.retention_max_steps = int_at(m, "retention_max_steps", path);
        x.optimizer_alloc_bytes = int_at(m, "optimizer_alloc_bytes", path);
        x.optimizer_allocs = int_at(m, "optimizer_allocs", path);
        x.optimizer_first_burst_bytes = int_at(m, "optimizer_first_burst_bytes", path);
        x.growth_alloc_bytes = int_at(m, "growth_alloc_bytes", path);
        x.growth_forward_bytes = int_at(m, "growth_forward_bytes", path);
        x.range_bytes = int_at(m, "range_bytes", path);
        x.forward_live_max_bytes = int_at(m, "forward_live_max_bytes", path);
        x.peak_forward_bytes = int_at(m, "peak_forward_bytes", path);
        x.fsdp_frames = bool_at(m, "fsdp_frames");
        x.ddp_frames = bool_at(m, "ddp_frames");
        x.stack_frames = bool_at(m, "stack_frames");
        x.backward_frames = bool_at(m, "backward_frames");
        x.optimizer_frames = bool_at(m, "optimizer_frames");
        x.generate_frames = bool_at(m, "generate_frames");
        x.bulk_free_blocks = int_at(m, "bulk_free_blocks", path);
        x.bulk_free_bytes = int_at(m, "bulk_free_bytes", path);
        x.bulk_free_steps = int_at(m, "bulk_free_steps", path);
        x.bulk_free_index = int_at(m, "bulk_free_index", path, -1);
        x.oom_fragmented_events = int_at(m, "oom_fragmented_events", path);
    }
    return d;
}

}  // namespace

snapshot_analysis analysis_of_summary(const json& j, const std::string& path) {
    check_document(j, path);
    snapshot_analysis a;
    a.file = str_at(j, "file", path);
    a.rank = int_at(j, "rank", path, -1);
    a.info.format = str_at(j, "format", path);
    a.info.pickle_protocol = static_cast<int>(int_at(j, "pickle_protocol", path));
    a.info.producer = str_at(j, "producer", path);
    a.info.era = str_at(j, "era", path);
    a.info.file_bytes = int_at(j, "file_bytes", path);
    a.alloc_conf = str_at(j, "alloc_conf", path);
    a.expandable_segments = bool_at(j, "expandable_segments");
    a.device_capacity_bytes = int_at(j, "device_capacity_bytes", path);
    for (const auto& c : arr(j, "category_names"))
        if (c.is_string()) a.category_names.push_back(c.get<std::string>());
    for (const auto& w : arr(j, "warnings"))
        if (w.is_string()) a.warnings.push_back(w.get<std::string>());
    const json* primary = primary_device(j, path);
    for (const auto& d : at(j, "devices", path)) {
        if (!d.is_object()) throw input_error::in_file(path, "an item of 'devices' is not an object");
        if (primary && &d == primary) a.primary = static_cast<int>(a.devices.size());
        a.devices.push_back(device_of(d, path));
    }
    return a;
}


snapshot_analysis load_summary(const std::string& path) { return analysis_of_summary(read_json_file(path, "a summary"), path); }

summary_kind summary_kind_of(const std::string& path) {
    // The schema name is never part of a memory snapshot: only files that hold it are parsed.
    const std::optional<std::string> read = json_file_text(path);
    if (!read) return summary_kind::not_summary;
    const std::string& text = *read;
    if (text.find("\"oomdx.snapshot/1\"") == std::string::npos) return summary_kind::not_summary;
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return summary_kind::not_summary;  // the reader of snapshots reports it
    auto sc = j.find("schema");
    if (sc == j.end() || *sc != "oomdx.snapshot/1") return summary_kind::not_summary;
    auto k = j.find("kind");
    if (k != j.end() && *k == "analysis") return summary_kind::analysis;
    if (k != j.end() && *k == "ranks") return summary_kind::ranks;
    return summary_kind::other;
}

merged_summary load_merged(const std::string& path) {
    const json j = read_json_file(path, "a summary");
    if (!j.is_object() || str_at(j, "schema", path) != "oomdx.snapshot/1" || str_at(j, "kind", path) != "ranks")
        throw input_error::in_file(path, "not a merged summary (oomdx snapshot merge --format json)");
    const json& rows = at(at(j, "ranks", path), "rows", path);
    if (!rows.is_array()) throw input_error::in_file(path, "key 'ranks.rows' is not a list");
    merged_summary out;
    for (const auto& r : rows) {
        if (!r.is_object()) throw input_error::in_file(path, "an item of 'ranks.rows' is not an object");
        out.rows.push_back(rank_row_of_cross_rank(r, path, static_cast<std::int64_t>(out.rows.size())));
    }
    if (auto mi = j.find("merge"); mi != j.end() && mi->is_object())
        if (auto pi = mi->find("peak_summary"); pi != mi->end() && pi->is_string()) out.peak_summary = pi->get<std::string>();
    return out;
}

}  // namespace oomdx::snap
