#include "engine/report/render_html.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/core/utf8.h"
#include "engine/report/render_diagnosis.h"
#include "engine/report/render_plan.h"
#include "engine/report/report_phrases.h"

namespace oomdx {

std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size() + s.size() / 8);
    static const char repl[] = "\xEF\xBF\xBD";  // U+FFFD
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = p[i];
        if (c < 0x80) {
            switch (c) {
                case '&': out += "&amp;"; break;
                case '<': out += "&lt;"; break;
                case '>': out += "&gt;"; break;
                case '"': out += "&quot;"; break;
                case '\'': out += "&#39;"; break;
                case '\t':
                case '\n': out += static_cast<char>(c); break;
                case '\r': break;
                default:
                    if (c < 0x20 || c == 0x7F) out += repl;
                    else out += static_cast<char>(c);
            }
            ++i;
            continue;
        }
        // Multi-byte UTF-8: accept only well-formed, shortest-form, non-surrogate sequences.
        const std::size_t len = utf8_sequence_length(s, i, /*allow_surrogates=*/false);
        if (len == 0) {
            out += repl;
            ++i;
            continue;
        }
        // C1 controls (U+0080..U+009F) are not text either.
        if (c == 0xC2 && p[i + 1] < 0xA0) out += repl;
        else out.append(s.data() + i, len);
        i += len;
    }
    return out;
}

namespace {

std::string esc(std::string_view s) { return html_escape(s); }

// Escaped, cut to about `max` bytes (on a UTF-8 boundary) with an ellipsis.
std::string esc_cut(std::string_view s, std::size_t max) {
    if (s.size() <= max) return esc(s);
    std::size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    return esc(s.substr(0, cut)) + "\xE2\x80\xA6";
}

std::string pct(double x) { return fmt::format("{:.1f}%", x * 100.0); }
std::string bytes(std::int64_t b) { return format_bytes(b); }
std::string opt_bytes(const std::optional<std::int64_t>& v) { return v ? format_bytes(*v) : "-"; }

const char* const k_palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                 "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
std::string colour(std::size_t i) { return k_palette[i % (sizeof(k_palette) / sizeof(k_palette[0]))]; }

const char* k_css = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC","Source Han Sans SC","WenQuanYi Zen Hei","WenQuanYi Micro Hei","PingFang SC","Microsoft YaHei",sans-serif;margin:0;background:#f5f6f8;color:#1d2330;line-height:1.45}
main{max-width:1100px;margin:0 auto;padding:18px 24px 40px}
h1{font-size:1.5em;margin:.3em 0}
h2{font-size:1.2em;margin:1.6em 0 .5em;padding-bottom:.2em;border-bottom:2px solid #d5d9e0}
h3{font-size:1.05em;margin:1.2em 0 .4em}
section{background:#fff;border-radius:6px;padding:4px 18px 14px;margin:14px 0;box-shadow:0 1px 2px rgba(0,0,0,.08)}
.headline{font-size:1.15em;font-weight:600;padding:12px 16px;border-radius:6px;border-left:6px solid #4e79a7;background:#eef3fa}
.headline.bad{border-color:#d62728;background:#fdeeee}
.headline.good{border-color:#2ca02c;background:#eef8ee}
table{border-collapse:collapse;margin:.4em 0;font-size:.92em}
th{white-space:nowrap}td.loc{white-space:nowrap}
td,th{border-bottom:1px solid #e3e6eb;padding:3px 10px 3px 0;text-align:left;vertical-align:top}
td.num,th.num{text-align:right;white-space:nowrap}
pre,code{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;font-size:.88em}
pre{background:#f0f2f5;padding:8px 10px;border-radius:4px;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
.ev{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em;color:#333;word-break:break-all}
.muted{color:#66707d;font-size:.9em}
.sev{display:inline-block;padding:0 7px;border-radius:9px;font-size:.8em;font-weight:600;color:#fff;background:#7f7f7f;margin-right:6px}
.sev.critical,.sev.high{background:#d62728}.sev.medium{background:#e08a00}.sev.low,.sev.info{background:#4e79a7}
.fits{color:#2a7d2a;font-weight:600}.nofit{color:#c62020;font-weight:600}
.finding,.rec{margin:.6em 0 1em;padding-left:10px;border-left:3px solid #d5d9e0}
svg.chart{display:block;margin:6px 0 2px;max-width:100%;height:auto;background:#fff}
svg.chart text{font-family:system-ui,"Noto Sans CJK SC","Source Han Sans SC","WenQuanYi Zen Hei","WenQuanYi Micro Hei","PingFang SC","Microsoft YaHei",sans-serif;font-size:12px;fill:#1d2330}
svg.chart .ax{stroke:#9aa3ad;stroke-width:1}
svg.chart .grid{stroke:#e6e9ee;stroke-width:1}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:.85em;margin:2px 0 8px}
.legend span.sw{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px;border-radius:2px}
.caption{font-size:.85em;color:#66707d;margin:0 0 10px}
.legend .lt{font-weight:600;margin-right:-8px}
)";

// ---------------------------------------------------------------------------------------------
// SVG charts. Every chart carries class="chart" and at least one shape; callers skip a chart
// when there is nothing to draw and say so in text instead.

struct bar_seg {
    std::string name;
    std::int64_t bytes = 0;
    std::string colour;
};

struct bar_row {
    std::string label;
    std::vector<bar_seg> segs;
    std::string note;  // printed after the bar
    std::string key;   // when set: the row is <g data-bar="key">, its legend data-for="key"
};

struct v_line {
    std::int64_t at = 0;
    std::string label;
    std::string colour;
    bool dashed = false;
};

std::string legend(const std::vector<bar_seg>& items) {
    std::string s = "<div class=\"legend\">";
    for (const auto& it : items)
        s += fmt::format("<span><span class=\"sw\" style=\"background:{}\"></span>{} {}</span>", it.colour, esc(it.name),
                         esc(bytes(it.bytes)));
    return s + "</div>\n";
}

// The legend of one bar: its title (what the bar shows, with its colon) and exactly the segments it draws.
std::string row_legend(const bar_row& r, const std::string& title) {
    std::string s = fmt::format("<div class=\"legend\" data-for=\"{}\"><span class=\"lt\">{}</span>", esc(r.key), esc(title));
    for (const auto& it : r.segs) {
        if (it.bytes <= 0) continue;
        s += fmt::format("<span data-seg=\"{}\" data-bytes=\"{}\"><span class=\"sw\" style=\"background:{}\"></span>{} {}</span>",
                         esc(it.name), it.bytes, it.colour, esc(it.name), esc(bytes(it.bytes)));
    }
    return s + "</div>\n";
}

// Horizontal stacked bars on one byte scale, with vertical reference lines. label_sep joins a segment's name and
// bytes in its tooltip (the language's colon: "：" in Chinese).
std::string bar_chart(const std::vector<bar_row>& rows, const std::vector<v_line>& lines, const std::string& aria,
                      const std::string& label_sep) {
    std::int64_t scale = 1;
    for (const auto& r : rows) {
        std::int64_t sum = 0;
        for (const auto& s : r.segs) sum += std::max<std::int64_t>(0, s.bytes);
        scale = std::max(scale, sum);
    }
    for (const auto& l : lines) scale = std::max(scale, l.at);
    scale = static_cast<std::int64_t>(static_cast<double>(scale) * 1.04);
    const double x0 = 230, x1 = 900, row_h = 30;
    const double top = 12 + 15 * static_cast<double>(lines.size()) + 6;  // one label row per line
    const double h = top + row_h * static_cast<double>(rows.size()) + 28;
    auto xpos = [&](double b) { return x0 + (x1 - x0) * b / static_cast<double>(scale); };
    std::string s = fmt::format(
        "<svg class=\"chart\" viewBox=\"0 0 1000 {:.0f}\" width=\"1000\" "
        "height=\"{:.0f}\" role=\"img\" aria-label=\"{}\">\n",
        h, h, esc(aria));
    // Axis ticks: five steps.
    for (int k = 0; k <= 4; ++k) {
        const double b = static_cast<double>(scale) * k / 4.0;
        const double x = xpos(b);
        s += fmt::format("<line class=\"grid\" x1=\"{:.1f}\" y1=\"{:.0f}\" x2=\"{:.1f}\" y2=\"{:.0f}\"/>", x, top - 4, x,
                         h - 22);
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\" fill=\"#66707d\">{}</text>\n", x, h - 8,
                         esc(bytes(static_cast<std::int64_t>(b))));
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        const double y = top + row_h * static_cast<double>(i);
        s += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", x0 - 8, y + row_h * 0.55,
                         esc_cut(r.label, 34));
        if (!r.key.empty()) s += fmt::format("<g data-bar=\"{}\">", esc(r.key));
        double b = 0;
        for (const auto& seg : r.segs) {
            if (seg.bytes <= 0) continue;
            const double xa = xpos(b), xb = xpos(b + static_cast<double>(seg.bytes));
            s += fmt::format(
                "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" stroke=\"#fff\" "
                "stroke-width=\"0.5\" data-seg=\"{}\" data-bytes=\"{}\"><title>{}{}{}</title></rect>",
                xa, y + 3, std::max(0.6, xb - xa), row_h - 8, seg.colour, esc(seg.name), seg.bytes, esc(seg.name),
                esc(label_sep), esc(bytes(seg.bytes)));
            b += static_cast<double>(seg.bytes);
        }
        if (!r.key.empty()) s += "</g>";
        if (r.segs.empty() || b <= 0)  // keep a visible mark for an empty row
            s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"1\" height=\"{:.1f}\" fill=\"#bab0ac\"/>", x0, y + 3,
                             row_h - 8);
        if (!r.note.empty()) {
            const double xe = xpos(b) + 6;
            if (xe < 800)
                s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", xe, y + row_h * 0.55, esc_cut(r.note, 60));
            else
                s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" "
                                 "style=\"font-weight:600;paint-order:stroke;stroke:#fff;stroke-width:3px\">{}</text>",
                                 std::min(xpos(b), x1) - 6, y + row_h * 0.55, esc_cut(r.note, 60));
        }
        s += "\n";
    }
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto& l = lines[i];
        const double x = xpos(static_cast<double>(l.at));
        s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.0f}\" x2=\"{:.1f}\" y2=\"{:.0f}\" stroke=\"{}\" stroke-width=\"2\"{}/>",
                         x, 18 + 15 * static_cast<double>(i), x, h - 22, l.colour, l.dashed ? " stroke-dasharray=\"6 4\"" : "");
        const bool left = x > 760;
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"{}\" style=\"fill:{}\">{}</text>\n",
                         left ? x - 3 : x + 3, 14 + 15 * static_cast<double>(i), left ? "end" : "start", l.colour, esc(l.label));
    }
    return s + "</svg>\n";
}

struct xy {
    double x = 0, y = 0;
};

struct series {
    std::string name;
    std::string colour;
    std::vector<xy> pts;
    bool dashed = false;
    bool dots = false;
};

struct x_mark {
    double x = 0;
    std::string label;
    std::string colour;
};

struct point_mark {
    xy at;
    std::string label;
    std::string colour;
};

std::string fmt_x(double x) {
    if (std::fabs(x) >= 1e6) return fmt::format("{:.3g}", x);
    if (x != std::floor(x)) return fmt::format("{:.4g}", x);
    return fmt::format("{:.0f}", x);
}

// Line chart: x numeric, y in bytes. h_lines are horizontal byte levels (capacity).
std::string line_chart(const std::vector<series>& ss, const std::vector<v_line>& h_lines, const std::vector<x_mark>& xm,
                       const std::vector<point_mark>& pm, const std::string& x_label, const std::string& aria) {
    double xmin = 0, xmax = 1, ymax = 1;
    bool first = true;
    for (const auto& s : ss)
        for (const auto& p : s.pts) {
            if (first) xmin = xmax = p.x, first = false;
            xmin = std::min(xmin, p.x);
            xmax = std::max(xmax, p.x);
            ymax = std::max(ymax, p.y);
        }
    for (const auto& m : xm) xmin = std::min(xmin, m.x), xmax = std::max(xmax, m.x);
    for (const auto& l : h_lines) ymax = std::max(ymax, static_cast<double>(l.at));
    for (const auto& p : pm) ymax = std::max(ymax, p.at.y);
    if (xmax <= xmin) xmax = xmin + 1;
    ymax *= 1.08;
    const double X0 = 90, X1 = 970, Y0 = 330, Y1 = 24, H = 370;
    auto px = [&](double x) { return X0 + (X1 - X0) * (x - xmin) / (xmax - xmin); };
    auto py = [&](double y) { return Y0 - (Y0 - Y1) * y / ymax; };
    std::string s = fmt::format(
        "<svg class=\"chart\" viewBox=\"0 0 1000 {0:.0f}\" width=\"1000\" "
        "height=\"{0:.0f}\" role=\"img\" aria-label=\"{1}\">\n",
        H, esc(aria));
    for (int k = 0; k <= 4; ++k) {
        const double y = ymax * k / 4.0;
        s += fmt::format("<line class=\"grid\" x1=\"{:.0f}\" y1=\"{:.1f}\" x2=\"{:.0f}\" y2=\"{:.1f}\"/>", X0, py(y), X1, py(y));
        s += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#66707d\">{}</text>\n", X0 - 6,
                         py(y) + 4, esc(bytes(static_cast<std::int64_t>(y))));
        const double x = xmin + (xmax - xmin) * k / 4.0;
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\" fill=\"#66707d\">{}</text>\n", px(x),
                         Y0 + 16, fmt_x(x));
    }
    s += fmt::format("<line class=\"ax\" x1=\"{0:.0f}\" y1=\"{1:.0f}\" x2=\"{2:.0f}\" y2=\"{1:.0f}\"/>", X0, Y0, X1);
    s += fmt::format("<line class=\"ax\" x1=\"{0:.0f}\" y1=\"{1:.0f}\" x2=\"{0:.0f}\" y2=\"{2:.0f}\"/>", X0, Y0, Y1);
    s += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\" fill=\"#66707d\">{}</text>\n", (X0 + X1) / 2,
                     Y0 + 34, esc(x_label));
    for (std::size_t li = 0; li < h_lines.size(); ++li) {
        const auto& l = h_lines[li];
        s += fmt::format("<line x1=\"{:.0f}\" y1=\"{:.1f}\" x2=\"{:.0f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"1.5\"{}/>",
                         X0, py(static_cast<double>(l.at)), X1, py(static_cast<double>(l.at)), l.colour,
                         l.dashed ? " stroke-dasharray=\"6 4\"" : "");
        s += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" style=\"fill:{}\">{}</text>\n", X0 + 6 + 170 * static_cast<double>(li),
                         py(static_cast<double>(l.at)) - 4, l.colour, esc(l.label));
    }
    for (const auto& m : xm) {
        s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\" stroke=\"{3}\" stroke-width=\"1.5\" "
                         "stroke-dasharray=\"3 3\"><title>{4}</title></line>",
                         px(m.x), Y0, Y1, m.colour, esc(m.label));
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"end\" style=\"fill:{}\">{}</text>\n", px(m.x) - 3,
                         Y1 + 12, m.colour, esc_cut(m.label, 40));
    }
    for (const auto& se : ss) {
        if (se.pts.empty()) continue;
        std::string pts;
        for (const auto& p : se.pts) pts += fmt::format("{:.1f},{:.1f} ", px(p.x), py(p.y));
        if (se.pts.size() == 1) {
            s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>", px(se.pts[0].x), py(se.pts[0].y),
                             se.colour);
        } else {
            s += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"><title>{}</title></polyline>\n",
                             se.colour, se.dashed ? " stroke-dasharray=\"7 5\"" : "", pts, esc(se.name));
        }
        if (se.dots && se.pts.size() <= 200)
            for (const auto& p : se.pts)
                s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>", px(p.x), py(p.y), se.colour);
    }
    for (const auto& p : pm) {
        s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.5\">"
                         "<title>{}</title></circle>",
                         px(p.at.x), py(p.at.y), p.colour, esc(p.label));
        const bool right = px(p.at.x) > 760;
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\" style=\"fill:{};font-weight:600\">{}</text>\n",
                         px(p.at.x) + (right ? -8 : 8), std::max(Y1 + 26, py(p.at.y) - 8), right ? "end" : "start",
                         p.colour, esc_cut(p.label, 50));
    }
    return s + "</svg>\n";
}

