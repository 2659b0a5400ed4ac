#include "parsers/log/log_summary.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/json_file.h"

namespace oomdx {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {


// The reader of one summary: every getter names the file and the key when the value is wrong.
struct reader {
    const std::string& path;

    const json* find(const json& o, const char* key) const {
        auto it = o.find(key);
        return it == o.end() || it->is_null() ? nullptr : &*it;
    }
    [[noreturn]] void bad(const std::string& key, const char* want) const {
        throw input_error::in_file(path, fmt::format("key '{}' is not {}", key, want));
    }
    const json& object(const json& o, const char* key) const {
        const json* v = find(o, key);
        if (!v || !v->is_object()) bad(key, "an object");
        return *v;
    }
    std::optional<std::int64_t> opt_int(const json& o, const char* key) const {
        const json* v = find(o, key);
        if (!v) return std::nullopt;
        if (!v->is_number_integer()) bad(key, "an integer");
        return v->get<std::int64_t>();
    }
    std::int64_t integer(const json& o, const char* key, std::int64_t absent = 0) const {
        return opt_int(o, key).value_or(absent);
    }
    std::optional<double> opt_num(const json& o, const char* key) const {
        const json* v = find(o, key);
        if (!v) return std::nullopt;
        if (!v->is_number()) bad(key, "a number");
        return v->get<double>();
    }
    std::string text(const json& o, const char* key) const {
        const json* v = find(o, key);
        if (!v) return {};
        if (!v->is_string()) bad(key, "a string");
        return v->get<std::string>();
    }
    std::optional<bool> opt_bool(const json& o, const char* key) const {
        const json* v = find(o, key);
        if (!v) return std::nullopt;
        if (!v->is_boolean()) bad(key, "true or false");
        return v->get<bool>();
    }
    const json& list(const json& o, const char* key) const {
        static const json empty = json::array();
        const json* v = find(o, key);
        if (!v) return empty;
        if (!v->is_array()) bad(key, "a list");
        return *v;
    }
};

memory_forecast forecast_of(const json& f, const reader& r) {
    memory_forecast m;
    m.available = r.opt_bool(f, "available").value_or(false);
    m.projected = r.opt_bool(f, "projected").value_or(m.available);  // summaries before 2026-12
    m.fitted = r.find(f, "rise_bytes") != nullptr;
    m.growth_lo_bytes_per_step = r.opt_num(f, "growth_lo_bytes_per_step").value_or(0);
    m.rise_bytes = r.opt_num(f, "rise_bytes").value_or(0);
    m.noise_bytes = r.opt_num(f, "noise_bytes").value_or(0);
    m.reason = r.text(f, "reason");
    m.rank = r.opt_int(f, "rank");
    m.statistic = r.text(f, "statistic");
    m.capacity_bytes = r.integer(f, "capacity_bytes");
    m.capacity_from = r.text(f, "capacity_from");
    m.budget_fraction = r.opt_num(f, "budget_fraction").value_or(0.95);
    m.growth_bytes_per_step = r.opt_num(f, "growth_bytes_per_step").value_or(0);
    m.r2 = r.opt_num(f, "r2").value_or(0);
    if (const json* b = r.find(f, "basis")) {
        m.points = r.integer(*b, "points");
        m.from_step = r.integer(*b, "from_step");
        m.last_step = r.integer(*b, "to_step");
    }
    m.capacity_step = r.opt_num(f, "capacity_step").value_or(0);
    m.budget_step = r.opt_num(f, "budget_step").value_or(0);
    auto interval = [&](const char* key, double& lo, std::optional<double>& hi) {
        const json& v = r.list(f, key);
        if (v.empty()) return;
        if (v.size() != 2 || !v[0].is_number() || !(v[1].is_number() || v[1].is_null())) r.bad(key, "a pair [lo, hi]");
        lo = v[0].get<double>();
        if (v[1].is_number()) hi = v[1].get<double>();
    };
    interval("interval_steps", m.capacity_lo, m.capacity_hi);
    interval("budget_interval_steps", m.budget_lo, m.budget_hi);
    m.seconds_per_step = r.opt_num(f, "seconds_per_step");
    m.eta_seconds = r.opt_num(f, "eta_seconds");
    m.budget_eta_seconds = r.opt_num(f, "budget_eta_seconds");
    return m;
}

}  // namespace

log_summary_kind log_summary_kind_of(const std::string& path) {
    const std::optional<std::string> read = json_file_text(path);
    if (!read) return log_summary_kind::not_summary;
    const std::string& text = *read;
    // A summary names its schema (near its end: keys are sorted) and opens with "{" on a line of
    // its own (a JSON-lines log opens with a whole object).
    const bool names_schema = text.find("\"oomdx.log/1\"") != std::string::npos;
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '{') return log_summary_kind::not_summary;
    const auto eol = text.find('\n', first);
    const bool brace_line = eol != std::string::npos && text.find_first_not_of(" \t\r", first + 1) == eol;
    if (!names_schema && !brace_line) return log_summary_kind::not_summary;
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    // A cut or damaged summary is still one: reading it reports where it breaks.
    if (j.is_discarded()) return log_summary_kind::analysis;
    if (!j.is_object()) return log_summary_kind::not_summary;
    auto sc = j.find("schema");
    if (sc == j.end() || *sc != "oomdx.log/1") return log_summary_kind::not_summary;
    auto k = j.find("kind");
    return k != j.end() && *k == "ranks" ? log_summary_kind::ranks : log_summary_kind::analysis;
}

