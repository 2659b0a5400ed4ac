#include "engine/report/render_diagnosis.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/core/utf8.h"
#include "engine/report/render_diff.h"
#include "engine/report/render_plan.h"
#include "engine/report/report_phrases.h"
#include "parsers/log/log_analyzer.h"

namespace oomdx {

namespace {

class writer {
public:
    explicit writer(const render_options& o) : m_o(o) {}
    std::string t(const std::string& key, const message_args& args = {}) const { return phrase(m_o.lang, key, args); }
    const std::string& lang() const { return m_o.lang; }
    std::string v(const std::string& kind, const std::string& value) const { return value_phrase(m_o.lang, kind, value); }
    std::string produced(const std::string& prefix, const std::string& english) const {
        return translated(m_o.lang, prefix, english);
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
    // A line under a numbered item (a recommendation's figures, why, check): in markdown a bullet nested in the
    // item, so that it neither runs into the line before it nor ends the numbered list.
    void detail(const std::string& s) {
        if (m_o.markdown) m_out += "   - " + s + "\n";
        else m_out += "    " + s + "\n";
    }
    void code(const std::vector<std::string>& lines, int indent = 2, const std::string& md_indent = "") {
        if (m_o.markdown) {
            m_out += md_indent + "```\n";
            for (const auto& l : lines) m_out += md_indent + l + "\n";
            m_out += md_indent + "```\n";
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
        const std::string shown = v("level", s);
        if (s == "critical" || s == "high") return style(shown, "31");
        if (s == "medium") return style(shown, "33");
        return shown;
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
    w.heading("report.heading.oom");
    // rev25: an OOM named only in the reporter's words (log.oom_reported_in_words) has no source the parser read;
    // the line says it is reported in words, as the summary and the uncertainty line do
    const bool in_words = a.source == "none" && a.reports.count("log.oom_reported_in_words");
    std::string head = in_words ? w.t("report.oom.source_in_words") : w.t("report.oom.source", {{"source", w.v("source", a.source)}});
    if (!a.device_kind.empty() && a.device_kind != "unknown") head += w.t("report.oom.device_kind", {{"kind", w.v("device_kind", a.device_kind)}});
    if (a.step) head += w.t("report.oom.failing_step", {{"step", std::to_string(*a.step)}});
    else if (a.last_logged_step) head += w.t("report.oom.last_logged_step", {{"step", std::to_string(*a.last_logged_step)}});
    // a bar that moves k at a time: the failing step is one of the next k
    if (!a.step && a.last_logged_step && a.step_stride)
        head += w.t("report.oom.step_stride", {{"stride", std::to_string(*a.step_stride)}});
    head += w.t("report.oom.timing", {{"timing", w.v("timing", a.timing)}});
    if (a.rank) head += w.t("report.oom.rank", {{"rank", std::to_string(*a.rank)}});
    if (a.device_index) head += w.t("report.oom.device", {{"device", std::to_string(*a.device_index)}});
    w.line(head);
    if (!a.timing_reason.empty())
        w.line(w.t("report.oom.timing_reason", {{"reason", w.produced("log.timing.", a.timing_reason)}}));
    const bool any_size = a.requested_bytes || a.capacity_bytes || a.free_bytes || a.allocated_bytes ||
                          a.reserved_unallocated_bytes;
    if (a.source != "none" && any_size) {  // a message without figures (HCCL, host) gets no line of dashes
        w.line(w.t("report.oom.sizes", {{"requested", opt_bytes(a.requested_bytes)},
                                        {"capacity", opt_bytes(a.capacity_bytes)},
                                        {"free", opt_bytes(a.free_bytes)},
                                        {"allocated", opt_bytes(a.allocated_bytes)},
                                        {"unallocated", opt_bytes(a.reserved_unallocated_bytes)},
                                        {"derived", a.reserved_unallocated_derived ? w.t("report.oom.derived") : ""}}));
    }
    if (a.source != "none") {
        if (a.process_in_use_bytes)
            w.line(w.t("report.oom.process_in_use", {{"bytes", format_bytes(*a.process_in_use_bytes)}}) +
                   (a.non_pytorch_bytes ? w.t("report.oom.outside_pytorch", {{"bytes", format_bytes(*a.non_pytorch_bytes)}}) : ""));
    }
    if (!a.ranks_failed.empty()) {
        std::string ranks;
        for (auto r : a.ranks_failed) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
        w.line(w.t("report.oom.ranks", {{"ranks", ranks},
                                        {"all", a.all_ranks_failed ? w.t(*a.all_ranks_failed ? "report.oom.all_ranks"
                                                                                              : "report.oom.not_all_ranks")
                                                                   : ""}}));
    }
    if (a.memory_series.size() == 1) {  // one reading: no "step N -> step N"
        const auto& only = a.memory_series.front();
        w.line(w.t("report.oom.memory_single", {{"statistic", w.v("statistic", only.statistic)},
                                                {"step", std::to_string(only.step)},
                                                {"bytes", format_bytes(only.bytes)}}));
    } else if (!a.memory_series.empty()) {
        const auto& first = a.memory_series.front();
        const auto& last = a.memory_series.back();
        w.line(w.t("report.oom.memory_series",
                   {{"statistic", w.v("statistic", first.statistic)},
                    {"first_step", std::to_string(first.step)},
                    {"first", format_bytes(first.bytes)},
                    {"last_step", std::to_string(last.step)},
                    {"last", format_bytes(last.bytes)},
                    {"growth", a.growth_bytes_per_step
                                   ? w.t("report.oom.growth", {{"bytes", format_bytes(static_cast<std::int64_t>(*a.growth_bytes_per_step))}})
                                   : ""},
                    {"leak", a.leak_signal ? w.t("report.oom.leak_signal") : ""}}));
    }
    // One bullet per log line, its roles together ("[oom, report]"): the same line read twice was listed twice
    // (rev23); no "evidence:" heading over nothing.
    struct shown_line {
        const log_evidence* e;
        std::string roles;
    };
    std::vector<shown_line> lines;
    for (const auto& e : a.evidence) {
        auto same = std::find_if(lines.begin(), lines.end(),
                                 [&](const shown_line& l) { return l.e->file == e.file && l.e->line == e.line; });
        if (same != lines.end()) same->roles += ", " + e.role;
        else if (lines.size() < 8) lines.push_back({&e, e.role});
    }
    if (lines.empty()) return;
    w.line(w.t("report.evidence"));
    for (const auto& l : lines) {
        const std::string& t = l.e->text;
        std::string text = t.size() > 200 ? std::string(utf8_prefix(t, 197)) + "..." : t;
        w.bullet(fmt::format("{}:{} [{}] {}", l.e->file, l.e->line, l.roles, text), 2);
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
    w.line(" " + marker + "^ " + w.t("report.estimate.bar_budget"));
}

// Terminal columns of a string (CJK characters take two).
size_t columns(const std::string& s) {
    size_t n = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if ((c & 0xC0) == 0x80) continue;
        n += c >= 0xE3 && c <= 0xED ? 2 : 1;  // U+3000..U+DFFF: CJK, Hangul (wide)
    }
    return n;
}

std::string pad_right(const std::string& s, size_t width) {
    const size_t c = columns(s);
    return c >= width ? s : s + std::string(width - c, ' ');
}

// Cut to `max` terminal columns with "..." (on a character boundary).
std::string cut(const std::string& s, size_t max) {
    if (columns(s) <= max) return s;
    size_t used = 0, i = 0;
    while (i < s.size()) {
        size_t len = 1;
        while (i + len < s.size() && (static_cast<unsigned char>(s[i + len]) & 0xC0) == 0x80) ++len;
        const size_t w = columns(s.substr(i, len));
        if (used + w > max - 3) break;
        used += w;
        i += len;
    }
    return s.substr(0, i) + "...";
}

void render_estimate(writer& w, const estimate_result& e, const diagnosis_report& r) {
    const std::string& lang = w.opt().lang;
    w.heading("report.heading.estimate");
    if (w.opt().markdown) {
        w.line(w.t("report.estimate.table_header"));
        w.line("|---|---:|---:|---|");
        for (const auto& c : e.components)
            w.line(fmt::format("| {} | {} | {} | {} |", estimate_label(lang, c), format_bytes(c.bytes),
                               e.peak_bytes > 0 ? pct(static_cast<double>(c.bytes) / e.peak_bytes) : "-",
                               w.produced("estimate.formula.", c.formula)));
        w.blank();
    } else {
        for (const auto& c : e.components)
            w.line(fmt::format("{} {:>12}  {:>6}  {}", pad_right(estimate_label(lang, c), 28), format_bytes(c.bytes),
                               e.peak_bytes > 0 ? pct(static_cast<double>(c.bytes) / e.peak_bytes) : "-",
                               cut(w.produced("estimate.formula.", c.formula), 70)));
    }
    w.line(w.t("report.estimate.live_peak", {{"peak", format_bytes(e.peak_bytes)},
                                             {"phase", w.v("phase", e.peak_phase)},
                                             {"stage", w.produced("estimate.stage.", e.worst_stage)}}));
    w.line(w.t("report.estimate.reserved", {{"reserved", format_bytes(e.reserved_peak_bytes)},
                                            {"device", format_bytes(e.device_peak_bytes)}}));
    if (e.high_bytes > e.low_bytes) {
        w.line(w.t("report.estimate.interval", {{"low", format_bytes(e.low_bytes)}, {"high", format_bytes(e.high_bytes)}}));
        for (const auto& why : e.interval_reasons) w.bullet(w.produced("estimate.interval.", why), 2);
    }
    // est25: varying step lengths grow the cache (what max_memory_reserved / nvidia-smi read), not the verdict
    if (e.cache_high_bytes > e.high_bytes) {
        w.line(w.t("report.estimate.cache_high", {{"reading", format_bytes(e.cache_high_bytes)}}));
        if (e.high_bytes <= e.low_bytes)
            for (const auto& why : e.interval_reasons) w.bullet(w.produced("estimate.interval.", why), 2);
    }
    // est65: bitsandbytes paged optimizer states resident on the device: a reading, not the verdict
    if (e.paged_reading_high_bytes > e.device_peak_bytes)
        w.line(w.t("report.estimate.paged_reading", {{"reading", format_bytes(e.paged_reading_high_bytes)}}));
    // rev33: a device figure the cache model capped at the card says why the verdict counts it (as the recommendations do)
    if (e.reserved_capped)
        w.line(w.t("report.estimate.capped", {{"device", format_bytes(e.device_peak_bytes)}, {"live", format_bytes(e.peak_bytes)}}));
    if (e.capacity_bytes > 0)
        w.line(w.t(e.fits ? "report.estimate.fits_by" : "report.estimate.over_by",
                   {{"capacity", format_bytes(e.capacity_bytes)},
                    {"budget", format_bytes(e.budget_bytes)},
                    {"margin", format_bytes(std::llabs(e.margin_bytes))}}));
    // Preflight judges the interval's high end: say where it lands whenever it does not agree with the
    // point estimate (the two are never left to read as different verdicts).
    if (e.capacity_bytes > 0 && e.high_bytes > e.device_peak_bytes) {
        const bool high_fits = e.high_bytes <= e.budget_bytes;
        const std::int64_t m = e.budget_bytes - e.high_bytes;
        const bool pre = r.mode == "preflight";
        w.line(w.t(high_fits ? "report.estimate.high_fits_by"
                             : (e.fits ? (pre ? "report.estimate.straddles" : "report.estimate.straddles_crash")
                                       : (pre ? "report.estimate.high_over_by" : "report.estimate.high_over_by_crash")),
                   {{"high", format_bytes(e.high_bytes)}, {"margin", format_bytes(std::llabs(m))}}));
    }
    bar(w, e);
    if (r.log && r.log->allocated_bytes)
        w.line(w.t("report.estimate.measured_oom", {{"allocated", format_bytes(*r.log->allocated_bytes)},
                                                    {"reserved", opt_bytes(r.log->reserved_bytes)}}));
    if (!r.snapshots.empty()) {
        const auto& s = r.snapshots.front();
        if (s.primary >= 0)
            w.line(w.t("report.estimate.measured_snapshot", {{"peak", format_bytes(s.devices[s.primary].peak_bytes)},
                                                             {"reserved", format_bytes(s.devices[s.primary].reserved_bytes)}}));
    }
    if (!e.complete) w.line(w.t("report.estimate.incomplete"));
    if (const std::string d = framework_defaults_sentence(w.lang(), r); !d.empty()) w.line(d);
}

// Several ranks of one job (rev37): each rank's peak, live and reserved, the failed ones marked,
// and the outlier the rules name; the rows of the failed, the outlier and the first ranks when many.
void render_ranks(writer& w, const snap::rank_table& t) {
    // rev38: of two ranks the median is one of them (the upper): the two rows say it, the header gives the spread only
    if (t.rows.size() == 2)
        w.line(w.t("report.snapshot.ranks_two", {{"spread", pct(t.peak_spread)}}));
    else
        w.line(w.t("report.snapshot.ranks", {{"n", std::to_string(t.rows.size())},
                                             {"median", format_bytes(t.median_peak)},
                                             {"spread", pct(t.peak_spread)}}));
    constexpr std::size_t k_rows = 8;
    std::size_t shown = 0;
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
        const auto& row = t.rows[i];
        const bool failed = row.oom_events > 0;
        if (t.rows.size() > k_rows && shown >= k_rows - 2 && !failed && static_cast<int>(i) != t.outlier) continue;
        ++shown;
        w.bullet(w.t("report.snapshot.rank_row", {{"rank", std::to_string(row.rank)},
                                                  {"device", std::to_string(row.device)},
                                                  {"peak", format_bytes(row.peak)},
                                                  {"live", format_bytes(row.live)},
                                                  {"reserved", format_bytes(row.reserved)},
                                                  {"failed", failed ? w.t("report.snapshot.rank_failed") : ""}}),
                 2);
    }
    if (shown < t.rows.size())
        w.bullet(w.t("report.snapshot.rank_more", {{"n", std::to_string(t.rows.size() - shown)}}), 2);
    if (t.outlier >= 0)
        w.line(w.t("report.snapshot.rank_outlier", {{"rank", std::to_string(t.rows[t.outlier].rank)},
                                                    {"deviation", fmt::format("{:+.1f}%", t.outlier_deviation * 100.0)}}));
    else if (t.rows.size() >= 3)
        w.line(w.t("report.snapshot.rank_no_outlier"));
}

void render_snapshots(writer& w, const diagnosis_report& r) {
    w.heading("report.heading.snapshot");
    for (const auto& s : r.snapshots) {
        if (s.primary < 0) {
            w.line(w.t("report.snapshot.empty", {{"file", s.file}}));
            continue;
        }
        const auto& d = s.devices[s.primary];
        w.line(w.t("report.snapshot.memory", {{"file", s.file},
                                              {"device", std::to_string(d.device)},
                                              {"reserved", format_bytes(d.reserved_bytes)},
                                              {"allocated", format_bytes(d.allocated_bytes)},
                                              {"pending", format_bytes(d.pending_free_bytes)},
                                              {"inactive", format_bytes(d.inactive_bytes)},
                                              {"peak", format_bytes(d.peak_bytes)}}));
        w.line(w.t("report.snapshot.fragmentation", {{"rate", pct(d.fragmentation_rate)},
                                                     {"level", w.v("fragmentation", d.fragmentation_level)},
                                                     {"largest", format_bytes(d.largest_inactive_block_bytes)}}));
        std::string cats;
        int n = 0;
        for (const auto& c : d.categories) {
            if (c.bytes <= 0 || ++n > 6) continue;
            cats += (cats.empty() ? "" : w.t("report.list_sep")) +
                    w.t("report.snapshot.category", {{"category", w.v("category", c.name)},
                                                      {"bytes", format_bytes(c.bytes)},
                                                      {"share", pct(c.share)}});
        }
        if (!cats.empty()) w.line(w.t("report.snapshot.categories", {{"categories", cats}}));
        n = 0;
        for (const auto& site : d.sites) {
            if (++n > 5) break;
            w.bullet(w.t("report.snapshot.site", {{"site", w.produced("snapshot.site.", site.site)},
                                                  {"bytes", format_bytes(site.bytes)},
                                                  {"blocks", std::to_string(site.blocks)},
                                                  {"share", pct(site.share)}}),
                     2);
        }
        if (!d.ooms.empty()) {
            // the last event, which the snapshot.oom.* facts and the findings describe; the moment's live and
            // reserved bytes and the failing site with it (rev34)
            const auto& o = d.ooms.back();
            w.line(w.t("report.snapshot.oom_event",
                       {{"index", std::to_string(o.trace_index)},
                        {"requested", format_bytes(o.requested_bytes)},
                        {"site", o.site.empty() ? "" : w.t("report.snapshot.oom_site", {{"site", o.site}})},
                        {"live", format_bytes(o.live_bytes)},
                        {"reserved", format_bytes(o.reserved_bytes)},
                        {"free", o.device_free_bytes >= 0 ? format_bytes(o.device_free_bytes) : "-"},
                        {"largest", o.largest_inactive_block_bytes >= 0 ? format_bytes(o.largest_inactive_block_bytes) : "-"},
                        {"fragmentation", o.fragmentation ? w.t("report.snapshot.oom_fragmentation") : ""}}));
        }
        for (const auto& p : d.patterns)
            w.bullet(w.t("report.snapshot.pattern",
                         {{"name", p.name},
                          {"tag", p.expected ? w.t("report.snapshot.expected") : p.leak ? w.t("report.snapshot.leak") : ""},
                          {"summary", w.produced("snapshot.pattern.", p.summary)}}),
                     2);
    }
    if (r.trend) {
        w.line(w.t("report.snapshot.trend", {{"n", std::to_string(r.trend->files.size())},
                                             {"verdict", w.v("trend", r.trend->verdict)},
                                             {"explanation", w.produced("snapshot.trend.", r.trend->explanation)}}));
        if (!r.trend->growing_category.empty())
            w.line(w.t("report.snapshot.growing_category", {{"category", w.v("category", r.trend->growing_category)}}));
        if (!r.trend->growing_site.empty()) w.line(w.t("report.snapshot.growing_site", {{"site", r.trend->growing_site}}));
    }
    if (r.diff) {
        w.line(w.t("report.snapshot.diff", {{"a", format_bytes(r.diff->live_a)}, {"b", format_bytes(r.diff->live_b)}}));
        for (const auto& f : r.diff->findings) w.bullet(w.produced("snapshot.diff.", f), 2);
    }
    if (r.ranks) render_ranks(w, *r.ranks);
}

}  // namespace

std::string limits_sentence(const std::string& lang, const diagnosis_report& r) {
    if (!r.limits || r.limits->max_micro_batch < 0) return "";
    const fit_limits& l = *r.limits;
    // rev35: in the job's own keys where the adapter names them ("per_device_train_batch_size=1")
    auto term = [&](const std::string& key, const char* generic, std::int64_t n) {
        return key.empty() ? phrase(lang, generic, {{"n", std::to_string(n)}}) : key + "=" + std::to_string(n);
    };
    const message_args a = {
        {"max_micro", term(r.micro_batch_key, "report.preflight.limit_term.micro", l.max_micro_batch)},
        {"at_seq", term(r.seq_len_key, "report.preflight.limit_term.seq", l.seq_len)},
        {"max_seq", term(r.seq_len_key, "report.preflight.limit_term.seq", l.max_seq_len)},
        {"at_micro", term(r.micro_batch_key, "report.preflight.limit_term.micro", l.micro_batch)}};
    if (l.max_micro_batch == 0 && l.max_seq_len <= 0) return phrase(lang, "report.preflight.limits_none", a);
    if (l.max_micro_batch == 0) return phrase(lang, "report.preflight.limits_no_micro", a);
    return phrase(lang, "report.preflight.limits", a);
}

std::string framework_defaults_sentence(const std::string& lang, const diagnosis_report& r) {
    if (r.applied_defaults.empty()) return "";
    std::string list;
    for (const auto& d : r.applied_defaults) list += (list.empty() ? "" : ", ") + d;
    return phrase(lang, "report.estimate.framework_defaults", {{"framework", r.framework}, {"defaults", list}});
}

std::string render_diagnosis_text(const diagnosis_report& r, const render_options& o) {
    writer w(o);
    const std::string title = w.t(r.mode == "preflight" ? "report.title_preflight" : "report.title");
    if (o.markdown) w.out() += "# " + title + "\n\n";
    else w.out() += w.style(title, "1") + "\n\n";
    w.heading("report.heading.summary");
    w.line(w.style(r.headline, "1"));
    if (!r.inputs.empty()) {
        w.heading("report.heading.inputs");
        for (const auto& i : r.inputs) w.bullet(i);
    }
    if (r.log) render_oom(w, *r.log);
    w.heading("report.heading.route");
    for (const auto& g : grouped_route(r.route)) {
        w.bullet(g.from.empty() ? w.t("report.route.item", {{"step", g.title}, {"why", g.first}})
                                : w.t("report.route.item_from", {{"step", g.title}, {"from", g.from}, {"why", g.first}}));
        for (size_t i = 1; i < g.whys.size(); ++i) w.bullet(g.whys[i], 2);  // another rule's reason for the same step
    }
    if (r.estimate) render_estimate(w, *r.estimate, r);
    if (const std::string l = limits_sentence(w.lang(), r); !l.empty()) w.line(l);
    if (r.baseline_diff) {
        w.heading("report.heading.baseline");
        w.out() += render_diff_text(*r.baseline_diff, o.markdown).substr(o.markdown ? 15 : 12);
    }
    if (!r.consistency.empty()) {
        w.heading("report.heading.consistency");
        for (const auto& c : r.consistency)
            w.bullet(w.t("report.consistency.line", {{"id", w.v("comparison", c.id)},
                                                     {"measured", format_bytes(c.measured_bytes)},
                                                     {"statistic", w.v("statistic", c.statistic)},
                                                     {"source", c.source.empty() ? "-" : c.source},
                                                     {"estimated", format_bytes(c.estimated_bytes)},
                                                     {"ratio", fmt::format("{:.2f}", c.ratio)},
                                                     {"verdict", w.v("consistency", c.verdict)}}));
        if (r.anchor) w.line(w.t("report.consistency.expected_figures", {{"why", r.anchor->why}}));
    }
    if (!r.snapshots.empty()) render_snapshots(w, r);
    w.heading("report.heading.findings");
    if (r.findings.empty()) w.line(w.t("report.none"));
    int n = 0;
    for (const auto& f : r.findings) {
        w.line(fmt::format("{}. [{}] {}", ++n, w.sev(f.severity), f.text));
        for (const auto& e : f.evidence) {
            if (e.location.rfind("rule ", 0) == 0 || e.location == "oomdx") continue;
            w.bullet(fmt::format("{} = {}  <- {}{}", e.fact, e.value, e.location,
                                 e.excerpt.empty() || e.excerpt == e.value ? "" : fmt::format(": \"{}\"", e.excerpt)), 3);
        }
    }
    w.heading("report.heading.recs");
    if (r.recommendations.empty()) w.line(w.t("report.none"));
    for (const auto& rec : r.recommendations) {
        w.line(fmt::format("{}. [{}] {}{}", rec.rank, w.v("level", rec.confidence), rec.action,
                           rec.text.empty() ? "" : " - " + rec.text));
        if (!rec.rendered.empty()) {
            const bool canon = rec.framework == "canonical";
            w.detail(w.t(canon ? (o.markdown ? "report.rec.syntax_canonical_md" : "report.rec.syntax_canonical")
                               : (o.markdown ? "report.rec.syntax_md" : "report.rec.syntax"),
                         {{"framework", rec.framework}}));
            w.code(rec.rendered, 3, "     ");
        }
        if (rec.expected_device_peak_bytes) {
            const std::string verdict = w.t(rec_verdict_key(rec));
            const std::string note = rec.expected_note.empty() ? "" : w.t("report.rec.note", {{"note", rec.expected_note}});
            const std::string device = expected_device_text(rec);
            if (!rec.expected_peak_bytes)
                w.detail(w.t("report.rec.expected_after_device", {{"device", device}, {"verdict", verdict}, {"note", note}}));
            else
                w.detail(w.t("report.rec.expected_after", {{"live", format_bytes(*rec.expected_peak_bytes)},
                                                           {"device", device}, {"verdict", verdict}, {"note", note}}));
            if (rec.expected_capped && rec.expected_peak_bytes)
                w.detail(w.t("report.rec.capped", {{"live", format_bytes(*rec.expected_peak_bytes)}, {"device", device}}));
        } else if (!rec.expected_note.empty())
            w.detail(w.t("report.rec.expected_note", {{"note", rec.expected_note}}));
        if (rec.expected_host_bytes)
            w.detail(w.t("report.rec.host_after", {{"host", format_bytes(*rec.expected_host_bytes)},
                                                   {"sizing", value_phrase(w.opt().lang, "host_sizing", rec.expected_host_sizing)}}));
        if (rec.anchored_device_peak_bytes && r.anchor)
            w.detail(w.t("report.rec.anchored",
                       {{"source", r.anchor->source},
                        {"device", format_bytes(*rec.anchored_device_peak_bytes)},
                        {"verdict", w.t(rec.anchored_fits && *rec.anchored_fits ? "report.rec.fits" : "report.rec.over")},
                        {"trust", r.anchor->used ? w.t("report.rec.trust") : ""}}));
        if (!rec.rationale.empty()) w.detail(w.t("report.rec.why", {{"rationale", rec.rationale}}));
        if (!rec.confirm.empty()) w.detail(w.t("report.rec.confirm", {{"confirm", rec.confirm}}));
    }
    if (o.markdown && !r.not_offered.empty() && !r.recommendations.empty()) w.blank();  // not a continuation of the list
    for (const auto& n : r.not_offered)
        w.line(w.t("report.rec.not_offered", {{"action", n.action}, {"rule", n.rule_id}, {"why", n.why}}));
    if (r.plan) {
        w.heading("report.heading.plan");
        const plan_answer& p = *r.plan;
        std::string block = render_plan_text(p, o.explain ? 5 : 3, r.lang);
        if (r.anchor && r.anchor->used && p.fits) {
            const double left = p.base_device_peak_bytes > 0 ? static_cast<double>(p.expected_device_peak_bytes) /
                                                                   static_cast<double>(p.base_device_peak_bytes)
                                                             : 1.0;
            const std::int64_t anchored = p.expected_device_peak_bytes + r.anchor->offset_after(left);
            block += w.t("report.plan.anchored",
                         {{"source", r.anchor->source},
                          {"device", format_bytes(anchored)},
                          {"verdict", w.t(anchored <= p.budget_bytes ? "report.rec.fits" : "report.rec.over")}}) +
                     "\n";
        }
        std::size_t start = 0;
        while (start < block.size()) {
            const std::size_t end = block.find('\n', start);
            w.line(block.substr(start, end == std::string::npos ? std::string::npos : end - start));
            if (end == std::string::npos) break;
            start = end + 1;
        }
    }
    if (!r.next_steps.empty()) {
        w.heading("report.heading.next");
        for (const auto& s : r.next_steps) w.bullet(s);
    }
    if (!r.uncertain.empty()) {
        w.heading("report.heading.uncertain");
        for (const auto& s : r.uncertain) w.bullet(s);
    }
    if (o.explain) {
        w.heading("report.heading.explain");
        w.line(w.t("report.explain.fired"));
        for (const auto& f : r.inference.firings) {
            std::string facts;
            for (int id : f.fact_ids)
                if (const fact* x = r.facts.by_id(id)) facts += (facts.empty() ? "" : ", ") + x->name + "=" + x->val.to_string();
            w.line(fmt::format("FIRE {} {} [{}]: {}", f.seq, f.rule_id, f.step, facts), 2);
        }
        w.line(w.t("report.explain.how"));
        for (const auto& f : r.findings) {
            w.line(fmt::format("{} (rule {})", f.id, f.rule_id), 2);
            for (const auto& h : f.how) w.line(h, 3);
        }
        w.line(w.t("report.explain.why_not"));
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
    j["lang"] = r.lang;
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
        if (r.ranks) j["snapshot"]["ranks"] = snap::to_json(*r.ranks);
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
        // only where the change offloads to the host (oomdx.diagnosis/1, additive)
        if (rec.expected_host_bytes) j["recommendations"].back()["expected_host_bytes_per_node"] = *rec.expected_host_bytes;
        if (rec.expected_device_high_bytes)  // rev42: preflight's verdict on the change is this end's
            j["recommendations"].back()["expected_device_high_bytes"] = *rec.expected_device_high_bytes;
        if (rec.expected_capped) j["recommendations"].back()["expected_device_capped"] = true;
    }
    j["baseline_diff"] = r.baseline_diff ? to_json(*r.baseline_diff) : json(nullptr);
    j["plan"] = r.plan ? plan_json(*r.plan) : json(nullptr);
    j["not_offered"] = json::array();
    for (const auto& n : r.not_offered) j["not_offered"].push_back({{"action", n.action}, {"rule", n.rule_id}, {"why", n.why}});
    if (r.mode == "preflight") {
        // No verdict (no estimate: an unknown model, a job that does not train): null, not a guess.
        const std::string verdict = r.facts.string("diagnosis.budget_verdict").value_or("unknown");
        j["fits"] = verdict == "unknown" ? json(nullptr) : json(verdict != "exceeds");
        j["verdict_basis"] = "high end of the interval (estimate.high_bytes), or the figure anchored on a measurement";
        j["straddles_budget"] = r.straddles_budget;
    }
    if (!r.applied_defaults.empty()) j["framework_defaults_applied"] = r.applied_defaults;
    if (r.limits && r.limits->max_micro_batch >= 0)
        j["max_fitting"] = {{"micro_batch", r.limits->max_micro_batch}, {"at_seq_len", r.limits->seq_len},
                            {"seq_len", r.limits->max_seq_len}, {"at_micro_batch", r.limits->micro_batch},
                            {"micro_batch_key", r.micro_batch_key}, {"seq_len_key", r.seq_len_key}};
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
