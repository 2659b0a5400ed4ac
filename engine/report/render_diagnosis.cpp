#include "engine/report/render_diagnosis.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "parsers/log/log_analyzer.h"

namespace oomdx {

namespace {

// Fixed phrases in English and Chinese.
const std::map<std::string, std::pair<const char*, const char*>>& phrases() {
    static const std::map<std::string, std::pair<const char*, const char*>> p = {
        {"title", {"oomdx diagnosis", "oomdx 诊断报告"}},
        {"title_preflight", {"oomdx preflight", "oomdx 启动前检查"}},
        {"summary", {"SUMMARY", "结论"}},
        {"inputs", {"INPUTS", "输入"}},
        {"oom", {"OOM TYPE AND TIMING", "OOM 类型与时机"}},
        {"route", {"ROUTE THROUGH THE METHOD", "诊断路径"}},
        {"estimate", {"STATIC ESTIMATE PER DEVICE", "静态内存估算(单卡)"}},
        {"snapshot", {"SNAPSHOT ANALYSIS", "Snapshot 分析"}},
        {"findings", {"FINDINGS", "发现"}},
        {"recs", {"RECOMMENDED OVERRIDES", "优化建议"}},
        {"next", {"WHAT TO DO NEXT", "下一步"}},
        {"uncertain", {"WHAT THE EVIDENCE CANNOT TELL", "尚不确定"}},
        {"explain", {"EXPLANATION", "推理过程"}},
        {"expected", {"expected after", "预期"}},
        {"evidence", {"evidence", "证据"}},
        {"why", {"why", "原因"}},
        {"confirm", {"to confirm", "如何确认"}},
        {"anchored", {"anchored on the measurement", "按实测校准"}},
        {"consistency", {"ESTIMATE AGAINST MEASUREMENTS", "估算与实测对比"}},
    };
    return p;
}

class writer {
public:
    explicit writer(const render_options& o) : m_o(o) {}
    std::string t(const std::string& key) const {
        auto it = phrases().find(key);
        if (it == phrases().end()) return key;
        return m_o.lang == "zh" ? it->second.second : it->second.first;
    }
    void heading(const std::string& key) {
        if (!m_out.empty()) m_out += "\n";
        if (m_o.markdown) m_out += "## " + t(key) + "\n\n";
        else m_out += style(t(key), "1") + "\n";
    }
    void line(const std::string& s, int indent = 1) {
        if (m_o.markdown) m_out += s + "\n";
        else m_out += std::string(static_cast<size_t>(indent) * 2, ' ') + s + "\n";
    }
    void bullet(const std::string& s, int indent = 1) {
        if (m_o.markdown) m_out += std::string(static_cast<size_t>(indent - 1) * 2, ' ') + "- " + s + "\n";
        else m_out += std::string(static_cast<size_t>(indent) * 2, ' ') + "- " + s + "\n";
    }
    void code(const std::vector<std::string>& lines, int indent = 2) {
        if (m_o.markdown) {
            m_out += "```\n";
            for (const auto& l : lines) m_out += l + "\n";
            m_out += "```\n";
        } else {
            for (const auto& l : lines) m_out += std::string(static_cast<size_t>(indent) * 2, ' ') + style(l, "36") + "\n";
        }
    }
    void blank() { m_out += "\n"; }
    std::string style(const std::string& s, const char* code) const {
        if (!m_o.color) return s;
        return fmt::format("\x1b[{}m{}\x1b[0m", code, s);
    }
    std::string sev(const std::string& s) const {
        if (s == "critical" || s == "high") return style(s, "31");
        if (s == "medium") return style(s, "33");
        return s;
    }
    std::string& out() { return m_out; }
    const render_options& opt() const { return m_o; }

private:
    const render_options& m_o;
    std::string m_out;
};

std::string opt_bytes(const std::optional<std::int64_t>& v) { return v ? format_bytes(*v) : "-"; }

std::string pct(double x) { return fmt::format("{:.1f}%", x * 100.0); }

void render_oom(writer& w, const log_analysis& a) {
    w.heading("oom");
    std::string head = fmt::format("source: {}", a.source);
    if (!a.device_kind.empty() && a.device_kind != "unknown") head += fmt::format(" ({})", a.device_kind);
    if (a.step) head += fmt::format(", failing step {}", *a.step);
    else if (a.last_logged_step) head += fmt::format(", last logged step {}", *a.last_logged_step);
    head += fmt::format(", timing {}", a.timing);
    if (a.rank) head += fmt::format(", rank {}", *a.rank);
    if (a.device_index) head += fmt::format(", device {}", *a.device_index);
    w.line(head);
    if (!a.timing_reason.empty()) w.line("timing: " + a.timing_reason);
    if (a.source != "none") {
        std::string sizes = fmt::format("requested {}, capacity {}, free {}, allocated by PyTorch {}, reserved but unallocated {}{}",
                                        opt_bytes(a.requested_bytes), opt_bytes(a.capacity_bytes), opt_bytes(a.free_bytes),
                                        opt_bytes(a.allocated_bytes), opt_bytes(a.reserved_unallocated_bytes),
                                        a.reserved_unallocated_derived ? " (derived: reserved - allocated)" : "");
        w.line(sizes);
        if (a.process_in_use_bytes) w.line("process in use " + format_bytes(*a.process_in_use_bytes) +
                                           (a.non_pytorch_bytes ? ", outside PyTorch " + format_bytes(*a.non_pytorch_bytes) : ""));
    }
    if (!a.ranks_failed.empty()) {
        std::string ranks;
        for (auto r : a.ranks_failed) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
        w.line(fmt::format("ranks with an OOM: {}{}", ranks,
                           a.all_ranks_failed ? (*a.all_ranks_failed ? " (all ranks)" : " (not all ranks)") : ""));
    }
    if (!a.memory_series.empty()) {
        const auto& first = a.memory_series.front();
        const auto& last = a.memory_series.back();
        w.line(fmt::format("memory per step ({}): step {} {} -> step {} {}{}{}", first.statistic, first.step,
                           format_bytes(first.bytes), last.step, format_bytes(last.bytes),
                           a.growth_bytes_per_step ? fmt::format(", growth {}/step", format_bytes(static_cast<std::int64_t>(*a.growth_bytes_per_step))) : "",
                           a.leak_signal ? " - steady growth: leak signal" : ""));
    }
    w.line(w.t("evidence") + ":");
    int shown = 0;
    for (const auto& e : a.evidence) {
        if (++shown > 8) break;
        std::string text = e.text.size() > 200 ? e.text.substr(0, 197) + "..." : e.text;
        w.bullet(fmt::format("{}:{} [{}] {}", e.file, e.line, e.role, text), 2);
    }
}

void bar(writer& w, const estimate_result& e) {
    if (e.capacity_bytes <= 0 || w.opt().markdown) return;
    const int width = 50;
    const double scale = width / static_cast<double>(std::max(e.capacity_bytes, e.device_peak_bytes));
    std::string s;
    static const char glyphs[] = "PGOMALTX";
    int used = 0;
    for (size_t i = 0; i < e.components.size(); ++i) {
        int n = static_cast<int>(std::lround(e.components[i].bytes * scale));
        for (int k = 0; k < n && used < width; ++k, ++used) s += glyphs[i % 8];
    }
    while (used < width) {
        s += '.';
        ++used;
    }
    const int budget_col = static_cast<int>(std::lround(e.budget_bytes * scale));
    std::string marker(static_cast<size_t>(std::min(budget_col, width)), ' ');
    w.line("[" + s + "]");
    w.line(" " + marker + "^ 95% of capacity");
}

void render_estimate(writer& w, const estimate_result& e, const diagnosis_report& r) {
    w.heading("estimate");
    if (w.opt().markdown) {
        w.line("| component | bytes | share of peak | how |");
        w.line("|---|---:|---:|---|");
        for (const auto& c : e.components)
            w.line(fmt::format("| {} | {} | {} | {} |", c.label, format_bytes(c.bytes),
                               e.peak_bytes > 0 ? pct(static_cast<double>(c.bytes) / e.peak_bytes) : "-", c.formula));
        w.blank();
    } else {
        for (const auto& c : e.components)
            w.line(fmt::format("{:<28} {:>12}  {:>6}  {}", c.label, format_bytes(c.bytes),
                               e.peak_bytes > 0 ? pct(static_cast<double>(c.bytes) / e.peak_bytes) : "-",
                               c.formula.size() > 70 ? c.formula.substr(0, 67) + "..." : c.formula));
    }
    w.line(fmt::format("live-tensor peak {} (compare with max_memory_allocated) at {}, stage {}",
                       format_bytes(e.peak_bytes), e.peak_phase, e.worst_stage));
    w.line(fmt::format("expected reserved {} (compare with max_memory_reserved); device use {}",
                       format_bytes(e.reserved_peak_bytes), format_bytes(e.device_peak_bytes)));
    if (e.capacity_bytes > 0)
        w.line(fmt::format("capacity {}, budget (x0.95) {}: {} by {}", format_bytes(e.capacity_bytes),
                           format_bytes(e.budget_bytes), e.fits ? "fits" : "DOES NOT FIT",
                           format_bytes(std::llabs(e.margin_bytes))));
    bar(w, e);
    if (r.log && r.log->allocated_bytes)
        w.line(fmt::format("measured at the OOM: allocated by PyTorch {} (the live-tensor figure), reserved {}",
                           format_bytes(*r.log->allocated_bytes), opt_bytes(r.log->reserved_bytes)));
    if (!r.snapshots.empty()) {
        const auto& s = r.snapshots.front();
        if (s.primary >= 0)
            w.line(fmt::format("measured in the snapshot: peak live {} , reserved {}",
                               format_bytes(s.devices[s.primary].peak_bytes), format_bytes(s.devices[s.primary].reserved_bytes)));
    }
    if (!e.complete) w.line("incomplete inputs: the defaults listed under uncertainty were assumed");
}

void render_snapshots(writer& w, const diagnosis_report& r) {
    w.heading("snapshot");
    for (const auto& s : r.snapshots) {
        if (s.primary < 0) {
            w.line(s.file + ": empty snapshot (no segments or trace)");
            continue;
        }
        const auto& d = s.devices[s.primary];
        w.line(fmt::format("{} (device {}): reserved {}, live allocated {}, pending free {}, inactive cached {}, peak {}",
                           s.file, d.device, format_bytes(d.reserved_bytes), format_bytes(d.allocated_bytes),
                           format_bytes(d.pending_free_bytes), format_bytes(d.inactive_bytes), format_bytes(d.peak_bytes)));
        w.line(fmt::format("fragmentation {} ({}), largest reusable inactive block {}", pct(d.fragmentation_rate),
                           d.fragmentation_level, format_bytes(d.largest_inactive_block_bytes)));
        std::string cats;
        int n = 0;
        for (const auto& c : d.categories) {
            if (c.bytes <= 0 || ++n > 6) continue;
            cats += (cats.empty() ? "" : ", ") + fmt::format("{} {} ({})", c.name, format_bytes(c.bytes), pct(c.share));
        }
        if (!cats.empty()) w.line("categories: " + cats);
        n = 0;
        for (const auto& site : d.sites) {
            if (++n > 5) break;
            w.bullet(fmt::format("{}  {} in {} blocks ({})", site.site, format_bytes(site.bytes), site.blocks, pct(site.share)), 2);
        }
        for (const auto& o : d.ooms) {
            w.line(fmt::format("OOM event at trace #{}: requested {}, device free {}, largest inactive block {}{}",
                               o.trace_index, format_bytes(o.requested_bytes),
                               o.device_free_bytes >= 0 ? format_bytes(o.device_free_bytes) : "-",
                               o.largest_inactive_block_bytes >= 0 ? format_bytes(o.largest_inactive_block_bytes) : "-",
                               o.fragmentation ? " - fragmentation" : ""));
            break;
        }
        for (const auto& p : d.patterns)
            w.bullet(fmt::format("pattern {}{}: {}", p.name, p.expected ? " (expected, not a leak)" : p.leak ? " (leak/retention)" : "",
                                 p.summary), 2);
    }
    if (r.trend) {
        w.line(fmt::format("trend over {} snapshots: {} - {}", r.trend->files.size(), r.trend->verdict, r.trend->explanation));
        if (!r.trend->growing_category.empty()) w.line("growing category: " + r.trend->growing_category);
        if (!r.trend->growing_site.empty()) w.line("growing site: " + r.trend->growing_site);
    }
    if (r.diff) {
        w.line(fmt::format("diff: live {} -> {}", format_bytes(r.diff->live_a), format_bytes(r.diff->live_b)));
        for (const auto& f : r.diff->findings) w.bullet(f, 2);
    }
}

std::string override_text(const override_value& o) {
    return fmt::format("{}={}", o.key, o.val.is_string() ? o.val.as_string() : o.val.to_string());
}

}  // namespace

std::string render_diagnosis_text(const diagnosis_report& r, const render_options& o) {
    writer w(o);
    const std::string title = w.t(r.mode == "preflight" ? "title_preflight" : "title");
    if (o.markdown) w.out() += "# " + title + "\n\n";
    else w.out() += w.style(title, "1") + "\n\n";
    w.heading("summary");
    w.line(w.style(r.headline, "1"));
    if (!r.inputs.empty()) {
        w.heading("inputs");
        for (const auto& i : r.inputs) w.bullet(i);
    }
    if (r.log) render_oom(w, *r.log);
    w.heading("route");
    for (const auto& s : r.route)
        w.bullet(fmt::format("{}: {}", s.title.empty() ? s.step : s.title, s.why));
    if (r.estimate) render_estimate(w, *r.estimate, r);
    if (!r.consistency.empty()) {
        w.heading("consistency");
        for (const auto& c : r.consistency)
            w.bullet(fmt::format("{}: measured {} {} ({}) vs estimated {} - {:.2f}x, {}", c.id, format_bytes(c.measured_bytes),
                                 c.statistic, c.source.empty() ? "-" : c.source, format_bytes(c.estimated_bytes), c.ratio,
                                 c.verdict == "agree" ? "agrees" : c.verdict == "measured_higher" ? "measured higher" : "measured lower"));
        if (r.anchor) w.line(fmt::format("expected figures: {}", r.anchor->why));
    }
    if (!r.snapshots.empty()) render_snapshots(w, r);
    w.heading("findings");
    if (r.findings.empty()) w.line("none");
    int n = 0;
    for (const auto& f : r.findings) {
        w.line(fmt::format("{}. [{}] {}", ++n, w.sev(f.severity), f.text));
        for (const auto& e : f.evidence) {
            if (e.location.rfind("rule ", 0) == 0 || e.location == "oomdx") continue;
            w.bullet(fmt::format("{} = {}  <- {}{}", e.fact, e.value, e.location,
                                 e.excerpt.empty() || e.excerpt == e.value ? "" : fmt::format(": \"{}\"", e.excerpt)), 3);
        }
    }
    w.heading("recs");
    if (r.recommendations.empty()) w.line("none");
    for (const auto& rec : r.recommendations) {
        w.line(fmt::format("{}. [{}] {}{}", rec.rank, rec.confidence, rec.action, rec.text.empty() ? "" : " - " + rec.text));
        if (!rec.rendered.empty()) {
            if (!o.markdown) w.line(fmt::format("in {} syntax:", rec.framework), 2);
            else w.line(fmt::format("In {} syntax:", rec.framework));
            w.code(rec.rendered, 3);
        }
        if (rec.expected_device_peak_bytes)
            w.line(fmt::format("{}: live peak {}, device {} - {}{}", w.t("expected"), format_bytes(*rec.expected_peak_bytes),
                               format_bytes(*rec.expected_device_peak_bytes),
                               rec.expected_fits && *rec.expected_fits ? "fits" : "still over the budget",
                               rec.expected_note.empty() ? "" : " (" + rec.expected_note + ")"),
                   2);
        if (rec.anchored_device_peak_bytes && r.anchor)
            w.line(fmt::format("{} ({}): device {} - {}{}", w.t("anchored"), r.anchor->source,
                               format_bytes(*rec.anchored_device_peak_bytes),
                               rec.anchored_fits && *rec.anchored_fits ? "fits" : "over the budget",
                               r.anchor->used ? " (the figure to trust here)" : ""),
                   2);
        else if (!rec.expected_note.empty())
            w.line(fmt::format("{}: {}", w.t("expected"), rec.expected_note), 2);
        if (!rec.rationale.empty()) w.line(fmt::format("{}: {}", w.t("why"), rec.rationale), 2);
        if (!rec.confirm.empty()) w.line(fmt::format("{}: {}", w.t("confirm"), rec.confirm), 2);
    }
    if (!r.next_steps.empty()) {
        w.heading("next");
        for (const auto& s : r.next_steps) w.bullet(s);
    }
    if (!r.uncertain.empty()) {
        w.heading("uncertain");
        for (const auto& s : r.uncertain) w.bullet(s);
    }
    if (o.explain) {
        w.heading("explain");
        w.line("Rules fired, in order:");
        for (const auto& f : r.inference.firings) {
            std::string facts;
            for (int id : f.fact_ids)
                if (const fact* x = r.facts.by_id(id)) facts += (facts.empty() ? "" : ", ") + x->name + "=" + x->val.to_string();
            w.line(fmt::format("FIRE {} {} [{}]: {}", f.seq, f.rule_id, f.step, facts), 2);
        }
        w.line("How each finding was reached:");
        for (const auto& f : r.findings) {
            w.line(fmt::format("{} (rule {})", f.id, f.rule_id), 2);
            for (const auto& h : f.how) w.line(h, 3);
        }
        w.line("Why other rules did not fire:");
        for (const auto& nm : r.inference.near_misses) w.line(fmt::format("{} [{}]: {}", nm.rule_id, nm.step, nm.reason), 2);
    }
    return w.out();
}

nlohmann::json diagnosis_json(const diagnosis_report& r, bool explain) {
    using nlohmann::json;
    json j;
    j["schema"] = r.mode == "preflight" ? "oomdx.preflight/1" : "oomdx.diagnosis/1";
    j["version"] = OOMDX_VERSION;
    j["mode"] = r.mode;
    j["headline"] = r.headline;
    j["framework"] = r.framework;
    j["inputs"] = r.inputs;
    if (r.log) {
        json lj = to_json(*r.log);
        j["oom"] = lj.contains("oom") ? lj["oom"] : lj;
        j["log"] = lj;
    } else {
        j["oom"] = nullptr;
    }
    j["estimate"] = r.estimate ? to_json(*r.estimate) : json(nullptr);
    if (r.snapshots.empty()) {
        j["snapshot"] = nullptr;
    } else {
        json s = json::array();
        for (const auto& a : r.snapshots) s.push_back(snap::to_json(a));
        j["snapshot"] = {{"files", s}};
        if (r.trend) j["snapshot"]["trend"] = snap::to_json(*r.trend);
        if (r.diff) j["snapshot"]["diff"] = snap::to_json(*r.diff);
    }
    j["route"] = json::array();
    for (const auto& s : r.route)
        j["route"].push_back({{"step", s.step}, {"title", s.title}, {"why", s.why},
                              {"from_rule", s.from_rule.empty() ? json(nullptr) : json(s.from_rule)}});
    auto ev_json = [](const std::vector<report_evidence>& ev) {
        json a = json::array();
        for (const auto& e : ev)
            a.push_back({{"fact", e.fact}, {"value", e.value}, {"location", e.location}, {"excerpt", e.excerpt}});
        return a;
    };
    j["findings"] = json::array();
    for (const auto& f : r.findings) {
        json fj = {{"id", f.id}, {"rule", f.rule_id}, {"step", f.step}, {"severity", f.severity},
                   {"text", f.text}, {"rationale", f.rationale}, {"evidence", ev_json(f.evidence)}};
        if (explain) fj["how"] = f.how;
        j["findings"].push_back(fj);
    }
    j["recommendations"] = json::array();
    for (const auto& rec : r.recommendations) {
        json ov = json::array();
        for (const auto& o : rec.overrides) {
            json v;
            if (o.val.is_integer()) v = o.val.as_integer();
            else if (o.val.is_number()) v = o.val.as_number();
            else if (o.val.is_bool()) v = o.val.as_bool();
            else if (o.val.is_string()) v = o.val.as_string();
            else v = o.val.to_string();
            ov.push_back({{"key", o.key}, {"value", v}});
        }
        j["recommendations"].push_back(
            {{"rank", rec.rank}, {"action", rec.action}, {"rule", rec.rule_id}, {"overrides", ov},
             {"rendered", rec.rendered}, {"framework", rec.framework}, {"text", rec.text},
             {"expected_peak_bytes", rec.expected_peak_bytes ? json(*rec.expected_peak_bytes) : json(nullptr)},
             {"expected_device_peak_bytes", rec.expected_device_peak_bytes ? json(*rec.expected_device_peak_bytes) : json(nullptr)},
             {"expected_fits", rec.expected_fits ? json(*rec.expected_fits) : json(nullptr)},
             {"anchored_device_peak_bytes", rec.anchored_device_peak_bytes ? json(*rec.anchored_device_peak_bytes) : json(nullptr)},
             {"anchored_fits", rec.anchored_fits ? json(*rec.anchored_fits) : json(nullptr)},
             {"expected_note", rec.expected_note},
             {"confidence", rec.confidence}, {"confirm", rec.confirm},
             {"rationale", rec.rationale}, {"evidence", ev_json(rec.evidence)}});
    }
    j["consistency"] = json::array();
    for (const auto& c : r.consistency)
        j["consistency"].push_back({{"id", c.id}, {"statistic", c.statistic}, {"measured_bytes", c.measured_bytes},
                                    {"estimated_bytes", c.estimated_bytes}, {"ratio", c.ratio}, {"source", c.source},
                                    {"verdict", c.verdict}, {"anchor", c.anchor}});
    if (r.anchor)
        j["anchor"] = {{"comparison", r.anchor->id}, {"source", r.anchor->source}, {"statistic", r.anchor->statistic},
                       {"offset_bytes", r.anchor->offset_bytes}, {"uses", r.anchor->used ? "anchored" : "estimate"},
                       {"why", r.anchor->why}};
    else
        j["anchor"] = nullptr;
    j["next_steps"] = r.next_steps;
    j["uncertain"] = r.uncertain;
    if (explain) {
        json trace = json::array();
        for (const auto& f : r.inference.firings) {
            json facts = json::array();
            for (int id : f.fact_ids)
                if (const fact* x = r.facts.by_id(id)) facts.push_back(x->name);
            trace.push_back({{"seq", f.seq}, {"rule", f.rule_id}, {"step", f.step}, {"facts", facts}});
        }
        json nm = json::array();
        for (const auto& n : r.inference.near_misses)
            nm.push_back({{"rule", n.rule_id}, {"step", n.step}, {"reason", n.reason}});
        j["explain"] = {{"trace", trace}, {"why_not", nm}};
        json contra = json::array();
        for (const auto& [a, b] : r.contradictions) contra.push_back({a, b});
        j["explain"]["contradictions"] = contra;
        json facts = json::array();
        for (const fact* f : r.facts.current()) {
            json v;
            if (f->val.is_integer()) v = f->val.as_integer();
            else if (f->val.is_number()) v = f->val.as_number();
            else if (f->val.is_bool()) v = f->val.as_bool();
            else if (f->val.is_string()) v = f->val.as_string();
            else if (f->val.is_null()) v = nullptr;
            else v = f->val.to_string();
            facts.push_back({{"name", f->name}, {"value", v}, {"source", f->prov.location()}});
        }
        j["explain"]["facts"] = facts;
    }
    j["exit_code"] = r.exit_code;
    return j;
}

}  // namespace oomdx