std::string series_legend(const std::vector<series>& ss) {
    std::string s = "<div class=\"legend\">";
    for (const auto& se : ss)
        s += fmt::format("<span><span class=\"sw\" style=\"background:{}\"></span>{}</span>", se.colour, esc(se.name));
    return s + "</div>\n";
}

// Keeps charts small for long series: per bucket of x, the first, min and max points.
std::vector<xy> downsample(const std::vector<xy>& in, std::size_t max_points, bool& cut) {
    cut = false;
    if (in.size() <= max_points || max_points < 6) return in;
    cut = true;
    const std::size_t buckets = max_points / 3;
    std::vector<xy> out;
    out.reserve(max_points + 2);
    for (std::size_t b = 0; b < buckets; ++b) {
        const std::size_t lo = in.size() * b / buckets, hi = in.size() * (b + 1) / buckets;
        if (lo >= hi) continue;
        std::size_t imin = lo, imax = lo;
        for (std::size_t i = lo; i < hi; ++i) {
            if (in[i].y < in[imin].y) imin = i;
            if (in[i].y > in[imax].y) imax = i;
        }
        std::size_t idx[3] = {lo, imin, imax};
        std::sort(idx, idx + 3);
        for (std::size_t k = 0; k < 3; ++k)
            if (k == 0 || idx[k] != idx[k - 1]) out.push_back(in[idx[k]]);
    }
    if (out.back().x != in.back().x) out.push_back(in.back());
    return out;
}

// ---------------------------------------------------------------------------------------------
// Document helpers.

