// `oomdx snapshot FILE|DIR...`, `oomdx snapshot diff A B`, `oomdx snapshot trend A B C...`.
#include <cstdio>
#include <future>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "engine/cli/commands.h"
#include "engine/core/atomic_file.h"
#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/core/translations.h"
#include "parsers/snapshot/analysis_batch.h"
#include "parsers/snapshot/analysis_report.h"
#include "parsers/snapshot/compare.h"
#include "parsers/snapshot/summary.h"
#include "engine/report/render_html.h"
#include "engine/report/snapshot_verdicts.h"

namespace oomdx::cli {

namespace {

struct snapshot_opts {
    std::vector<std::string> inputs;
    output_format format = output_format::text;
    int top = 10;
    std::string categories;
    std::string capacity;
    unsigned jobs = 0;
    std::vector<std::string> rule_dirs;
    std::string output;          // write here (atomically) instead of stdout
    std::int64_t rank = -1;      // --rank: the rank of a single file
    std::int64_t world_size = 0; // merge: ranks expected
    bool strict = false;         // merge: exit 2 when a summary is bad or missing
    std::string lang = "en";     // text and markdown: the report language (JSON and HTML stay English)
};

void add_common(CLI::App* cmd, snapshot_opts& o, bool allow_html = false) {
    add_format_option(cmd, o.format, allow_html);
    cmd->add_option("--top", o.top, "Allocation sites to list (default 10)")->check(CLI::Range(1, 100000));
    cmd->add_option("--categories", o.categories,
                    "Extra category rules (YAML like knowledge/snapshot_categories.yaml, or a Mosaic "
                    "custom profile {category: regex}); they run before the shipped rules");
    cmd->add_option("--capacity", o.capacity,
                    "Device memory capacity (e.g. 80GiB) to measure memory outside PyTorch at an OOM");
    cmd->add_option("-j,--jobs", o.jobs, "Files analyzed in parallel (default: all cores)");
    cmd->add_option("--lang", o.lang, "Language of the text and markdown report: en or zh (JSON keys and HTML stay English)")
        ->check(CLI::IsMember({"en", "zh"}));
    cmd->add_option("--rules", o.rule_dirs,
                    "Site rule packs loaded after the shipped ones (thresholds of rules/evidence_snapshot.yaml "
                    "replaced with 'override: true')");
}

struct prepared {
    std::unique_ptr<snap::category_rules> rules;
    snap::analysis_options opt;
    // The packs whose evidence step decides, loaded on the main thread when the verdicts are
    // first asked for, after the files are analyzed (snap38): no thread, no arena of its own,
    // the analysis's freed heap reused, and no read to overlap on a guest that runs a
    // process's threads on one vCPU (docs/snapshot.md, snap33 and snap38).
    std::optional<load_result> packs;
    std::shared_future<const rule_set*> verdict_rules;
    const rule_set& verdicts() const { return *verdict_rules.get(); }
};

// The category rules (the shipped ones, or a --categories file before them) read now, so that
// their errors come before the snapshot's; the verdicts' packs left for later.
void prepare(const snapshot_opts& o, prepared& p) {
    p.rules = std::make_unique<snap::category_rules>(snap::category_rules::shipped());
    if (!o.categories.empty()) p.rules->prepend(snap::category_rules::load(o.categories));
    p.opt.rules = p.rules.get();
    p.opt.top = o.top;
    p.opt.leave_input_to_exit = true;  // one file: its model is freed by the exit (snap32)
    if (!o.capacity.empty()) {
        auto v = parse_size(o.capacity);
        if (!v || *v <= 0) throw usage_error("--capacity: not a size: '" + o.capacity + "'");
        p.opt.device_capacity_bytes = *v;
    }
}

void load_verdict_rules(prepared& p, const snapshot_opts& o) {
    p.verdict_rules = std::async(std::launch::deferred, [&p, dirs = o.rule_dirs] { return &rules_with(dirs, p.packs); }).share();
}

// Analyzes the files (measurements), then runs the evidence step on each for the verdicts.
std::vector<snap::snapshot_analysis> measure_all(const std::vector<std::string>& files, const prepared& p,
                                                 unsigned jobs) {
    std::function<void(std::size_t, std::size_t)> progress;
    if (stderr_is_tty() && files.size() > 1)
        progress = [](std::size_t done, std::size_t total) {
            fmt::print(stderr, "\ranalyzed {}/{} snapshots", done, total);
            if (done == total) fmt::print(stderr, "\n");
            std::fflush(stderr);
        };
    if (stderr_is_tty() && files.size() == 1) {
        snap::analysis_options opt = p.opt;
        const std::string name = files[0];
        opt.load_progress = [name](std::size_t done, std::size_t total) {
            if (total > 0) fmt::print(stderr, "\r\x1b[Kreading {} {:.0f}%", name, 100.0 * done / total);
            std::fflush(stderr);
        };
        auto out = snap::analyze_files(files, opt, jobs, progress);
        fmt::print(stderr, "\r\x1b[K");
        return out;
    }
    return snap::analyze_files(files, p.opt, jobs, progress);
}

std::vector<snap::snapshot_analysis> run_all(const std::vector<std::string>& files, const prepared& p,
                                             unsigned jobs) {
    auto all = measure_all(files, p, jobs);
    apply_snapshot_verdicts(all, p.verdicts());
    return all;
}

// To stdout, or with --output to a file written atomically (a summary in a shared folder is
// never seen half-written).
std::string g_output;
void print(const std::string& s) {
    if (!g_output.empty()) {
        write_file_atomic(g_output, !s.empty() && s.back() != '\n' ? s + "\n" : s);
        return;
    }
    std::fwrite(s.data(), 1, s.size(), stdout);
    if (!s.empty() && s.back() != '\n') std::fputc('\n', stdout);
}

void run_analyze(const snapshot_opts& o) {
    if (o.inputs.empty()) throw usage_error("oomdx snapshot FILE|DIR... (or: snapshot diff A B, snapshot trend A B C...)");
    prepared p;
    load_verdict_rules(p, o);
    prepare(o, p);
    auto files = snap::expand_snapshot_inputs(o.inputs);
    if (o.format == output_format::html && files.size() != 1)
        throw usage_error("--format html: one snapshot file (use oomdx diagnose -s for several)");
    if (o.rank >= 0 && files.size() != 1) throw usage_error("--rank: one snapshot file");
    auto all = run_all(files, p, o.jobs);
    if (o.rank >= 0) all[0].rank = o.rank;
    const bool md = o.format == output_format::markdown;
    if (o.format == output_format::html) {
        print(render_snapshot_html(all[0]));
        return;
    }
    if (all.size() == 1) {
        if (o.format == output_format::json) print(snap::to_json(all[0], o.top).dump(2));
        else print(snap::render_text(all[0], md, use_color(), o.top, o.lang));
        return;
    }
    snap::rank_table ranks = snap::compare_ranks(all);
    apply_snapshot_verdicts(ranks, p.verdicts());
    if (o.format == output_format::json) {
        nlohmann::json j;
        j["schema"] = "oomdx.snapshot/1";
        j["kind"] = "ranks";
        j["ranks"] = snap::to_json(ranks);
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& a : all) arr.push_back(snap::to_json_body(a, o.top));
        j["snapshots"] = arr;
        print(j.dump(2));
        return;
    }
    std::string out = snap::render_text(ranks, md, use_color(), o.lang);
    // Full reports: all of them for a few files, else the outlier (or the largest peak).
    std::vector<std::size_t> shown;
    if (all.size() <= 4) {
        for (std::size_t i = 0; i < all.size(); ++i) shown.push_back(i);
    } else {
        std::size_t pick = 0;
        if (ranks.outlier >= 0) {
            for (std::size_t i = 0; i < all.size(); ++i)
                if (all[i].file == ranks.rows[ranks.outlier].file) pick = i;
        } else {
            for (std::size_t i = 1; i < all.size(); ++i) {
                auto pk = [&](std::size_t k) { return all[k].primary >= 0 ? all[k].devices[all[k].primary].peak_bytes : 0; };
                if (pk(i) > pk(pick)) pick = i;
            }
        }
        shown.push_back(pick);
        out += "\n" + translation_table::shipped(o.lang).produced(
                           "snapshot.", fmt::format("(full report of {} below; --format json has every rank)", all[pick].file)) + "\n";
    }
    for (std::size_t i : shown) out += "\n" + snap::render_text(all[i], md, use_color(), o.top, o.lang);
    print(out);
}

void run_diff(const snapshot_opts& o) {
    if (o.inputs.size() != 2) throw usage_error("oomdx snapshot diff A B: exactly two snapshots");
    prepared p;
    load_verdict_rules(p, o);
    prepare(o, p);
    auto files = snap::expand_snapshot_inputs(o.inputs);
    if (files.size() != 2) throw usage_error("snapshot diff: exactly two snapshot files");
    auto all = run_all(files, p, o.jobs);
    auto d = snap::diff(all[0], all[1]);
    if (o.format == output_format::json) print(snap::to_json(d).dump(2));
    else print(snap::render_text(d, o.format == output_format::markdown, use_color(), o.top, o.lang));
}

// The reduce step: per-file summaries (oomdx snapshot FILE --format json) into the cross-rank
// view, one summary in memory at a time.
int run_merge(const snapshot_opts& o) {
    if (o.inputs.empty()) throw usage_error("oomdx snapshot merge SUMMARY.json... (files, directories, globs or @list.txt)");
    auto files = snap::expand_summary_inputs(o.inputs);
    if (files.empty()) throw usage_error("snapshot merge: no summary matches the inputs");
    std::optional<load_result> packs;
    const rule_set& rules = rules_with(o.rule_dirs, packs);
    stderr_progress bar;
    const std::size_t step = std::max<std::size_t>(1, files.size() / 10);
    auto progress = [&](std::size_t done, std::size_t total) {
        if (bar.active()) bar.update(fmt::format("oomdx: merged {}/{} summaries", done, total));
        else if (total >= 1000 && (done % step == 0 || done == total))
            fmt::print(stderr, "oomdx: merged {}/{} summaries\n", done, total);
    };
    snap::merge_result m = snap::merge_summaries(files, progress, o.world_size);
    apply_snapshot_verdicts(m.table, rules);
    for (std::size_t i = 0; i < m.bad.size() && i < 20; ++i)
        fmt::print(stderr, "oomdx: warning: {}{}\n", m.bad[i].rank >= 0 ? fmt::format("rank {}: ", m.bad[i].rank) : "",
                   m.bad[i].message);
    if (m.bad.size() > 20) fmt::print(stderr, "oomdx: warning: {} more summaries not merged (see the report)\n", m.bad.size() - 20);
    if (o.format == output_format::json) {
        nlohmann::json bad = nlohmann::json::array();
        for (const auto& b : m.bad)
            bad.push_back({{"file", b.file}, {"rank", b.rank >= 0 ? nlohmann::json(b.rank) : nlohmann::json(nullptr)},
                           {"error", b.message}});
        nlohmann::json j;
        j["schema"] = "oomdx.snapshot/1";
        j["kind"] = "ranks";
        j["ranks"] = snap::to_json(m.table);
        j["merge"] = {{"inputs", m.inputs}, {"merged", m.table.rows.size()}, {"bad", bad},
                      {"peak_summary", m.peak_summary.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.peak_summary)}};
        print(j.dump(2));
    } else {
        std::string out = snap::render_text(m.table, o.format == output_format::markdown, use_color(), o.lang);
        const translation_table& tr = translation_table::shipped(o.lang);
        out += "\n" + tr.produced("snapshot.", fmt::format("{} summaries merged of {} inputs", m.table.rows.size(), m.inputs)) + "\n";
        for (const auto& b : m.bad) out += "  " + tr.produced("snapshot.", fmt::format("not merged: {}", b.message)) + "\n";
        print(out);
    }
    return o.strict && (!m.bad.empty() || m.table.missing_rank_count > 0) ? 2 : 0;
}