log_analysis analysis_of_log_summary(const json& j, const std::string& path) {
    const reader r{path};
    if (!j.is_object() || r.text(j, "schema") != "oomdx.log/1")
        throw input_error::in_file(path, "not an oomdx.log/1 document (oomdx log FILE --format json)");
    if (j.contains("kind")) throw input_error::in_file(path, "key 'kind': a merged view, not one rank's log summary");
    log_analysis a;
    for (const auto& f : r.list(j, "files")) {
        if (!f.is_object()) r.bad("files", "a list of objects");
        a.files.push_back({r.text(f, "path"), r.integer(f, "lines"), r.integer(f, "bytes"),
                           r.opt_bool(f, "compressed").value_or(false), r.integer(f, "long_lines")});
    }
    const json& o = r.object(j, "oom");
    a.source = r.text(o, "source");
    if (a.source.empty()) r.bad("oom.source", "a string");
    a.device_kind = r.text(o, "device_kind");
    a.signature = r.text(o, "signature");
    a.message = r.text(o, "message");
    a.file = r.text(o, "file");
    a.line = r.integer(o, "line");
    a.error_code = r.text(o, "error_code");
    a.requested_bytes = r.opt_int(o, "requested_bytes");
    a.capacity_bytes = r.opt_int(o, "capacity_bytes");
    a.free_bytes = r.opt_int(o, "free_bytes");
    a.allocated_bytes = r.opt_int(o, "allocated_bytes");
    a.reserved_bytes = r.opt_int(o, "reserved_bytes");
    a.reserved_unallocated_bytes = r.opt_int(o, "reserved_unallocated_bytes");
    a.reserved_unallocated_derived = r.opt_bool(o, "reserved_unallocated_derived").value_or(false);
    a.process_in_use_bytes = r.opt_int(o, "process_in_use_bytes");
    a.other_processes = static_cast<int>(r.integer(o, "other_processes"));
    a.other_processes_bytes = r.opt_int(o, "other_processes_bytes");
    a.reserved_derived = r.opt_bool(o, "reserved_derived").value_or(false);
    a.message_form = r.text(o, "message_form");
    a.message_hint = r.text(o, "message_hint");
    a.non_pytorch_bytes = r.opt_int(o, "non_pytorch_bytes");
    a.allowed_bytes = r.opt_int(o, "allowed_bytes");
    a.active_bytes = r.opt_int(o, "active_bytes");
    a.private_pool_bytes = r.opt_int(o, "private_pool_bytes");
    a.device_index = r.opt_int(o, "device_index");
    a.rank = r.opt_int(o, "rank");
    a.rank_from = r.text(o, "rank_from");
    for (const auto& x : r.list(o, "ranks_failed")) {
        if (!x.is_number_integer()) r.bad("oom.ranks_failed", "a list of integers");
        a.ranks_failed.push_back(x.get<std::int64_t>());
    }
    a.all_ranks_failed = r.opt_bool(o, "all_ranks_failed");
    a.step = r.opt_int(o, "step");
    a.last_logged_step = r.opt_int(o, "last_logged_step");
    a.step_basis = r.text(o, "step_basis");
    a.step_stride = r.opt_int(o, "step_stride");
    a.phase = r.text(o, "phase");
    a.phase_frame_path = r.text(o, "phase_frame_path");
    a.timing = r.text(o, "timing");
    if (a.timing.empty()) a.timing = "unknown";
    a.timing_reason = r.text(o, "timing_reason");
    a.oom_messages = r.integer(o, "messages_seen");
    for (const auto& e : r.list(o, "evidence")) {
        if (!e.is_object()) r.bad("oom.evidence", "a list of objects");
        a.evidence.push_back({r.text(e, "file"), r.integer(e, "line"), r.text(e, "text"), r.text(e, "role")});
    }
    if (const json* f = r.find(j, "failure")) {
        if (!f->is_object()) r.bad("failure", "an object");
        a.failure_kind = r.text(*f, "kind");
        a.failure_signature = r.text(*f, "signature");
        a.failure_file = r.text(*f, "file");
        a.failure_line = r.integer(*f, "line");
    }
    a.framework = r.text(j, "framework");
    if (a.framework.empty()) a.framework = "unknown";
    a.world_size = r.opt_int(j, "world_size");
    if (const json* l = r.find(j, "launch")) {
        if (!l->is_object()) r.bad("launch", "an object");
        a.launch_file = r.text(*l, "file");
        a.launch_line_no = r.integer(*l, "line");
        a.launch_line = r.text(*l, "text");
    }
    // `report` facts: {fact: line}; the line's text is its `report` entry among oom.evidence (rev29: the summary
    // dropped them, which no fixture showed until trainer frames gave log.training_frames).
    if (const json* rep = r.find(j, "reports")) {
        if (!rep->is_object()) r.bad("reports", "an object");
        for (const auto& [fact, line] : rep->items()) {
            if (!line.is_number_integer()) r.bad("reports", "an object of line numbers");
            log_evidence at{a.file, line.get<std::int64_t>(), "", "report"};
            for (const auto& e : a.evidence)
                if (e.line == at.line && e.role == "report") {
                    at = e;
                    break;
                }
            a.reports.emplace(fact, std::move(at));
        }
    }
    for (const auto& x : r.list(j, "settings")) {
        if (!x.is_object()) r.bad("settings", "a list of objects");
        log_analysis::setting v;
        v.fact = r.text(x, "fact");
        v.value = r.text(x, "value");
        v.at = {r.text(x, "file"), r.integer(x, "line"), r.text(x, "text"), "setting"};
        if (const auto n = r.opt_int(x, "count")) {
            const std::int64_t d = r.integer(x, "count_rounded_digits");
            if (*n < 1 || *n > 100000000000000) r.bad("count", "a parameter count from 1 to 10^14");
            if (d < 0 || d > 30) r.bad("count_rounded_digits", "0 (every digit printed) or the digits of a rounded count");
            v.count = printed_count{*n, static_cast<int>(d)};
        }
        a.settings.push_back(std::move(v));
    }
    if (const json* mc = r.find(j, "model_config"); mc && !mc->is_null()) {
        if (!mc->is_object()) r.bad("model_config", "an object");
        std::string text;
        for (const auto& l : r.list(*mc, "json_lines")) {
            if (!l.is_string()) r.bad("model_config.json_lines", "a list of strings");
            text += l.get<std::string>() + "\n";
        }
        a.model_config = log_analysis::printed_config{
            std::move(text), {r.text(*mc, "file"), r.integer(*mc, "line"), r.text(*mc, "text"), "model_config"}};
    }
    for (const auto& p : r.list(j, "memory_series")) {
        if (!p.is_object()) r.bad("memory_series", "a list of objects");
        memory_point m;
        m.step = r.integer(p, "step");
        m.bytes = r.integer(p, "bytes");
        m.statistic = r.text(p, "statistic");
        m.peak_bytes = r.opt_int(p, "peak_bytes").value_or(0);
        m.file = r.text(p, "file");
        m.line = r.integer(p, "line");
        a.memory_series.push_back(std::move(m));
    }
    a.memory_series_rank = r.opt_int(j, "memory_series_rank");
    a.growth_bytes_per_step = r.opt_num(j, "memory_growth_bytes_per_step");
    a.growth_r2 = r.opt_num(j, "memory_growth_r2");
    a.series_nondecreasing = r.opt_bool(j, "memory_series_nondecreasing");
    if (const json* s = r.find(j, "memory_steady")) {
        if (!s->is_object()) r.bad("memory_steady", "an object");
        const std::int64_t points = r.integer(*s, "points");
        if (points < 1 || points > static_cast<std::int64_t>(a.memory_series.size()))
            r.bad("memory_steady.points", "a count of memory_series readings");
        a.steady_from = a.memory_series.size() - static_cast<std::size_t>(points);
        a.steady_growth_bytes_per_step = r.opt_num(*s, "growth_bytes_per_step");
        a.steady_growth_bytes = r.opt_num(*s, "growth_bytes");
        a.steady_late_growth_bytes = r.opt_num(*s, "late_growth_bytes");
        a.steady_r2 = r.opt_num(*s, "r2");
    }
    a.series_monotonic = r.opt_bool(j, "memory_series_monotonic");
    a.capacity_from_log_bytes = r.opt_int(j, "capacity_from_log_bytes");
    if (const json* f = r.find(j, "forecast")) {
        if (!f->is_object()) r.bad("forecast", "an object");
        a.forecast = forecast_of(*f, r);
    }
    a.leak_signal = r.opt_bool(j, "leak_signal").value_or(false);
    a.alloc_retry_lines = r.integer(j, "alloc_retry_lines");
    a.growth_report_lines = r.opt_int(j, "growth_report_lines").value_or(0);
    for (const auto& w : r.list(j, "warnings"))
        if (w.is_string()) a.warnings.push_back(w.get<std::string>());
    return a;
}

log_analysis load_log_summary(const std::string& path) { return analysis_of_log_summary(read_json_file(path, "a log summary"), path); }

merged_log_summary load_merged_log_summary(const std::string& path) {
    const json j = read_json_file(path, "a log summary");
    const reader r{path};
    if (!j.is_object() || r.text(j, "schema") != "oomdx.log/1" || r.text(j, "kind") != "ranks")
        throw input_error::in_file(path, "not a merged log summary (oomdx log merge --format json)");
    const json& t = r.object(j, "ranks");
    merged_log_summary m;
    for (const auto& x : r.list(t, "failed_ranks")) {
        if (!x.is_number_integer()) r.bad("ranks.failed_ranks", "a list of integers");
        m.failed_ranks.push_back(x.get<std::int64_t>());
    }
    m.first_failed_rank = r.integer(t, "first_failed_rank", -1);
    m.ranks = static_cast<std::int64_t>(r.list(t, "rows").size());
    m.missing_ranks = r.integer(t, "missing_rank_count");
    if (const json* mi = r.find(j, "merge")) {
        if (!mi->is_object()) r.bad("merge", "an object");
        m.first_failed_summary = r.text(*mi, "first_failed_summary");
    }
    return m;
}

}  // namespace oomdx