class doc {
public:
    explicit doc(std::string lang) : m_lang(std::move(lang)) {}
    void raw(const std::string& s) { m_s += s; }
    void h(int level, const std::string& text, const std::string& id = "") {
        m_s += fmt::format("<h{0}{2}>{1}</h{0}>\n", level, esc(text), id.empty() ? "" : " id=\"" + id + "\"");
    }
    void p(const std::string& text, const char* cls = nullptr) {
        m_s += cls ? fmt::format("<p class=\"{}\">{}</p>\n", cls, esc(text)) : "<p>" + esc(text) + "</p>\n";
    }
    void list(const std::vector<std::string>& items, bool ordered = false) {
        m_s += ordered ? "<ol>\n" : "<ul>\n";
        for (const auto& i : items) m_s += "<li>" + esc(i) + "</li>\n";
        m_s += ordered ? "</ol>\n" : "</ul>\n";
    }
    // `quoted`: the keys whose values are quoted from an input as they were (class "ev").
    void kv_table(const std::vector<std::pair<std::string, std::string>>& rows, const std::string& quoted = "") {
        m_s += "<table>\n";
        for (const auto& [k, v] : rows)
            m_s += "<tr><th>" + esc(k) + (k == quoted ? "</th><td class=\"ev\">" : "</th><td>") + esc(v) + "</td></tr>\n";
        m_s += "</table>\n";
    }
    // "<table><tr><th>..." with the column names `html.col.<name>`; numeric columns right-aligned.
    void table_head(std::initializer_list<std::pair<const char*, bool>> cols) {
        m_s += "<table><tr>";
        for (const auto& [name, num] : cols)
            m_s += fmt::format("<th{}>{}</th>", num ? " class=\"num\"" : "", esc(t(std::string("html.col.") + name)));
        m_s += "</tr>\n";
    }
    void open_section(const std::string& id) { m_s += "<section id=\"" + id + "\">\n"; }
    void close_section() { m_s += "</section>\n"; }
    std::string& str() { return m_s; }
    // The report's fixed phrases, machine values and producer sentences in its language.
    std::string t(const std::string& key, const message_args& args = {}) const { return phrase(m_lang, key, args); }
    // A phrase whose arguments are HTML already (escaped by the caller): the phrase's own text is escaped.
    std::string html(const std::string& key, const message_args& html_args) const {
        return format_message(esc(phrase(m_lang, key)), html_args);
    }
    std::string v(const std::string& kind, const std::string& value) const { return value_phrase(m_lang, kind, value); }
    std::string produced(const std::string& prefix, const std::string& english) const {
        return translated(m_lang, prefix, english);
    }
    const std::string& lang() const { return m_lang; }

private:
    std::string m_lang;
    std::string m_s;
};

std::string page_head(const doc& d, const std::string& title) {
    return "<!DOCTYPE html>\n<html lang=\"" + std::string(d.lang() == "zh" ? "zh-CN" : d.lang()) +
           "\">\n<head>\n<meta charset=\"utf-8\">\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n"
           "<title>" +
           esc(title) + "</title>\n<style>" + k_css + "</style>\n</head>\n<body>\n<main>\n";
}

std::string page_tail(const doc& d) {
    return "<p class=\"muted\">" + esc(d.t("html.generated", {{"version", OOMDX_VERSION}})) + "</p>\n</main>\n</body>\n</html>\n";
}

// ---------------------------------------------------------------------------------------------
// Snapshot section (shared by `snapshot --format html` and the diagnosis report).

void snapshot_timeline(doc& d, const snap::device_analysis& dev, std::int64_t capacity) {
    if (!dev.has_trace) {
        d.p(d.t("html.snapshot.no_trace"), "caption");
        return;
    }
    // The analysis keeps a reduced curve: slice ends, phase turning points, the peak and the OOM
    // events. Drawn in trace order.
    std::vector<xy> pts;
    pts.push_back({0, static_cast<double>(dev.initial_active_bytes)});
    for (const auto& sl : dev.timeline) pts.push_back({static_cast<double>(sl.end_index), static_cast<double>(sl.live_end_bytes)});
    for (const auto& ph : dev.phases) {
        pts.push_back({static_cast<double>(ph.start_index), static_cast<double>(ph.start_bytes)});
        pts.push_back({static_cast<double>(ph.end_index), static_cast<double>(ph.end_bytes)});
    }
    if (dev.peak_index >= 0) pts.push_back({static_cast<double>(dev.peak_index), static_cast<double>(dev.peak_bytes)});
    for (const auto& o : dev.ooms) pts.push_back({static_cast<double>(o.trace_index), static_cast<double>(o.live_bytes)});
    std::stable_sort(pts.begin(), pts.end(), [](const xy& a, const xy& b) { return a.x < b.x; });
    std::vector<xy> uniq;
    for (const auto& p : pts)
        if (uniq.empty() || uniq.back().x != p.x || uniq.back().y != p.y) uniq.push_back(p);
    bool cut = false;
    uniq = downsample(uniq, 3000, cut);

    std::vector<series> ss{{d.t("html.chart.live_active"), "#4e79a7", uniq, false, true}};
    std::vector<v_line> hl;
    if (dev.peak_reserved_bytes > 0)
        hl.push_back({dev.peak_reserved_bytes, d.t("html.chart.peak_reserved", {{"bytes", bytes(dev.peak_reserved_bytes)}}), "#9c755f", true});
    if (capacity > 0) {
        hl.push_back({capacity, d.t("html.chart.capacity", {{"bytes", bytes(capacity)}}), "#1d2330", false});
        hl.push_back({capacity * 95 / 100, d.t("report.estimate.bar_budget"), "#d62728", true});
    }
    std::vector<point_mark> pm;
    if (dev.peak_index >= 0) pm.push_back({{static_cast<double>(dev.peak_index), static_cast<double>(dev.peak_bytes)},
                                          d.t("html.chart.peak", {{"bytes", bytes(dev.peak_bytes)}}), "#e15759"});
    std::vector<x_mark> xm;
    std::size_t shown = 0;
    for (const auto& o : dev.ooms) {
        if (++shown > 20) break;
        xm.push_back({static_cast<double>(o.trace_index), d.t("html.chart.oom_request", {{"bytes", bytes(o.requested_bytes)}}), "#d62728"});
    }
    d.raw(line_chart(ss, hl, xm, pm, d.t("html.chart.trace_index"), d.t("html.chart.live_over_trace")));
    std::string cap = d.t("html.snapshot.timeline_caption", {{"events", std::to_string(dev.trace_entries)},
                                                             {"slices", std::to_string(dev.timeline.size())},
                                                             {"turns", std::to_string(dev.phases.size() * 2)},
                                                             {"ooms", std::to_string(dev.oom_count)},
                                                             {"reduced", cut ? d.t("html.snapshot.timeline_reduced") : ""}});
    if (dev.ooms.size() > shown) cap += d.t("html.snapshot.first_ooms_marked", {{"n", std::to_string(shown - 1)}});
    d.p(cap, "caption");
    if (!dev.phases.empty()) {
        std::string phases;
        std::size_t n = 0;
        for (const auto& ph : dev.phases) {
            if (++n > 12) {
                phases += d.t("html.oom.list_sep") + "...";
                break;
            }
            phases += (phases.empty() ? "" : d.t("html.oom.list_sep")) + d.t("html.snapshot.phase", {{"kind", d.v("phase_kind", ph.kind)},
                                                                                 {"start", bytes(ph.start_bytes)},
                                                                                 {"end", bytes(ph.end_bytes)}});
        }
        d.p(d.t("html.snapshot.phases", {{"cycles", std::to_string(dev.cycles)}, {"phases", phases}}), "muted");
    }
}

// Top sites as coloured bands of one bar, plus the remainder.
bar_row site_band(const doc& d, const std::string& label, const std::string& key, const std::vector<snap::site_total>& sites,
                  std::int64_t total) {
    bar_row r{label, {}, bytes(total), key};
    std::int64_t used = 0;
    for (std::size_t i = 0; i < sites.size() && i < 8; ++i) {
        if (sites[i].bytes <= 0) continue;
        r.segs.push_back({d.produced("snapshot.site.", sites[i].site), sites[i].bytes, colour(i)});
        used += sites[i].bytes;
    }
    if (total > used) r.segs.push_back({d.t("html.chart.other_sites"), total - used, "#d0d4da"});
    return r;
}

// Bars of different moments on one scale, each followed by its own legend.
void bars_with_legends(doc& d, const std::vector<std::pair<bar_row, std::string>>& rows, const std::string& aria) {
    std::vector<bar_row> bars;
    for (const auto& r : rows) bars.push_back(r.first);
    d.raw(bar_chart(bars, {}, aria, d.t("html.chart.label_sep")));
    for (const auto& r : rows) d.raw(row_legend(r.first, d.t("html.legend.title", {{"title", r.second}})));
}

// One OOM event in words: the request, where, and the memory at that moment.
std::string oom_sentence(const doc& d, const snap::oom_event& o) {
    const bool cache = o.largest_inactive_block_bytes >= 0 && o.inactive_bytes >= 0;
    return d.t("html.oom_sentence",
               {{"requested", bytes(o.requested_bytes)},
                {"site", o.site.empty() ? "" : d.t("html.oom_sentence.site", {{"site", o.site}})},
                {"live", bytes(o.live_bytes)},
                {"reserved", bytes(o.reserved_bytes)},
                {"cache", cache ? d.t("html.oom_sentence.cache", {{"largest", bytes(o.largest_inactive_block_bytes)},
                                                                  {"cached", bytes(o.inactive_bytes)}})
                                : ""},
                {"free", o.device_free_bytes >= 0 ? d.t("html.oom_sentence.free", {{"free", bytes(o.device_free_bytes)}}) : ""}});
}

