// The end of the pass: pick the primary failure, merge its details, resolve rank, step,
// phase, framework and the memory series (measurements only: the `evidence` rules judge them).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <string_view>

#include <re2/re2.h>

#include "parsers/log/log_scanner.h"
#include "parsers/log/memory_fit.h"
#include "parsers/log/memory_forecast.h"
#include "parsers/log/wrapped_message.h"

namespace oomdx::log_detail {

namespace {

constexpr std::int64_t k_merge_window = 12;
// lines between a weak wrapper (DataParallel's "Caught ... in replica N on device N.") and the
// message of the original traceback it heads
constexpr std::int64_t k_wrapper_window = 200;

void set_if_null(std::optional<std::int64_t>& dst, const field_val* v) {
    if (!dst && v && !v->is_str) dst = v->num;
}

// Sizes and indices named like the YAML field names.
void apply_fields(log_analysis& a, const field_list& f) {
    set_if_null(a.requested_bytes, find_field(f, "requested_bytes"));
    set_if_null(a.capacity_bytes, find_field(f, "capacity_bytes"));
    set_if_null(a.free_bytes, find_field(f, "free_bytes"));
    set_if_null(a.allocated_bytes, find_field(f, "allocated_bytes"));
    set_if_null(a.reserved_bytes, find_field(f, "reserved_bytes"));
    set_if_null(a.reserved_unallocated_bytes, find_field(f, "reserved_unallocated_bytes"));
    if (!a.process_in_use_bytes)
        if (auto* p = find_field(f, "process_in_use_bytes")) {
            a.process_in_use_bytes = p->num;
            a.other_processes = p->count - 1;
        }
    set_if_null(a.allowed_bytes, find_field(f, "allowed_bytes"));
    set_if_null(a.active_bytes, find_field(f, "active_bytes"));
    set_if_null(a.private_pool_bytes, find_field(f, "private_pool_bytes"));
    set_if_null(a.device_index, find_field(f, "device_index"));
    if (a.error_code.empty())
        if (auto* e = find_field(f, "error_code")) a.error_code = e->str;
    if (a.message_form.empty())
        if (auto* e = find_field(f, "message_form")) a.message_form = e->str;
    if (a.message_hint.empty())
        if (auto* e = find_field(f, "message_hint")) a.message_hint = e->str;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

std::string scanner::ring_text(int sig, std::int64_t rank, std::int64_t line) const {
    auto look = [&](const auto& r) -> std::string {
        for (size_t k = 0; k < r.size; ++k)
            if (r.newest(k).line == line) return std::string(r.newest(k).text.view());
        return {};
    };
    for (auto it = m_progress.lower_bound({sig, -1}); it != m_progress.end() && it->first.first == sig; ++it) {
        std::string t = rank >= 0 && static_cast<size_t>(rank) < it->second.by_rank.size()
                            ? look(it->second.by_rank[static_cast<size_t>(rank)])
                            : look(it->second.any);
        if (!t.empty()) return t;
    }
    return {};
}

std::vector<memory_point> scanner::series_points(const series_state& st) const {
    std::vector<memory_point> out;
    out.reserve(st.points.size() + 1);
    for (const auto& r : st.points)
        if (r.sig < 0) out.push_back(r.p);  // parsed (all of them after end_file)
    for (auto& p : out) p.file = m_files[st.file];
    // the newest reading, unless the decimated sample already holds it
    if (st.last_sig < 0 || (!out.empty() && out.back().line == st.last.line)) return out;
    const signature& s = m_sigs.all()[st.last_sig];
    std::string buf, held = st.last_in_ring ? ring_text(st.last_sig, st.last.rank, st.last.line)
                                            : std::string(st.last.text.view());
    std::string_view text = plain_text(held, buf);
    memory_point p;
    bool step_found = false;
    if (!verify_sig(s, text) || !read_memory_line(s, text, p, step_found)) return out;
    p.line = st.last.line;
    p.file = m_files[st.last.file];
    if (!step_found) p.step = out.empty() ? st.count : out.back().step + 1;
    if (out.empty() || p.step > out.back().step) out.push_back(std::move(p));
    return out;
}

// Every rank's series extrapolated; the rank that reaches capacity first is the forecast.
// Capacity: the device given, else the log's percentages, else the OOM message's figure.
// The later OOM line of the failure's file read furthest on the failure's counter, when one reads further than the
// failure did (a measurement: the rule evidence_oom_caught decides what it says about the failure).
const event* scanner::furthest_later_oom(const event& failure) const {
    if (!failure.last_step || failure.progress_sig < 0) return nullptr;
    const event* best = nullptr;
    for (const auto& ev : m_strong)
        if (&ev != &failure && ev.file == failure.file && ev.line > failure.line && ev.last_step &&
            ev.progress_sig == failure.progress_sig && *ev.last_step > *failure.last_step &&
            (!best || *ev.last_step > *best->last_step))
            best = &ev;
    return best;
}

void scanner::forecast(log_analysis& a, const event* failure) {
    std::vector<double> caps;
    for (const auto& [key, st] : m_series) caps.insert(caps.end(), st.capacity.begin(), st.capacity.end());
    if (!caps.empty()) {
        std::nth_element(caps.begin(), caps.begin() + static_cast<std::ptrdiff_t>(caps.size() / 2), caps.end());
        a.capacity_from_log_bytes = std::llround(caps[caps.size() / 2]);
    }
    std::int64_t capacity = 0;
    std::string from;
    if (m_device_capacity > 0) capacity = m_device_capacity, from = "device";
    else if (a.capacity_from_log_bytes) capacity = *a.capacity_from_log_bytes, from = "log_percent";
    else if (a.capacity_bytes) capacity = *a.capacity_bytes, from = "oom_message";
    std::optional<memory_forecast> best;
    for (const auto& [key, st] : m_series) {
        std::vector<memory_point> pts;
        for (auto& p : series_points(st))
            if (!failure || p.file != m_files[failure->file] || p.line < failure->line) pts.push_back(std::move(p));
        if (pts.size() < 2) continue;
        memory_forecast f = forecast_memory(pts, capacity, from, st.rank >= 0 ? std::optional(st.rank) : std::nullopt);
        const bool better = !best || (f.available && !best->available) ||
                            (f.available && best->available && f.capacity_step < best->capacity_step) ||
                            (!f.available && !best->available && f.points > best->points);
        if (better) best = std::move(f);
    }
    a.forecast = std::move(best);
}

namespace {

// Lightning's epoch bar as tqdm prints it: "Epoch 3:  84%|...| 5248/6231" (a leading \r or spaces allowed).
bool lightning_epoch_bar(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\r')) text.remove_prefix(1);
    if (text.rfind("Epoch ", 0) != 0) return false;
    size_t i = 6;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    return i > 6 && i < text.size() && text[i] == ':';
}

// Lightning's evaluation bars: "Validating: 0it [...]", "Validation DataLoader 0:  40%|...", "Validation sanity check".
bool lightning_eval_bar(std::string_view text) {
    return text.find("Validating") != std::string_view::npos || text.find("Validation DataLoader") != std::string_view::npos;
}

// The failure among the fallback wordings: the first that names a source. The generic out-of-memory wording
// (unknown_oom) counts only where no named family matched (fallback.yaml), so a bare "Out of memory" title
// does not outrank "The process gets killed by out-of-memory handler" under it (cases68, Multi-YOLOv3#5).
const event& first_named_fallback(const std::vector<event>& fallback, const std::vector<signature>& all) {
    for (const auto& ev : fallback)
        if (all[ev.sig].source != "unknown_oom") return ev;
    return fallback.front();
}

}  // namespace

log_analysis scanner::finish() {
    log_analysis a;
    a.files = m_file_info;
    a.oom_messages = m_oom_lines;
    const auto& all = m_sigs.all();
    auto labelled = [&](int f) {  // the file's lines carry srun -l labels throughout (task_label.h)
        if (static_cast<size_t>(f) < m_file_labelled.size()) return static_cast<bool>(m_file_labelled[static_cast<size_t>(f)]);
        return f == m_file && m_label_vote.consistent();  // a followed file that has not ended
    };
    constexpr size_t k_max_evidence = 48;  // evidence lines kept in a report
    auto keep_ev = [&](const log_evidence& e) {
        if (a.evidence.size() < k_max_evidence) a.evidence.push_back(e);
    };
    auto add_ev = [&](int file, std::int64_t line, const std::string& text, const char* role) {
        keep_ev({m_files[file], line, text, role});
    };

    // The primary failure: first named OOM; else a weak OOM signal unless a named non-OOM
    // failure explains the crash; else the named failure; else an unexplained crash.
    // Any out-of-memory wording no named signature matched comes after the named ones.
    const event* prim = nullptr;
    if (!m_strong.empty()) prim = &m_strong.front();
    else if (!m_fallback.empty()) prim = &first_named_fallback(m_fallback, all);
    else if (!m_weak.empty() && m_not_oom.empty()) prim = &m_weak.front();
    const event* failure = prim;
    std::optional<std::int64_t> detail_rank;  // a follow-up line of the failure names its rank
    const std::string* next_detail = nullptr;  // a follow-up failure line right under the failure line
    if (!prim) {
        if (!m_not_oom.empty()) failure = &m_not_oom.front();
        else if (!m_crash.empty()) failure = &m_crash.front();
    }

    if (prim) {
        const signature& s = all[prim->sig];
        a.source = s.source;
        a.signature = s.id;
        a.message = prim->text;
        a.file = m_files[prim->file];
        a.line = prim->line;
        a.device_kind = s.device_kind;
        if (auto* dk = find_field(prim->fields, "device_kind")) a.device_kind = lower(dk->str);
        apply_fields(a, prim->fields);
        add_ev(prim->file, prim->line, prim->text, "oom");
        // follow-up lines of the same failure fill what the first line did not print
        // (and the rank one of them names: slurmstepd's oom_kill line, then srun's "task N: Out Of Memory")
        for (const auto* list : {&m_strong, &m_fallback, &m_weak}) {
            for (const auto& ev : *list) {
                if (&ev == prim || ev.file != prim->file || ev.line <= prim->line ||
                    ev.line - prim->line > k_merge_window)
                    continue;
                if (ev.rank >= 0 && prim->rank >= 0 && ev.rank != prim->rank) continue;
                const std::string& src = all[ev.sig].source;
                if (src != a.source && !(a.source == "driver_or_kernel" || a.source == "unknown_oom"))
                    continue;
                apply_fields(a, ev.fields);
                if (a.device_kind.empty()) a.device_kind = all[ev.sig].device_kind;
                if (auto* r = find_field(ev.fields, "rank"); r && r->num >= 0 && !detail_rank) detail_rank = r->num;
                if (ev.line == prim->line + 1 && !next_detail) next_detail = &ev.text;
                add_ev(ev.file, ev.line, ev.text, "oom_detail");
            }
        }
        // A weak wrapper of the same failure printed above it, with only traceback lines between (no
        // step line): DataParallel's "Caught OutOfMemoryError in replica 0 on device 0." heads the
        // replica's original traceback, whose message may be cut before its device. It fills what the
        // message did not print.
        for (const auto& ev : m_weak) {
            if (ev.file != prim->file || ev.line >= prim->line || prim->line - ev.line > k_wrapper_window) continue;
            if (prim->last_step && prim->progress_line >= ev.line) continue;
            if (ev.rank >= 0 && prim->rank >= 0 && ev.rank != prim->rank) continue;
            if (all[ev.sig].source != a.source) continue;
            auto before = a;
            apply_fields(a, ev.fields);
            if (before.device_index != a.device_index || before.requested_bytes != a.requested_bytes)
                add_ev(ev.file, ev.line, ev.text, "oom_detail");
        }
    } else if (failure) {
        a.failure_kind = sig_kind_name(failure->kind);
        a.failure_signature = all[failure->sig].id;
        a.failure_file = m_files[failure->file];
        a.failure_line = failure->line;
        a.source = failure->kind == sig_kind::crash ? "unknown_oom" : "none";
        if (failure->kind == sig_kind::crash) {
            a.file = a.failure_file;
            a.line = a.failure_line;
            a.message = failure->text;
            a.device_kind = "unknown";
        }
        add_ev(failure->file, failure->line, failure->text, a.failure_kind.c_str());
        if (auto* d = find_field(failure->fields, "device_index")) a.device_index = d->num;
        if (auto* e = find_field(failure->fields, "error_code")) a.error_code = e->str;
    }

    // Context lines around the failure, nearest first.
    std::optional<std::int64_t> ctx_rank;
    const near_hit* frame_rank = nullptr;  // the nearest prefixed traceback frame above the failure
    if (failure) {
        std::vector<const near_hit*> near;
        for (const auto& h : failure->near) near.push_back(&h);
        std::stable_sort(near.begin(), near.end(), [&](auto* x, auto* y) {
            return std::llabs(x->line - failure->line) < std::llabs(y->line - failure->line);
        });
        for (const near_hit* h : near) {
            const signature& s = all[h->sig];
            if (s.kind == sig_kind::context && s.prefix_rank) {
                // its frames' rank, used (and shown) only when the failure line names none
                if (!frame_rank && h->line < failure->line && find_field(h->fields, "rank")) frame_rank = h;
            } else if (s.kind == sig_kind::context) {
                bool used = false;
                if (prim) {
                    auto before = a;
                    apply_fields(a, h->fields);
                    used = before.device_index != a.device_index ||
                           before.requested_bytes != a.requested_bytes ||
                           before.error_code != a.error_code;
                } else if (!a.device_index) {
                    if (auto* d = find_field(h->fields, "device_index")) a.device_index = d->num, used = true;
                }
                if (auto* r = find_field(h->fields, "rank"); r && !ctx_rank) ctx_rank = r->num, used = true;
                if (used) add_ev(h->file, h->line, h->text, "context");
            } else if (s.kind == sig_kind::refine && prim) {
                if (std::find(s.applies_to.begin(), s.applies_to.end(), a.source) != s.applies_to.end()) {
                    a.source = s.source;
                    if (!s.device_kind.empty()) a.device_kind = s.device_kind;
                    a.signature += "+" + s.id;
                    add_ev(h->file, h->line, h->text, "refine");
                }
            }
        }
    }

    // A message wrapped over lines ("... (GPU 0; 31.75" / "GiB total capacity; ..."): the OOM line
    // joined with the continuation line right after it gives what the wrap cut from its unit. The
    // blanks around the cut go (a Markdown hard break leaves two spaces at the end of the line).
    // The continuation can itself be a failure line merged above ("capacity; 37.89 GiB already
    // allocated; ..." after "(GPU 0; 39.41 GiB total", Rich's wrap of the 1.x message).
    if (prim) {
        const std::string* next = nullptr;
        for (const auto& h : prim->near)
            if (h.file == prim->file && h.line == prim->line + 1 && all[h.sig].kind == sig_kind::context) {
                next = &h.text;
                break;
            }
        if (!next) next = next_detail;
        if (next) {
            const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
            std::string_view head = prim->text, tail = *next;
            while (!head.empty() && blank(head.back())) head.remove_suffix(1);
            while (!tail.empty() && blank(tail.front())) tail.remove_prefix(1);
            std::string joined(head);
            joined += ' ';
            joined += tail;
            apply_fields(a, extract_fields(all[prim->sig], joined));
        }
        // A message hard-wrapped over the lines after it (a terminal capture cut at its width, a figure
        // cut in two: "20.75 G" / "iB is allocated"): joined where the join is unambiguous.
        if (!prim->after.empty()) {
            const std::string whole = join_wrapped(prim->text, prim->after);
            if (whole.size() > prim->text.size()) apply_fields(a, extract_fields(all[prim->sig], whole));
        }
    }

    // Derived sizes.
    if (!a.reserved_unallocated_bytes && a.reserved_bytes && a.allocated_bytes &&
        *a.reserved_bytes >= *a.allocated_bytes) {
        a.reserved_unallocated_bytes = *a.reserved_bytes - *a.allocated_bytes;
        a.reserved_unallocated_derived = true;
    }
    if (!a.reserved_bytes && a.allocated_bytes && a.reserved_unallocated_bytes) {
        a.reserved_bytes = *a.allocated_bytes + *a.reserved_unallocated_bytes;
        a.reserved_derived = true;
    }
    if (a.process_in_use_bytes && a.reserved_bytes && *a.process_in_use_bytes >= *a.reserved_bytes) {
        a.non_pytorch_bytes = *a.process_in_use_bytes - *a.reserved_bytes;
        // A container may print 0 bytes for this process: only a use that covers PyTorch's own is trusted.
        if (a.capacity_bytes && a.free_bytes && *a.capacity_bytes - *a.free_bytes >= *a.process_in_use_bytes)
            a.other_processes_bytes = *a.capacity_bytes - *a.free_bytes - *a.process_in_use_bytes;
    }
    if (prim && a.device_kind.empty()) a.device_kind = "unknown";

    // Rank: [rankN] prefix, torch_npu RankID >= 0, torchrun summary / snapshot path,
    // NCCL pid -> rank, the one rank a file announces (Lightning GLOBAL_RANK), a single-process
    // job, the file name.
    std::optional<std::int64_t> snapshot_last_step;
    const near_hit* rank_hit = nullptr;
    for (const auto& h : m_rank_hits) {
        if (h.file == m_root_cause_file && h.line > m_root_cause_line && h.line - m_root_cause_line <= 12) {
            rank_hit = &h;
            break;
        }
    }
    if (!rank_hit && !m_rank_hits.empty()) rank_hit = &m_rank_hits.front();
    if (rank_hit)
        if (auto* ls = find_field(rank_hit->fields, "last_step")) snapshot_last_step = ls->num;
    // The same message printed again under a rank prefix: PyTorch's elastic agent and loggers that
    // prefix a worker's stream ("[rank0]: torch.OutOfMemoryError: ...") re-print the exception the
    // worker printed bare. One rank among the copies names the bare message's rank; two, none.
    std::int64_t copy_rank = -1;
    const event* copy_ev = nullptr;
    constexpr size_t k_copy_bytes = 120;     // the request, the device and its capacity
    constexpr size_t k_copy_min_bytes = 40;  // a shorter message could recur by chance
    if (failure && failure->rank < 0 && failure->kind == sig_kind::oom && failure->text.size() >= k_copy_min_bytes) {
        const std::string_view head = std::string_view(failure->text).substr(0, k_copy_bytes);
        for (const auto& ev : m_strong) {
            if (&ev == failure || ev.rank < 0 || ev.file != failure->file || ev.line <= failure->line) continue;
            const size_t at = ev.text.find(head);
            if (at == std::string::npos || at == 0) continue;
            if (copy_rank >= 0 && ev.rank != copy_rank) {
                copy_rank = -2;  // copies under two ranks: not one worker's
                break;
            }
            if (copy_rank < 0) copy_ev = &ev;
            copy_rank = ev.rank;
        }
    }
    if (failure) {
        if (failure->rank >= 0) {
            a.rank = failure->rank;
            a.rank_from = failure->rank_from_head ? "traceback_head" : "prefix";
        } else if (copy_rank >= 0) {
            a.rank = copy_rank;
            a.rank_from = "prefixed_copy";
            add_ev(copy_ev->file, copy_ev->line, copy_ev->text, "rank");
        } else if (detail_rank && !find_field(failure->fields, "rank")) {
            // a follow-up line names the task that ran out (srun's "task N: Out Of Memory" after
            // slurmstepd's oom_kill line, which srun -l labels with the stream it went to)
            a.rank = detail_rank;
            a.rank_from = "message";
        } else if (failure->task_label >= 0 && labelled(failure->file)) {
            a.rank = failure->task_label;  // srun -l's task number, the file's lines labelled throughout
            a.rank_from = "srun_label";
        } else if (auto* r = find_field(failure->fields, "rank"); r && r->num >= 0) {
            a.rank = r->num;  // the message names its worker: Ray's repr=...[rank=N], Slurm's task N
            a.rank_from = "message";
        } else if (ctx_rank) {
            a.rank = ctx_rank;
            a.rank_from = "npu";
        } else if (frame_rank) {
            a.rank = find_field(frame_rank->fields, "rank")->num;
            a.rank_from = "frame_prefix";
            add_ev(frame_rank->file, frame_rank->line, frame_rank->text, "context");
        } else if (rank_hit && find_field(rank_hit->fields, "rank")) {
            a.rank = find_field(rank_hit->fields, "rank")->num;
            a.rank_from = all[rank_hit->sig].id == "torchtitan_exit_snapshot_path" ? "snapshot_path" : "torchrun";
            add_ev(rank_hit->file, rank_hit->line, rank_hit->text, "rank");
        } else if (auto* pid = find_field(failure->fields, "pid"); pid && m_pid_rank.count(pid->num)) {
            a.rank = m_pid_rank[pid->num];
            a.rank_from = "nccl";
        } else if (auto fr = static_cast<size_t>(failure->file);
                   fr < m_process_rank.size() && m_process_rank[fr] >= 0) {
            a.rank = m_process_rank[fr];  // the file's only "GLOBAL_RANK: N" announcement
            a.rank_from = "process_line";
        } else if (m_world_size && *m_world_size == 1) {
            a.rank = 0;
            a.rank_from = "world_size_1";
        } else {
            static const RE2 re("(?i)rank[_-]?([0-9]{1,6})");
            std::string r;
            const std::string& fname = m_files[failure->file];
            auto slash = fname.find_last_of('/');
            if (RE2::PartialMatch(slash == std::string::npos ? fname : fname.substr(slash + 1), re, &r)) {
                a.rank = std::stoll(r);
                a.rank_from = "filename";
            }
        }
    }
    a.ranks_failed = m_oom_ranks;
    for (const auto& ev : m_strong)  // OOM lines whose rank is their srun -l label
        if (ev.rank < 0 && ev.task_label >= 0 && labelled(ev.file) && a.ranks_failed.size() < k_max_failed_ranks &&
            std::find(a.ranks_failed.begin(), a.ranks_failed.end(), ev.task_label) == a.ranks_failed.end())
            a.ranks_failed.push_back(ev.task_label);
    if (prim && a.ranks_failed.empty() && a.rank) a.ranks_failed.push_back(*a.rank);
    a.world_size = m_world_size;
    if (prim && a.world_size && *a.world_size > 1 && !m_oom_ranks.empty())
        a.all_ranks_failed = static_cast<std::int64_t>(m_oom_ranks.size()) >= *a.world_size;

    // Steps: progress lines are printed after their step, so the failing step is the last
    // logged one + 1 where the format allows it; a step header (at_start) names the failing step.
    if (failure && failure->last_step) {
        a.last_logged_step = failure->last_step;
        if (failure->last_total > 0) a.last_logged_total = failure->last_total;
        const signature& psig = all[failure->progress_sig];
        add_ev(failure->file, failure->progress_line, failure->progress_text, "progress");
        if (failure->elided_interval > 0) add_ev(failure->file, failure->elision_line, failure->elision_text, "elision");
        const std::int64_t last = *failure->last_step;
        a.step_basis = psig.at_start ? "step_header"
                       // a bar that moves k >= 2 at a time: the failing step is one of the next k
                       : psig.per_step && failure->step_stride >= 2 ? "bar_stride"
                       : psig.per_step || failure->step_in_bar ? "per_step_format"
                       // a counter logged at multiples of an interval shows none at 0: the next step is not known
                       : last == 0 && !psig.multiples ? "step_zero"
                       : failure->prev_step && last - *failure->prev_step == 1 ? "consecutive_steps"
                       // lines cut by the poster (`...`) after a run logged every step
                       : failure->elided_interval == 1 ? "consecutive_steps"
                       // a format that logs at multiples of its interval and logged 1: the interval is 1
                       : !failure->prev_step && last == 1 && psig.multiples ? "consecutive_steps"
                       // a sparse counter, and a line printed once per step shows none ran after it
                       : failure->next_step_quiet ? "per_step_lines"
                       // a step logger glued to a bar of micro-batches, fewer than a step's drawn after it
                       : failure->micro_batches >= 2 ? "micro_batch_bar"
                                                  : "sparse_log";
        if (a.step_basis == "step_header") {
            a.step = last;
            // a counter printed after each step showed the step before the header's: the last finished one
            if (failure->header_prev_step) a.last_logged_step = failure->header_prev_step;
            // a line written after the failure (detectron2's last metrics write) names the step that
            // failed; the one before it finished, and none did when it names the first
            else if (psig.at_failure) a.last_logged_step = last >= 1 ? std::optional<std::int64_t>(last - 1) : std::nullopt;
        }
        else if (a.step_basis == "bar_stride") a.step_stride = failure->step_stride;
        else if (a.step_basis != "sparse_log") a.step = last + 1;
        // A later OOM line of the same file read further on the same counter (a loop that catches the OOM and
        // warns once per skipped batch): the readings, and the newest reading of the counter in the file.
        if (const event* later = furthest_later_oom(*failure)) {
            a.oom_counter_step = last;
            a.later_oom_step = later->last_step;
            a.later_oom_line = log_evidence{m_files[later->file], later->line, later->text, "later_oom"};
            event tail;
            tail.file = failure->file;
            tail.line = std::numeric_limits<std::int64_t>::max();
            tail.rank = failure->rank;
            if (resolve_progress(tail, false) && tail.progress_sig == failure->progress_sig && tail.last_step) {
                a.newest_step = tail.last_step;
                if (tail.last_total > 0) a.newest_total = tail.last_total;
                a.newest_progress = log_evidence{m_files[tail.file], tail.progress_line, tail.progress_text, "progress"};
            }
        }
    } else if (failure && snapshot_last_step) {
        a.last_logged_step = snapshot_last_step;
        a.step = *snapshot_last_step + 1;
        a.step_basis = "snapshot_path";
    } else if (!failure && !m_files.empty()) {
        event tail;
        tail.file = static_cast<int>(m_files.size()) - 1;
        tail.line = std::numeric_limits<std::int64_t>::max();
        if (resolve_progress(tail, false)) {
            a.last_logged_step = tail.last_step;
            if (tail.last_total > 0) a.last_logged_total = tail.last_total;
            add_ev(tail.file, tail.progress_line, tail.progress_text, "progress");
        }
    }

    // Phase: what the job was doing, from the lines between the last step line and the
    // failure. A context phase (evaluation, checkpoint, model loading) wins over the frame it
    // calls (forward, backward, ...); among equals, the frame nearest the failure (innermost).
    if (failure && a.source != "none") {
        const near_hit* best_phase = nullptr;
        // phase lines count after the last step line (a bar printed after the failure: all)
        std::int64_t after = 0;
        if (failure->last_step && failure->progress_line <= failure->line) {
            after = failure->progress_line - (failure->progress_line == failure->line ? 1 : 0);
            // the bar redrawn at the same count (tqdm closing on the exception): nothing advanced
            // after the line that first showed it, and what was printed from there on (glued after
            // that bar, or between) ran after that step
            if (failure->step_since_line >= 0 && failure->step_since_line < failure->progress_line)
                after = failure->step_since_line - 1;
        }
        // Lightning's epoch bar ("Epoch 1:  84% 5248/6231", releases before the separate validation bar) counts the
        // validation batches too: once a running "Validating" / "Validation DataLoader" bar has started, the same bar
        // keeps ticking in the same pass (same total, no reset). Those ticks are evaluation batches, not steps.
        std::optional<std::int64_t> steps_before_eval;
        if (failure->last_step && lightning_epoch_bar(failure->progress_text))
            for (const auto& h : failure->phases) {
                if (h.line > after || all[h.sig].id != "phase_eval_bar" || !lightning_eval_bar(h.text)) continue;
                event at;
                at.file = h.file;
                at.line = h.line;
                at.rank = failure->rank;
                if (!resolve_progress(at, false) || at.progress_sig != failure->progress_sig ||
                    at.last_total != failure->last_total || !at.last_step || *at.last_step > *failure->last_step)
                    continue;
                steps_before_eval = at.last_step;
                after = h.line - 1;
            }
        auto consider = [&](const near_hit& h) {
            const signature& s = all[h.sig];
            if (!best_phase || s.priority > all[best_phase->sig].priority ||
                (s.priority == all[best_phase->sig].priority && h.line > best_phase->line))
                best_phase = &h;
        };
        for (const auto& h : failure->phases)
            if (h.line <= failure->line && h.line > after) consider(h);
        // none before: the traceback printed after the first message (THCudaCheck, NCCL WARN)
        if (!best_phase)
            for (const auto& h : failure->phases_after)
                if (h.line > failure->line) consider(h);
        if (best_phase && steps_before_eval && all[best_phase->sig].phase == "eval") {
            a.last_logged_step = steps_before_eval;  // the last training step before validation began
            a.step = steps_before_eval;
            a.step_basis = "after_step_eval";
        } else if (best_phase && all[best_phase->sig].phase == "eval" && failure->last_step) {
            // the newest bar may be the evaluation's own (HF's eval bar after the training bar)
            event at;
            at.file = failure->file;
            at.line = failure->line;
            at.rank = failure->rank;
            if (resolve_progress(at, false, true) && at.last_step &&
                (at.progress_line != failure->progress_line || at.progress_sig != failure->progress_sig)) {
                a.last_logged_step = at.last_step;  // the training step the evaluation ran after
                if (at.last_total > 0) a.last_logged_total = at.last_total;
                else a.last_logged_total.reset();
                a.step = at.last_step;
                a.step_basis = "after_step_eval";
                a.step_stride.reset();
                for (auto& e : a.evidence)
                    if (e.role == "progress" && e.line == failure->progress_line) {
                        e.line = at.progress_line;
                        e.text = at.progress_text;
                    }
            }
        }
        if (best_phase) {
            a.phase = all[best_phase->sig].phase;
            add_ev(best_phase->file, best_phase->line, best_phase->text, "phase");
            if (!best_phase->frame_path.empty()) {
                a.phase_frame_path = best_phase->frame_path;
                add_ev(best_phase->file, best_phase->frame_line, best_phase->frame_text, "phase_frame");
            }
        }
    }

    // A counter at its total (`143/143`, an epoch's last batch) has no next step on that bar.
    // Frames of training work after it put the failure in the next pass's first step; anything
    // else (evaluation, saving, no frames) puts it after the loop, with no failing step.
    if (a.step && a.last_logged_total && a.step_basis != "step_header" && *a.step > *a.last_logged_total) {
        static const std::set<std::string> training = {"forward", "backward", "optimizer_step", "loss",
                                                       "data_loading", "scoring"};
        if (training.count(a.phase) && !(failure && failure->other_loop_after)) {
            a.step = 1;
            a.step_basis = "bar_total_next_pass";
        } else {
            a.step.reset();
            a.step_basis = "bar_total_after_loop";
        }
    }

    // Saving or evaluating runs between steps: after the step its progress line reports, not in
    // the next one, so a failure there belongs to the last logged step.
    if (a.step && a.last_logged_step && (a.phase == "checkpoint_save" || a.phase == "eval") &&
        (a.step_basis == "per_step_format" || a.step_basis == "consecutive_steps")) {
        a.step = a.last_logged_step;
        a.step_basis = "after_step_" + a.phase;
    }

    // Framework.
    int best = 0, best_order = 1 << 30;
    const fw_tally* named = nullptr;
    for (const auto& [fw, t] : m_fw) {
        if (t.score > best || (t.score == best && t.order < best_order)) {
            best = t.score;
            best_order = t.order;
            a.framework = fw;
            named = &t;
        }
    }
    if (named) keep_ev(named->first);  // the provenance of log.framework

    // Memory series of the failing rank (or the best covered one), before the failure.
    series_state* chosen = nullptr;
    for (auto& [key, st] : m_series) {
        if (failure && st.file != failure->file) continue;
        if (failure && failure->rank >= 0 && st.rank == failure->rank) {
            chosen = &st;
            break;
        }
        if (!chosen || st.count > chosen->count || (st.count == chosen->count && st.rank < chosen->rank))
            chosen = &st;
    }
    if (chosen) {
        for (const auto& p : series_points(*chosen))
            if (!failure || p.line < failure->line) a.memory_series.push_back(p);
        if (chosen->rank >= 0) a.memory_series_rank = chosen->rank;
    }
    // rev39: a peak since the previous print (DeepSpeed's see_memory_usage resets it after printing) is a step's only
    // where the line comes once per step: after the first reading (which may come before the first step line and
    // take its step), two readings or more, each of another step. A single print (after the optimizer is built) or
    // several in one step (memory_breakdown's before forward, backward, step) print peaks of something else or of
    // parts of a step; the rules compare only a step's peak.
    bool once_per_step = a.memory_series.size() >= 3;
    for (std::size_t i = 2; i < a.memory_series.size(); ++i)
        if (a.memory_series[i].step == a.memory_series[i - 1].step) once_per_step = false;
    if (!once_per_step)
        for (auto& p : a.memory_series)
            if (p.peak_since_print) p.peak_bytes = 0;
    const auto& ms = a.memory_series;
    if (ms.size() >= 2) {
        std::vector<double> xs, ys;
        for (const auto& p : ms) {
            xs.push_back(static_cast<double>(p.step));
            ys.push_back(static_cast<double>(p.bytes));
        }
        const series_fit f = fit_memory_series(xs, ys);
        a.series_nondecreasing = f.nondecreasing;
        if (f.all.ok) {
            a.growth_bytes_per_step = f.all.slope;
            a.growth_r2 = f.all.r2;
        }
        if (f.steady.ok) {
            a.steady_from = f.steady_from;
            a.steady_growth_bytes_per_step = f.steady.slope;
            a.steady_r2 = f.steady.r2;
            a.steady_growth_bytes = f.steady.slope * (xs.back() - xs[f.steady_from]);
            // a line through a rise that has levelled off still slopes: the later half says whether it goes on
            a.steady_late_growth_bytes = ys.back() - ys[f.steady_from + (ys.size() - f.steady_from - 1) / 2];
        }
    }

    forecast(a, failure);

    // A setting that needs a report holds where a line of that report follows within its window (the same
    // line counts), and a setting printed later in the same file still wins.
    for (const auto& p : m_pending_settings) {
        const auto lines = m_report_lines.find(p.needs);
        if (lines == m_report_lines.end()) continue;
        const bool follows = std::any_of(lines->second.begin(), lines->second.end(), [&](const auto& r) {
            return r.first == p.file && r.second >= p.line && r.second <= p.line + p.window;
        });
        if (!follows) continue;
        const auto have = m_settings.find(p.s.fact);
        if (have != m_settings.end() && have->second.at.file == p.s.at.file && have->second.at.line > p.line) continue;
        m_settings[p.s.fact] = p.s;
    }
    for (const auto& [k, v] : m_settings) a.settings.push_back(v);
    a.model_config = m_model_config;
    if (m_model_config) keep_ev(m_model_config->at);
    a.warnings.insert(a.warnings.end(), m_block_warnings.begin(), m_block_warnings.end());
    if (m_launch.line > 0) {
        a.launch_line = m_launch.text;
        if (m_launch_more > 0) a.launch_command = m_launch_cmd;
        a.launch_file = m_launch.file;
        a.launch_line_no = m_launch.line;
        keep_ev(m_launch);
    }
    a.alloc_retry_lines = m_pressure;
    if (m_pressure > 0) keep_ev(m_pressure_first);
    if (m_pressure > 1) keep_ev(m_pressure_last);
    a.growth_report_lines = m_growth;
    if (m_growth > 0) keep_ev(m_growth_first);
    a.reports = m_reports;
    for (const auto& [fact, e] : m_reports) keep_ev(e);

    for (const auto& fi : a.files) {
        if (fi.long_lines > 0)
            a.warnings.push_back(fi.path + ": " + std::to_string(fi.long_lines) +
                                 " line segment(s) longer than 64 KiB were matched on their first 64 KiB only");
    }
    return a;
}

}  // namespace oomdx::log_detail
