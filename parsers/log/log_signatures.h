// Log signatures: message families, progress and memory lines, framework markers,
// loaded from knowledge/log_signatures/*.yaml. Each has literal prefilters and an RE2 pattern.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <re2/re2.h>

namespace oomdx {

enum class sig_kind {
    oom,         // an OOM message (source, sizes)
    not_oom,     // a look-alike or another identified failure that is not an OOM
    crash,       // the job died, cause not named (traceback, ChildFailedError, exit code)
    progress,    // a training progress line (step, maybe memory)
    memory,      // a per-step memory line
    context,     // a detail near a failure (device, request size, error code)
    refine,      // changes the source of a nearby OOM (e.g. EL0004 raised from HCCL)
    phase,       // what the job was doing (eval, checkpoint, init) near a failure
    frame,       // a traceback frame line: the source file it names (field `path`)
    framework,   // a framework marker
    rank,        // rank of the failed process (torchrun summary, snapshot path)
    world_size,  // world size
    process_rank,  // a process names its own rank (Lightning "GLOBAL_RANK: 1, MEMBER: 2/2")
    launch,      // the training launch command
    pressure,    // near-OOM warning (allocator retries, cache flushes)
    growth,      // a report in words that memory grew over the run ("memory keeps increasing until OOM")
    report,      // a report in words of what the log does not print (`fact`: the log.* fact it states, true)
    nccl_peer,   // NCCL INFO line mapping pid to rank
    setting,     // a setting the job prints (batch size, checkpointing, dtype): a canonical fact it ran with
    model_config,  // the header of a model config printed over several lines (HF "Model config LlamaConfig {")
};

const char* sig_kind_name(sig_kind k);

// A signature's RE2 pattern. Loaded eagerly it is compiled and checked at load (errors name
// file:line); loaded lazily (the shipped set, which `oomdx log test` compiles and checks in CI)
// it is compiled on first use, so a run compiles only the patterns its log reaches.
class sig_regex {
public:
    sig_regex(std::string pattern, std::string where, int min_groups)
        : m_pattern(std::move(pattern)), m_where(std::move(where)), m_min_groups(min_groups) {}
    // The compiled pattern (thread-safe); throws input_error naming file:line when it is bad.
    const RE2& re() const;
    // Compiles now; the error text, empty when the pattern is good.
    std::string compile() const;
    const std::string& pattern() const { return m_pattern; }
    const std::string& where() const { return m_where; }
    int min_groups() const { return m_min_groups; }

private:
    void ensure() const;  // compiles once, keeping the RE2 or the error
    std::string m_pattern;
    std::string m_where;  // file:line
    int m_min_groups = 0;
    mutable std::once_flag m_once;
    mutable std::unique_ptr<RE2> m_re;
    mutable std::string m_error;
};

// One extracted field: the first pattern that matches gives group 1.
struct field_rule {
    std::string name;  // requested_bytes, device_index, step, memory, rank, pid, error_code, ...
    std::vector<std::unique_ptr<sig_regex>> patterns;
    double unit = 0;   // multiplier when the text has no unit (Megatron MB); 0 = parse unit
    bool billions = false;  // a parameter count ("6,738,415,616", "217 M", "20430.40M") stated in billions
};

struct signature {
    std::string id;
    std::string file;
    int line = 0;
    sig_kind kind = sig_kind::oom;
    std::vector<std::string> literals;  // any of them must occur before the regex runs
    std::unique_ptr<sig_regex> regex;   // optional: literal alone is enough when absent
    std::unique_ptr<sig_regex> unless;  // optional: a line that matches it is not this signature
    std::string source;                 // oom, refine
    std::string device_kind;            // oom
    std::string framework;              // framework, progress, memory
    std::string phase;                  // phase: model_load, forward, backward, eval, ...
    std::string statistic;              // memory, progress with a memory field
    std::vector<std::string> applies_to;  // refine: sources it may change
    bool weak = false;        // oom: only a signal (SIGKILL, exit 137); loses to named failures
    bool fallback = false;    // oom: any out-of-memory wording; counts only when no named OOM is seen
    bool per_step = false;    // progress: printed every step (tqdm), so failing step = last + 1
    bool at_start = false;    // progress: printed when its step starts (a step header), so failing step = last
    bool multiples = false;   // progress: logged only at multiples of the log interval, so a logged 1 means every step
    bool by_total = false;    // progress: bars with different totals are separate counters
    bool unit_advance = false;  // progress: counts a unit that is a step only when it advances by one a line
    bool eval_counter = false;  // progress: an evaluation / validation bar, never the training step
    bool run_start = false;   // progress: the line starts a training run; counters logged before it are an earlier run's
    bool at_failure = false;  // progress: written after a failure, names the step that failed (0-based, no gaps: the one before finished)
    bool exclusive = false;   // progress/memory: the line holds nothing else (scan stops here)
    bool prefix_rank = false;  // context: the line's rank prefix is the failure's rank (a prefixed traceback frame)
    // progress: the line is an elision marker typed by whoever pasted the log (`...`, `[...]`, `<snip>`):
    // lines were cut there, so the steps on either side of it are not one logging interval apart
    bool elision = false;
    // > 0: the literals are looked for only in lines of at most this many bytes (and may be shorter than
    // 4 bytes): a marker that is the whole line (`...`), too short for the multi-literal search
    int max_line = 0;
    int priority = 0;         // several matches on one line: highest wins
    int weight = 1;           // framework: score per hit
    int window = 30;          // context/refine/phase: lines around the failure
    std::string fact;         // setting: the canonical config fact the line states; report: the log.* fact
    // setting (rev27): it holds only when a line of this report fact (log.*) follows within `window` lines
    // (the same line counts): "switched to LoRA" is the failing run's setting only where the OOM persisted
    std::string needs_report;
    std::vector<std::pair<std::string, std::string>> values;  // setting: printed text -> canonical value ("*": as printed)
    std::vector<field_rule> fields;
};

// Names a signature's `fields` may use, and what they hold.
bool is_field_name(std::string_view name);
// A setting signature's canonical value for the text its `value` field captured: mapped by `values`
// (case does not matter; "*" takes any text, "{value}" in it stands for the text), else the text;
// empty when the map has no entry for it.
std::string setting_value(const signature& s, const std::string& raw);
bool is_size_field(std::string_view name);    // *_bytes and memory: sizes
bool is_string_field(std::string_view name);  // error_code, device_kind, path
// Whether a hit of `s` reads its line as printed, colour codes included: progress and memory
// lines (parsed raw), a framework marker without a pattern (reads nothing of the line).
inline bool reads_raw_line(const signature& s) {
    return s.kind == sig_kind::progress || s.kind == sig_kind::memory || (s.kind == sig_kind::framework && !s.regex);
}
// The OOM source and phase vocabularies of the log analyzer.
const std::vector<std::string>& oom_sources();
const std::vector<std::string>& phase_names();

// The signature files of a directory, in load order: every *.yaml / *.yml but the *.test.yaml
// example files beside them. Sets `ec` when the directory cannot be read.
std::vector<std::string> signature_files(const std::string& dir, std::error_code& ec);

// The loaded set plus a bigram prefilter over all literals.
class signature_set {
public:
    // Loads every *.yaml in the directories, in order (not the *.test.yaml example files beside
    // them); throws one input_error listing every error, each naming file:line. Lazy: patterns
    // are compiled on first use (see sig_regex).
    enum class patterns { compile_now, lazy };
    static signature_set load(const std::vector<std::string>& dirs, patterns when = patterns::compile_now);
    // The shipped set (data_path("knowledge/log_signatures")), loaded once, lazily, through the
    // stored copy of parsers/log/signature_cache.h.
    static const signature_set& shipped();