// What "live at the snapshot" is: the state the file was written in.
std::string final_state(const doc& d, const snap::device_analysis& dev) {
    return d.t(dev.oom_count > 0 ? "html.when.final_after_oom" : "html.when.final");
}

// The same, short, as a bar's label.
std::string final_label(const doc& d, const snap::device_analysis& dev) {
    return d.t(dev.oom_count > 0 ? "html.when.final_after_oom_short" : "html.when.final");
}

void sites_table(doc& d, const std::vector<snap::site_total>& sites, std::size_t top) {
    if (sites.empty()) return;
    d.table_head({{"site", false}, {"category", false}, {"bytes", true}, {"blocks", true}, {"share", true}});
    for (std::size_t i = 0; i < sites.size() && i < top; ++i) {
        const auto& s = sites[i];
        d.raw(fmt::format("<tr><td class=\"ev\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                          "<td class=\"num\">{}</td></tr>\n",
                          esc_cut(d.produced("snapshot.site.", s.site), 300), esc(d.v("category", s.category)), esc(bytes(s.bytes)), s.blocks, pct(s.share)));
    }
    d.raw("</table>\n");
    if (sites.size() > top) d.p(d.t("html.snapshot.more_sites", {{"n", std::to_string(sites.size() - top)}}), "muted");
}

void fragmentation_chart(doc& d, const snap::device_analysis& dev) {
    std::vector<std::pair<bar_row, std::string>> rows;
    const std::string when = final_state(d, dev);
    std::int64_t other = dev.reserved_bytes - dev.allocated_bytes - dev.pending_free_bytes - dev.inactive_bytes;
    const std::string short_when = final_label(d, dev);
    const std::string largest = d.t("html.chart.largest_inactive"), rest = d.t("html.chart.other_inactive_blocks");
    bar_row res{d.t("html.chart.reserved_when", {{"when", short_when}}),
                {{d.t("html.chart.allocated_live"), dev.allocated_bytes, "#4e79a7"},
                 {d.t("html.chart.pending_free"), dev.pending_free_bytes, "#edc948"},
                 {d.t("html.chart.inactive_reusable"), dev.inactive_bytes, "#bab0ac"}},
                d.t("html.chart.not_allocated", {{"share", pct(dev.fragmentation_rate)}}), "final-reserved"};
    if (other > 0) res.segs.push_back({d.t("html.chart.unaccounted"), other, "#ff9da7"});
    rows.push_back({res, d.t("html.legend.reserved", {{"when", when}, {"bytes", bytes(dev.reserved_bytes)}})});
    if (dev.inactive_bytes > 0)
        rows.push_back({{d.t("html.chart.cached_when", {{"when", short_when}}),
                         {{largest, dev.largest_inactive_block_bytes, "#59a14f"},
                          {rest, dev.inactive_bytes - dev.largest_inactive_block_bytes, "#d0d4da"}},
                         d.t("html.chart.free_blocks", {{"n", std::to_string(dev.free_blocks)},
                                                        {"small", std::to_string(dev.small_free_blocks)}}),
                         "final-cached"},
                        d.t("html.legend.inactive_blocks", {{"when", when}, {"bytes", bytes(dev.inactive_bytes)}})});
    std::size_t n = 0;
    for (const auto& o : dev.ooms) {
        if (o.inactive_bytes < 0) continue;
        if (++n > 3) break;
        const std::string index = std::to_string(o.trace_index);
        const std::string at = d.t("html.when.at_oom", {{"index", index}});
        rows.push_back({{d.t("html.chart.request_at_oom", {{"index", index}}),
                         {{d.t("html.chart.requested"), o.requested_bytes, "#e15759"}},
                         o.fragmentation ? d.t("html.chart.no_block_large_enough") : "",
                         fmt::format("oom{}-request", o.trace_index)},
                        d.t("html.legend.failed_request", {{"when", at}})});
        rows.push_back({{d.t("html.chart.cached_at_oom", {{"index", index}}),
                         {{largest, o.largest_inactive_block_bytes, "#59a14f"},
                          {rest, o.inactive_bytes - std::max<std::int64_t>(0, o.largest_inactive_block_bytes), "#d0d4da"}},
                         d.t("html.chart.inactive_bytes", {{"bytes", bytes(o.inactive_bytes)}}),
                         fmt::format("oom{}-cached", o.trace_index)},
                        d.t("html.legend.inactive_blocks", {{"when", at}, {"bytes", bytes(o.inactive_bytes)}})});
    }
    std::int64_t sum = 0;
    for (const auto& r : rows)
        for (const auto& sg : r.first.segs) sum += std::max<std::int64_t>(0, sg.bytes);
    if (sum <= 0) {
        d.p(d.t("html.snapshot.no_reserved"), "caption");
        return;
    }
    bars_with_legends(d, rows, d.t("html.chart.fragmentation_summary"));
    d.p(d.t("html.snapshot.fragmentation_caption",
            {{"moments", dev.ooms.empty() ? "" : d.t("html.snapshot.fragmentation_moments")},
             {"rate", pct(dev.fragmentation_rate)},
             {"level", d.v("fragmentation", dev.fragmentation_level)},
             {"when", when},
             {"segments", std::to_string(dev.segments)},
             {"large", std::to_string(dev.large_segments)},
             {"small", std::to_string(dev.small_segments)},
             {"expandable", std::to_string(dev.expandable_segments)}}),
        "caption");
}

