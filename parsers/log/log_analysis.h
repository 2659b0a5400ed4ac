// Result model of Step 0: what a training log says about an OOM (or its absence).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace oomdx {

// A log line that proves something, with its role ("oom", "oom_detail", "context",
// "progress", "memory", "rank", "crash", "not_oom", "pressure", "launch", ...).
struct log_evidence {
    std::string file;
    std::int64_t line = 0;
    std::string text;
    std::string role;
};

// A parameter count as a line printed it: the integer it states, and whether it gave every digit
// ("6,738,415,616": rounded_digits 0) or a rounded form ("7.2 B": 2; "20430.40M": 7 significant digits).
struct printed_count {
    std::int64_t n = 0;
    int rounded_digits = 0;
    bool exact() const { return rounded_digits == 0; }
};

// One per-step memory reading (torchtitan `memory:`, Megatron memory line, DeepSpeed MA).
struct memory_point {
    std::int64_t step = 0;
    std::int64_t bytes = 0;
    std::string statistic;  // allocated | reserved | max_allocated | max_reserved | active
    std::int64_t line = 0;
    std::string file;
    std::optional<std::int64_t> time_ms;  // the line's timestamp, when it has one
    // the same line's peak allocated of the step (Megatron's "max allocated" beside "allocated"); 0 = none
    std::int64_t peak_bytes = 0;
    // rev39: that peak is the one since the previous print (DeepSpeed's see_memory_usage resets it after printing):
    // a step's only where the line comes once per step
    bool peak_since_print = false;
};

// The forecast from a log that has not failed (yet): the steady per-step growth of one rank
// extrapolated to the device capacity and to the 0.95 budget (parsers/log/memory_forecast.h).
struct memory_forecast {
    // The verdict: projected and the growth is beyond noise (rules/evidence_log.yaml decides;
    // until the rules ran it equals `projected`).
    bool available = false;
    bool projected = false;           // a rising line and a capacity: the crossing steps exist
    std::string reason;               // why there is none ("flat memory: ...", "capacity unknown: ...")
    std::optional<std::int64_t> rank;
    std::string statistic;            // what the readings measure (max_reserved, allocated, ...)
    std::int64_t capacity_bytes = 0;
    std::string capacity_from;        // device | log_percent | oom_message | ""
    double budget_fraction = 0.95;
    // the fitted line over the steady part (after the warm-up)
    double growth_bytes_per_step = 0, r2 = 0;
    bool fitted = false;                  // enough readings: the line and the three below exist
    double growth_lo_bytes_per_step = 0;  // the slope less two standard errors
    double rise_bytes = 0;                // the line's rise over the readings
    double noise_bytes = 0;               // the readings' scatter about the line (residual sigma)
    std::int64_t from_step = 0, last_step = 0, points = 0;
    std::int64_t last_bytes = 0;  // the line's value at the last step
    // steps where the line reaches capacity and the budget; intervals from the slope's and
    // the level's uncertainty (two standard errors; hi absent when growth may be zero)
    double capacity_step = 0, budget_step = 0;
    double capacity_lo = 0, budget_lo = 0;
    std::optional<double> capacity_hi, budget_hi;
    // from the readings' timestamps (seconds per step over the steady part)
    std::optional<double> seconds_per_step, eta_seconds, budget_eta_seconds;
};

struct log_file_info {
    std::string path;
    std::int64_t lines = 0;
    std::int64_t bytes = 0;       // bytes read (uncompressed)
    bool compressed = false;
    std::int64_t long_lines = 0;  // lines cut to the matching cap
};

struct log_analysis {
    // OOM classification (design vocabulary); "none" when the log shows no OOM.
    std::string source = "none";
    std::string device_kind;   // cuda | npu | hip | mps | xpu | cpu | unknown ("" when none)
    std::string signature;     // id of the signature that matched the primary message
    std::string message;       // primary OOM line (capped)
    std::string file;          // file and line of the primary message
    std::int64_t line = 0;
    std::string error_code;    // EL0004, 207001, ...
    // Wording that dates the message (which PyTorch release printed it), as printed: the clause
    // that names the cache ("cached", "reserved in total by PyTorch", ...) and the hint's setting.
    std::string message_form, message_hint;

    // Sizes as printed by the message (bytes); nullopt when not printed.
    std::optional<std::int64_t> requested_bytes, capacity_bytes, free_bytes, allocated_bytes,
        reserved_bytes, reserved_unallocated_bytes, process_in_use_bytes, non_pytorch_bytes,
        allowed_bytes, active_bytes, private_pool_bytes;
    // Device memory held by other processes: capacity minus free minus this process's use, when
    // the message prints all three and they agree with PyTorch's own figures.
    std::optional<std::int64_t> other_processes_bytes;
    bool reserved_unallocated_derived = false;
    bool reserved_derived = false;  // allocated + reserved-but-unallocated (messages since 2.1)
    int other_processes = 0;  // "Process N has ..." clauses beyond the largest one

    std::optional<std::int64_t> device_index, rank;
    std::string rank_from;  // prefix | traceback_head | prefixed_copy | srun_label | message | torchrun | snapshot_path | nccl | npu | process_line | filename | world_size_1 | frame_prefix
    std::vector<std::int64_t> ranks_failed;  // distinct ranks with an OOM message, first failure first
    std::optional<bool> all_ranks_failed;