    const std::vector<signature>& all() const { return m_sigs; }
    size_t size() const { return m_sigs.size(); }

    // Progress and memory lines are the bulk of a big log: the scan of a segment ends at the
    // literal of an `exclusive` signature (like grep stops at the first match of a line).
    // Appends to `hits` the index of every signature with a literal in `text` (no duplicates;
    // `mark` must have size() entries, all 0, and is reset for the appended indices).
    void candidates(std::string_view text, std::vector<int>& hits, std::vector<char>& mark) const;

    void add(signature s);  // for tests and loaders; call finish() afterwards
    void finish();

private:
    // Multi-literal search (Wu-Manber, blocks of 2 bytes): windows of the shortest literal
    // length slide by the shift of their last bigram; shift 0 = check the literals that start
    // with the window's first 4 bytes (a hashed bit filter first, then their bucket).
    struct lit_ref {
        std::string text;
        int sig = 0;
        bool stop = false;  // a progress/memory line: nothing else is looked for after it
        std::uint32_t head = 0;  // first 4 bytes, checked before memcmp
        std::uint64_t tail = 0, tail_mask = 0;  // bytes 4..11 (as far as the literal goes), compared inline
    };
    std::vector<signature> m_sigs;
    std::vector<lit_ref> m_lits;
    size_t m_min_len = 2;
    struct bucket_entry {
        std::uint32_t head = 0;  // lit_ref::head
        int lit = 0;
    };
    std::vector<std::uint8_t> m_shift;               // per bigram (65536 entries)
    // After the window ending in this bigram was checked: the shift to the next window in which
    // the bigram sits where some literal has it (>= 1; m - 1 when no literal has it earlier).
    std::vector<std::uint8_t> m_next_shift;
    std::vector<std::uint32_t> m_bucket_begin;       // head_hash -> first entry in m_bucket (65537)
    // literals by the hash of their first 4 bytes, in literal order (~1 per checked bucket; keyed
    // by the window's last bigram a checked bucket held ~10)
    std::vector<bucket_entry> m_bucket;
    std::vector<std::uint64_t> m_head_filter;        // bit per hash of a literal's first 4 bytes
    // literals of `max_line` signatures, looked for by a plain search in lines of at most their length
    struct short_lit {
        std::string text;
        int sig = 0;
        size_t max_line = 0;
    };
    std::vector<short_lit> m_short;
    size_t m_short_max = 0;  // the longest line any of them is looked for in
    // Bigram key: the two bytes as one unaligned 16-bit load (the tables use the same order).
    static unsigned bigram(const unsigned char* q) {
        std::uint16_t k;
        std::memcpy(&k, q, 2);
        return k;
    }
    static unsigned head_hash(std::uint32_t head) { return (head * 0x9E3779B1u) >> 16; }
    template <size_t M>
    void slide(const unsigned char* p, size_t n, std::vector<int>& hits, std::vector<char>& mark) const;
    [[gnu::noinline]] bool check_bucket(unsigned key, std::uint32_t head, const unsigned char* q, size_t avail,
                                        std::vector<int>& hits, char* mark) const;
};

}  // namespace oomdx