void snapshot_body(doc& d, const snap::snapshot_analysis& a, int hl) {
    if (a.primary < 0 || a.devices.empty()) {
        d.p(d.t("html.snapshot.empty"));
        for (const auto& w : a.warnings) d.p(d.t("html.snapshot.warning", {{"warning", d.produced("snapshot.warning.", w)}}), "muted");
        return;
    }
    const auto& dev = a.devices[static_cast<std::size_t>(a.primary)];
    const std::int64_t capacity = a.device_capacity_bytes;
    const std::string when = final_state(d, dev);
    auto fin = [&](const char* key) { return d.t("html.kv.when", {{"label", d.t(key)}, {"when", when}}); };
    std::vector<std::pair<std::string, std::string>> kv{
        {d.t("html.kv.file"), a.file},
        {d.t("html.kv.format"),
         d.t("html.snapshot.format",
             {{"format", a.info.format},
              {"protocol", a.info.pickle_protocol ? d.t("html.snapshot.protocol", {{"n", std::to_string(a.info.pickle_protocol)}}) : ""},
              {"era", a.info.era},
              {"producer", a.info.producer}})},
        {d.t("html.kv.device"), d.t("html.snapshot.device", {{"device", std::to_string(dev.device)},
                                                             {"n", std::to_string(a.devices.size())}})},
        {d.t("html.kv.oom_events"), std::to_string(dev.oom_count)}};
    if (!dev.ooms.empty()) kv.push_back({d.t("html.kv.at_last_oom"), oom_sentence(d, dev.ooms.back())});
    kv.insert(kv.end(),
              {{fin("html.kv.reserved"), bytes(dev.reserved_bytes)},
               {fin("html.kv.live_allocated"), bytes(dev.allocated_bytes)},
               {fin("html.kv.pending_free"), bytes(dev.pending_free_bytes)},
               {fin("html.kv.inactive_cached"), bytes(dev.inactive_bytes)},
               {d.t("html.kv.peak_live"),
                bytes(dev.peak_bytes) +
                    (dev.has_trace ? d.t("html.snapshot.at_trace_event", {{"index", std::to_string(dev.peak_index)}}) : "")},
               {d.t("html.kv.allocator_settings"), a.alloc_conf.empty() ? "-" : a.alloc_conf},
               {d.t("html.kv.expandable_segments"), d.t(a.expandable_segments ? "html.yes" : "html.no")}});
    d.kv_table(kv);

    d.h(hl, d.t("html.heading.timeline"));
    snapshot_timeline(d, dev, capacity);

    const bool peak = dev.has_trace && dev.peak_bytes > 0;
    const std::string at_peak = d.t("html.when.at_peak", {{"index", std::to_string(dev.peak_index)}});
    d.h(hl, d.t("html.heading.by_category"));
    {
        std::vector<std::pair<bar_row, std::string>> rows;
        auto cat_row = [&](const std::string& label, const std::string& key, const std::vector<snap::category_total>& cats,
                           std::int64_t total) {
            bar_row r{label, {}, bytes(total), key};
            std::size_t i = 0;
            for (const auto& c : cats) {
                if (c.bytes <= 0) continue;
                // Same colour for the same category in every bar.
                auto it = std::find(a.category_names.begin(), a.category_names.end(), c.name);
                const std::size_t ci = it == a.category_names.end() ? i : static_cast<std::size_t>(it - a.category_names.begin());
                r.segs.push_back({d.v("category", c.name), c.bytes, colour(ci)});
                ++i;
            }
            return r;
        };
        if (peak && !dev.peak_categories.empty())
            rows.push_back({cat_row(at_peak, "peak-categories", dev.peak_categories, dev.peak_bytes),
                            d.t("html.legend.live", {{"when", at_peak}, {"bytes", bytes(dev.peak_bytes)}})});
        if (dev.allocated_bytes > 0)
            rows.push_back({cat_row(final_label(d, dev), "final-categories", dev.categories, dev.allocated_bytes),
                            d.t("html.legend.live", {{"when", when}, {"bytes", bytes(dev.allocated_bytes)}})});
        if (!rows.empty()) {
            bars_with_legends(d, rows, d.t("html.chart.memory_by_category"));
            if (rows.size() > 1)
                d.p(d.t("html.snapshot.category_caption",
                        {{"after", dev.oom_count > 0 ? d.t("html.snapshot.after_unwound") : ""}}),
                    "caption");
        } else {
            d.p(d.t("html.snapshot.nothing_to_categorize"), "caption");
        }
    }

    d.h(hl, d.t("html.heading.top_sites"));
    {
        std::vector<std::pair<bar_row, std::string>> rows;
        if (peak && !dev.peak_sites.empty())
            rows.push_back({site_band(d, at_peak, "peak-sites", dev.peak_sites, dev.peak_bytes),
                            d.t("html.legend.sites_live", {{"when", at_peak}})});
        if (!dev.ooms.empty() && !dev.ooms.back().holders.empty()) {
            const auto& o = dev.ooms.back();
            const std::string at = d.t("html.when.at_oom", {{"index", std::to_string(o.trace_index)}});
            rows.push_back({site_band(d, at, "oom-sites", o.holders, o.live_bytes), d.t("html.legend.sites_live", {{"when", at}})});
        }
        if (dev.allocated_bytes > 0 && !dev.sites.empty())
            rows.push_back({site_band(d, final_label(d, dev), "final-sites", dev.sites, dev.allocated_bytes),
                            d.t("html.legend.sites_live", {{"when", when}})});
        if (!rows.empty()) {
            bars_with_legends(d, rows, d.t("html.chart.top_sites"));
            d.p(d.t("html.snapshot.sites_caption") + (rows.size() > 1 ? d.t("html.snapshot.sites_caption_moments") : ""),
                "caption");
        }
        const bool at_peak_table = peak && !dev.peak_sites.empty();
        sites_table(d, at_peak_table ? dev.peak_sites : dev.sites, 10);
        d.p(d.t("html.snapshot.sites_table", {{"when", at_peak_table ? at_peak : when}}), "muted");
    }

    d.h(hl, d.t("html.heading.fragmentation"));
    fragmentation_chart(d, dev);

    if (!dev.ooms.empty()) {
        d.h(hl, d.t("html.heading.oom_events"));
        d.table_head({{"trace_event", false}, {"requested", true}, {"device_free", true}, {"live", true}, {"reserved", true},
                      {"largest_inactive", true}, {"site", false}, {"diagnosis", false}});
        std::size_t n = 0;
        for (const auto& o : dev.ooms) {
            if (++n > 20) break;
            d.raw(fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                              "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"ev\">{}</td><td>{}</td></tr>\n",
                              o.trace_index, esc(bytes(o.requested_bytes)),
                              o.device_free_bytes >= 0 ? esc(bytes(o.device_free_bytes)) : "-", esc(bytes(o.live_bytes)),
                              esc(bytes(o.reserved_bytes)),
                              o.largest_inactive_block_bytes >= 0 ? esc(bytes(o.largest_inactive_block_bytes)) : "-",
                              esc_cut(o.site, 200), esc(d.t(o.fragmentation ? "html.oom.fragmentation" : "html.oom.out_of_memory"))));
        }
        d.raw("</table>\n");
        if (dev.oom_count > 20) d.p(d.t("html.snapshot.more_ooms", {{"n", std::to_string(dev.oom_count)}}), "muted");
        if (dev.non_pytorch_gap_bytes >= 0)
            d.p(d.t("html.snapshot.outside_pytorch", {{"bytes", bytes(dev.non_pytorch_gap_bytes)}}));
    }

    if (!dev.patterns.empty()) {
        d.h(hl, d.t("html.heading.patterns"));
        for (const auto& p : dev.patterns) {
            d.raw(fmt::format("<div class=\"finding\"><b>{}</b> <span class=\"muted\">{}{}</span><br>{}", esc(p.name),
                              esc(p.confidence.empty() ? "" : d.t("html.pattern.confidence", {{"level", d.v("level", p.confidence)}})),
                              esc(p.expected ? d.t("html.pattern.expected") : p.leak ? d.t("html.pattern.leak") : ""),
                              esc(d.produced("snapshot.pattern.", p.summary))));
            if (!p.evidence.empty()) {
                d.raw("<ul>");
                for (const auto& e : p.evidence) d.raw("<li class=\"ev\">" + esc_cut(d.produced("snapshot.evidence.", e), 400) + "</li>");
                d.raw("</ul>");
            }
            d.raw("</div>\n");
        }
    }
    if (a.devices.size() > 1) {
        d.h(hl, d.t("html.heading.all_devices"));
        d.table_head({{"device", false}, {"reserved", true}, {"live", true}, {"peak", true}, {"oom_events", true}});
        for (const auto& x : a.devices)
            d.raw(fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                              "<td class=\"num\">{}</td></tr>\n",
                              x.device, esc(bytes(x.reserved_bytes)), esc(bytes(x.allocated_bytes)), esc(bytes(x.peak_bytes)),
                              x.oom_count));
        d.raw("</table>\n");
    }
    if (!a.warnings.empty() || !dev.inconsistencies.empty()) {
        std::vector<std::string> w;
        for (const auto& x : a.warnings) w.push_back(d.produced("snapshot.warning.", x));
        for (const auto& x : dev.inconsistencies) w.push_back(d.produced("snapshot.warning.", x));
        d.p(d.t("html.snapshot.warnings"), "muted");
        d.list(w);
    }
}

// ---------------------------------------------------------------------------------------------
// Diagnosis sections.

