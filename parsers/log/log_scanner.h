// Internal: the streaming state machine behind analyze_logs (one instance per analysis).
#pragma once

#include <array>
#include <initializer_list>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "parsers/log/candidate_cache.h"
#include "parsers/log/log_analysis.h"
#include "parsers/log/log_signatures.h"
#include "parsers/log/task_label.h"
#include "parsers/log/printed_block.h"

namespace oomdx::log_detail {

constexpr size_t k_match_cap = 64 * 1024;  // bytes of one segment that are matched
constexpr size_t k_excerpt_cap = 1024;     // bytes of a line kept as evidence
constexpr char k_fw_tries = 64;            // candidate lines a framework's progress format is checked on
constexpr size_t k_max_failed_ranks = 100000;  // distinct ranks listed as failed

struct field_val {
    std::string name;
    std::int64_t num = 0;
    std::string str;
    bool is_str = false;
    int count = 1;  // matches of a repeated clause (Process N has ...)
    // a parameter count (field unit billions; str the billions): num is the count, and this 0 where every digit was
    // printed, else the significant digits of its rounded form; -1 for any other field
    int rounded_digits = -1;
};
using field_list = std::vector<field_val>;

const field_val* find_field(const field_list& f, std::string_view name);
bool verify_sig(const signature& s, std::string_view text);
// The text without ANSI colour codes (buf holds the copy when there were any).
std::string_view plain_text(std::string_view s, std::string& buf);
// The signature's fields found in text (`only`: just these names; empty: all).
field_list extract_fields(const signature& s, std::string_view text, std::initializer_list<std::string_view> only = {});
// A memory line's reading (plain text): bytes, statistic and time into p, and its step when the
// line prints one (`step_found`); with `pct`, the percentage of capacity it prints (hundredths,
// 0 when none). False when the line holds no reading.
bool read_memory_line(const signature& s, std::string_view text, memory_point& p, bool& step_found,
                      std::int64_t* pct = nullptr);

struct near_hit {  // a context, refine, phase or rank line
    int sig = -1;
    int file = 0;
    std::int64_t line = 0;
    std::string text;
    field_list fields;
    // a phase line in a traceback: the frame it is or sits under (its source path and line)
    std::string frame_path;
    std::int64_t frame_line = 0;
    std::string frame_text;
};

// A line kept for later: a view while its bytes stay mapped, else a copy (own() copies).
class held_text {
public:
    held_text() = default;
    held_text(const held_text& o) { *this = o; }
    held_text(held_text&& o) noexcept { *this = std::move(o); }
    held_text& operator=(const held_text& o) {
        if (this == &o) return *this;
        m_owned = o.m_owned;
        if (m_owned) {
            m_own = o.m_own;
            m_view = m_own;
        } else {
            m_view = o.m_view;
        }
        return *this;
    }
    held_text& operator=(held_text&& o) noexcept {  // the copy moves along (thinned samples)
        if (this == &o) return *this;
        m_owned = o.m_owned;
        if (m_owned) {
            m_own = std::move(o.m_own);
            m_view = m_own;
        } else {
            m_view = o.m_view;
        }
        return *this;
    }
    void set(std::string_view s, bool stable) {
        m_owned = !stable;
        if (stable) {
            m_view = s;
        } else {
            m_own.assign(s.data(), s.size());
            m_view = m_own;
        }
    }
    void own() {
        if (!m_owned) set(m_view, false);
    }
    std::string_view view() const { return m_view; }

private:
    std::string m_own;
    std::string_view m_view;
    bool m_owned = true;
};

struct progress_entry {
    int file = 0;
    std::int64_t line = 0;
    std::int64_t rank = -1;
    held_text text;
    // The step parsed from text, filled on first use: 0 = not parsed, 1 = none, 2 = `step` valid.
    std::int8_t step_state = 0;
    std::int64_t step = 0;
    std::int64_t total = -1;  // the bar's total, when the line prints one
};

struct event {
    sig_kind kind = sig_kind::oom;
    int sig = -1;
    int file = 0;
    std::int64_t line = 0;
    std::string text;
    field_list fields;
    std::int64_t rank = -1;  // [rankN] prefix (of the line, or of its traceback's head line)
    bool rank_from_head = false;  // the line has none: the "Traceback (most recent call last)" above it has
    std::int64_t task_label = -1;  // srun -l's "N: " before the line (a rank only in a labelled file)
    std::optional<std::int64_t> last_step, prev_step;
    // The counter advanced by this many at each line (a bar driven by update(10): 6590, 6600, 6610,
    // ...), 0 when not seen: the failing step is then one of the next `step_stride`, not last + 1.
    std::int64_t step_stride = 0;
    std::int64_t last_total = -1;
    // the step is a bar's postfix (`5/920 [..., step=1]`): redrawn with the bar, so every step shows
    bool step_in_bar = false;
    // the counter logs every k >= 2 steps, and a line printed once per step (k of them between its two
    // newest lines) was not printed after its newest one: the next step is the failing one
    bool next_step_quiet = false;
    // the counter is a step logger glued to a bar of micro-batches, r of them a step (r >= 2), and the bar
    // moved less than r - 1 after the logger's newest line: the next step is the failing one (0: none)
    std::int64_t micro_batches = 0;
    // the counter is a step header (at_start) and a counter printed after each step showed the step before
    // it (nanoGPT's `iter 0: loss`, then the header `step 1: train loss ..., val loss`): that step finished
    std::optional<std::int64_t> header_prev_step;
    // the counter is a bar closed at its total, and a bar of another total opened after it (a validation
    // loop after the epoch): the failure is in that loop, not in the next pass of the closed one
    bool other_loop_after = false;
    // an elision line (`...`) between the counter's two newest values, and the run before it advanced by
    // this much a line (0: none): the gap across the cut is not the interval
    std::int64_t elided_interval = 0;
    std::int64_t elision_line = -1;
    std::string elision_text;
    int progress_sig = -1;
    std::int64_t progress_line = 0;
    // the first line that showed the newest value (< progress_line: the bar was redrawn at the same
    // count, as tqdm does when it closes on an exception; nothing advanced in between)
    std::int64_t step_since_line = -1;
    std::string progress_text;
    bool awaiting_progress = false;
    std::vector<near_hit> near;
    // the lines right after the failure line ('\n'-separated, see wrapped_message.h), and where they start
    // in the file's mapping while they are still to be read (the prefilter threads' path)
    std::string after;
    const char* after_from = nullptr;
    std::vector<near_hit> phases;  // the newest line of each phase signature before the failure
    std::vector<near_hit> phases_after;  // phase lines after it (a traceback printed after the message)
};

// A sampled memory reading. The first readings of a series are parsed when taken; later ones
// keep their raw line and are parsed once the sample is final (end of the file), since most of
// them are thinned out before that.
struct series_reading {
    memory_point p;
    held_text text;  // a copy of the raw line while the reading waits
    int sig = -1;    // >= 0: waiting to be parsed with this signature
};

struct series_state {
    int file = 0;
    std::int64_t rank = -1;
    std::vector<series_reading> points;
    std::int64_t count = 0;
    std::int64_t stride = 1;
    // Readings still parsed when taken; -1: every reading is (a line of this series lacked the
    // step its signature can print, so its step came from the progress lines at that moment).
    int eager = 8;
    int last_sig = -1;
    progress_entry last;
    bool last_in_ring = false;
    std::vector<double> capacity;  // capacity from the first readings that print a percentage
};

class scanner {
public:
    explicit scanner(const signature_set& sigs);
    // Device capacity for the forecast (e.g. from --device); 0: from the log, if it says.
    void set_device_capacity(std::int64_t bytes) { m_device_capacity = bytes; }

