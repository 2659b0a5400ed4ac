// `oomdx log merge SUMMARY.json...`: the cross-rank view of per-rank log summaries (the
// oomdx.log/1 documents of `oomdx log RANK.log --format json`), read one at a time. The log
// side of docs/scale.md: one row per rank, the ranks that failed and the first to fail, the
// OOM source shared by the ranks, what each held at its OOM, missing and bad summaries by rank.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/cli/commands.h"
#include "engine/core/atomic_file.h"
#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "parsers/snapshot/compare.h"
#include "parsers/snapshot/summary.h"

namespace oomdx::cli {

namespace {

using nlohmann::json;

struct log_row {
    std::int64_t rank = -1;
    std::string file;
    std::string source;  // the OOM source, "none" when the rank did not fail
    std::int64_t step = -1, last_logged_step = -1;
    std::int64_t requested = -1, allocated = -1, reserved = -1, capacity = -1;
    std::string signature;
    std::string summary;  // the summary file, absolute
};

std::int64_t opt(const json& o, const char* k) {
    auto it = o.find(k);
    return it != o.end() && it->is_number_integer() ? it->get<std::int64_t>() : -1;
}

std::string text(const json& o, const char* k) {
    auto it = o.find(k);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

log_row row_of(const std::string& path, std::int64_t position) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_error::in_file(path, "missing summary: cannot open");
    json j;
    try {
        j = json::parse(in);
    } catch (const json::parse_error& e) {
        throw input_error::at_offset(path, static_cast<std::int64_t>(e.byte), std::string("invalid JSON: ") + e.what());
    }
    if (!j.is_object() || text(j, "schema") != "oomdx.log/1")
        throw input_error::in_file(path, "not an oomdx.log/1 document (oomdx log FILE --format json)");
    auto oi = j.find("oom");
    if (oi == j.end() || !oi->is_object()) throw input_error::in_file(path, "no key 'oom'");
    const json& o = *oi;
    log_row r;
    auto fi = j.find("files");
    if (fi != j.end() && fi->is_array() && !fi->empty() && fi->front().is_object()) r.file = text(fi->front(), "path");
    // The rank of a per-rank file: its name (or the summary's), else the rank the log names, else
    // the summary's position among the inputs.
    r.rank = snap::rank_from_name(r.file, snap::rank_from_name(path, opt(o, "rank")));
    if (r.rank < 0) r.rank = position;
    r.source = text(o, "source");
    r.step = opt(o, "step");
    r.last_logged_step = opt(o, "last_logged_step");
    r.requested = opt(o, "requested_bytes");
    r.allocated = opt(o, "allocated_bytes");
    r.reserved = opt(o, "reserved_bytes");
    r.capacity = opt(o, "capacity_bytes");
    r.signature = text(o, "signature");
    std::error_code ec;
    const auto abs = std::filesystem::absolute(path, ec);
    r.summary = ec ? path : abs.lexically_normal().string();
    return r;
}

json opt_json(std::int64_t v) { return v < 0 ? json(nullptr) : json(v); }
std::string opt_bytes(std::int64_t v) { return v < 0 ? "-" : format_bytes(v); }

}  // namespace

void add_log_merge_command(CLI::App& log_cmd, int& exit_code) {
    struct opts {
        std::vector<std::string> inputs;
        output_format fmt = output_format::text;
        std::string output;
        std::int64_t world_size = 0;
        bool strict = false;
    };
    auto o = std::make_shared<opts>();
    auto* cmd = log_cmd.add_subcommand("merge", "Cross-rank view of per-rank log summaries (oomdx log FILE --format json)");
    cmd->add_option("inputs", o->inputs, "Summary files, directories of *.json, glob patterns or @list.txt")->required();
    add_format_option(cmd, o->fmt);
    cmd->add_option("--world-size", o->world_size, "Ranks expected (to list the missing ones)")
        ->check(CLI::Range(std::int64_t(0), std::int64_t(1) << 40));
    cmd->add_option("-o,--output", o->output, "Write the report to this file (atomically)");
    cmd->add_flag("--strict", o->strict, "Exit 2 when a summary is bad or a rank is missing");
    cmd->callback([o, &exit_code] {
        const auto files = snap::expand_summary_inputs(o->inputs);
        if (files.empty()) throw usage_error("log merge: no summary matches the inputs");
        std::vector<log_row> rows;
        std::vector<snap::summary_error> bad;
        stderr_progress bar;
        for (std::size_t i = 0; i < files.size(); ++i) {
            try {
                rows.push_back(row_of(files[i], static_cast<std::int64_t>(i)));
            } catch (const input_error& e) {
                bad.push_back({files[i], snap::rank_from_name(files[i], -1), e.what()});
            }
            if (bar.active()) bar.update(fmt::format("oomdx: merged {}/{} log summaries", i + 1, files.size()));
            else if (files.size() >= 1000 && (i + 1) % std::max<std::size_t>(1, files.size() / 10) == 0)
                fmt::print(stderr, "oomdx: merged {}/{} log summaries\n", i + 1, files.size());
        }
        std::stable_sort(rows.begin(), rows.end(), [](const log_row& a, const log_row& b) { return a.rank < b.rank; });
        // Failed ranks; the first to fail: the lowest failing step, then the lowest rank.
        std::vector<std::int64_t> failed;
        const log_row* first = nullptr;
        std::map<std::string, std::int64_t> sources;
        for (const auto& r : rows) {
            if (r.source.empty() || r.source == "none") continue;
            failed.push_back(r.rank);
            ++sources[r.source];
            auto key = [](const log_row* x) { return std::make_pair(x->step >= 0 ? x->step : INT64_MAX, x->rank); };
            if (!first || key(&r) < key(first)) first = &r;
        }
        // Missing: every number up to the highest rank seen (a bad summary's too) or world_size - 1.
        std::int64_t top = o->world_size - 1;
        for (const auto& r : rows) top = std::max(top, r.rank);
        for (const auto& b : bad) top = std::max(top, b.rank);
        std::vector<std::int64_t> missing;
        std::int64_t missing_count = 0;
        std::size_t k = 0;
        for (std::int64_t r = 0; r <= top; ++r) {
            while (k < rows.size() && rows[k].rank < r) ++k;
            if (k < rows.size() && rows[k].rank == r) continue;
            if (missing.size() < 1000) missing.push_back(r);
            ++missing_count;
        }
        // What the failed ranks held at their OOM: median and spread.
        std::vector<std::int64_t> held;
        for (const auto& r : rows)
            if (r.source != "none" && !r.source.empty() && r.allocated >= 0) held.push_back(r.allocated);
        std::sort(held.begin(), held.end());
        const std::int64_t median = held.empty() ? -1 : held[held.size() / 2];
        const double spread = held.empty() || held.back() <= 0 ? 0 : double(held.back() - held.front()) / double(held.back());

        for (std::size_t i = 0; i < bad.size() && i < 20; ++i)
            fmt::print(stderr, "oomdx: warning: {}{}\n", bad[i].rank >= 0 ? fmt::format("rank {}: ", bad[i].rank) : "",
                       bad[i].message);
        std::string out;
        if (o->fmt == output_format::json) {
            json jr = json::array();
            for (const auto& r : rows)
                jr.push_back({{"rank", r.rank}, {"file", r.file}, {"source", r.source}, {"signature", r.signature},
                              {"step", opt_json(r.step)}, {"last_logged_step", opt_json(r.last_logged_step)},
                              {"requested_bytes", opt_json(r.requested)}, {"allocated_bytes", opt_json(r.allocated)},
                              {"reserved_bytes", opt_json(r.reserved)}, {"capacity_bytes", opt_json(r.capacity)}});
            json jb = json::array();
            for (const auto& b : bad)
                jb.push_back({{"file", b.file}, {"rank", b.rank >= 0 ? json(b.rank) : json(nullptr)}, {"error", b.message}});
            json j = {{"schema", "oomdx.log/1"},
                      {"kind", "ranks"},
                      {"ranks",
                       {{"rows", jr},
                        {"failed_ranks", failed},
                        {"first_failed_rank", first ? json(first->rank) : json(nullptr)},
                        {"sources", sources},
                        {"median_allocated_bytes_at_oom", opt_json(median)},
                        {"allocated_spread_at_oom", spread},
                        {"missing_ranks", missing},
                        {"missing_rank_count", missing_count}}},
                      {"merge", {{"inputs", files.size()}, {"merged", rows.size()}, {"bad", jb},
                                 {"first_failed_summary", first ? json(first->summary) : json(nullptr)}}}};
            out = j.dump(2) + "\n";
        } else {
            out += fmt::format("Ranks ({} log summaries merged of {})\n", rows.size(), files.size());
            for (const auto& r : rows)
                out += fmt::format("  {:>6}  {:<20} step {:>6}  requested {:>10}  allocated {:>10}  {}\n", r.rank,
                                   r.source.empty() ? "-" : r.source, r.step >= 0 ? std::to_string(r.step) : "-",
                                   opt_bytes(r.requested), opt_bytes(r.allocated), r.file);
            if (!failed.empty()) {
                out += fmt::format("  ranks with an OOM      {}\n", failed.size());
                out += fmt::format("  first to fail          rank {}{}\n", first->rank,
                                   first->step >= 0 ? fmt::format(" (step {})", first->step) : "");
                for (const auto& [s, n] : sources) out += fmt::format("  source                 {} on {} ranks\n", s, n);
                if (median >= 0)
                    out += fmt::format("  allocated at the OOM   median {}, spread {:.1f}%\n", format_bytes(median), spread * 100);
            }
            if (missing_count > 0) out += fmt::format("  missing ranks          {} (first: {})\n", missing_count, missing.front());
            for (const auto& b : bad) out += fmt::format("  not merged: {}\n", b.message);
        }
        if (!o->output.empty()) write_file_atomic(o->output, out);
        else std::fwrite(out.data(), 1, out.size(), stdout);
        exit_code = o->strict && (!bad.empty() || missing_count > 0) ? 2 : 0;
    });
}

}  // namespace oomdx::cli