void oom_section(doc& d, const log_analysis& a) {
    d.open_section("oom");
    d.h(2, d.t("html.heading.oom"));
    std::vector<std::pair<std::string, std::string>> rows;
    rows.push_back({d.t("html.kv.source"),
                    d.v("source", a.source) + (a.device_kind.empty() || a.device_kind == "unknown" ? "" : d.t("report.oom.device_kind", {{"kind", d.v("device_kind", a.device_kind)}}))});
    if (!a.signature.empty()) rows.push_back({d.t("html.kv.signature"), a.signature});
    if (!a.message.empty()) rows.push_back({d.t("html.kv.message"), a.file + ":" + std::to_string(a.line) + ": " + a.message});
    if (!a.error_code.empty()) rows.push_back({d.t("html.kv.error_code"), a.error_code});
    std::string when = a.step ? d.t("html.oom.failing_step", {{"step", std::to_string(*a.step)}})
                       : a.last_logged_step && a.step_stride
                           ? d.t("html.oom.last_logged_step", {{"step", std::to_string(*a.last_logged_step)}}) +
                                 d.t("report.oom.step_stride", {{"stride", std::to_string(*a.step_stride)}})
                       : a.last_logged_step ? d.t("html.oom.last_logged_step", {{"step", std::to_string(*a.last_logged_step)}})
                                            : d.t("html.oom.step_unknown");
    rows.push_back({d.t("html.kv.timing"),
                    d.v("timing", a.timing) + d.t("html.oom.list_sep") + when +
                        (a.timing_reason.empty() ? "" : " - " + d.produced("log.timing.", a.timing_reason))});
    if (a.rank || a.device_index)
        rows.push_back({d.t("html.kv.rank_device"),
                        (a.rank ? std::to_string(*a.rank) : "-") + " / " + (a.device_index ? std::to_string(*a.device_index) : "-")});
    if (a.source != "none") {
        rows.push_back({d.t("html.kv.requested"), opt_bytes(a.requested_bytes)});
        rows.push_back({d.t("html.kv.capacity_free"), opt_bytes(a.capacity_bytes) + " / " + opt_bytes(a.free_bytes)});
        rows.push_back({d.t("html.kv.allocated_by_pytorch"), opt_bytes(a.allocated_bytes)});
        rows.push_back({d.t("html.kv.reserved_unallocated"),
                        opt_bytes(a.reserved_unallocated_bytes) + (a.reserved_unallocated_derived ? d.t("report.oom.derived") : "")});
        if (a.process_in_use_bytes) rows.push_back({d.t("html.kv.process_in_use"), bytes(*a.process_in_use_bytes)});
        if (a.non_pytorch_bytes) rows.push_back({d.t("html.kv.outside_pytorch"), bytes(*a.non_pytorch_bytes)});
    }
    if (!a.failure_kind.empty())
        rows.push_back({d.t("html.kv.other_failure"),
                        d.t("html.oom.other_failure", {{"kind", a.failure_kind},
                                                       {"signature", a.failure_signature},
                                                       {"where", a.failure_file + ":" + std::to_string(a.failure_line)}})});
    if (!a.ranks_failed.empty()) {
        std::string ranks;
        for (auto r : a.ranks_failed) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
        if (a.all_ranks_failed) ranks += d.t(*a.all_ranks_failed ? "report.oom.all_ranks" : "report.oom.not_all_ranks");
        rows.push_back({d.t("html.kv.ranks_with_oom"), ranks});
    }
    d.kv_table(rows, d.t("html.kv.message"));
    if (!a.evidence.empty()) {
        d.h(3, d.t("html.heading.evidence_lines"));
        d.raw("<table>\n");
        std::size_t n = 0;
        for (const auto& e : a.evidence) {
            if (++n > 12) break;
            d.raw(fmt::format("<tr><td class=\"ev loc\">{}:{}</td><td>{}</td><td class=\"ev\">{}</td></tr>\n", esc_cut(e.file, 200),
                              e.line, esc(e.role), esc_cut(e.text, 300)));
        }
        d.raw("</table>\n");
        if (a.evidence.size() > 12) d.p(d.t("html.oom.more_evidence", {{"n", std::to_string(a.evidence.size() - 12)}}), "muted");
    }
    if (!a.memory_series.empty()) {
        d.h(3, d.t("html.heading.memory_per_step"));
        std::vector<xy> pts;
        pts.reserve(a.memory_series.size());
        for (const auto& m : a.memory_series) pts.push_back({static_cast<double>(m.step), static_cast<double>(m.bytes)});
        // Least-squares trend over all points (the analyzer's growth figure is the slope).
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        const double n = static_cast<double>(pts.size());
        for (const auto& p : pts) sx += p.x, sy += p.y, sxx += p.x * p.x, sxy += p.x * p.y;
        const double den = n * sxx - sx * sx;
        double slope = den != 0 ? (n * sxy - sx * sy) / den : 0;
        if (a.growth_bytes_per_step) slope = *a.growth_bytes_per_step;
        const double icept = (sy - slope * sx) / n;
        bool cut = false;
        std::vector<xy> shown = downsample(pts, 2000, cut);
        std::vector<series> ss{{d.t("html.chart.memory_statistic", {{"statistic", d.v("statistic", a.memory_series.front().statistic)}}), "#4e79a7",
                                shown, false, true}};
        if (pts.size() >= 2) {
            const double xa = pts.front().x, xb = pts.back().x;
            ss.push_back({d.t("html.chart.trend_per_step", {{"bytes", bytes(static_cast<std::int64_t>(slope))}}), "#e15759",
                          {{xa, std::max(0.0, icept + slope * xa)}, {xb, std::max(0.0, icept + slope * xb)}}, true, false});
        }
        std::vector<v_line> hl;
        if (a.capacity_bytes && *a.capacity_bytes > 0) {
            hl.push_back({*a.capacity_bytes, d.t("html.chart.capacity", {{"bytes", bytes(*a.capacity_bytes)}}), "#1d2330", false});
        }
        std::vector<x_mark> xm;
        if (a.step) xm.push_back({static_cast<double>(*a.step), d.t("html.chart.oom_at_step", {{"step", std::to_string(*a.step)}}), "#d62728"});
        d.raw(line_chart(ss, hl, xm, {}, d.t("html.chart.step"), d.t("html.chart.memory_per_step")));
        d.raw(series_legend(ss));
        d.p(d.t("html.oom.readings", {{"n", std::to_string(a.memory_series.size())},
                                      {"rank", a.memory_series_rank ? d.t("html.oom.of_rank", {{"rank", std::to_string(*a.memory_series_rank)}}) : ""},
                                      {"drawn", cut ? d.t("html.oom.drawn_as", {{"n", std::to_string(shown.size())}}) : ""},
                                      {"leak", a.leak_signal ? d.t("html.oom.leak_signal") : ""}}),
            "caption");
    }
    d.close_section();
}

std::vector<bar_seg> estimate_segs(const doc& d, const estimate_result& e) {
    std::vector<bar_seg> segs;
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < e.components.size(); ++i) {
        segs.push_back({estimate_label(d.lang(), e.components[i]), e.components[i].bytes, colour(i)});
        sum += std::max<std::int64_t>(0, e.components[i].bytes);
    }
    if (e.device_peak_bytes > sum) segs.push_back({d.t("html.chart.cache_runtime"), e.device_peak_bytes - sum, "#d0d4da"});
    return segs;
}

std::vector<v_line> capacity_lines(const doc& d, const estimate_result& e) {
    std::vector<v_line> l;
    if (e.capacity_bytes > 0) {
        l.push_back({e.budget_bytes, d.t("html.chart.budget", {{"bytes", bytes(e.budget_bytes)}}), "#d62728", true});
        l.push_back({e.capacity_bytes, d.t("html.chart.capacity", {{"bytes", bytes(e.capacity_bytes)}}), "#1d2330", false});
    }
    return l;
}

void estimate_section(doc& d, const diagnosis_report& r, const estimate_result& e) {
    d.open_section("estimate");
    d.h(2, d.t("html.heading.estimate"));
    std::vector<bar_row> rows{{d.t("html.chart.estimate_device_use"), estimate_segs(d, e),
                               bytes(e.device_peak_bytes) +
                                   (e.capacity_bytes > 0 ? d.t(e.fits ? "html.chart.fits_note" : "html.chart.does_not_fit_note") : ""),
                               ""}};
    std::vector<v_line> lines = capacity_lines(d, e);
    if (r.log && r.log->allocated_bytes && *r.log->allocated_bytes > 0) {
        bar_row m{d.t("html.chart.measured_at_oom"), {{d.t("html.kv.allocated_by_pytorch"), *r.log->allocated_bytes, "#76b7b2"}}, "", ""};
        if (r.log->reserved_bytes && *r.log->reserved_bytes > *r.log->allocated_bytes)
            m.segs.push_back({d.t("html.chart.reserved_unallocated"), *r.log->reserved_bytes - *r.log->allocated_bytes, "#d0e8e6"});
        if (r.log->reserved_bytes) m.note = d.t("html.chart.reserved", {{"bytes", bytes(*r.log->reserved_bytes)}});
        rows.push_back(m);
    }
    d.raw(bar_chart(rows, lines, d.t("html.chart.estimate_vs_capacity"), d.t("html.chart.label_sep")));
    d.raw(legend(estimate_segs(d, e)));
    if (e.capacity_bytes > 0)
        d.raw("<p>" +
              d.html("html.estimate.capacity", {{"capacity", esc(bytes(e.capacity_bytes))},
                                             {"budget", esc(bytes(e.budget_bytes))},
                                             {"verdict", fmt::format("<span class=\"{}\">{}</span>", e.fits ? "fits" : "nofit",
                                                                     esc(d.t(e.fits ? "html.estimate.fits_by" : "html.estimate.over_by",
                                                                             {{"margin", bytes(std::llabs(e.margin_bytes))}})))}}) +
              "</p>\n");
    d.p(d.t("html.estimate.peaks", {{"peak", bytes(e.peak_bytes)},
                                    {"phase", d.v("phase", e.peak_phase)},
                                    {"stage", d.produced("estimate.stage.", e.worst_stage)},
                                    {"reserved", bytes(e.reserved_peak_bytes)},
                                    {"device", bytes(e.device_peak_bytes)}}));
    d.table_head({{"component", false}, {"bytes", true}, {"share_of_peak", true}, {"how", false}});
    for (std::size_t i = 0; i < e.components.size(); ++i) {
        const auto& c = e.components[i];
        d.raw(fmt::format("<tr><td><span class=\"legend\" style=\"display:inline\"><span class=\"sw\" style=\"background:{}\">"
                          "</span></span>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"muted\">{}</td></tr>\n",
                          colour(i), esc(estimate_label(d.lang(), c)), esc(bytes(c.bytes)),
                          e.peak_bytes > 0 ? pct(static_cast<double>(c.bytes) / static_cast<double>(e.peak_bytes)) : "-",
                          esc_cut(d.produced("estimate.formula.", c.formula), 300)));
    }
    d.raw("</table>\n");
    if (!e.complete) d.p(d.t("html.estimate.incomplete"), "muted");
    // rev36: the framework defaults the estimate applied and the largest sizes that fit, as the text report says them
    if (const std::string f = framework_defaults_sentence(d.lang(), r); !f.empty()) d.p(f);
    if (const std::string l = limits_sentence(d.lang(), r); !l.empty()) d.p(l);
    if (!e.assumptions.empty()) {
        d.p(d.t("html.estimate.assumptions"), "muted");
        std::vector<std::string> shown;
        for (const auto& a : e.assumptions) shown.push_back(d.produced("estimate.assumption.", a));
        d.list(shown);
    }
    d.close_section();
}

void evidence_table(doc& d, const std::vector<report_evidence>& ev) {
    std::string rows;
    for (const auto& e : ev) {
        if (e.location.rfind("rule ", 0) == 0 || e.location == "oomdx") continue;
        rows += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td class=\"ev\">{}</td><td class=\"ev\">{}</td></tr>\n",
                            esc(e.fact), esc_cut(e.value, 200), esc_cut(e.location, 200),
                            e.excerpt.empty() || e.excerpt == e.value ? "" : esc_cut(e.excerpt, 300));
    }
    if (!rows.empty()) d.raw("<table>\n" + rows + "</table>\n");
}