    void begin_file(const std::string& name);
    // `stable`: where the same bytes lie in memory that stays readable until end_file (the
    // file's mapping); progress lines keep views of it instead of copies. nullptr: copied.
    void on_segment(std::string_view seg, std::int64_t line, bool cut, const char* stable = nullptr);
    // on_segment after the literal prefilter: `hits` as signature_set::candidates gives them;
    // `rank`: rank_prefix(seg) when known, else -2; `plain`: seg is known to hold no escape byte;
    // `repeat`: seg is an NCCL peer line with the same bytes as the previous one given here.
    void on_candidates(std::string_view seg, std::int64_t line, bool cut, const int* hits, size_t hit_count,
                       const char* stable = nullptr, std::int64_t rank = -2, bool plain = false,
                       bool repeat = false);
    void end_file(std::int64_t lines, std::int64_t bytes, bool compressed, std::int64_t cut);
    // The analysis of what was read so far; the state is kept, so it can be called again after
    // more lines (`oomdx watch`).
    log_analysis finish();
    std::int64_t oom_lines() const { return m_oom_lines; }
    // The text of a progress line still held in the rings (empty when it was overwritten).
    std::string ring_text(int sig, std::int64_t rank, std::int64_t line) const;
    // A printed model config whose header was seen on the prefilter threads (whose following
    // lines this scanner was not given): read its lines from the file's bytes [base, base + n).
    void read_open_block(const char* base, size_t n);
    // After the prefilter threads: a launch command continued with backslashes read from the mapping
    // (its continuation lines hold no literal, so the threads never passed them on).
    void read_open_launch(const char* base, size_t n);
    // After the prefilter threads: the lines after each failure line (a hard-wrapped message), read
    // from the mapping (they hold no literal, so the threads never passed them on).
    void read_open_wraps(const char* base, size_t n);

private:
    template <size_t N>
    struct ring {
        std::array<progress_entry, N> e;
        size_t head = 0, size = 0;
        progress_entry& push() {
            progress_entry& x = e[head];
            head = (head + 1) % N;
            size = std::min(size + 1, N);
            return x;
        }
        const progress_entry& newest(size_t k) const { return e[(head + N - 1 - k) % N]; }
        progress_entry& newest(size_t k) { return e[(head + N - 1 - k) % N]; }
    };
    // One counter: the lines of one progress signature (and one bar total, for `by_total`).
    struct progress_rings {
        ring<32> any;                  // lines without a rank prefix
        std::vector<ring<4>> by_rank;  // index = rank, grown on demand
        int file = -1;                 // the file `count` and `first_line` are about
        std::int64_t count = 0;        // lines in that file
        std::int64_t first_line = 0;
    };
    using stream_key = std::pair<int, std::int64_t>;  // signature, bar total (-1: none)

