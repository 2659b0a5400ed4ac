// `oomdx watch LOG... [--warn-steps N] [--device D] [--interval S] [--format text|jsonl]`:
// follows growing training logs, updates the forecast as lines arrive, and stops with an alert
// when the forecast reaches the 0.95 budget within N steps or an OOM appears (then the log's
// diagnosis). Exit codes: 0 stopped (duration, idle, signal, nothing more to read), 2 input
// error, 3 forecast alert, 4 OOM alert. JSON lines: schema oomdx.watch/1 (docs/watch.md).
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cmath>
#include <future>
#include <thread>

#include "engine/cli/commands.h"
#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/report/log_verdicts.h"
#include "engine/rules/rule_loader.h"
#include "parsers/log/log_follow.h"

namespace oomdx::cli {

namespace {

constexpr int k_exit_forecast_alert = 3;
constexpr int k_exit_oom_alert = 4;

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct watch_opts {
    std::vector<std::string> files;
    std::vector<std::string> sig_dirs;
    std::string device;
    std::string format = "text";
    std::int64_t warn_steps = 100;
    double interval = 1.0;
    double duration = 0;   // 0: until stopped
    double idle_exit = 0;  // 0: never
    double report_every = 60;
};

double unix_now() {
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string clock_text() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    return fmt::format("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string duration_text(double s) {
    if (s < 120) return fmt::format("{:.0f} s", s);
    if (s < 7200) return fmt::format("{:.0f} min", s / 60);
    return fmt::format("{:.1f} h", s / 3600);
}

// The forecast of all files: the available one that reaches the budget first, else the first
// one with a reason; its file index.
struct combined {
    std::optional<memory_forecast> f;
    size_t file = 0;
    std::optional<std::int64_t> last_step;
};

combined combine(log_follower& fol, const rule_set* rules) {
    combined c;
    for (size_t i = 0; i < fol.size(); ++i) {
        log_analysis a = fol.analysis(i);
        if (a.forecast) judge_log(a, rules);  // growth or noise: the evidence rules' verdict
        if (a.last_logged_step && (!c.last_step || *a.last_logged_step > *c.last_step)) c.last_step = a.last_logged_step;
        if (!a.forecast) continue;
        const memory_forecast& f = *a.forecast;
        const bool better = !c.f || (f.available && !c.f->available) ||
                            (f.available && c.f->available && f.budget_step < c.f->budget_step);
        if (better) {
            c.f = f;
            c.file = i;
        }
    }
    return c;
}

nlohmann::json files_json(const log_follower& fol) {
    nlohmann::json a = nlohmann::json::array();
    for (size_t i = 0; i < fol.size(); ++i) {
        const followed_file& f = fol.file(i);
        a.push_back({{"path", f.path}, {"lines", f.lines}, {"bytes", f.bytes}, {"rotations", f.rotations},
                     {"compressed", f.compressed}});
    }
    return a;
}

std::string who(const combined& c, const log_follower& fol) {
    if (c.f && c.f->rank) return fmt::format("rank {}", *c.f->rank);
    return fol.file(c.file).path;
}

int run_watch(const watch_opts& o) {
    const bool jsonl = o.format == "jsonl";
    log_options lo;
    lo.extra_signature_dirs = o.sig_dirs;
    lo.device_capacity_bytes = device_capacity(o.device);
    log_follower fol(o.files, lo);
    auto rules = std::async(std::launch::async, [] { return &shipped_evidence_rules(); }).share();
    g_stop = 0;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);

    auto emit = [&](const char* event, const combined& c, nlohmann::json extra) {
        nlohmann::json j;
        j["schema"] = "oomdx.watch/1";
        j["event"] = event;
        j["time"] = std::round(unix_now() * 1000) / 1000;
        j["files"] = files_json(fol);
        j["last_step"] = c.last_step ? nlohmann::json(*c.last_step) : nlohmann::json(nullptr);
        j["forecast_file"] = c.f ? nlohmann::json(fol.file(c.file).path) : nlohmann::json(nullptr);
        j["forecast"] = c.f ? forecast_json(*c.f) : nlohmann::json(nullptr);
        j["warn_steps"] = o.warn_steps;
        for (auto& [k, v] : extra.items()) j[k] = v;
        fmt::print("{}\n", j.dump());
        std::fflush(stdout);
    };
    if (!jsonl)
        fmt::print("oomdx watch: following {} file(s); alert when the forecast reaches 95% of capacity within {} "
                   "steps, or on an OOM (poll every {} s)\n",
                   fol.size(), o.warn_steps, o.interval);
    std::fflush(stdout);

    const auto start = std::chrono::steady_clock::now();
    auto last_data = start;
    double last_report = -1e9;
    std::string last_status;
    bool first = true;
    for (;;) {
        const std::int64_t got = fol.poll();
        const auto now = std::chrono::steady_clock::now();
        const double elapsed = std::chrono::duration<double>(now - start).count();
        if (got > 0) last_data = now;
        if (got > 0 || first) {
            first = false;
            for (size_t i = 0; i < fol.size(); ++i) {
                if (fol.oom_lines(i) == 0) continue;
                log_analysis a = fol.analysis(i);
                judge_log(a, rules.get());
                combined c = combine(fol, rules.get());
                if (jsonl) {
                    emit("oom", c, {{"alert", {{"kind", "oom"}, {"file", a.file}, {"line", a.line}, {"source", a.source}}},
                                    {"analysis", to_json(a)}});
                } else {
                    fmt::print("{} ALERT: out-of-memory error ({}) at {}:{}{}\n\n{}", clock_text(), a.source, a.file,
                               a.line, a.rank ? fmt::format(", rank {}", *a.rank) : "", render_text(a, false, use_color()));
                }
                return k_exit_oom_alert;
            }
            combined c = combine(fol, rules.get());
            const bool alert = c.f && c.f->available &&
                               c.f->budget_step - static_cast<double>(c.f->last_step) <= static_cast<double>(o.warn_steps);
            if (alert) {
                const memory_forecast& f = *c.f;
                const auto steps_left = std::llround(f.budget_step - static_cast<double>(f.last_step));
                if (jsonl) {
                    emit("alert", c, {{"alert", {{"kind", "forecast"}, {"steps_to_budget", steps_left},
                                                 {"budget_step", std::llround(f.budget_step)}}}});
                } else {
                    fmt::print("{} ALERT: {} is forecast to reach 95% of {} at step ~{}, {} step(s) after step {}{} "
                               "(--warn-steps {})\n  {}\n",
                               clock_text(), who(c, fol), format_bytes(f.capacity_bytes), std::llround(f.budget_step),
                               steps_left, f.last_step,
                               f.budget_eta_seconds ? ", in about " + duration_text(*f.budget_eta_seconds) : "",
                               o.warn_steps, forecast_line(f));
                }
                return k_exit_forecast_alert;
            }
            if (jsonl) {
                emit("update", c, nlohmann::json::object());
            } else {
                const std::string status = c.f ? forecast_line(*c.f) : "no memory readings yet";
                if (status != last_status || elapsed - last_report >= o.report_every) {
                    fmt::print("{} step {}: {}\n", clock_text(), c.last_step ? std::to_string(*c.last_step) : "-", status);
                    std::fflush(stdout);
                    last_status = status;
                    last_report = elapsed;
                }
            }
        }
        const bool idle = o.idle_exit > 0 && std::chrono::duration<double>(now - last_data).count() >= o.idle_exit;
        if (g_stop || fol.static_only() || (o.duration > 0 && elapsed >= o.duration) || idle) {
            combined c = combine(fol, rules.get());
            const char* why = g_stop ? "signal" : fol.static_only() ? "inputs read" : idle ? "idle" : "duration";
            if (jsonl) emit("end", c, {{"reason", why}});
            else fmt::print("{} oomdx watch: stopped ({}), no alert\n", clock_text(), why);
            return 0;
        }
        std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
    }
}

}  // namespace

void add_watch_command(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<watch_opts>();
    auto* cmd = app.add_subcommand(
        "watch", "Follow growing training logs: update the memory forecast, alert before the OOM or when one appears");
    cmd->add_option("files", o->files, "Log files to follow (one per rank, or one); a .gz is read once, whole")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option("--warn-steps", o->warn_steps,
                    "Alert when the forecast reaches 95% of capacity within this many steps (default 100)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--device", o->device, "Device whose capacity the forecast uses (default: what the log states)");
    cmd->add_option("--interval", o->interval, "Seconds between polls (default 1)")->check(CLI::Range(0.01, 3600.0));
    cmd->add_option("--duration", o->duration, "Stop after this many seconds (default: run until stopped)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--idle-exit", o->idle_exit, "Stop after this many seconds without a new line")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--report-every", o->report_every, "Text: repeat the forecast line at least this often (s)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--format", o->format, "text (default) or jsonl (one oomdx.watch/1 object per update)")
        ->check(CLI::IsMember({"text", "jsonl"}));
    cmd->add_option("--signatures", o->sig_dirs, "Extra directory of log signature YAML files");
    cmd->footer("Exit codes: 0 stopped without an alert, 2 input error, 3 forecast alert, 4 OOM alert.");
    cmd->callback([o, &exit_code] { exit_code = run_watch(*o); });
}

}  // namespace oomdx::cli
