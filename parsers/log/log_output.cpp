// Renderings of a log_analysis: JSON (oomdx.log/1), text/markdown, and facts.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/core/bytes.h"
#include "engine/core/utf8.h"
#include "parsers/log/log_analyzer.h"

namespace oomdx {

namespace {

nlohmann::json opt(const std::optional<std::int64_t>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
// Log text may hold invalid UTF-8; JSON strings must not.
std::string utf8(const std::string& s) { return to_valid_utf8(s, /*drop_controls=*/true); }
nlohmann::json str_or_null(const std::string& s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(utf8(s));
}

// Evidence line for the fact provenance: the primary message when there is one.
provenance prov(const log_analysis& a, std::int64_t line = -1, const std::string& text = {},
                const std::string& file = {}) {
    provenance p;
    p.producer = "log";
    p.file = file.empty() ? (a.file.empty() && !a.files.empty() ? a.files.front().path : a.file) : file;
    p.line = line >= 0 ? line : a.line;
    p.excerpt = line >= 0 ? text : a.message;
    return p;
}

const log_evidence* find_role(const log_analysis& a, const char* role) {
    for (const auto& e : a.evidence)
        if (e.role == role) return &e;
    return nullptr;
}

std::string steps(double v) { return std::to_string(std::llround(v)); }

std::string duration(double seconds) {
    if (seconds < 120) return fmt::format("{:.0f} s", seconds);
    if (seconds < 7200) return fmt::format("{:.0f} min", seconds / 60);
    if (seconds < 2 * 86400) return fmt::format("{:.1f} h", seconds / 3600);
    return fmt::format("{:.1f} days", seconds / 86400);
}

}  // namespace

nlohmann::json forecast_json(const memory_forecast& f) {
    using nlohmann::json;
    auto num = [](const std::optional<double>& v) { return v ? json(std::llround(*v)) : json(nullptr); };
    json j;
    j["available"] = f.available;
    j["projected"] = f.projected;
    j["reason"] = f.reason.empty() ? json(nullptr) : json(f.reason);
    j["rank"] = f.rank ? json(*f.rank) : json(nullptr);
    j["statistic"] = f.statistic.empty() ? json(nullptr) : json(f.statistic);
    j["capacity_bytes"] = f.capacity_bytes > 0 ? json(f.capacity_bytes) : json(nullptr);
    j["capacity_from"] = f.capacity_from.empty() ? json(nullptr) : json(f.capacity_from);
    j["budget_fraction"] = f.budget_fraction;
    j["growth_bytes_per_step"] = f.points > 0 ? json(std::llround(f.growth_bytes_per_step)) : json(nullptr);
    j["r2"] = std::round(f.r2 * 1000) / 1000;
    if (f.fitted) {
        j["growth_lo_bytes_per_step"] = std::llround(f.growth_lo_bytes_per_step);
        j["rise_bytes"] = std::llround(f.rise_bytes);
        j["noise_bytes"] = std::llround(f.noise_bytes);
    }
    j["basis"] = {{"points", f.points}, {"from_step", f.from_step}, {"to_step", f.last_step},
                  {"steps", f.last_step - f.from_step}};
    if (f.available) {
        j["capacity_step"] = std::llround(f.capacity_step);
        j["budget_step"] = std::llround(f.budget_step);
        j["interval_steps"] = {std::llround(f.capacity_lo), num(f.capacity_hi)};
        j["budget_interval_steps"] = {std::llround(f.budget_lo), num(f.budget_hi)};
    } else {
        j["capacity_step"] = j["budget_step"] = nullptr;
        j["interval_steps"] = j["budget_interval_steps"] = nullptr;
    }
    j["seconds_per_step"] = f.seconds_per_step ? json(std::round(*f.seconds_per_step * 1000) / 1000) : json(nullptr);
    j["eta_seconds"] = num(f.eta_seconds);
    j["budget_eta_seconds"] = num(f.budget_eta_seconds);
    return j;
}

std::string forecast_line(const memory_forecast& f) {
    const std::string who = f.rank ? fmt::format("rank {}", *f.rank) : std::string("the log");
    if (!f.available) return fmt::format("forecast: none for {} - {}", who, f.reason);
    std::string eta;
    if (f.budget_eta_seconds && f.eta_seconds)
        eta = fmt::format(", in about {} / {}", duration(*f.budget_eta_seconds), duration(*f.eta_seconds));
    return fmt::format(
        "forecast: {} reaches {:.0f}% of {} ({}) at step ~{} [{}, {}] and capacity at step ~{} [{}, {}]{} "
        "({} per step since step {}, R2 {:.2f}, {} readings, capacity from {})",
        who, f.budget_fraction * 100, format_bytes(f.capacity_bytes),
        format_bytes(static_cast<std::int64_t>(f.budget_fraction * static_cast<double>(f.capacity_bytes))),
        steps(f.budget_step), steps(f.budget_lo), f.budget_hi ? steps(*f.budget_hi) : "-", steps(f.capacity_step),
        steps(f.capacity_lo), f.capacity_hi ? steps(*f.capacity_hi) : "-", eta,
        format_bytes(static_cast<std::int64_t>(f.growth_bytes_per_step)), f.from_step, f.r2, f.points,
        f.capacity_from == "log_percent" ? "the log's percentages" : f.capacity_from == "oom_message" ? "the OOM message" : "the device");
}

nlohmann::json to_json(const log_analysis& a) {
    using nlohmann::json;
    json j;
    j["schema"] = "oomdx.log/1";
    json files = json::array();
    for (const auto& f : a.files)
        files.push_back({{"path", utf8(f.path)}, {"lines", f.lines}, {"bytes", f.bytes},
                         {"compressed", f.compressed}, {"long_lines", f.long_lines}});
    j["files"] = files;
    json o;
    o["source"] = a.source;
    o["device_kind"] = str_or_null(a.device_kind);
    o["signature"] = str_or_null(a.signature);
    o["message"] = str_or_null(a.message);
    o["file"] = str_or_null(a.file);
    o["line"] = a.line > 0 ? json(a.line) : json(nullptr);
    o["error_code"] = str_or_null(a.error_code);
    o["message_form"] = str_or_null(a.message_form);
    o["message_hint"] = str_or_null(a.message_hint);
    o["requested_bytes"] = opt(a.requested_bytes);
    o["capacity_bytes"] = opt(a.capacity_bytes);
    o["free_bytes"] = opt(a.free_bytes);
    o["allocated_bytes"] = opt(a.allocated_bytes);
    o["reserved_bytes"] = opt(a.reserved_bytes);
    o["reserved_unallocated_bytes"] = opt(a.reserved_unallocated_bytes);
    o["reserved_unallocated_derived"] =
        a.reserved_unallocated_bytes ? json(a.reserved_unallocated_derived) : json(nullptr);
    o["process_in_use_bytes"] = opt(a.process_in_use_bytes);
    o["other_processes"] = a.other_processes;
    o["other_processes_bytes"] = opt(a.other_processes_bytes);
    o["reserved_derived"] = a.reserved_bytes ? json(a.reserved_derived) : json(nullptr);
    o["non_pytorch_bytes"] = opt(a.non_pytorch_bytes);
    o["allowed_bytes"] = opt(a.allowed_bytes);
    o["active_bytes"] = opt(a.active_bytes);
    o["private_pool_bytes"] = opt(a.private_pool_bytes);
    o["device_index"] = opt(a.device_index);
    o["rank"] = opt(a.rank);
    o["rank_from"] = str_or_null(a.rank_from);
    o["ranks_failed"] = a.ranks_failed;
    o["all_ranks_failed"] = a.all_ranks_failed ? json(*a.all_ranks_failed) : json(nullptr);
    o["step"] = opt(a.step);
    o["last_logged_step"] = opt(a.last_logged_step);
    o["step_basis"] = str_or_null(a.step_basis);
    o["step_stride"] = opt(a.step_stride);
    o["phase"] = str_or_null(a.phase);
    o["phase_frame_path"] = str_or_null(a.phase_frame_path);
    o["timing"] = a.timing;
    o["timing_reason"] = str_or_null(a.timing_reason);
    o["messages_seen"] = a.oom_messages;
    json ev = json::array();
    for (const auto& e : a.evidence)
        ev.push_back({{"file", utf8(e.file)}, {"line", e.line}, {"text", utf8(e.text)}, {"role", e.role}});
    o["evidence"] = ev;
    j["oom"] = o;
    if (!a.failure_kind.empty())
        j["failure"] = {{"kind", a.failure_kind}, {"signature", a.failure_signature},
                        {"file", utf8(a.failure_file)}, {"line", a.failure_line}};
    else
        j["failure"] = nullptr;
    j["framework"] = a.framework;
    j["world_size"] = opt(a.world_size);
    j["launch"] = a.launch_line.empty()
                      ? json(nullptr)
                      : json{{"file", utf8(a.launch_file)}, {"line", a.launch_line_no}, {"text", utf8(a.launch_line)}};
    json st = json::array();
    for (const auto& x : a.settings) {
        json e{{"fact", x.fact}, {"value", utf8(x.value)}, {"file", utf8(x.at.file)}, {"line", x.at.line},
               {"text", utf8(x.at.text)}};
        if (x.count) {  // a parameter count: the integer printed, and 0 or the significant digits of its rounded form
            e["count"] = x.count->n;
            e["count_rounded_digits"] = x.count->rounded_digits;
        }
        st.push_back(std::move(e));
    }
    j["settings"] = st;
    // The printed model config, one entry per line (control bytes are not kept in strings).
    json mc = nullptr;
    if (a.model_config) {
        json lines = json::array();
        std::string_view t = a.model_config->text;
        for (size_t at = 0; at < t.size();) {
            const size_t nl = std::min(t.find('\n', at), t.size());
            lines.push_back(utf8(std::string(t.substr(at, nl - at))));
            at = nl + 1;
        }
        mc = {{"file", utf8(a.model_config->at.file)}, {"line", a.model_config->at.line},
              {"text", utf8(a.model_config->at.text)}, {"json_lines", lines}};
    }
    j["model_config"] = mc;
    json ms = json::array();
    for (const auto& p : a.memory_series) {
        json point{{"step", p.step}, {"bytes", p.bytes}, {"statistic", p.statistic}, {"file", utf8(p.file)}, {"line", p.line}};
        if (p.peak_bytes > 0) point["peak_bytes"] = p.peak_bytes;  // the step's peak printed beside the reading
        ms.push_back(std::move(point));
    }
    j["memory_series"] = ms;
    j["memory_series_rank"] = opt(a.memory_series_rank);
    j["memory_growth_bytes_per_step"] =
        a.growth_bytes_per_step ? json(static_cast<std::int64_t>(*a.growth_bytes_per_step)) : json(nullptr);
    j["memory_growth_r2"] = a.growth_r2 ? json(std::round(*a.growth_r2 * 1000) / 1000) : json(nullptr);
    j["memory_series_nondecreasing"] = a.series_nondecreasing ? json(*a.series_nondecreasing) : json(nullptr);
    if (a.steady_growth_bytes_per_step && a.steady_from < a.memory_series.size()) {
        j["memory_steady"] = {
            {"from_step", a.memory_series[a.steady_from].step},
            {"points", a.memory_series.size() - a.steady_from},
            {"growth_bytes_per_step", static_cast<std::int64_t>(*a.steady_growth_bytes_per_step)},
            {"growth_bytes", static_cast<std::int64_t>(a.steady_growth_bytes.value_or(0))},
            {"late_growth_bytes", a.steady_late_growth_bytes ? json(static_cast<std::int64_t>(*a.steady_late_growth_bytes)) : json(nullptr)},
            {"r2", std::round(a.steady_r2.value_or(0) * 1000) / 1000}};
    } else {
        j["memory_steady"] = nullptr;
    }
    j["memory_series_monotonic"] = a.series_monotonic ? json(*a.series_monotonic) : json(nullptr);
    j["capacity_from_log_bytes"] = opt(a.capacity_from_log_bytes);
    j["forecast"] = a.forecast ? forecast_json(*a.forecast) : json(nullptr);
    j["leak_signal"] = a.leak_signal;
    j["alloc_retry_lines"] = a.alloc_retry_lines;
    if (a.growth_report_lines > 0) j["growth_report_lines"] = a.growth_report_lines;
    if (!a.reports.empty()) {
        json r = json::object();
        for (const auto& [fact, e] : a.reports) r[fact] = e.line;
        j["reports"] = r;
    }
    json w = json::array();
    for (const auto& x : a.warnings) w.push_back(utf8(x));
    j["warnings"] = w;
    return j;
}

std::string render_text(const log_analysis& a, bool markdown, bool color) {
    std::string out;
    auto bold = [&](const std::string& s) {
        if (markdown) return "**" + s + "**";
        if (color) return "\x1b[1m" + s + "\x1b[0m";
        return s;
    };
    auto size = [](const std::optional<std::int64_t>& v) { return v ? format_bytes(*v) : std::string("-"); };
    auto num = [](const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
    const std::string h = markdown ? "## " : "";
    const std::string li = markdown ? "- " : "  ";

    out += h + "Log analysis (Step 0)\n\n";
    std::string headline;
    if (a.source == "none") {
        headline = a.failure_kind == "not_oom"
                       ? "No OOM: the log fails with a different error (" + a.failure_signature + ")."
                       : "No OOM message in the log.";
    } else if (a.source == "unknown_oom") {
        headline = a.message.empty() || a.failure_kind == "crash"
                       ? "The job crashed, but the log does not say why (no OOM message found)."
                       : "An OOM is reported but its source cannot be told.";
    } else {
        headline = fmt::format("OOM in {} ({}), timing {}.", a.source,
                               a.device_kind.empty() ? "unknown device" : a.device_kind, a.timing);
    }
    out += bold(headline) + "\n\n";
    if (!a.message.empty())
        out += li + fmt::format("message   {}:{}: {}\n", a.file, a.line,
                                a.message.size() > 300 ? std::string(utf8_prefix(a.message, 300)) + "..." : a.message);
    if (a.source != "none") {
        out += li + fmt::format("requested {}   capacity {}   free {}\n", size(a.requested_bytes),
                                size(a.capacity_bytes), size(a.free_bytes));
        out += li + fmt::format("allocated {}   reserved {}   reserved-unallocated {}{}\n",
                                size(a.allocated_bytes), size(a.reserved_bytes),
                                size(a.reserved_unallocated_bytes),
                                a.reserved_unallocated_derived ? " (derived)" : "");
        if (a.process_in_use_bytes || a.non_pytorch_bytes || a.allowed_bytes)
            out += li + fmt::format("process in use {}   non-PyTorch {}   allowed {}\n",
                                    size(a.process_in_use_bytes), size(a.non_pytorch_bytes),
                                    size(a.allowed_bytes));
        out += li + fmt::format("device {}   rank {}{}   error code {}\n", num(a.device_index),
                                num(a.rank), a.rank_from.empty() ? "" : " (from " + a.rank_from + ")",
                                a.error_code.empty() ? "-" : a.error_code);
        if (a.ranks_failed.size() > 1)
            out += li + fmt::format("{} ranks reported an OOM (first: {}){}\n", a.ranks_failed.size(),
                                    a.ranks_failed.front(),
                                    a.all_ranks_failed && *a.all_ranks_failed ? ", all ranks failed" : "");
    } else if (a.rank) {
        out += li + fmt::format("failed rank {} (from {})\n", *a.rank, a.rank_from);
    }
    out += li + fmt::format("step {}   last logged step {}{}   timing {}{}\n", num(a.step),
                            num(a.last_logged_step),
                            a.step_basis.empty() ? "" : " (" + a.step_basis + ")", a.timing,
                            a.timing_reason.empty() ? "" : " (" + a.timing_reason + ")");
    if (a.step_stride)
        out += li + fmt::format("the bar moves {} at a time: the failing step is one of the next {}\n", *a.step_stride,
                                *a.step_stride);
    if (!a.phase.empty()) out += li + fmt::format("phase {}\n", a.phase);
    out += li + fmt::format("framework {}   world size {}\n", a.framework, num(a.world_size));
    if (!a.launch_line.empty()) out += li + fmt::format("launch    {}:{}: {}\n", a.launch_file, a.launch_line_no, a.launch_line.substr(0, 300));
    for (const auto& x : a.settings)
        out += li + fmt::format("setting   {} = {}  ({}:{})\n", x.fact, x.value, x.at.file, x.at.line);
    if (a.model_config)
        out += li + fmt::format("model config printed  ({}:{}, {} bytes of JSON)\n", a.model_config->at.file,
                                a.model_config->at.line, a.model_config->text.size());
    if (!a.memory_series.empty()) {
        const auto& f = a.memory_series.front();
        const auto& l = a.memory_series.back();
        out += li + fmt::format("memory ({}) {} readings: step {} {} -> step {} {}", f.statistic,
                                a.memory_series.size(), f.step, format_bytes(f.bytes), l.step,
                                format_bytes(l.bytes));
        if (a.growth_bytes_per_step)
            out += fmt::format(", {} per step", format_bytes(static_cast<std::int64_t>(*a.growth_bytes_per_step)));
        if (a.steady_from > 0 && a.steady_growth_bytes_per_step && a.steady_from < a.memory_series.size())
            out += fmt::format(" ({} per step after the warm-up, from step {})",
                               format_bytes(static_cast<std::int64_t>(*a.steady_growth_bytes_per_step)),
                               a.memory_series[a.steady_from].step);
        out += "\n";
        if (a.forecast) out += li + forecast_line(*a.forecast) + "\n";
        if (a.leak_signal)
            out += li + bold(fmt::format("Leak signal: memory grew steadily after the warm-up before a {} OOM.", a.timing)) + "\n";
    }
    if (a.alloc_retry_lines > 0)
        out += li + fmt::format("{} allocator-retry / cache-flush warning line(s): memory pressure before the end\n",
                                a.alloc_retry_lines);
    if (a.growth_report_lines > 0)
        out += li + fmt::format("{} line(s) report in words that memory grew over the run\n", a.growth_report_lines);
    if (!a.evidence.empty()) {
        out += "\n" + h + "Evidence\n\n";
        for (const auto& e : a.evidence)
            out += li + fmt::format("{}:{} [{}] {}\n", e.file, e.line, e.role,
                                    e.text.size() > 200 ? std::string(utf8_prefix(e.text, 200)) + "..." : e.text);
    }
    for (const auto& w : a.warnings) out += "\n" + li + "warning: " + w;
    if (!a.warnings.empty()) out += "\n";
    return out;
}

void emit_forecast_facts(const memory_forecast& f, fact_sink& sink, const provenance& p) {
    // log.forecast.available is the rules' verdict (rules/evidence_log.yaml)
    sink.emit("log.forecast.projected", value(f.projected), p);
    if (f.rank) sink.emit("log.forecast.rank", value(*f.rank), p);
    auto bytes = [](double v) { return value(static_cast<std::int64_t>(std::llround(v))); };
    if (f.points > 0) {
        sink.emit("log.forecast.growth_bytes_per_step", bytes(f.growth_bytes_per_step), p);
        sink.emit("log.forecast.r2", value(f.r2), p);
    }
    if (f.fitted) {
        sink.emit("log.forecast.growth_lo_bytes_per_step", bytes(f.growth_lo_bytes_per_step), p);
        sink.emit("log.forecast.rise_bytes", bytes(f.rise_bytes), p);
        sink.emit("log.forecast.noise_bytes", bytes(f.noise_bytes), p);
    }
    if (!f.projected) return;
    sink.emit("log.forecast.capacity_bytes", value(f.capacity_bytes), p);
    sink.emit("log.forecast.capacity_from", value(f.capacity_from), p);
    sink.emit("log.forecast.capacity_step", value(static_cast<std::int64_t>(std::llround(f.capacity_step))), p);
    sink.emit("log.forecast.budget_step", value(static_cast<std::int64_t>(std::llround(f.budget_step))), p);
    sink.emit("log.forecast.steps_to_capacity", value(static_cast<std::int64_t>(std::llround(f.capacity_step - static_cast<double>(f.last_step)))), p);
    sink.emit("log.forecast.steps_to_budget", value(static_cast<std::int64_t>(std::llround(f.budget_step - static_cast<double>(f.last_step)))), p);
    if (f.eta_seconds) sink.emit("log.forecast.eta_seconds", value(*f.eta_seconds), p);
    if (f.budget_eta_seconds) sink.emit("log.forecast.budget_eta_seconds", value(*f.budget_eta_seconds), p);
}

void emit_facts(const log_analysis& a, fact_sink& sink) {
    auto p = prov(a);
    sink.emit("oom.source", value(a.source), p);
    auto bytes = [&](const char* name, const std::optional<std::int64_t>& v) {
        if (v) sink.emit(name, value(*v), p);
    };
    if (a.source != "none") {
        if (!a.device_kind.empty()) sink.emit("oom.device_kind", value(a.device_kind), p);
        bytes("oom.requested_bytes", a.requested_bytes);
        bytes("oom.capacity_bytes", a.capacity_bytes);
        bytes("oom.free_bytes", a.free_bytes);
        bytes("oom.allocated_bytes", a.allocated_bytes);
        bytes("oom.reserved_bytes", a.reserved_bytes);
        if (a.reserved_bytes && a.reserved_derived) sink.emit("oom.reserved_derived", value(true), p);
        bytes("oom.reserved_unallocated_bytes", a.reserved_unallocated_bytes);
        if (a.reserved_unallocated_bytes)
            sink.emit("oom.reserved_unallocated_derived", value(a.reserved_unallocated_derived), p);
        bytes("oom.process_in_use_bytes", a.process_in_use_bytes);
        bytes("oom.non_pytorch_bytes", a.non_pytorch_bytes);
        bytes("oom.other_processes_bytes", a.other_processes_bytes);
        if (a.other_processes > 0) sink.emit("oom.other_processes", value(static_cast<std::int64_t>(a.other_processes)), p);
        bytes("oom.allowed_bytes", a.allowed_bytes);
        bytes("oom.active_bytes", a.active_bytes);
        bytes("oom.device_index", a.device_index);
        if (a.line > 0) sink.emit("oom.line", value(a.line), p);
        if (!a.message.empty()) sink.emit("oom.message", value(a.message), p);
        if (!a.error_code.empty()) sink.emit("oom.error_code", value(a.error_code), p);
        if (!a.message_form.empty()) sink.emit("oom.message_form", value(a.message_form), p);
        if (!a.message_hint.empty()) sink.emit("oom.message_hint", value(a.message_hint), p);
        if (!a.ranks_failed.empty())
            sink.emit("oom.ranks_failed", value(static_cast<std::int64_t>(a.ranks_failed.size())), p);
        if (a.all_ranks_failed) sink.emit("oom.all_ranks_failed", value(*a.all_ranks_failed), p);
        const log_evidence* ph = find_role(a, "phase");
        sink.emit("oom.phase", value(a.phase.empty() ? std::string("unknown") : a.phase),
                  ph ? prov(a, ph->line, ph->text, ph->file) : p);
        if (const log_evidence* fr = find_role(a, "phase_frame"); fr && !a.phase_frame_path.empty())
            sink.emit("oom.phase_frame_path", value(a.phase_frame_path), prov(a, fr->line, fr->text, fr->file));
    }
    if (a.rank) {
        const log_evidence* r = find_role(a, "rank");
        sink.emit("oom.rank", value(*a.rank), r ? prov(a, r->line, r->text, r->file) : p);
    }
    const log_evidence* pr = find_role(a, "progress");
    auto pp = pr ? prov(a, pr->line, pr->text, pr->file) : p;
    if (a.step) sink.emit("oom.step", value(*a.step), pp);
    if (a.last_logged_step) sink.emit("oom.last_logged_step", value(*a.last_logged_step), pp);
    if (!a.step_basis.empty()) sink.emit("oom.step_basis", value(a.step_basis), pp);
    if (a.step_stride) sink.emit("oom.step_stride", value(*a.step_stride), pp);
    // a later OOM line read further on the failure's counter (rules/evidence_log.yaml, evidence_oom_caught)
    if (a.oom_counter_step && a.later_oom_step && a.later_oom_line) {
        sink.emit("oom.counter_step", value(*a.oom_counter_step), pp);
        const log_evidence& l = *a.later_oom_line;
        sink.emit("oom.later_oom_step", value(*a.later_oom_step), prov(a, l.line, l.text, l.file));
        if (a.newest_step && a.newest_progress) {
            const log_evidence& n = *a.newest_progress;
            sink.emit("oom.newest_step", value(*a.newest_step), prov(a, n.line, n.text, n.file));
        }
    }
    // What ended the log when it has no OOM message: a named failure that is not an OOM
    // (not_oom), an unexplained crash (crash), or nothing at all (none: a cut paste, a config).
    if (a.source == "none" || !a.failure_kind.empty())
        sink.emit("log.failure_kind", value(a.failure_kind.empty() ? std::string("none") : a.failure_kind), p);
    const log_evidence* fw = find_role(a, "framework");
    sink.emit("log.framework", value(a.framework), fw ? prov(a, fw->line, fw->text, fw->file) : p);
    if (a.world_size) sink.emit("log.world_size", value(*a.world_size), p);
    std::int64_t lines = 0;
    for (const auto& f : a.files) lines += f.lines;
    sink.emit("log.lines", value(lines), p);
    if (!a.launch_line.empty())
        sink.emit("log.launch_command", value(a.launch_line), prov(a, a.launch_line_no, a.launch_line, a.launch_file));
    if (!a.memory_series.empty()) {
        const auto& last = a.memory_series.back();
        auto mp = prov(a, last.line, "", last.file);
        sink.emit("log.memory_series_points", value(static_cast<std::int64_t>(a.memory_series.size())), mp);
        sink.emit("log.memory_last_bytes", value(last.bytes), mp);
        sink.emit("log.memory_series_statistic", value(last.statistic), mp);
        if (last.peak_bytes > 0) sink.emit("log.memory_last_peak_bytes", value(last.peak_bytes), mp);
        const auto& first = a.memory_series.front();
        auto fp = prov(a, first.line, "", first.file);
        sink.emit("log.memory_first_bytes", value(first.bytes), fp);
        sink.emit("log.memory_first_step", value(first.step), fp);
        sink.emit("log.memory_last_step", value(last.step), mp);
        const auto& hi = *std::max_element(a.memory_series.begin(), a.memory_series.end(),
                                           [](const memory_point& x, const memory_point& y) { return x.bytes < y.bytes; });
        auto hp = prov(a, hi.line, "", hi.file);
        sink.emit("log.memory_max_bytes", value(hi.bytes), hp);
        sink.emit("log.memory_max_step", value(hi.step), hp);
        if (a.series_nondecreasing) sink.emit("log.memory_series_nondecreasing", value(*a.series_nondecreasing), mp);
        if (a.growth_bytes_per_step) {
            sink.emit("log.memory_growth_bytes_per_step",
                      value(static_cast<std::int64_t>(*a.growth_bytes_per_step)), mp);
            sink.emit("log.memory_growth_r2", value(*a.growth_r2), mp);
        }
        if (a.steady_growth_bytes_per_step && a.steady_from < a.memory_series.size()) {
            const auto& w = a.memory_series[a.steady_from];
            auto wp = prov(a, w.line, "", w.file);
            sink.emit("log.memory_warmup_end_step", value(w.step), wp);
            sink.emit("log.memory_steady_first_bytes", value(w.bytes), wp);
            sink.emit("log.memory_steady_points",
                      value(static_cast<std::int64_t>(a.memory_series.size() - a.steady_from)), mp);
            sink.emit("log.memory_steady_growth_bytes_per_step",
                      value(static_cast<std::int64_t>(*a.steady_growth_bytes_per_step)), mp);
            sink.emit("log.memory_steady_growth_bytes",
                      value(static_cast<std::int64_t>(a.steady_growth_bytes.value_or(0))), mp);
            sink.emit("log.memory_steady_growth_r2", value(a.steady_r2.value_or(0)), mp);
            if (a.steady_late_growth_bytes)
                sink.emit("log.memory_steady_late_growth_bytes", value(static_cast<std::int64_t>(*a.steady_late_growth_bytes)), mp);
        }
    }
    if (a.capacity_from_log_bytes) sink.emit("log.capacity_bytes", value(*a.capacity_from_log_bytes), p);
    if (a.forecast) emit_forecast_facts(*a.forecast, sink, a.memory_series.empty() ? p : prov(a, a.memory_series.back().line, "", a.memory_series.back().file));
    if (a.alloc_retry_lines > 0) {
        const log_evidence* e = find_role(a, "pressure");
        sink.emit("log.alloc_retry_lines", value(a.alloc_retry_lines),
                  e ? prov(a, e->line, e->text, e->file) : p);
    }
    if (a.growth_report_lines > 0) {
        const log_evidence* e = find_role(a, "growth");
        sink.emit("log.growth_reported", value(true), e ? prov(a, e->line, e->text, e->file) : p);
    }
    for (const auto& [fact, e] : a.reports) sink.emit(fact, value(true), prov(a, e.line, e.text, e.file));
}

}  // namespace oomdx