void recommendations_section(doc& d, const diagnosis_report& r) {
    d.open_section("recommendations");
    d.h(2, d.t("html.heading.recs"));
    if (r.recommendations.empty()) d.p(d.t("html.none"));
    if (r.estimate && !r.recommendations.empty()) {
        const auto& e = *r.estimate;
        std::vector<bar_row> rows{{d.t("html.chart.now"), estimate_segs(d, e), bytes(e.device_peak_bytes), ""}};
        bool any = false;
        for (const auto& rec : r.recommendations) {
            bar_row row{fmt::format("#{} {}", rec.rank, rec.action), {}, "", ""};
            if (rec.expected_device_peak_bytes) {
                const std::string c = rec.expected_fits && *rec.expected_fits ? "#59a14f" : "#e15759";
                const std::int64_t live = rec.expected_peak_bytes ? *rec.expected_peak_bytes : 0;
                row.segs.push_back({d.t("html.chart.live_tensors"), std::min(live, *rec.expected_device_peak_bytes), c});
                row.segs.push_back({d.t("html.chart.cache_runtime"),
                                    *rec.expected_device_peak_bytes - std::min(live, *rec.expected_device_peak_bytes),
                                    c == "#59a14f" ? "#b9dcb4" : "#f4b9ba"});
                row.note = bytes(*rec.expected_device_peak_bytes) +
                           d.t(rec.expected_fits && *rec.expected_fits ? "html.chart.fits_note" : "html.chart.over_budget_note");
                any = true;
            } else {
                row.note = d.t("html.chart.no_figure");
            }
            rows.push_back(row);
        }
        if (any) {
            d.raw(bar_chart(rows, capacity_lines(d, e), d.t("html.chart.before_after"), d.t("html.chart.label_sep")));
            d.p(d.t("html.recs.caption"), "caption");
        }
    }
    for (const auto& rec : r.recommendations) {
        d.raw("<div class=\"rec\">");
        d.raw(fmt::format("<h3>{}. {}</h3>\n", rec.rank, esc(rec.action)));
        if (!rec.text.empty()) d.p(rec.text);
        if (!rec.rendered.empty()) {
            d.raw("<div class=\"muted\">" + esc(d.t("report.rec.syntax", {{"framework", rec.framework}})) + "</div><pre>");
            for (const auto& l : rec.rendered) d.raw(esc(l) + "\n");
            d.raw("</pre>\n");
        }
        if (rec.expected_device_peak_bytes) {
            const bool fits = rec.expected_fits && *rec.expected_fits;
            d.raw("<p>" +
                  d.html("html.recs.expected_after",
                      {{"live", esc(opt_bytes(rec.expected_peak_bytes))},
                       {"device", esc(expected_device_text(rec))},
                       {"verdict", fmt::format("<span class=\"{}\">{}</span>", fits ? "fits" : "nofit",
                                               esc(d.t(rec_verdict_key(rec))))},
                       {"note", rec.expected_note.empty() ? "" : esc(d.t("report.rec.note", {{"note", rec.expected_note}}))}}) +
                  "</p>\n");
        } else if (!rec.expected_note.empty()) {
            d.p(d.t("html.recs.expected", {{"note", rec.expected_note}}));
        }
        if (rec.anchored_device_peak_bytes && r.anchor)
            d.p(d.t("report.rec.anchored",
                    {{"source", r.anchor->source},
                     {"device", bytes(*rec.anchored_device_peak_bytes)},
                     {"verdict", d.t(rec.anchored_fits && *rec.anchored_fits ? "report.rec.fits" : "report.rec.over")},
                     {"trust", r.anchor->used ? d.t("report.rec.trust") : ""}}));
        if (!rec.rationale.empty()) d.p(d.t("html.recs.why", {{"rationale", rec.rationale}}), "muted");
        if (!rec.confirm.empty()) d.p(d.t("html.recs.confirm", {{"confirm", rec.confirm}}), "muted");
        evidence_table(d, rec.evidence);
        d.raw("</div>\n");
    }
    d.close_section();
}

void trend_section(doc& d, const snap::trend_result& t) {
    d.h(3, d.t("html.heading.trend"));
    std::vector<series> ss;
    auto mk = [&](const std::string& name, const char* c, const std::vector<std::int64_t>& v) {
        series s{name, c, {}, false, true};
        for (std::size_t i = 0; i < v.size(); ++i) s.pts.push_back({static_cast<double>(i + 1), static_cast<double>(v[i])});
        if (!s.pts.empty()) ss.push_back(s);
    };
    mk(d.t("html.chart.live"), "#4e79a7", t.live);
    mk(d.t("html.chart.reserved_series"), "#9c755f", t.reserved);
    mk(d.t("html.chart.peak_series"), "#e15759", t.peak);
    if (!ss.empty()) {
        d.raw(line_chart(ss, {}, {}, {}, d.t("html.chart.snapshot_order"), d.t("html.chart.trend_over_snapshots")));
        d.raw(series_legend(ss));
    }
    d.p(d.t("html.trend.line", {{"n", std::to_string(t.files.size())},
                                {"verdict", d.v("trend", t.verdict)},
                                {"explanation", d.produced("snapshot.trend.", t.explanation)}}));
    if (!t.growing_category.empty()) d.p(d.t("html.trend.growing_category", {{"category", d.v("category", t.growing_category)}}));
    if (!t.growing_site.empty()) d.p(d.t("html.trend.growing_site", {{"site", t.growing_site}}));
}

// A snapshot with an OOM event is about the OOM: the request and the memory at that moment.
// The state the file was written in (after the OOM unwound) follows as what it is.
std::string snapshot_headline(const doc& d, const snap::device_analysis& dev) {
    const std::string device = std::to_string(dev.device), live = bytes(dev.allocated_bytes), reserved = bytes(dev.reserved_bytes);
    if (!dev.ooms.empty()) {
        const auto& o = dev.ooms.back();
        std::string t = d.t("html.snapshot.headline_oom",
                            {{"device", device}, {"index", std::to_string(o.trace_index)}, {"oom", oom_sentence(d, o)}});
        if (dev.oom_count > 1) t += d.t("html.snapshot.headline_more_ooms", {{"n", std::to_string(dev.oom_count)}});
        return t + d.t("html.snapshot.headline_after", {{"live", live}, {"reserved", reserved}});
    }
    if (dev.oom_count > 0)
        return d.t("html.snapshot.headline_ooms",
                   {{"device", device}, {"n", std::to_string(dev.oom_count)}, {"live", live}, {"reserved", reserved}});
    return d.t("html.snapshot.headline",
               {{"device", device},
                {"peak", bytes(dev.peak_bytes)},
                {"at", dev.has_trace ? d.t("html.snapshot.at_trace_event", {{"index", std::to_string(dev.peak_index)}}) : ""},
                {"live", live},
                {"reserved", reserved},
                {"rate", pct(dev.fragmentation_rate)},
                {"level", d.v("fragmentation", dev.fragmentation_level)},
                {"leak", dev.leak_suspected ? d.t("html.snapshot.leak_suspected") : ""}});
}

}  // namespace

std::string render_snapshot_html(const snap::snapshot_analysis& a, const std::string& lang) {
    doc d(lang);
    d.raw(page_head(d, d.t("html.snapshot.page_title", {{"file", a.file}})));
    d.raw("<h1>" + esc(d.t("html.snapshot.title")) + "</h1>\n");
    if (a.primary >= 0 && !a.devices.empty()) {
        const auto& dev = a.devices[static_cast<std::size_t>(a.primary)];
        d.raw(fmt::format("<div class=\"headline{}\" id=\"headline\">{}</div>\n", dev.oom_count > 0 || dev.leak_suspected ? " bad" : "",
                          esc(snapshot_headline(d, dev))));
    }
    d.open_section("snapshot");
    d.h(2, a.file.empty() ? d.t("html.snapshot.heading") : a.file);
    snapshot_body(d, a, 3);
    d.close_section();
    d.raw(page_tail(d));
    return d.str();
}

