#include "parsers/log/log_scanner.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "parsers/log/grouped_integer.h"
#include "parsers/log/param_count.h"
#include "parsers/log/log_time.h"
#include "parsers/log/wrapped_message.h"
#include "parsers/log/rank_prefix.h"

namespace oomdx::log_detail {

namespace {

constexpr size_t k_max_events = 32;
constexpr int k_pick_values = 6;  // a counter's newest distinct values kept (stride, elision)
constexpr size_t k_near_ring = 32;
constexpr size_t k_near_per_event = 24;
// A progress line is matched on its first 2 KiB: a tqdm bar as wide as a 300-column terminal
// draws its blocks in 3-byte UTF-8 characters, which puts its count past byte 900.
constexpr size_t k_progress_text = 2048;
// Memory readings parsed at the end of the file keep a copy of their line: lines up to 1 KiB,
// 32 MiB in all (a hostile log of 1024 ranks with long lines is parsed as it comes instead).
constexpr size_t k_wait_line_max = 1024;
constexpr size_t k_wait_bytes_max = size_t{32} << 20;
// Readings kept per series: 512, or a share of 16384 when a log has more than 32 series (ranks),
// at least 256. Sampling costs a pattern match per reading; this bounds it for many-rank logs.
constexpr size_t k_series_points = 512;
constexpr size_t k_series_budget = 16384;
constexpr size_t k_series_min_points = 256;
constexpr size_t k_series_max = 1024;
constexpr size_t k_pid_max = 4096;
// Ranks and world sizes a line may state (larger numbers are misreads, not jobs).
constexpr std::int64_t k_rank_limit = std::int64_t{1} << 24;
// Lines from a traceback's head to the message that ends it (deep model stacks run to ~200).
constexpr std::int64_t k_traceback_span = 300;
constexpr int k_context_phase = 100;
constexpr size_t k_max_counters = 256;  // distinct bar totals kept apart (bounded for days of logs)  // phase priority of evaluation, checkpoint, model loading

re2::StringPiece sp(std::string_view s) { return {s.data(), s.size()}; }

constexpr std::int64_t k_ipython_frame_span = 12;

// The indent of a line (spaces, tabs).
size_t indent_end(std::string_view s) {
    size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    return i;
}

// Whether s has a source line number at i, then a space (IPython's numbered source lines).
bool line_number_at(std::string_view s, size_t i) {
    const size_t digits = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > digits && i < s.size() && s[i] == ' ';
}

// An IPython traceback's code line: "   2113 output = eval_loop(" or "-> 2113 output = ...".
bool ipython_code_line(std::string_view s) {
    size_t i = indent_end(s);
    while (i < s.size() && s[i] == '-') ++i;
    if (i < s.size() && s[i] == '>') ++i;
    while (i < s.size() && s[i] == ' ') ++i;
    return line_number_at(s, i);
}

// The numbered source lines IPython prints around a frame's call ("    263 val = self.validate()")
// show code that did not run; only the arrowed line ("--> 260 ...") is the call.
bool ipython_context_line(std::string_view s) { return line_number_at(s, indent_end(s)); }

std::string excerpt(std::string_view s) {
    return std::string(s.substr(0, std::min(s.size(), k_excerpt_cap)));
}

std::optional<std::int64_t> to_bytes(std::string_view t, double unit) {
    if (unit > 0) {
        std::string tmp(t.substr(0, 40));
        char* end = nullptr;
        double v = std::strtod(tmp.c_str(), &end);
        if (end == tmp.c_str() || !std::isfinite(v) || v < 0 || v > 9e18 / unit) return std::nullopt;
        return static_cast<std::int64_t>(std::llround(v * unit));
    }
    std::string plain;  // thousands separators between digits ("26,409,535,488 bytes", CuPy)
    if (t.find(',') != std::string_view::npos && t.size() <= 40) {
        for (size_t i = 0; i < t.size(); ++i)
            if (t[i] != ',' || i == 0 || i + 1 == t.size() || !std::isdigit(static_cast<unsigned char>(t[i - 1])) ||
                !std::isdigit(static_cast<unsigned char>(t[i + 1])))
                plain += t[i];
        t = plain;
    }
    auto v = parse_size(t);
    if (!v || *v < 0) return std::nullopt;
    return v;
}


// After the prefilter threads, lines they never passed on are read from the file's mapping: calls `fn` on
// each line after the one `p` stands in (a '\r' ending dropped), up to `stop` or until `fn` returns false.
// Returns where it stopped.
template <class F>
const char* each_line_after(const char* p, const char* stop, F&& fn) {
    while (p < stop && *p != '\n') ++p;  // the rest of the current line
    while (p < stop) {
        ++p;  // past the newline
        const char* nl = p;
        while (nl < stop && *nl != '\n') ++nl;
        std::string_view l(p, static_cast<size_t>(nl - p));
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        if (!fn(l)) break;
        p = nl;
    }
    return p;
}

}  // namespace

bool verify_sig(const signature& s, std::string_view text) {
    return (!s.regex || RE2::PartialMatch(sp(text), s.regex->re())) &&
           (!s.unless || !RE2::PartialMatch(sp(text), s.unless->re()));
}

field_list extract_fields(const signature& s, std::string_view text, std::initializer_list<std::string_view> only) {
    field_list out;
    out.reserve(s.fields.size());
    for (const auto& f : s.fields) {
        if (only.size() && std::find(only.begin(), only.end(), f.name) == only.end()) continue;
        const bool is_bytes = is_size_field(f.name);
        const bool is_str = is_string_field(f.name);
        const bool is_pct = f.name == "memory_pct";  // kept in hundredths of a percent
        const bool repeated = f.name == "process_in_use_bytes";
        for (const auto& re : f.patterns) {
            re2::StringPiece cap;
            if (repeated) {
                re2::StringPiece in = sp(text);
                // 2.1-2.3 list every process by pid, the failing one too: the largest is taken as it; the
                // newer wording names the failing one ("this process has X"), which wins over a larger co-tenant
                std::optional<std::int64_t> best, self;
                constexpr std::string_view self_head = "this process has ";
                int n = 0;
                while (n < 64 && RE2::FindAndConsume(&in, re->re(), &cap)) {
                    if (auto v = to_bytes({cap.data(), cap.size()}, f.unit)) {
                        ++n;
                        if (!best || *v > *best) best = v;
                        const auto before = static_cast<std::size_t>(cap.data() - text.data());
                        if (before >= self_head.size() &&
                            text.substr(before - self_head.size(), self_head.size()) == self_head)
                            self = v;
                    }
                }
                if (best) {
                    out.push_back({f.name, self ? *self : *best, {}, false, n});
                    break;
                }
                continue;
            }
            if (!RE2::PartialMatch(sp(text), re->re(), &cap)) continue;
            std::string_view c(cap.data(), cap.size());
            field_val fv;
            fv.name = f.name;
            if (f.billions) {
                const auto pc = read_param_count(c);
                if (!pc) continue;
                fv.is_str = true;
                fv.str = count_in_billions(*pc);
                fv.num = pc->n;
                fv.rounded_digits = pc->rounded_digits;
            } else if (is_str && f.unit > 0) {  // a count written in thousands (unit: k): the digits times the unit, as text
                auto v = grouped_integer(c);
                if (!v || *v > 1000000) continue;
                fv.is_str = true;
                fv.str = std::to_string(std::llround(static_cast<double>(*v) * f.unit));
            } else if (is_str) {
                fv.is_str = true;
                // a source path runs long, and so does a setting that is a path (a snapshot file)
                fv.str = std::string(c.substr(0, f.name == "path" || f.name == "value" ? 512 : 64));
            } else if (is_pct) {
                std::string tmp(c.substr(0, 32));
                char* end = nullptr;
                const double v = std::strtod(tmp.c_str(), &end);
                if (end == tmp.c_str() || !std::isfinite(v) || v <= 0 || v > 1000) continue;
                fv.num = std::llround(v * 100);
            } else if (is_bytes) {
                auto v = to_bytes(c, f.unit);
                if (!v) continue;
                fv.num = *v;
            } else {
                auto v = grouped_integer(c);
                if (!v) continue;
                fv.num = *v;
            }
            out.push_back(std::move(fv));
            break;
        }
    }
    // a prefixed traceback frame: the rank its launcher's prefix names
    if (s.prefix_rank && (!only.size() || std::find(only.begin(), only.end(), "rank") != only.end()) &&
        !find_field(out, "rank"))
        if (const std::int64_t r = rank_prefix(text); r >= 0) out.push_back({"rank", r});
    return out;
}

namespace {

// Removes ANSI escape sequences (CSI ... final byte, and two-byte ESC x).
void strip_ansi(std::string_view in, std::string& out) {
    out.clear();
    size_t i = 0;
    while (i < in.size()) {
        const void* esc = std::memchr(in.data() + i, '\x1b', in.size() - i);
        size_t j = esc ? static_cast<size_t>(static_cast<const char*>(esc) - in.data()) : in.size();
        out.append(in.data() + i, j - i);
        if (j >= in.size()) break;
        if (j + 1 < in.size() && in[j + 1] == '[') {
            size_t k = j + 2;
            while (k < in.size() && static_cast<unsigned char>(in[k]) >= 0x20 &&
                   static_cast<unsigned char>(in[k]) <= 0x3f)
                ++k;
            i = k + 1;  // skip the final byte
        } else {
            i = j + 2;
        }
    }
}

}  // namespace

std::string_view plain_text(std::string_view s, std::string& buf) {
    if (!std::memchr(s.data(), '\x1b', s.size())) return s;
    strip_ansi(s, buf);
    return buf;
}

const field_val* find_field(const field_list& f, std::string_view name) {
    for (const auto& x : f)
        if (x.name == name) return &x;
    return nullptr;
}

scanner::scanner(const signature_set& sigs)
    : m_sigs(sigs), m_mark(sigs.size(), 0), m_cand(sigs), m_has_memory(sigs.size(), 0), m_has_step(sigs.size(), 0),
      m_fw_sigs_seen(sigs.size(), 0) {
    m_near_ring.resize(k_near_ring);
    m_phase_last.resize(sigs.size());
    m_progress_of_sig.resize(sigs.size(), nullptr);
    m_hit_class.resize(sigs.size(), 0);
    for (size_t i = 0; i < sigs.size(); ++i) {
        const signature& s = sigs.all()[i];
        m_elision_sigs += s.elision;
        for (const auto& f : s.fields) {
            m_has_memory[i] = m_has_memory[i] || f.name == "memory";
            m_has_step[i] = m_has_step[i] || f.name == "step";
        }
        m_hit_class[i] = static_cast<std::uint8_t>(
            (reads_raw_line(s) ? 0 : hit_needs_plain) |
            (s.kind == sig_kind::phase && s.priority >= k_context_phase ? hit_eval_phase : 0) |
            (s.kind == sig_kind::frame ? hit_frame : 0));
    }
}

void scanner::begin_file(const std::string& name) {
    m_files.push_back(name);
    m_file = static_cast<int>(m_files.size()) - 1;
    m_series_of_rank.clear();
    m_label_vote = {};
    m_launch_open = false;
    log_file_info fi;
    fi.path = name;
    m_file_info.push_back(fi);
}

// `text` is a prefix of the raw current segment.
void scanner::hold(held_text& h, std::string_view text) {
    if (m_seg_stable) h.set({m_seg_stable, text.size()}, true);
    else h.set(text, false);
}

void scanner::own_held_texts() {
    for (auto& [sig, pr] : m_progress) {
        for (auto& e : pr.any.e) e.text.own();
        for (auto& r : pr.by_rank)
            for (auto& e : r.e) e.text.own();
    }
    for (auto& [key, st] : m_series) st.last.text.own();
}

void scanner::end_file(std::int64_t lines, std::int64_t bytes, bool compressed, std::int64_t cut) {
    m_block.end("the log ends inside it");
    settle_block();
    m_wrap_list = nullptr;  // a message does not go on in the next file
    parse_waiting_readings();
    own_held_texts();
    auto& fi = m_file_info.back();
    fi.lines = lines;
    fi.bytes = bytes;
    fi.compressed = compressed;
    fi.long_lines = cut;
    m_file_labelled.resize(static_cast<size_t>(m_file) + 1, false);
    m_file_labelled[static_cast<size_t>(m_file)] = m_label_vote.consistent();
}

std::int64_t scanner::rank_of(std::string_view s) {
    if (m_seg_rank == -2) m_seg_rank = rank_prefix(s);
    return m_seg_rank;
}

// A launch command pasted over several lines (`torchrun ... \` then `    --flag v \`): the lines
// after one that ends in a backslash are the same command, joined with the newline kept (as a
// shell reads them) so launch_overrides sees every flag. Only lines that start with a flag, name the
// script (`    src/train.py \`) or go on themselves (end in a backslash) continue it (a pasted excerpt
// often cuts the command and goes on with the error); capped at 4 KiB and 256 lines.
void scanner::extend_launch(std::string_view seg) {
    std::string buf;
    seg = plain_text(seg, buf);
    const size_t e = seg.find_last_not_of(" \t\r");
    const std::string_view t = e == std::string_view::npos ? std::string_view{} : seg.substr(0, e + 1);
    // a continued command line carries flags ("    --lr 1e-5 \\"), the script it runs or a backslash of its
    // own; a log line after a cut-off paste does none of these
    const size_t b = t.find_first_not_of(" \t");
    const auto script_first = [&] {
        const std::string_view w = t.substr(b, t.find_first_of(" \t", b) - b);
        return w.size() > 3 && (w.substr(w.size() - 3) == ".py" || w.substr(w.size() - 3) == ".sh");
    };
    if (b == std::string_view::npos || (t[b] != '-' && t.back() != '\\' && !script_first())) {
        m_launch_open = false;
        return;
    }
    if (m_launch_cmd.size() + t.size() + 1 > 4096 || ++m_launch_more > 256) {
        m_launch_open = false;
        return;
    }
    m_launch_cmd += '\n';
    m_launch_cmd += t;
    m_launch_open = t.back() == '\\';
}

void scanner::on_segment(std::string_view seg, std::int64_t line, bool cut, const char* stable) {
    if (m_launch_open) extend_launch(seg);
    if (m_wrap_list && line > m_wrap_line) {  // the first segment of each line after a failure line
        m_wrap_line = line;
        if (!keep_wrapped_line((*m_wrap_list)[m_wrap_index].after, seg, m_wrap_taken)) m_wrap_list = nullptr;
    }

    if (m_block.open()) {
        m_block_next = nullptr;  // read here line by line, not from the bytes
        if (feed_block(seg)) return;
    }
    m_hits.clear();
    m_cand.candidates(seg, m_hits, m_mark);  // colour codes sit between fields, not in literals
    if (m_hits.empty()) return;
    m_every_line = true;  // a failure line here: on_segment keeps the lines after it
    on_candidates(seg, line, cut, m_hits.data(), m_hits.size(), stable);
    m_every_line = false;
}

void scanner::on_candidates(std::string_view seg, std::int64_t line, bool cut, const int* hit_data,
                            size_t hit_count, const char* stable, std::int64_t rank, bool plain, bool repeat) {
    m_seg_stable = stable;
    m_seg_end = stable ? stable + seg.size() : nullptr;
    m_seg_plain = plain;
    const std::string_view raw = seg;  // progress lines keep colours until they are parsed
    m_label_vote.add(raw);
    const auto hits = std::basic_string_view<int>(hit_data, hit_count);
    std::uint8_t cls = 0;
    for (int h : hits) cls |= m_hit_class[static_cast<size_t>(h)];
    if ((cls & hit_needs_plain) && !plain) seg = plain_text(seg, m_scratch);
    m_line = line;
    m_seg = seg;
    m_seg_rank = rank;
    const auto& all = m_sigs.all();

    int best_oom = -1, best_other = -1;
    bool crash = false;
    int crash_sig = -1;
    // A line of evaluation, checkpointing or model loading ("Validation DataLoader 0: 40%|",
    // "Loading checkpoint shards: 3/7") is not a training step: its progress hits are ignored.
    bool eval_line = false;
    // A frame line first: a phase hit on the same line (or the code line under it) names it.
    if (cls & hit_frame) note_frame(hit_data, hit_count, seg, line);
    if (cls & hit_eval_phase)
        for (int h : hits)
            if ((m_hit_class[static_cast<size_t>(h)] & hit_eval_phase) && verify_sig(all[h], seg)) eval_line = true;
    for (int h : hits) {
        const signature& s = all[h];
        switch (s.kind) {
            case sig_kind::oom:
                if ((best_oom < 0 || s.priority > all[best_oom].priority) && verify_sig(s, seg)) best_oom = h;
                break;
            case sig_kind::not_oom:
                if ((best_other < 0 || s.priority > all[best_other].priority) && verify_sig(s, seg))
                    best_other = h;
                break;
            case sig_kind::crash:
                if (!crash && verify_sig(s, seg)) crash = true, crash_sig = h;
                break;
            case sig_kind::framework:
                // counted once: a marker already counted is not matched again
                if (m_fw_sigs_seen[h] < k_fw_tries && verify_sig(s, seg)) {
                    m_fw_sigs_seen[h] = k_fw_tries;
                    count_framework(s.framework, s.weight, seg, line);
                }
                break;
            case sig_kind::progress:
                if (!eval_line) handle_progress(h, raw, line);
                break;
            case sig_kind::memory:
                if (!eval_line) handle_memory(h, raw, line, rank_of(raw));
                break;
            case sig_kind::phase:
                if (s.priority < k_context_phase && !phase_wanted_after(line, s.window)) defer_phase(h, seg, line);
                else if (verify_sig(s, seg)) handle_phase(h, seg, line);
                break;
            case sig_kind::frame:  // read above
                break;
            case sig_kind::context:
            case sig_kind::refine:
            case sig_kind::rank:
                if (verify_sig(s, seg)) handle_near(h, seg, line);
                break;
            case sig_kind::world_size:
                if (verify_sig(s, seg)) note_world_size(extract_fields(s, seg));
                break;
            case sig_kind::process_rank:
                if (verify_sig(s, seg)) handle_process_rank(extract_fields(s, seg));
                break;
            case sig_kind::launch:
                if (m_launch.line == 0 && verify_sig(s, seg)) {
                    m_launch = {m_files[m_file], line, std::string(seg.substr(0, 4096)), "launch"};
                    m_launch_cmd = m_launch.text;
                    while (!m_launch_cmd.empty() && (m_launch_cmd.back() == ' ' || m_launch_cmd.back() == '\t' || m_launch_cmd.back() == '\r'))
                        m_launch_cmd.pop_back();
                    m_launch_open = !m_launch_cmd.empty() && m_launch_cmd.back() == '\\';
                    m_launch_next = stable;
                }
                break;
            case sig_kind::pressure:
                if (verify_sig(s, seg)) {
                    log_evidence e{m_files[m_file], line, excerpt(seg), "pressure"};
                    if (m_pressure++ == 0) m_pressure_first = e;
                    else m_pressure_last = std::move(e);
                }
                break;
            case sig_kind::growth:
                if (verify_sig(s, seg) && m_growth++ == 0)
                    m_growth_first = {m_files[m_file], line, excerpt(seg), "growth"};
                break;
            case sig_kind::report:
                if (verify_sig(s, seg)) {
                    if (!m_reports.count(s.fact) && m_reports.size() < k_max_reports)
                        m_reports.emplace(s.fact, log_evidence{m_files[m_file], line, excerpt(seg), "report"});
                    if (auto& at = m_report_lines[s.fact]; at.size() < k_max_reports) at.emplace_back(m_file, line);
                }
                break;
            case sig_kind::setting:
                if (verify_sig(s, seg)) handle_setting(s, seg, line);
                break;
            case sig_kind::model_config:
                if (!m_model_config && !m_block.open() && verify_sig(s, seg))
                    handle_model_config(s, seg, line, stable, raw.size());
                break;
            case sig_kind::nccl_peer:
                // the same bytes as the previous peer line: its facts are noted already (and only
                // peer lines write them)
                if (repeat && m_prev_peer_sig == h) break;
                m_prev_peer = nccl_peer_fields(h, seg);
                m_prev_peer_sig = h;
                if (const field_list* peer = m_prev_peer) {
                    const field_list& f = *peer;
                    auto* pid = find_field(f, "pid");
                    auto* rk = find_field(f, "rank");
                    if (pid && rk && (m_pid_rank.size() < k_pid_max || m_pid_rank.count(pid->num)))
                        m_pid_rank[pid->num] = rk->num;
                    if (rk && m_nccl_ranks.size() < k_pid_max) m_nccl_ranks.insert(rk->num);
                    note_world_size(f);
                }
                break;
        }
    }
    // A named look-alike beats the generic out-of-memory wording on the same line.
    if (best_oom >= 0 && all[best_oom].fallback && best_other >= 0) best_oom = -1;
    if (best_oom >= 0) handle_failure(sig_kind::oom, best_oom, seg, line);
    else if (best_other >= 0) handle_failure(sig_kind::not_oom, best_other, seg, line);
    if (crash) {
        if (seg.find("Traceback (most recent call last)") != std::string_view::npos) {
            m_tb_file = m_file;
            m_tb_line = line;
            m_tb_rank = rank_of(raw);
        }
        if (seg.find("Root Cause") != std::string_view::npos) {
            m_root_cause_line = line;
            m_root_cause_file = m_file;
        }
        if (best_oom < 0 && best_other < 0) handle_failure(sig_kind::crash, crash_sig, seg, line);
    }
    (void)cut;
}

// NCCL INFO lines repeat verbatim (every channel, every communicator): each distinct text is
// matched once. nullptr: not a peer line.
const field_list* scanner::nccl_peer_fields(int sig, std::string_view seg) {
    constexpr size_t k_cache_max = 4096;
    for (const auto& r : m_peer_recent)
        if (r.fields && r.text == seg) return r.fields->has_value() ? &**r.fields : nullptr;
    if (auto it = m_peer_cache.find(seg); it != m_peer_cache.end()) {
        m_peer_recent[m_peer_next++ % m_peer_recent.size()] = {it->first, &it->second};  // nodes stay put
        return it->second.has_value() ? &*it->second : nullptr;
    }
    const signature& s = m_sigs.all()[sig];
    std::optional<field_list> f;
    if (verify_sig(s, seg)) f = extract_fields(s, seg);
    if (m_peer_cache.size() >= k_cache_max) {
        m_peer_scratch = std::move(f);
        return m_peer_scratch.has_value() ? &*m_peer_scratch : nullptr;
    }
    auto& slot = m_peer_cache.emplace(std::string(seg), std::move(f)).first->second;
    return slot.has_value() ? &*slot : nullptr;
}

void scanner::handle_failure(sig_kind kind, int sig, std::string_view seg, std::int64_t line) {
    const signature& s = m_sigs.all()[sig];
    std::int64_t rank = rank_of(seg);
    // No prefix of its own: the message that ends a traceback whose head line names a rank
    const bool from_head = rank < 0 && kind == sig_kind::oom && m_tb_rank >= 0 && m_tb_file == m_file &&
                           line > m_tb_line && line - m_tb_line <= k_traceback_span;
    if (from_head) rank = m_tb_rank;
    std::vector<event>* list = &m_crash;
    if (kind == sig_kind::oom) {
        ++m_oom_lines;
        list = s.weak ? &m_weak : s.fallback ? &m_fallback : &m_strong;
        if (rank >= 0 && !s.weak && m_oom_rank_set.size() < k_max_failed_ranks && m_oom_rank_set.insert(rank).second)
            m_oom_ranks.push_back(rank);
    } else if (kind == sig_kind::not_oom) {
        list = &m_not_oom;
    }
    if (list->size() >= k_max_events) return;
    event ev;
    ev.kind = kind;
    ev.sig = sig;
    ev.file = m_file;
    ev.line = line;
    ev.text = excerpt(seg);
    ev.fields = extract_fields(s, seg);
    ev.rank = rank;
    ev.rank_from_head = from_head;
    ev.task_label = task_label(seg);
    for (const auto& h : m_near_ring) {
        if (h.sig < 0 || h.file != m_file) continue;
        if (h.line + m_sigs.all()[h.sig].window >= line && ev.near.size() < k_near_per_event)
            ev.near.push_back(h);
    }
    settle_phases();
    for (const auto& h : m_phase_last) {
        if (h.sig < 0 || h.file != m_file || h.line + m_sigs.all()[h.sig].window < line) continue;
        // frames of another rank's traceback are not this failure's; job-wide context lines are
        const bool context = m_sigs.all()[h.sig].priority >= k_context_phase;
        if (context || rank < 0 || rank_prefix(h.text) < 0 || rank_prefix(h.text) == rank) ev.phases.push_back(h);
    }
    if (!resolve_progress(ev, false)) {
        ev.awaiting_progress = true;
        ++m_awaiting;
    }
    if (kind == sig_kind::oom) {  // its next lines, for a message hard-wrapped over them
        if (m_every_line) {
            m_wrap_list = list;
            m_wrap_index = list->size();
            m_wrap_taken = 0;
            m_wrap_line = line;
        } else {
            ev.after_from = m_seg_end;
        }
    }
    list->push_back(std::move(ev));
}

// A line where a process names its own rank: a file that names one rank only is that
// rank's output; a file with several (every process printing to one terminal) names none.
void scanner::handle_process_rank(const field_list& f) {
    note_world_size(f);
    auto* r = find_field(f, "rank");
    if (!r || r->num < 0 || r->num >= k_rank_limit) return;
    if (m_process_rank.size() <= static_cast<size_t>(m_file)) m_process_rank.resize(static_cast<size_t>(m_file) + 1, -1);
    std::int64_t& mine = m_process_rank[static_cast<size_t>(m_file)];
    mine = mine == -1 || mine == r->num ? r->num : -2;
}

// A printed setting, mapped by the signature (setting_value); the last one printed wins.
void scanner::handle_setting(const signature& s, std::string_view seg, std::int64_t line) {
    const field_list f = extract_fields(s, seg, {"value"});
    std::string raw;
    if (const auto* v = find_field(f, "value")) raw = v->is_str ? v->str : std::to_string(v->num);
    std::string out = setting_value(s, raw);
    if (out.empty()) return;
    log_analysis::setting v{s.fact, std::move(out), {m_files[m_file], line, excerpt(seg), "setting"}, std::nullopt};
    if (const auto* c = find_field(f, "value"); c && c->rounded_digits >= 0) v.count = printed_count{c->num, c->rounded_digits};
    if (!s.needs_report.empty()) {  // settled at the end of the scan (scanner::finish)
        if (m_pending_settings.size() < k_max_reports)
            m_pending_settings.push_back({std::move(v), s.needs_report, m_file, line, s.window});
        return;
    }
    m_settings[s.fact] = std::move(v);
}

// The header of a printed model config: the lines after it are its JSON, read by on_segment
// (or by read_open_block when the prefilter threads gave only the header).
void scanner::handle_model_config(const signature&, std::string_view seg, std::int64_t line, const char* stable,
                                  size_t raw_size) {
    const size_t brace = seg.rfind('{');
    if (brace == std::string_view::npos) return;
    m_block.start(seg, brace);
    m_block_at = {m_files[m_file], line, excerpt(seg), "model_config"};
    m_block_next = stable ? stable + raw_size : nullptr;
    settle_block();
}

bool scanner::feed_block(std::string_view seg) {
    const bool mine = m_block.feed(seg);
    settle_block();
    return mine;
}

// A block that closed is kept (the first one); one dropped is a warning.
void scanner::settle_block() {
    using st = printed_block_reader::state;
    if (m_block.status() == st::closed && !m_model_config) {
        m_model_config = log_analysis::printed_config{m_block.text(), m_block_at};
        m_block = {};
    } else if (m_block.status() == st::dropped) {
        if (m_block_warnings.size() < 4)
            m_block_warnings.push_back(fmt::format("{}:{}: printed model config not read: {}", m_block_at.file,
                                                   m_block_at.line, m_block.reason()));
        m_block = {};
    }
}

void scanner::read_open_launch(const char* base, size_t n) {
    const char* p = m_launch_next;
    m_launch_next = nullptr;
    if (!m_launch_open) return;
    const char* end = base + n;
    if (!p || p < base || p >= end) {
        m_launch_open = false;
        return;
    }
    // extend_launch closes it at a line that is not a flag, or past 256 lines / 4 KiB
    each_line_after(p, end, [&](std::string_view l) {
        extend_launch(l);
        return m_launch_open;
    });
    m_launch_open = false;
}

void scanner::read_open_wraps(const char* base, size_t n) {
    constexpr size_t k_wrap_window = 64 << 10;  // bytes read after a failure line, whatever its next lines hold
    const char* file_end = base + n;
    for (auto* list : {&m_strong, &m_fallback, &m_weak})
        for (event& ev : *list) {
            const char* p = ev.after_from;
            ev.after_from = nullptr;
            if (!p || p < base || p >= file_end || !ev.after.empty()) continue;
            const char* end = static_cast<size_t>(file_end - p) > k_wrap_window ? p + k_wrap_window : file_end;
            size_t taken = 0;
            each_line_after(p, end, [&](std::string_view l) {
                if (const size_t cr = l.find('\r'); cr != std::string_view::npos) l = l.substr(0, cr);
                return keep_wrapped_line(ev.after, l, taken);
            });
        }
}

void scanner::read_open_block(const char* base, size_t n) {
    if (!m_block.open()) return;
    const char* p = m_block_next;
    const char* end = base + n;
    if (!p || p < base || p > end) {
        m_block.end("its lines were not readable here");
        settle_block();
        return;
    }
    while (p < end && *p != '\n') ++p;  // the rest of the header line
    // At most the cap and the tolerated other lines: a block never costs more than that.
    const size_t budget = k_block_cap + (k_block_foreign + 8) * k_excerpt_cap;
    const char* stop = static_cast<size_t>(end - p) > budget ? p + budget : end;
    p = each_line_after(p, stop, [&](std::string_view l) {
        m_block.feed(l);
        return m_block.open();
    });
    if (m_block.open()) m_block.end(p >= end ? "the log ends inside it" : "no closing brace within the cap");
    m_block_next = nullptr;
    settle_block();
}

// The largest world size the lines state (torchrun, NCCL peers, process announcements).
void scanner::note_world_size(const field_list& f) {
    if (auto* w = find_field(f, "world_size"); w && w->num > 0 && w->num < k_rank_limit)
        m_world_size = std::max(m_world_size.value_or(0), w->num);
}

void scanner::handle_near(int sig, std::string_view seg, std::int64_t line) {
    const signature& s = m_sigs.all()[sig];
    near_hit h{sig, m_file, line, excerpt(seg), extract_fields(s, seg)};
    if (s.kind == sig_kind::rank) {
        if (m_rank_hits.size() < 16) m_rank_hits.push_back(h);
        else if (m_root_cause_file == m_file && line - m_root_cause_line <= 12) m_rank_hits.back() = h;
    }
    // attach to recent failures within the window
    for (auto* list : {&m_strong, &m_fallback, &m_weak, &m_not_oom, &m_crash}) {
        for (auto it = list->rbegin(); it != list->rend() && it - list->rbegin() < 4; ++it) {
            if (it->file == m_file && line - it->line <= s.window && it->near.size() < k_near_per_event)
                it->near.push_back(h);
        }
    }
    m_near_ring[m_near_head] = std::move(h);
    m_near_head = (m_near_head + 1) % m_near_ring.size();
}

// A frame line is kept as it is; parse_frame reads it when a context phase asks (frame_above).
void scanner::note_frame(const int* hits, size_t n, std::string_view seg, std::int64_t line) {
    if (m_frames_size == k_frame_ring) {  // the oldest falls out: parsed if a later line could still ask for it
        frame_line& old = m_frames[m_frames_head];
        if (old.file == m_file && line - old.line <= k_ipython_frame_span) {
            parse_frame(old);
            if (old.state == frame_state::frame) std::swap(m_frame_evicted, old);
        }
    } else {
        ++m_frames_size;
    }
    frame_line& f = m_frames[m_frames_head];
    m_frames_head = (m_frames_head + 1) % k_frame_ring;
    f.file = m_file;
    f.line = line;
    f.state = frame_state::unparsed;
    f.sigs.clear();
    for (size_t i = 0; i < n; ++i)
        if (m_sigs.all()[static_cast<size_t>(hits[i])].kind == sig_kind::frame) f.sigs.push_back(hits[i]);
    f.text.assign(seg.data(), std::min(seg.size(), k_match_cap));
}

// The first frame hit of the line that matches and names a path, as on_candidates once did for
// every frame line.
void scanner::parse_frame(frame_line& f) {
    if (f.state != frame_state::unparsed) return;
    f.state = frame_state::none;
    for (int h : f.sigs) {
        const signature& s = m_sigs.all()[static_cast<size_t>(h)];
        if (!verify_sig(s, f.text)) continue;
        field_list fl = extract_fields(s, f.text, {"path"});
        if (fl.empty()) continue;
        f.state = frame_state::frame;
        f.path = fl.front().str;
        break;
    }
    if (f.text.size() > k_excerpt_cap) f.text.resize(k_excerpt_cap);  // the evidence: 1 KiB
}

const scanner::frame_line* scanner::frame_above(std::int64_t line, std::int64_t max_gap) {
    for (size_t k = 0; k < m_frames_size; ++k) {  // newest first
        frame_line& f = m_frames[(m_frames_head + k_frame_ring - 1 - k) % k_frame_ring];
        if (f.file != m_file || line - f.line > max_gap) return nullptr;  // older ones are further
        parse_frame(f);
        if (f.state == frame_state::frame) return &f;
    }
    const frame_line& e = m_frame_evicted;
    return e.state == frame_state::frame && e.file == m_file && line - e.line <= max_gap ? &e : nullptr;
}

// Stops and returns true when f does.
template <class F>
bool scanner::each_recent_failure(std::int64_t line, int window, F&& f) {
    for (auto* list : {&m_strong, &m_fallback, &m_weak, &m_crash})
        for (auto it = list->rbegin(); it != list->rend() && it - list->rbegin() < 4; ++it)
            if (it->file == m_file && line - it->line <= window && it->phases_after.size() < k_near_per_event && f(*it))
                return true;
    return false;
}

// What the job was doing: the newest line of each phase signature (a traceback repeats
// `forward` frames many times; one entry per signature keeps the outer frames visible).
void scanner::handle_phase(int sig, std::string_view seg, std::int64_t line) {
    if (ipython_context_line(seg))
        if (const frame_line* f = frame_above(line, k_ipython_frame_span); f && f->line < line)
            return;  // source shown around an IPython frame's call, not a call
    near_hit h{sig, m_file, line, excerpt(seg), {}};
    // A context phase's frame (evaluation, checkpoint, model loading: whose loop it is): the frame
    // the line is, or the frame above the code line it is (the next line in a plain traceback; a
    // few numbered context lines further down in an IPython one).
    if (m_sigs.all()[static_cast<size_t>(sig)].priority >= k_context_phase) {
        if (const frame_line* f = frame_above(line, ipython_code_line(seg) ? k_ipython_frame_span : 1)) {
            h.frame_path = f->path;
            h.frame_line = f->line;
            h.frame_text = f->text;
        }
    }
    // THCudaCheck, a bare Traceback: frames follow
    each_recent_failure(line, m_sigs.all()[static_cast<size_t>(sig)].window, [&](event& ev) {
        ev.phases_after.push_back(h);
        return false;
    });
    m_phase_last[static_cast<size_t>(sig)] = std::move(h);
    if (static_cast<size_t>(sig) < m_phase_pending.size()) m_phase_pending[static_cast<size_t>(sig)].size = 0;  // older
}

// Whether handle_phase would give a phase line at `line` to a recent failure (phases_after).
bool scanner::phase_wanted_after(std::int64_t line, int window) {
    return each_recent_failure(line, window, [](const event&) { return true; });
}

void scanner::count_framework(const std::string& fw, int weight, std::string_view seg, std::int64_t line) {
    auto [it, fresh] = m_fw.try_emplace(fw);
    if (fresh) {
        it->second.order = static_cast<int>(m_fw.size()) - 1;
        it->second.first = {m_files[m_file], line, excerpt(seg), "framework"};
    }
    it->second.score += weight;
}

void scanner::defer_phase(int sig, std::string_view seg, std::int64_t line) {
    if (m_phase_pending.empty()) m_phase_pending.resize(m_sigs.size());
    phase_pending& pp = m_phase_pending[static_cast<size_t>(sig)];
    const int window = m_sigs.all()[static_cast<size_t>(sig)].window;
    if (pp.ring.empty()) pp.ring.resize(static_cast<size_t>(window) + 2);
    if (!pp.listed) {
        pp.listed = true;
        m_phase_pending_sigs.push_back(sig);
    }
    const size_t cap = pp.ring.size();
    if (pp.size == cap) {  // the oldest falls out: matched if a later failure could still read it
        pending_phase& old = pp.ring[(pp.head + cap - pp.size) % cap];
        if (old.file == m_file && old.line + window >= line && verify_sig(m_sigs.all()[static_cast<size_t>(sig)], old.text))
            m_phase_last[static_cast<size_t>(sig)] = near_hit{sig, old.file, old.line, excerpt(old.text), {}};
        --pp.size;
    }
    pending_phase& e = pp.ring[pp.head];
    pp.head = (pp.head + 1) % cap;
    ++pp.size;
    e.file = m_file;
    e.line = line;
    e.text.assign(seg.data(), seg.size());
}

// The newest pending line of each signature that matches becomes its m_phase_last.
void scanner::settle_phases() {
    for (int sig : m_phase_pending_sigs) {
        phase_pending& pp = m_phase_pending[static_cast<size_t>(sig)];
        const signature& s = m_sigs.all()[static_cast<size_t>(sig)];
        const size_t cap = pp.ring.size();
        for (size_t k = 0; k < pp.size; ++k) {  // newest first
            const pending_phase& e = pp.ring[(pp.head + cap - 1 - k) % cap];
            if (verify_sig(s, e.text)) {
                m_phase_last[static_cast<size_t>(sig)] = near_hit{sig, e.file, e.line, excerpt(e.text), {}};
                break;
            }
        }
        pp.size = 0;
        pp.listed = false;
    }
    m_phase_pending_sigs.clear();
}

void scanner::handle_progress(int sig, std::string_view seg, std::int64_t line) {
    const signature& s = m_sigs.all()[sig];
    // A progress format names its framework only when the whole pattern matched, not on the literal
    // alone ("step=" is in every key=value logger); a format that keeps failing stops being tried.
    if (!s.framework.empty() && m_fw_sigs_seen[sig] < k_fw_tries) {
        if (verify_sig(s, plain_text(seg.substr(0, std::min(seg.size(), k_progress_text)), m_scratch2))) {
            m_fw_sigs_seen[sig] = k_fw_tries;
            count_framework(s.framework, 2, seg, line);
        } else {
            ++m_fw_sigs_seen[sig];
        }
    }
    std::int64_t total = -1;
    if (s.by_total) {  // bars of different totals (training, evaluation, loading) are separate counters
        for (const auto& f : s.fields) {
            if (f.name != "total") continue;
            re2::StringPiece cap;
            std::string_view text = plain_text(seg.substr(0, std::min(seg.size(), k_progress_text)), m_scratch2);
            for (const auto& re : f.patterns)
                if (RE2::PartialMatch(sp(text), re->re(), &cap)) {
                    total = grouped_integer({cap.data(), cap.size()}).value_or(-1);
                    break;
                }
        }
    }
    if (total >= 0 && m_progress.size() >= k_max_counters && !m_progress.count({sig, total})) total = -1;
    // map nodes stay put (nothing is erased): the plain counter of a signature is looked up once
    progress_rings*& plain = m_progress_of_sig[static_cast<size_t>(sig)];
    if (total < 0 && !plain) plain = &m_progress[{sig, total}];
    progress_rings& pr = total < 0 ? *plain : m_progress[{sig, total}];
    if (pr.file != m_file) {
        pr.file = m_file;
        pr.count = 0;
        pr.first_line = line;
    }
    ++pr.count;
    const std::int64_t rank = rank_of(seg);
    const size_t len = std::min(seg.size(), k_progress_text);
    progress_entry* e = nullptr;
    if (rank >= 0 && rank < 65536) {
        if (pr.by_rank.size() <= static_cast<size_t>(rank)) pr.by_rank.resize(static_cast<size_t>(rank) + 1);
        e = &pr.by_rank[static_cast<size_t>(rank)].push();
    } else {
        e = &pr.any.push();
    }
    e->file = m_file;
    e->line = line;
    e->rank = rank;
    hold(e->text, seg.substr(0, len));
    e->step_state = 0;
    if (m_has_memory[static_cast<size_t>(sig)]) handle_memory(sig, seg, line, rank, true);
    // a progress line printed right after a failure (stderr/stdout interleaving)
    if (m_awaiting > 0) {
        m_awaiting = 0;
        for (auto* list : {&m_strong, &m_fallback, &m_weak, &m_not_oom, &m_crash})
            for (auto& ev : *list) {
                if (!ev.awaiting_progress) continue;
                if (ev.file == m_file && line - ev.line <= 8) resolve_progress(ev, true);
                if (ev.awaiting_progress && ev.file == m_file && line - ev.line <= 8) ++m_awaiting;
            }
    }
}

void scanner::handle_memory(int sig, std::string_view seg, std::int64_t line, std::int64_t rank,
                            bool in_ring) {
    // The current file's series by rank (hash nodes stay put); other ranks through the map.
    const bool cached = rank >= -1 && rank < 65535;
    const size_t slot = static_cast<size_t>(rank + 1);
    series_state* stp = cached && slot < m_series_of_rank.size() ? m_series_of_rank[slot] : nullptr;
    if (!stp) {
        const std::int64_t key = (static_cast<std::int64_t>(m_file) << 32) | ((rank + 1) & 0xffffffff);
        auto it = m_series.find(key);
        if (it == m_series.end()) {
            if (m_series.size() >= k_series_max) return;
            it = m_series.emplace(key, series_state{}).first;
            it->second.file = m_file;
            it->second.rank = rank;
        }
        stp = &it->second;
        if (cached) {
            if (slot >= m_series_of_rank.size()) m_series_of_rank.resize(slot + 1, nullptr);
            m_series_of_rank[slot] = stp;
        }
    }
    series_state& st = *stp;
    const std::int64_t n = st.count++;
    st.last_sig = sig;
    st.last.file = m_file;
    st.last.line = line;
    st.last.rank = rank;
    st.last_in_ring = in_ring;  // the progress ring holds the text; no second copy
    if (!in_ring) hold(st.last.text, seg.substr(0, std::min(seg.size(), k_progress_text)));
    if (n % st.stride != 0) return;
    const signature& s = m_sigs.all()[sig];
    const std::string_view raw = seg;
    if (!m_seg_plain) seg = plain_text(seg, m_scratch2);
    if (!verify_sig(s, seg)) return;
    series_reading r;
    r.p.line = line;
    const bool step_field = m_has_step[static_cast<size_t>(sig)];
    const bool wait = st.eager == 0 && raw.size() <= k_wait_line_max && m_waiting_bytes + raw.size() <= k_wait_bytes_max;
    if (!wait) {
        bool step_found = false;
        if (!read_point(s, seg, st, r.p, step_found)) return;
        if (!step_found) r.p.step = latest_step(rank).value_or(n + 1);
        if (step_field && !step_found) st.eager = -1;
        else if (st.eager > 0) --st.eager;
    } else {
        // the step from the progress lines is this moment's; a line's own step is parsed later.
        // A copy, not a view: the line was just read; touching the mapping again at the end would
        // map back pages given back meanwhile (whole large folios of a freshly written file).
        r.p.step = step_field ? n + 1 : latest_step(rank).value_or(n + 1);
        r.sig = sig;
        r.text.set(raw, false);
        m_waiting_bytes += raw.size();
    }
    st.points.push_back(std::move(r));
    const size_t cap = std::clamp(k_series_budget / m_series.size(), k_series_min_points, k_series_points);
    while (st.points.size() > cap) {
        for (size_t i = 1; i < st.points.size(); i += 2)  // the readings thinned out
            if (st.points[i].sig >= 0) m_waiting_bytes -= st.points[i].text.view().size();
        size_t w = 0;
        for (size_t i = 0; i < st.points.size(); i += 2, ++w)
            if (w != i) st.points[w] = std::move(st.points[i]);
        st.points.resize(w);
        st.stride *= 2;
    }
}

bool read_memory_line(const signature& s, std::string_view text, memory_point& p, bool& step_found,
                      std::int64_t* pct) {
    // the other fields are not needed per point
    auto f = pct ? extract_fields(s, text, {"memory", "step", "memory_pct", "step_peak_bytes", "print_peak_bytes"})
                 : extract_fields(s, text, {"memory", "step", "step_peak_bytes", "print_peak_bytes"});
    auto* mem = find_field(f, "memory");
    if (!mem) return false;
    if (pct) {
        auto* pc = find_field(f, "memory_pct");
        *pct = pc ? pc->num : 0;
    }
    p.bytes = mem->num;
    p.statistic = s.statistic.empty() ? "unknown" : s.statistic;
    if (auto* peak = find_field(f, "step_peak_bytes")) p.peak_bytes = peak->num;
    if (auto* peak = find_field(f, "print_peak_bytes")) {
        p.peak_bytes = peak->num;
        p.peak_since_print = true;
    }
    p.time_ms = log_line_time_ms(text);
    auto* stp = find_field(f, "step");
    step_found = stp != nullptr;
    if (stp) p.step = stp->num;
    return true;
}

bool scanner::read_point(const signature& s, std::string_view text, series_state& st, memory_point& p,
                         bool& step_found) {
    // the percentage of capacity only a few times; p.file: filled by series_points (a series is
    // one file's), not copied per reading
    std::int64_t pct = 0;
    if (!read_memory_line(s, text, p, step_found, st.capacity.size() < 3 ? &pct : nullptr)) return false;
    if (pct > 0) st.capacity.push_back(static_cast<double>(p.bytes) / (static_cast<double>(pct) / 10000.0));
    return true;
}

void scanner::parse_waiting_readings() {
    for (auto& [key, st] : m_series) {
        size_t w = 0;
        for (size_t i = 0; i < st.points.size(); ++i) {
            series_reading& r = st.points[i];
            if (r.sig >= 0) {
                const std::int64_t fallback = r.p.step;
                bool step_found = false;
                std::string_view text = plain_text(r.text.view(), m_scratch2);
                const bool ok = read_point(m_sigs.all()[r.sig], text, st, r.p, step_found);
                if (!step_found) r.p.step = fallback;
                r.sig = -1;
                r.text = held_text{};
                if (!ok) continue;  // verified but without a reading: dropped
            }
            if (w != i) st.points[w] = std::move(r);
            ++w;
        }
        st.points.resize(w);
    }
    m_waiting_bytes = 0;
}

std::optional<std::int64_t> scanner::latest_step(std::int64_t rank) {
    event tmp;
    tmp.file = m_file;
    tmp.line = m_line;
    tmp.rank = rank;
    if (resolve_progress(tmp, false)) return tmp.last_step;
    return std::nullopt;
}

// The training step counter for the event, then its newest valid line before (or, with
// `after`, just after) the event: its step and the previous distinct step. Several counters
// (a training bar, evaluation bars, a checkpoint-loading bar, a sparse `step=` line): the
// counter still running (not at its total) wins over finished ones; among those, the one
// that started first in the file (a single stray line does not count when others repeat).
// The newest elision line (a progress signature with `elision`) of the file strictly between two lines,
// or -1; its text in `text` when asked.
std::int64_t scanner::elision_between(int file, std::int64_t lo, std::int64_t hi, std::string* text) {
    const auto& all = m_sigs.all();
    std::int64_t found = -1;
    for (auto& [key, pr] : m_progress) {
        const signature& s = all[key.first];
        if (!s.elision || pr.file != file) continue;
        auto look = [&](auto& r) {
            for (size_t k = 0; k < r.size; ++k) {
                const progress_entry& e = r.newest(k);
                if (e.file != file || e.line <= lo || e.line >= hi || e.line <= found) continue;
                const std::string_view t = plain_text(e.text.view(), m_scratch2);
                if (!verify_sig(s, t)) continue;
                found = e.line;
                if (text) *text = excerpt(t);
            }
        };
        look(pr.any);
        for (auto& r : pr.by_rank) look(r);
    }
    return found;
}

bool scanner::resolve_progress(event& ev, bool after, bool eval_running) {
    const auto& all = m_sigs.all();
    struct pick {
        const progress_rings* pr = nullptr;
        int sig = -1;
        std::int64_t key_total = -1;
        progress_entry* newest = nullptr;
        std::optional<std::int64_t> first, second;
        std::int64_t second_line = -1;  // the newest line of the previous distinct step
        progress_entry* second_entry = nullptr;
        std::int64_t stride = 0;
        std::int64_t run_start = -1;  // the line its current bar began, after an earlier one closed at its total
        std::int64_t run_lines = -1;  // the lines of that current bar
        // the newest distinct values, newest first, and the newest line of each (an elision reads them)
        std::int64_t vals[k_pick_values] = {}, val_lines[k_pick_values] = {};
        int n_vals = 0;
    };
    auto parse = [&](const signature& s, progress_entry& e) {
        if (e.step_state != 0) return;  // parsed once per entry, however often it is consulted
        e.step_state = 1;
        std::string_view text = plain_text(e.text.view(), m_scratch2);
        if (!verify_sig(s, text)) return;
        auto f = extract_fields(s, text);
        if (auto* st = find_field(f, "step")) {
            e.step_state = 2;
            e.step = st->num;
        }
        if (auto* t = find_field(f, "total")) e.total = t->num;
    };
    // The newest run start at or before the event (detectron2's "Starting training from iteration",
    // HF's "***** Running training *****"): counters logged before it in the file are an earlier run's.
    std::int64_t run_from = -1;
    for (auto& [key, pr] : m_progress) {
        const signature& s = all[key.first];
        if (!s.run_start) continue;
        auto look = [&](auto& r) {
            for (size_t k = 0; k < r.size; ++k) {
                progress_entry& e = r.newest(k);
                if (e.file != ev.file || e.line > ev.line || e.line <= run_from) continue;
                if (verify_sig(s, plain_text(e.text.view(), m_scratch2))) run_from = e.line;
            }
        };
        look(pr.any);
        for (auto& r : pr.by_rank) look(r);
    }
    std::vector<std::pair<std::int64_t, progress_entry*>> seen;  // (line, entry) of one counter
    auto scan = [&](pick& p, auto& r) {
        const signature& s = all[p.sig];
        if (s.run_start || s.elision) return;
        for (size_t k = 0; k < r.size; ++k) {
            progress_entry& e = r.newest(k);
            if (e.file != ev.file || (!after && e.line > ev.line) || e.line < run_from) continue;
            parse(s, e);
            if (e.step_state == 2) seen.emplace_back(e.line, &e);
        }
    };
    auto settle = [&](pick& p) {  // newest entry and the previous distinct step
        // newest first; entries of one line (\r rewrites) keep their newest-first ring order
        std::stable_sort(seen.begin(), seen.end(), [](auto& a, auto& b) { return a.first > b.first; });
        if (!seen.empty()) {
            p.newest = seen.front().second;
            p.first = p.newest->step;
            for (auto& [line, e] : seen)
                if (e->step != *p.first) {
                    p.second = e->step;
                    p.second_line = line;
                    p.second_entry = e;
                    break;
                }
            // A constant advance of k >= 2 over the newest distinct values, each a multiple of k
            // (gaussian-splatting's `progress_bar.update(10)`, a bar redrawn every k steps): the
            // counter moves k at a time. Irregular gaps (a fast bar's skipped redraws) are not one.
            constexpr int k_stride_values = k_pick_values;
            std::int64_t* vals = p.vals;
            int& n = p.n_vals;
            for (auto& [line, e] : seen) {
                if (n && e->step == vals[n - 1]) continue;
                p.val_lines[n] = line;
                vals[n++] = e->step;
                if (n == k_stride_values) break;
            }
            // Bars of one total are one counter: a loading bar (`6/6`), then sampling bars of the same
            // total. A run closed at its total and a lower count after it: a new bar began there.
            for (size_t i = 0; i + 1 < seen.size(); ++i) {
                const progress_entry* newer = seen[i].second;
                const progress_entry* older = seen[i + 1].second;
                if (older->total > 0 && older->step == older->total && newer->step < older->step) {
                    p.run_start = seen[i].first;
                    p.run_lines = 1;
                    for (size_t k = 1; k <= i; ++k) p.run_lines += seen[k].first != seen[k - 1].first;
                    break;
                }
            }
            if (n == k_stride_values) {
                const std::int64_t k = vals[0] - vals[1];
                bool same = k >= 2;
                for (int i = 0; same && i < n; ++i)
                    same = vals[i] % k == 0 && (i + 1 == n || vals[i] - vals[i + 1] == k);
                if (same) p.stride = k;
            }
        }
        seen.clear();
    };
    // a counter of samples (TRL's `'episode': N`) is the step only while it advances by one a line
    auto counts_steps = [&](const pick& p) {
        return p.newest && (!all[p.sig].unit_advance || (p.second && *p.first - *p.second == 1));
    };
    // a counter's total: the key's own (`step 3/100`) or the bar's
    auto total_of = [](const pick& p) { return p.key_total >= 0 ? p.key_total : p.newest->total; };
    auto choose = [&](std::vector<pick>& picks) -> pick* {
        std::vector<pick*> pool;
        for (auto& p : picks) {
            if (!counts_steps(p)) continue;
            const std::int64_t total = total_of(p);
            if (!(total > 0 && *p.first >= total)) pool.push_back(&p);
        }
        // a bar of one item (`0/1`: one file, one shard) counts no training steps beside another counter
        if (std::any_of(pool.begin(), pool.end(), [&](const pick* p) { return total_of(*p) != 1; }))
            pool.erase(std::remove_if(pool.begin(), pool.end(), [&](const pick* p) { return total_of(*p) == 1; }),
                       pool.end());
        if (pool.empty())
            for (auto& p : picks)
                if (counts_steps(p)) pool.push_back(&p);
        if (pool.empty()) return nullptr;
        // A bar without a total (`processing data.jsonl: 2201it [00:00, ...]`: an iterable of
        // unknown length) last drawn before an open bar of known total began: it closed, and the
        // later bar is the running loop (the training bar after the data-processing bars).
        auto closed_unsized = [&](const pick* p) {
            if (!all[p->sig].by_total || total_of(*p) > 0 || p->pr->file != ev.file) return false;
            return std::any_of(pool.begin(), pool.end(), [&](const pick* q) {
                return q != p && all[q->sig].by_total && total_of(*q) > 0 && q->pr->file == ev.file &&
                       q->pr->first_line > p->newest->line;
            });
        };
        std::vector<pick*> kept;  // all of them closed: none is dropped
        for (auto* p : pool)
            if (!closed_unsized(p)) kept.push_back(p);
        if (!kept.empty()) pool.swap(kept);
        // A counter whose current bar began after another bar that is still open (a training bar
        // between the loading bars and the sampling bars of one total): its earlier runs were another
        // loop's. A per-epoch bar that closed and began again, with no open bar in between, stays one.
        auto enclosed = [&](const pick* p) {
            if (p->run_start < 0 || p->pr->file != ev.file) return false;
            return std::any_of(pool.begin(), pool.end(), [&](const pick* q) {
                return q != p && all[q->sig].by_total && q->pr->file == ev.file &&
                       q->pr->first_line > p->pr->first_line && q->pr->first_line < p->run_start;
            });
        };
        // lines of the counter in the file; of its current bar when enclosed (a run of bars of one
        // total repeats without any one of them repeating)
        auto count = [&](const pick* p) {
            return p->pr->file != ev.file ? 0 : enclosed(p) ? p->run_lines : p->pr->count;
        };
        std::int64_t most = 0;
        for (auto* p : pool) most = std::max(most, count(p));
        pick* best = nullptr;
        // where the counter's running bar began: its first line, or the start of its current bar when enclosed
        auto began = [&](const pick* p) {
            return p->pr->file != ev.file ? 0 : enclosed(p) ? p->run_start : p->pr->first_line;
        };
        for (auto* p : pool) {
            if (count(p) < 2 && most >= 2) continue;
            const std::int64_t start = began(p);
            const std::int64_t best_start = best ? began(best) : 0;
            if (!best || start < best_start || (start == best_start && p->newest->line > best->newest->line))
                best = p;
        }
        // Nested bars (`for epoch in tqdm(...)` around `for batch in tqdm(loader)`): the outer bar
        // started first but never moved, while a bar of a larger total started inside it and
        // advanced. The inner bar counts the steps; the outer one, epochs. A bar that closed at its
        // total and was drawn once more at 0 (`Fetching 4 files: 4/4`, then its first draw `0/4`
        // printed late by the terminal capture) did not move either.
        const bool never_moved =
            best && (!best->second || (best->run_start >= 0 && best->run_lines < 2 && *best->first == 0));
        if (best && all[best->sig].by_total && never_moved && best->pr->file == ev.file) {
            pick* inner = nullptr;
            for (auto* p : pool) {
                if (p == best || !all[p->sig].by_total || !p->second || count(p) < 2 ||
                    p->pr->first_line <= best->pr->first_line || total_of(*p) <= total_of(*best))
                    continue;
                if (!inner || p->pr->first_line < inner->pr->first_line) inner = p;
            }
            if (inner) best = inner;
        }
        // Nested bars whose outer bar moved (ALFRED, round 41: `epoch: 2/20` around `batch: 230/445`):
        // the outer bar is drawn only when it advances, after the inner bar closed at its total, so it
        // has about one line per value; the inner bar, of a larger total, has more lines than one run
        // of it holds (it ran again), is open, and was drawn after the outer's newest draw. The inner bar
        // counts the steps. A training bar redrawn between its steps has more lines than values and
        // keeps the choice.
        if (best && !eval_running && all[best->sig].by_total && !never_moved && best->pr->file == ev.file &&
            best->pr->count <= *best->first + 2) {
            pick* inner = nullptr;
            for (auto* p : pool) {
                if (p == best || !all[p->sig].by_total || !p->second || p->pr->file != ev.file ||
                    p->pr->count <= total_of(*p) + 2 || p->pr->first_line <= best->pr->first_line ||
                    total_of(*p) <= total_of(*best) || p->newest->line <= best->newest->line)
                    continue;
                if (!inner || p->pr->first_line < inner->pr->first_line) inner = p;
            }
            if (inner) best = inner;
        }
        return best;
    };
    std::vector<pick> picks;
    pick* best = nullptr;
    if (ev.rank >= 0 && ev.rank < 65536) {
        for (auto& [key, pr] : m_progress) {
            if (static_cast<size_t>(ev.rank) >= pr.by_rank.size()) continue;
            pick p{&pr, key.first, key.second};
            scan(p, pr.by_rank[static_cast<size_t>(ev.rank)]);
            settle(p);
            picks.push_back(p);
        }
        best = choose(picks);
    }
    if (!best) {
        picks.clear();
        for (auto& [key, pr] : m_progress) {
            pick p{&pr, key.first, key.second};
            scan(p, pr.any);
            for (auto& r : pr.by_rank)
                if (r.size) scan(p, r);
            settle(p);
            picks.push_back(p);
        }
        best = choose(picks);
    }
    if (!best) return false;
    // A step header (at_start: the step it names is running) beside a counter printed after each step
    // (nanoGPT: the evaluation line `step 1: train loss ..., val loss ...` when iteration 1 begins, and
    // `iter 0: loss ...` when iteration 0 ends). The finished counter shows the header's own step after
    // the header: that step ended, the finished counter is the step (last + 1 fails). It shows the step
    // before the header's, before the header: the header's step is running, and that one is the last.
    ev.header_prev_step.reset();
    {
        // a finished counter here is a step logger, not a bar (a bar counts the steps done, a header may
        // count from 0 or 1: the two are not compared)
        auto finished = [&](const pick& p) { return !all[p.sig].at_start && !all[p.sig].by_total; };
        const bool header_chosen = all[best->sig].at_start;
        pick* header = header_chosen ? best : nullptr;
        pick* done = !header_chosen && finished(*best) ? best : nullptr;
        for (auto& p : picks) {
            if (&p == best || !counts_steps(p) || p.pr->file != ev.file || best->pr->file != ev.file) continue;
            if (done == best && all[p.sig].at_start && p.newest->line > best->newest->line &&
                *p.first == *best->first + 1 && (!header || p.newest->line > header->newest->line))
                header = &p;  // a header after the chosen finished counter names the next step
            else if (header_chosen && finished(p) &&
                     (*p.first == *best->first || *p.first + 1 == *best->first) &&
                     (!done || p.newest->line > done->newest->line))
                done = &p;
        }
        if (header && done) {
            if (done->newest->line > header->newest->line && *done->first == *header->first) {
                best = done;  // the header's step finished after it
            } else if (done->newest->line < header->newest->line && *done->first + 1 == *header->first) {
                ev.header_prev_step = *done->first;
                best = header;
            }
        }
    }
    // A failure inside an evaluation run between training steps (HF's evaluation_loop) while the
    // chosen counter is the newest bar to start: that bar counts evaluation batches. The training
    // step is the counter drawn last before it began, still short of its total (the evaluation
    // interrupts it; a loading bar is closed at its total) and past 0 (an evaluation runs after a
    // step). A counter that started later than the chosen one keeps the choice.
    if (eval_running && all[best->sig].by_total && best->pr->file == ev.file) {
        const std::int64_t began = best->pr->first_line;
        pick* before = nullptr;
        bool newest_bar = true;
        for (auto& p : picks) {
            if (&p == best || !counts_steps(p) || p.pr->file != ev.file) continue;
            if (p.pr->first_line > began) newest_bar = false;
            const std::int64_t total = total_of(p);
            if (p.newest->line < began && *p.first >= 1 && (total <= 0 || *p.first < total) &&
                (!before || p.newest->line > before->newest->line))
                before = &p;
        }
        if (newest_bar && before) best = before;
        // The chosen bar was first drawn inside another bar's run (evaluation bars between the
        // training bar's redraws) and is drawn again after that bar closed at its total (an
        // evaluation or generation after the training ended): the closed bar holds the last step.
        if (!before) {
            pick* outer = nullptr;
            for (auto& p : picks) {
                if (&p == best || !counts_steps(p) || !all[p.sig].by_total || p.pr->file != ev.file) continue;
                const std::int64_t total = total_of(p);
                if (total <= 0 || *p.first < total || p.pr->count < 2) continue;  // closed at its total
                if (p.pr->first_line < began && p.newest->line > began && p.newest->line < best->newest->line &&
                    (!outer || p.newest->line > outer->newest->line))
                    outer = &p;
            }
            if (outer) best = outer;
        }
    }
    // A bar that never moved (`0/10`), first drawn after another bar closed at its total (`80/80`), of
    // another total, while the script's step lines name the closed bar's total (`Epoch [1/50], Step
    // [75/80]`, printed late by stdout's buffer): the open bar is another loop (validation after the
    // epoch), not the next epoch's training bar. The closed bar holds the last step.
    ev.other_loop_after = false;
    if (all[best->sig].by_total && best->pr->file == ev.file && *best->first == 0 && !best->second) {
        const std::int64_t began = best->pr->first_line;
        pick* closed = nullptr;
        for (auto& p : picks) {
            if (&p == best || !counts_steps(p) || !all[p.sig].by_total || p.pr->file != ev.file) continue;
            const std::int64_t total = total_of(p);
            if (total <= 0 || *p.first < total || total == total_of(*best) || p.newest->line > began) continue;
            const bool named = std::any_of(picks.begin(), picks.end(), [&](const pick& q) {
                return &q != &p && counts_steps(q) && !all[q.sig].by_total && q.pr->file == ev.file &&
                       total_of(q) == total;
            });
            if (named && (!closed || p.newest->line > closed->newest->line)) closed = &p;
        }
        if (closed) {
            best = closed;
            ev.other_loop_after = true;
        }
    }
    // A bar whose postfix prints its own step (`Epoch 1/60: 5/920 [01:44<3:00:04, loss=1.09, step=1]`):
    // the bar counts micro-batches (gradient accumulation) or samples, the postfix the optimizer
    // steps. A counter whose newest line is the bar's newest line, smaller than the bar's count,
    // read from the bar's postfix (after its last `[`), is the step.
    bool in_bar = false;
    if (all[best->sig].by_total && best->pr->file == ev.file) {
        std::string_view bar = plain_text(best->newest->text.view(), m_scratch2);
        const size_t open = bar.rfind('[');
        std::string_view postfix = open == std::string_view::npos ? std::string_view{} : bar.substr(open);
        const bool step_key = postfix.find("step=") != std::string_view::npos ||
                              postfix.find("step =") != std::string_view::npos;
        pick* inner = nullptr;
        for (auto& p : picks) {
            if (!step_key || &p == best || !counts_steps(p) || all[p.sig].by_total || p.pr->file != ev.file ||
                p.newest->line != best->newest->line || *p.first >= *best->first)
                continue;
            if (!inner || p.newest->line > inner->newest->line) inner = &p;
        }
        if (inner) {
            best = inner;
            in_bar = true;
        }
    }
    ev.step_in_bar = in_bar;
    // Gradient accumulation: a bar of micro-batches, and the script's step logger glued to some of its
    // redraws (`79/13244 [10:47<..., loss=5.06]20:24:22 INFO epoch 1  step 10  loss 2.78`, again at 159
    // and 239). The bar's count on the logger's two newest lines is the same r >= 2 times its step (to
    // one: the bar is drawn before its last update): the logger counts the optimizer steps. The bar
    // moved less than r - 1 after the newest one: the next step failed (else no failing step).
    ev.micro_batches = 0;
    if (!in_bar && all[best->sig].by_total && best->pr->file == ev.file) {
        const signature& bs = all[best->sig];
        auto bar_count = [&](const progress_entry* e) -> std::int64_t {
            if (!e) return -1;
            std::string_view text = plain_text(e->text.view(), m_scratch2);
            if (!verify_sig(bs, text)) return -1;
            auto f = extract_fields(bs, text);
            auto* st = find_field(f, "step");
            return st ? st->num : -1;
        };
        for (auto& p : picks) {
            if (&p == best || !counts_steps(p) || all[p.sig].by_total || p.pr->file != ev.file || !p.second ||
                !p.second_entry || *p.second < 1 || p.newest->line > best->newest->line)
                continue;
            const std::int64_t s1 = *p.first, s2 = *p.second;
            const std::int64_t b1 = bar_count(p.newest), b2 = bar_count(p.second_entry);
            if (b1 < 0 || b2 < 0 || s1 <= s2) continue;
            const std::int64_t r = (b1 + s1 / 2) / s1;
            if (r < 2 || std::abs(b1 - r * s1) > 1 || std::abs(b2 - r * s2) > 1) continue;
            const std::int64_t since = *best->first - b1;
            if (since < 0) continue;
            best = &p;
            if (since < r - 1) ev.micro_batches = r;
            break;
        }
    }
    // A counter logged every k >= 2 steps (DeepSpeed's steps_per_print, a log interval) gives no failing
    // step. Another progress line printed once per step (a loop's own `Epoch 542, Loss: ...` print, with
    // no step number) tells: k of its lines between the counter's two newest lines, and none between the
    // newest one and the failure. Printed before the counter in each step, none after it means the next
    // step failed; printed after it, the logged step's own line would follow the counter: never none.
    ev.next_step_quiet = false;
    constexpr std::int64_t k_quiet_max_stride = 16;  // the per-step lines of one interval fit a ring
    if (!all[best->sig].by_total && best->second && best->second_line >= 0 && best->newest->file == ev.file) {
        const std::int64_t k = *best->first - *best->second;
        const std::int64_t lo = best->second_line, hi = best->newest->line;
        std::vector<std::int64_t> lines;
        for (auto& [key, pr] : m_progress) {
            if (k < 2 || k > k_quiet_max_stride || ev.next_step_quiet) break;
            const signature& s = all[key.first];
            if (key.first == best->sig || s.run_start || s.elision || pr.file != ev.file) continue;
            lines.clear();
            auto collect = [&](auto& r) {
                for (size_t i = 0; i < r.size; ++i) {
                    const progress_entry& e = r.newest(i);
                    if (e.file == ev.file && e.line > lo && e.line < ev.line && e.line != hi &&
                        verify_sig(s, plain_text(e.text.view(), m_scratch2)))
                        lines.push_back(e.line);
                }
            };
            collect(pr.any);
            for (auto& r : pr.by_rank) collect(r);
            std::sort(lines.begin(), lines.end());
            lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
            const auto between = std::count_if(lines.begin(), lines.end(), [&](std::int64_t l) { return l < hi; });
            if (between == k && static_cast<std::int64_t>(lines.size()) == k) ev.next_step_quiet = true;
        }
    }
    // An elision line typed by whoever pasted the log (`...`, `[...]`, `<snip>`) between the counter's two
    // newest values: lines were cut there, so their gap is not the logging interval. The run before the cut
    // (at least two equal gaps, no cut inside) gives it; the run after it holds one value only.
    ev.elided_interval = 0;
    ev.elision_line = -1;
    ev.elision_text.clear();
    if (m_elision_sigs && best->n_vals >= 4 && best->newest->file == ev.file && *best->first > best->vals[1]) {
        const std::int64_t* v = best->vals;
        const std::int64_t* at = best->val_lines;
        std::string cut_text;
        const std::int64_t cut = elision_between(ev.file, at[1], at[0], &cut_text);
        const std::int64_t k = v[1] - v[2];
        int gaps = 0;
        for (int i = 1; i + 1 < best->n_vals && k >= 1; ++i) {
            if (v[i] - v[i + 1] != k || elision_between(ev.file, at[i + 1], at[i], nullptr) >= 0) break;
            ++gaps;
        }
        if (cut >= 0 && gaps >= 2 && v[0] - v[1] > k) {
            ev.elided_interval = k;
            ev.elision_line = cut;
            ev.elision_text = std::move(cut_text);
        }
    }
    ev.last_step = best->first;
    ev.prev_step = best->second;
    ev.step_stride = best->stride;
    ev.last_total = best->key_total >= 0 ? best->key_total : best->newest->total;
    ev.progress_sig = best->sig;
    ev.progress_line = best->newest->line;
    // the first line that showed the newest value after the previous distinct one (a redraw repeats it);
    // looked up here for the chosen counter only, not in settle's pass over every counter
    ev.step_since_line = best->newest->line;
    auto since = [&](auto& r) {
        for (size_t k = 0; k < r.size; ++k) {
            const progress_entry& e = r.newest(k);
            if (e.file != ev.file || e.step_state != 2 || e.step != *best->first || e.line < run_from ||
                e.line <= best->second_line || e.line >= ev.step_since_line)
                continue;
            ev.step_since_line = e.line;
        }
    };
    since(best->pr->any);
    for (auto& r : best->pr->by_rank) since(r);
    ev.progress_text = excerpt(plain_text(best->newest->text.view(), m_scratch2));  // evidence: 1 KiB of a line
    ev.awaiting_progress = false;
    return true;
}

}  // namespace oomdx::log_detail