    void handle_failure(sig_kind kind, int sig, std::string_view seg, std::int64_t line);
    void handle_process_rank(const field_list& f);
    void note_world_size(const field_list& f);
    void handle_near(int sig, std::string_view seg, std::int64_t line);
    void handle_progress(int sig, std::string_view seg, std::int64_t line);
    void handle_phase(int sig, std::string_view seg, std::int64_t line);
    void handle_memory(int sig, std::string_view seg, std::int64_t line, std::int64_t rank,
                       bool in_ring = false);
    const event* furthest_later_oom(const event& failure) const;
    // eval_running: the failure is inside an evaluation that a newer bar counts (see the .cpp)
    bool resolve_progress(event& ev, bool after, bool eval_running = false);
    std::int64_t elision_between(int file, std::int64_t lo, std::int64_t hi, std::string* text);
    std::optional<std::int64_t> latest_step(std::int64_t rank);
    std::int64_t rank_of(std::string_view seg);
    const field_list* nccl_peer_fields(int sig, std::string_view seg);

    void own_held_texts();
    // Fills p from a memory line (plain text); false when it holds no reading. `step_found`:
    // the line printed its step.
    bool read_point(const signature& s, std::string_view text, series_state& st, memory_point& p,
                    bool& step_found);
    // Parses the readings that wait (their lines are readable until end_file).
    void parse_waiting_readings();
    // The series' sampled points plus its newest reading (parsed from the held line), in order.
    std::vector<memory_point> series_points(const series_state& st) const;
    void forecast(log_analysis& a, const event* failure);

    void hold(held_text& h, std::string_view text);