    // Steps and what the job was doing (measurements).
    std::optional<std::int64_t> step, last_logged_step;
    std::optional<std::int64_t> last_logged_total;  // the counter's total (bar "N/M"), when printed
    // How `step` was obtained: per_step_format | consecutive_steps | step_zero | snapshot_path | step_header |
    // bar_total_next_pass (a bar at its total, training frames after it: step 1 of the next pass),
    // per_step_lines (a counter logged every k steps, and a line printed once per step shows that no step
    // ran after its newest line), micro_batch_bar (a step logger glued to a bar of micro-batches, and less
    // than a step's drawn after its newest line),
    // or sparse_log / bar_stride (a counter that moves k >= 2 at a time) / bar_total_after_loop when
    // the format, the counter or a bar at its total rules out last + 1 (`step` stays null).
    std::string step_basis;
    // The measured stride k of a bar that moves k >= 2 at a time (step_basis bar_stride): the failing
    // step is one of the next k after the last logged one.
    std::optional<std::int64_t> step_stride;
    // A later OOM line of the failure's file read further on the failure's counter (measurements; the rule
    // evidence_oom_caught decides whether the job caught this OOM and went on): the failure's counter
    // reading, the furthest later OOM's, and the newest reading of that counter in the file, each with its line.
    std::optional<std::int64_t> oom_counter_step, later_oom_step, newest_step, newest_total;
    std::optional<log_evidence> later_oom_line, newest_progress;
    // From traceback frames and context lines before the failure, after the last step line:
    // model_load | forward | backward | optimizer_step | loss | eval | checkpoint_save |
    // checkpoint_load | data_loading; "" when none was seen.
    std::string phase;
    // The source file of the traceback frame that gave a context phase (eval, checkpoint_*,
    // model_load: the frame line itself, or the frame above the code line that matched); "" when
    // the phase came from another line or is a frame's (forward, backward, ...).
    std::string phase_frame_path;

    // Verdicts, filled by the `evidence` rules (log_verdicts), not by the analyzer.
    std::string timing = "unknown";  // init | early | mid | late | eval | checkpoint | unknown
    std::string timing_reason;

    // A failure that is not an OOM (look-alike or other error), when no OOM was found.
    std::string failure_kind;  // "" | not_oom | crash
    std::string failure_signature;
    std::int64_t failure_line = 0;
    std::string failure_file;

    std::string framework = "unknown";
    std::optional<std::int64_t> world_size;
    std::string launch_line;  // training launch command, if the log prints one
    std::string launch_command;  // the launch command with its backslash-continued lines (empty: launch_line is all of it)
    std::string launch_file;
    std::int64_t launch_line_no = 0;
    // Settings the job printed (batch size, checkpointing, compute dtype): canonical key, value as
    // printed or mapped by the signature, and the line (the last one printed before the end).
    struct setting {
        std::string fact;
        std::string value;
        log_evidence at;
        std::optional<printed_count> count;  // a parameter count's setting (field unit billions): the count as printed
    };
    std::vector<setting> settings;
    // The model config the job printed (HF transformers "Model config LlamaConfig {" and the JSON
    // lines up to its closing brace): the JSON text (at most 64 KiB) and the header line. The
    // first one printed whole; absent when none was (a cut or overlong block is a warning).
    struct printed_config {
        std::string text;
        log_evidence at;
    };
    std::optional<printed_config> model_config;

    // Per-step memory of the failing rank (or the best covered one), before the failure.
    std::vector<memory_point> memory_series;
    std::optional<std::int64_t> memory_series_rank;
    std::optional<double> growth_bytes_per_step;  // least squares over every reading
    std::optional<double> growth_r2;              // its coefficient of determination
    std::optional<bool> series_nondecreasing;     // no reading below the one before it
    // The warm-up (a rise in the first steps) split off: the steady part starts at
    // memory_series[steady_from]; its slope, fit quality and growth over its span.
    size_t steady_from = 0;
    std::optional<double> steady_growth_bytes_per_step, steady_r2, steady_growth_bytes;
    std::optional<double> steady_late_growth_bytes;  // last reading minus the steady part's middle one
    // Verdicts, filled by the `evidence` rules.
    std::optional<bool> series_monotonic;
    bool leak_signal = false;
    std::int64_t alloc_retry_lines = 0;  // "N CUDA memory allocation retries", cache flushes
    // Lines that say in words that memory grew over the run ("GPU memory keeps increasing until
    // OOM"): an issue title or a report pasted with the log, when no memory series was printed.
    std::int64_t growth_report_lines = 0;
    // Facts stated in words by `report` signatures ("the same config ran fine before"): fact -> first line.
    std::map<std::string, log_evidence> reports;
    // Device capacity the log states: memory readings with a percentage of capacity (torchtitan
    // "memory: 51.30GiB(84.15%)"), the median over the readings that print one.
    std::optional<std::int64_t> capacity_from_log_bytes;
    // The rank whose memory reaches capacity first; absent without any memory series.
    std::optional<memory_forecast> forecast;

    std::vector<log_evidence> evidence;
    std::vector<log_file_info> files;
    std::vector<std::string> warnings;
    std::int64_t oom_messages = 0;  // OOM-message lines seen in all files
};

}  // namespace oomdx