std::string render_diagnosis_html(const diagnosis_report& r) {
    doc d(r.lang);
    const bool pre = r.mode == "preflight";
    const std::string title = d.t(pre ? "report.title_preflight" : "report.title");
    d.raw(page_head(d, title));
    d.raw("<h1>" + esc(title) + "</h1>\n");
    std::string cls;
    if (pre && r.estimate && r.estimate->capacity_bytes > 0) cls = r.estimate->fits ? " good" : " bad";
    else if (!pre && r.log && r.log->source != "none") cls = " bad";
    d.raw(fmt::format("<div class=\"headline{}\" id=\"summary\">{}</div>\n", cls, esc(r.headline)));
    // Contents line.
    std::string nav;
    auto link = [&](const char* id, const char* key) {
        nav += fmt::format("{}<a href=\"#{}\">{}</a>", nav.empty() ? "" : " &middot; ", id, esc(d.t(key)));
    };
    if (r.log) link("oom", "html.nav.oom");
    link("route", "html.nav.route");
    if (r.estimate) link("estimate", "html.nav.estimate");
    if (!r.snapshots.empty()) link("snapshots", "html.nav.snapshots");
    link("findings", "html.nav.findings");
    link("recommendations", "html.nav.recommendations");
    if (!r.next_steps.empty()) link("next", "html.nav.next");
    if (!r.uncertain.empty()) link("uncertain", "html.nav.uncertain");
    d.raw("<p class=\"muted\">" + nav + "</p>\n");

    if (!r.inputs.empty()) {
        d.open_section("inputs");
        d.h(2, d.t("html.heading.inputs"));
        d.list(r.inputs);
        d.close_section();
    }
    if (r.log) oom_section(d, *r.log);

    d.open_section("route");
    d.h(2, d.t("html.heading.route"));
    if (r.route.empty()) d.p(d.t("html.route.none"));
    d.raw("<ol>\n");
    for (const auto& g : grouped_route(r.route)) {
        d.raw(fmt::format("<li><b>{}</b>{}{}", esc(g.title),
                          esc(g.from.empty() ? d.t("html.route.sep") : d.t("html.route.sep_from", {{"from", g.from}})),
                          esc(g.first)));
        if (g.whys.size() > 1) {
            d.raw("<ul>");
            for (size_t i = 1; i < g.whys.size(); ++i) d.raw(fmt::format("<li>{}</li>", esc(g.whys[i])));
            d.raw("</ul>");
        }
        d.raw("</li>\n");
    }
    d.raw("</ol>\n");
    d.close_section();

    if (r.estimate) estimate_section(d, r, *r.estimate);

    if (!r.consistency.empty()) {
        d.open_section("consistency");
        d.h(2, d.t("html.heading.consistency"));
        std::vector<std::string> items;
        for (const auto& c : r.consistency)
            items.push_back(d.t("report.consistency.line", {{"id", d.v("comparison", c.id)},
                                                            {"measured", bytes(c.measured_bytes)},
                                                            {"statistic", d.v("statistic", c.statistic)},
                                                            {"source", c.source.empty() ? "-" : c.source},
                                                            {"estimated", bytes(c.estimated_bytes)},
                                                            {"ratio", fmt::format("{:.2f}", c.ratio)},
                                                            {"verdict", d.v("consistency", c.verdict)}}));
        d.list(items);
        if (r.anchor) d.p(d.t("report.consistency.expected_figures", {{"why", r.anchor->why}}));
        d.close_section();
    }

    if (!r.snapshots.empty()) {
        d.open_section("snapshots");
        d.h(2, d.t("html.heading.snapshots"));
        std::size_t n = 0;
        for (const auto& s : r.snapshots) {
            if (++n > 4) {
                d.p(d.t("html.snapshot.more_snapshots", {{"n", std::to_string(r.snapshots.size() - 4)}}), "muted");
                break;
            }
            d.h(3, s.file.empty() ? d.t("html.snapshot.heading") : s.file);
            snapshot_body(d, s, 4);
        }
        if (r.trend) trend_section(d, *r.trend);
        if (r.diff) {
            d.h(3, d.t("html.heading.diff"));
            d.p(d.t("html.diff.line", {{"live_a", bytes(r.diff->live_a)},
                                       {"live_b", bytes(r.diff->live_b)},
                                       {"reserved_a", bytes(r.diff->reserved_a)},
                                       {"reserved_b", bytes(r.diff->reserved_b)},
                                       {"peak_a", bytes(r.diff->peak_a)},
                                       {"peak_b", bytes(r.diff->peak_b)}}));
            std::vector<std::string> findings;
            for (const auto& f : r.diff->findings) findings.push_back(d.produced("snapshot.diff.", f));
            d.list(findings);
        }
        d.close_section();
    }

    d.open_section("findings");
    d.h(2, d.t("html.heading.findings"));
    if (r.findings.empty()) d.p(d.t("html.none"));
    std::size_t n = 0;
    for (const auto& f : r.findings) {
        d.raw(fmt::format("<div class=\"finding\"><p>{}. <span class=\"sev {}\">{}</span>{}</p>\n", ++n,
                          esc(f.severity), esc(d.v("level", f.severity)), esc(f.text)));
        if (!f.rationale.empty()) d.p(f.rationale, "muted");
        evidence_table(d, f.evidence);
        d.raw("</div>\n");
    }
    d.close_section();

    recommendations_section(d, r);

    if (!r.not_offered.empty()) {  // what the job's framework cannot take as written
        std::vector<std::string> items;
        for (const auto& n : r.not_offered)
            items.push_back(d.t("html.not_offered", {{"action", n.action}, {"rule", n.rule_id}, {"why", n.why}}));
        d.list(items);
    }
    if (r.plan) {
        d.open_section("plan");
        d.h(2, d.t("html.heading.plan"));
        d.raw("<pre>" + esc(render_plan_text(*r.plan, 3, d.lang())) + "</pre>\n");
        d.close_section();
    }

    if (!r.next_steps.empty()) {
        d.open_section("next");
        d.h(2, d.t("html.heading.next"));
        d.list(r.next_steps);
        d.close_section();
    }
    if (!r.uncertain.empty()) {
        d.open_section("uncertain");
        d.h(2, d.t("html.heading.uncertain"));
        d.list(r.uncertain);
        d.close_section();
    }
    d.raw(page_tail(d));
    return d.str();
}

}  // namespace oomdx

// ---------------------------------------------------------------------------------------------
// `oomdx diff --format html`: both sides' breakdowns on one scale, then the step-by-step attribution.

namespace oomdx {

std::string render_diff_html(const config_diff& d) {
    doc page("en");  // `oomdx diff` has no --lang
    page.raw(page_head(page, "oomdx diff"));
    page.raw("<h1>oomdx diff</h1>\n");
    const std::int64_t delta = d.b.device_peak_bytes - d.a.device_peak_bytes;
    page.raw(fmt::format("<div class=\"headline{}\">Device peak {} &rarr; {} ({}{}) from {} changed key{}</div>\n",
                         delta > 0 ? " bad" : " good", esc(bytes(d.a.device_peak_bytes)), esc(bytes(d.b.device_peak_bytes)),
                         delta >= 0 ? "+" : "-", esc(bytes(delta >= 0 ? delta : -delta)), d.changed.size(),
                         d.changed.size() == 1 ? "" : "s"));
    page.open_section("changed");
    page.h(2, "Keys that differ");
    page.raw("<table>\n<tr><th>key</th><th>A</th><th>B</th><th>from</th></tr>\n");
    for (const auto& c : d.changed)
        page.raw(fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"loc\">{} / {}</td></tr>\n", esc(c.key),
                             esc(c.a.is_null() ? "-" : c.a.to_string()), esc(c.b.is_null() ? "-" : c.b.to_string()),
                             esc(c.a_source.empty() ? "-" : c.a_source), esc(c.b_source.empty() ? "-" : c.b_source)));
    page.raw("</table>\n");
    page.close_section();

    page.open_section("components");
    page.h(2, "Per-device estimate of each side");
    std::vector<bar_seg> segs_a, segs_b, keys;
    for (std::size_t i = 0; i < d.components.size(); ++i) {
        const auto& c = d.components[i];
        segs_a.push_back({c.label, c.a_bytes, colour(i)});
        segs_b.push_back({c.label, c.b_bytes, colour(i)});
        keys.push_back({c.label + " (A -> B)", c.b_bytes - c.a_bytes, colour(i)});
    }
    std::vector<v_line> lines;
    if (d.a.capacity_bytes > 0) lines.push_back({d.a.budget_bytes, "95% of capacity", "#d62728", true});
    page.raw(bar_chart({{"A", segs_a, bytes(d.a.device_peak_bytes), ""}, {"B", segs_b, bytes(d.b.device_peak_bytes), ""}}, lines,
                       "device peak of A and B by component", ": "));
    page.p("Each bar is one side's device peak split by component; the legend gives each component's change from A to B.",
           "caption");
    page.raw(legend(keys));
    page.close_section();

    page.open_section("attribution");
    page.h(2, "What moved the peak");
    page.p("The changes are applied to A one at a time in this order; each row is what that change alone moved, "
           "given the ones above it. The rows add up to the difference of the device peaks.",
           "caption");
    page.raw("<table>\n<tr><th>change</th><th class=\"num\">device peak</th><th>components</th></tr>\n");
    for (const auto& s : d.attribution) {
        std::string keys_text, comps;
        for (const auto& k : s.keys) keys_text += (keys_text.empty() ? "" : ", ") + k;
        for (const auto& [id, v] : s.deltas)
            comps += (comps.empty() ? "" : "; ") + id + " " + (v >= 0 ? "+" : "-") + bytes(v >= 0 ? v : -v);
        page.raw(fmt::format("<tr><td><code>{}</code></td><td class=\"num\">{}{}</td><td>{}</td></tr>\n", esc(keys_text),
                             s.device_peak_delta >= 0 ? "+" : "-",
                             esc(bytes(s.device_peak_delta >= 0 ? s.device_peak_delta : -s.device_peak_delta)),
                             esc(comps.empty() ? "no change" : comps)));
    }
    page.raw("</table>\n");
    page.close_section();
    page.raw(page_tail(page));
    return page.str();
}

}  // namespace oomdx