    const signature_set& m_sigs;
    std::int64_t m_device_capacity = 0;
    const char* m_seg_stable = nullptr;  // the current segment in stable memory, if known
    const char* m_seg_end = nullptr;     // where its raw bytes end there
    bool m_every_line = false;           // on_segment sees every line (not the prefilter threads' hits only)
    // the failure line whose next lines on_segment keeps (a hard-wrapped message)
    std::vector<event>* m_wrap_list = nullptr;
    size_t m_wrap_index = 0, m_wrap_taken = 0;
    std::int64_t m_wrap_line = -1;
    bool m_seg_plain = false;            // the current segment holds no escape byte
    std::vector<int> m_hits;
    std::vector<char> m_mark;
    candidate_cache m_cand;  // the prefilter, answered from memory for lines of a repeated shape
    std::vector<char> m_has_memory;  // per signature: it has a `memory` field
    int m_elision_sigs = 0;          // signatures of elision lines (none: nothing to look for)
    std::vector<char> m_has_step;    // per signature: it has a `step` field
    // per signature: what its hit asks of on_candidates (hit_needs_plain, hit_eval_phase), so a
    // line's hits are read once for both
    enum : std::uint8_t { hit_needs_plain = 1, hit_eval_phase = 2, hit_frame = 4 };
    std::vector<std::uint8_t> m_hit_class;
    std::string m_scratch, m_scratch2;
    std::vector<std::string> m_files;
    std::vector<log_file_info> m_file_info;
    int m_file = -1;
    std::int64_t m_line = 0;
    std::string_view m_seg;
    std::int64_t m_seg_rank = -2;  // -2 = not computed for this segment

    std::vector<event> m_strong, m_fallback, m_weak, m_not_oom, m_crash;
    std::int64_t m_oom_lines = 0;
    int m_awaiting = 0;  // failures still waiting for a progress line
    std::vector<std::int64_t> m_oom_ranks;
    std::unordered_set<std::int64_t> m_oom_rank_set;

    std::vector<near_hit> m_near_ring;  // recent context / refine / phase lines
    size_t m_near_head = 0;
    std::vector<near_hit> m_rank_hits;
    std::int64_t m_root_cause_line = -1000;
    int m_root_cause_file = -1;
    // The newest "Traceback (most recent call last)" line and its rank prefix: a logger that
    // prefixes a record's first line only ("rank:  3 | ... CRITICAL | Traceback ...") names the
    // rank of the unprefixed message that ends the traceback.
    int m_tb_file = -1;
    std::int64_t m_tb_line = 0, m_tb_rank = -1;