void run_trend(const snapshot_opts& o) {
    prepared p;
    load_verdict_rules(p, o);
    prepare(o, p);
    auto files = snap::expand_snapshot_inputs(o.inputs);
    if (files.size() < 3) throw usage_error("oomdx snapshot trend A B C...: three or more snapshots, in step order");
    auto all = run_all(files, p, o.jobs);
    auto t = snap::trend(all);
    apply_snapshot_verdicts(t, p.verdicts());
    if (o.format == output_format::json) print(snap::to_json(t).dump(2));
    else print(snap::render_text(t, o.format == output_format::markdown, use_color(), o.top, o.lang));
}

}  // namespace

void add_snapshot_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("snapshot", "Analyze PyTorch/torch_npu memory snapshots (pickle or JSON)");
    auto o = std::make_shared<snapshot_opts>();
    auto od = std::make_shared<snapshot_opts>();
    auto ot = std::make_shared<snapshot_opts>();
    cmd->add_option("inputs", o->inputs, "Snapshot files, or a directory of per-rank snapshots");
    add_common(cmd, *o, true);
    cmd->add_option("-o,--output", o->output, "Write the report to this file (atomically: temp file, then rename)");
    cmd->add_option("--rank", o->rank, "Rank of the (single) snapshot file, when its name or path does not say")
        ->check(CLI::Range(std::int64_t(0), std::int64_t(1) << 40));
    cmd->footer(
        "Sizes are bytes in JSON (schema oomdx.snapshot/1, see docs/snapshot-analysis.md).\n"
        "Several files or a directory: each is analyzed in parallel and a cross-rank table is shown.");

    auto* d = cmd->add_subcommand("diff", "Compare two snapshots of one run: growth per site and category");
    d->add_option("inputs", od->inputs, "Snapshot A (earlier) and B (later)")->required();
    add_common(d, *od);
    d->callback([od, &exit_code] {
        run_diff(*od);
        exit_code = 0;
    });

    auto om = std::make_shared<snapshot_opts>();
    auto* m = cmd->add_subcommand("merge", "Cross-rank view from per-file summaries (oomdx snapshot FILE --format json)");
    m->add_option("inputs", om->inputs, "Summary files, directories of *.json, glob patterns or @list.txt")->required();
    add_format_option(m, om->format, false);
    m->add_option("--rules", om->rule_dirs, "Site rule packs loaded after the shipped ones");
    m->add_option("--world-size", om->world_size, "Ranks expected (to list the missing ones above the highest)")
        ->check(CLI::Range(std::int64_t(0), std::int64_t(1) << 40));
    m->add_option("-o,--output", om->output, "Write the report to this file (atomically)");
    m->add_flag("--strict", om->strict, "Exit 2 when a summary is bad or a rank is missing");
    m->callback([om, &exit_code] {
        g_output = om->output;
        exit_code = run_merge(*om);
    });

    auto* t = cmd->add_subcommand("trend", "Growth over three or more snapshots: leak vs warm-up");
    t->add_option("inputs", ot->inputs, "Snapshots in step order")->required();
    add_common(t, *ot);
    t->callback([ot, &exit_code] {
        run_trend(*ot);
        exit_code = 0;
    });

    cmd->callback([cmd, o, &exit_code] {
        if (!cmd->get_subcommands().empty()) return;
        g_output = o->output;
        run_analyze(*o);
        exit_code = 0;
    });
}

}  // namespace oomdx::cli