    std::map<stream_key, progress_rings> m_progress;  // per counter
    std::vector<progress_rings*> m_progress_of_sig;  // per signature: its counter without a bar total
    std::vector<near_hit> m_phase_last;  // per signature: its newest phase line (sig -1: none)
    // Phase lines (not the context phases) that no recent failure takes: matched only when a failure
    // reads m_phase_last (a traceback repeats `forward` frames on most of its lines). Per signature,
    // its hits newer than m_phase_last, within its window (older ones can never be read).
    struct pending_phase {
        int file = 0;
        std::int64_t line = 0;
        std::string text;  // the line (without colour codes)
    };
    struct phase_pending {
        std::vector<pending_phase> ring;  // window + 2 entries once used
        size_t head = 0, size = 0;
        bool listed = false;  // in m_phase_pending_sigs
    };
    std::vector<phase_pending> m_phase_pending;  // per signature
    std::vector<int> m_phase_pending_sigs;       // signatures with pending lines
    // f(event) for the newest 4 failures of each list that a phase line at `line` within `window`
    // lines still reaches (handle_phase gives it to them, phase_wanted_after asks whether any is).
    template <class F>
    bool each_recent_failure(std::int64_t line, int window, F&& f);
    bool phase_wanted_after(std::int64_t line, int window);
    void defer_phase(int sig, std::string_view seg, std::int64_t line);
    void settle_phases();  // matches the pending lines into m_phase_last
    // Traceback frame lines (`frame` signatures), parsed only when a context phase asks which frame
    // it is under (two pattern matches per frame line cost a traceback-heavy log twice its time):
    // the newest frame lines, and the newest parsed frame among those that fell out of the ring.
    enum class frame_state : std::int8_t { unparsed, none, frame };  // frame: it names a path
    struct frame_line {
        int file = -1;
        std::int64_t line = 0;
        std::string text;       // the line (without colour codes); an excerpt once parsed
        std::vector<int> sigs;  // its frame hits, in hit order
        frame_state state = frame_state::unparsed;
        std::string path;
    };
    static constexpr size_t k_frame_ring = 16;
    std::array<frame_line, k_frame_ring> m_frames;
    size_t m_frames_head = 0, m_frames_size = 0;
    frame_line m_frame_evicted;  // state frame when set
    void note_frame(const int* hits, size_t n, std::string_view seg, std::int64_t line);
    void parse_frame(frame_line& f);
    // The frame a line at `line` sits under (nullptr: none): the newest frame line within `max_gap`
    // lines that parses as a frame.
    const frame_line* frame_above(std::int64_t line, std::int64_t max_gap);
    std::unordered_map<std::int64_t, series_state> m_series;  // key: file << 32 | (rank + 1)
    std::vector<series_state*> m_series_of_rank;  // the current file's series, index rank + 1
    size_t m_waiting_bytes = 0;  // the copied lines of readings that wait to be parsed
    struct fw_tally {
        int score = 0;
        int order = 0;       // the order in which frameworks were first named (ties go to the first)
        log_evidence first;  // the first line that named it: the provenance of log.framework
    };
    std::map<std::string, fw_tally> m_fw;
    void count_framework(const std::string& fw, int weight, std::string_view seg, std::int64_t line);
    std::vector<char> m_fw_sigs_seen;  // per signature: tries so far, k_fw_tries once it voted or gave up
    std::optional<std::int64_t> m_world_size;
    std::vector<std::int64_t> m_process_rank;  // per file: the rank it announces, -1 none, -2 several
    task_label_vote m_label_vote;       // the current file's lines: srun -l labels (task_label.h)
    std::vector<bool> m_file_labelled;  // per file: its lines carry srun -l labels consistently
    std::unordered_map<std::int64_t, std::int64_t> m_pid_rank;
    struct text_hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, std::optional<field_list>, text_hash, std::equal_to<>> m_peer_cache;
    std::optional<field_list> m_peer_scratch;
    // The last peer lines seen (NCCL repeats a few texts): compared before hashing the line.
    struct peer_recent {
        std::string_view text;  // the cache's own key
        const std::optional<field_list>* fields = nullptr;
    };
    std::array<peer_recent, 4> m_peer_recent{};
    // The previous peer line's fields (nullptr: it held none): a repeated line reuses them
    // without reading its bytes again.
    const field_list* m_prev_peer = nullptr;
    int m_prev_peer_sig = -1;  // -1: no peer line yet
    size_t m_peer_next = 0;
    std::set<std::int64_t> m_nccl_ranks;
    log_evidence m_launch;
    std::string m_launch_cmd;       // the launch command with its continuation lines
    bool m_launch_open = false;     // the launch line ends in a backslash: the next lines continue it
    const char* m_launch_next = nullptr;  // the launch line in the mapping (threads' path), else null
    int m_launch_more = 0;          // continuation lines joined so far
    void extend_launch(std::string_view seg);
    std::map<std::string, log_analysis::setting> m_settings;  // by canonical key, the last printed
    void handle_setting(const signature& s, std::string_view seg, std::int64_t line);
    // The printed model config being read (printed_block.h), where its header is, and where its
    // next line starts in the file's bytes (nullptr: the header was a copy).
    printed_block_reader m_block;
    log_evidence m_block_at;
    const char* m_block_next = nullptr;
    std::optional<log_analysis::printed_config> m_model_config;
    std::vector<std::string> m_block_warnings;
    void handle_model_config(const signature& s, std::string_view seg, std::int64_t line, const char* stable,
                             size_t raw_size);
    bool feed_block(std::string_view seg);  // true: the line was the block's
    void settle_block();
    std::int64_t m_pressure = 0;
    log_evidence m_pressure_first, m_pressure_last;
    std::int64_t m_growth = 0;  // lines that report memory growing over the run
    log_evidence m_growth_first;
    static constexpr size_t k_max_reports = 64;  // distinct report facts kept (a bound on hostile input)
    std::map<std::string, log_evidence> m_reports;  // report fact -> its first line
    // rev27: settings that hold only where a report line follows (signature needs_report), and the
    // lines of each report fact (file index, line; a bounded list)
    struct pending_setting {
        log_analysis::setting s;
        std::string needs;
        int file = 0;
        std::int64_t line = 0;
        int window = 0;
    };
    std::vector<pending_setting> m_pending_settings;
    std::map<std::string, std::vector<std::pair<int, std::int64_t>>> m_report_lines;
};

}  // namespace oomdx::log_detail
