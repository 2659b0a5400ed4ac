#include "parsers/snapshot/analysis_batch.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "engine/core/errors.h"
#include "parsers/snapshot/analysis_report.h"
#include "parsers/snapshot/compare.h"
#include "parsers/snapshot/snapshot_loader.h"
#include "parsers/snapshot/summary.h"

namespace oomdx::snap {

namespace fs = std::filesystem;

std::vector<std::string> expand_snapshot_inputs(const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const auto& p : paths) {
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            // Pickles; JSON files only in a directory without pickles (JSON beside pickles is
            // usually metadata, not snapshots).
            std::vector<std::string> files, json_files;
            for (const auto& e : fs::directory_iterator(p, ec)) {
                if (!e.is_regular_file(ec)) continue;
                std::string ext = e.path().extension().string();
                std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
                if (ext == ".pickle" || ext == ".pkl") files.push_back(e.path().string());
                else if (ext == ".json") json_files.push_back(e.path().string());
            }
            if (files.empty()) files = std::move(json_files);
            if (ec) throw input_error::in_file(p, "cannot list the directory: " + ec.message());
            if (files.empty()) throw input_error::in_file(p, "no *.pickle, *.pkl or *.json snapshot in the directory");
            std::sort(files.begin(), files.end());
            out.insert(out.end(), files.begin(), files.end());
        } else if (fs::exists(p, ec)) {
            out.push_back(p);
        } else {
            throw input_error::in_file(p, "no such file or directory");
        }
    }
    return out;
}

// Never destroyed: the exit frees it whole. Freeing it here costs an munmap per block, each a
// TLB shoot-down on every CPU the process ran on (the rule packs' thread ran on another), which
// a PVM guest pays with trips to the hypervisor (docs/snapshot.md, snap32).
static void leave_to_exit(snapshot&& s) {
    static std::mutex mu;
    static auto* kept = new std::vector<snapshot>;
    std::lock_guard<std::mutex> lk(mu);
    kept->push_back(std::move(s));
}

snapshot_analysis analyze_file(const std::string& path, const analysis_options& opt) {
    // A per-file summary stands for its snapshot (thousands of ranks: docs/scale.md).
    switch (summary_kind_of(path)) {
        case summary_kind::analysis: {
            snapshot_analysis a = load_summary(path);
            if (a.rank < 0) a.rank = rank_from_name(a.file, rank_from_name(path, -1));
            return a;
        }
        case summary_kind::ranks:
            throw input_error::in_file(path, "a merged summary (kind 'ranks') is not one snapshot: give it to "
                                             "`oomdx diagnose --snapshot`, or merge the per-file summaries");
        case summary_kind::other:
            throw input_error::in_file(path, "an oomdx.snapshot/1 report that is neither a per-file summary "
                                             "(kind 'analysis') nor a merged one (kind 'ranks')");
        case summary_kind::not_summary: break;
    }
    snapshot s = load_snapshot(path, load_limits{}, opt.load_progress);
    snapshot_analysis a = analyze(s, opt);
    a.rank = rank_from_name(path, -1);
    if (opt.leave_input_to_exit) leave_to_exit(std::move(s));
    return a;
}

std::vector<snapshot_analysis> analyze_files(const std::vector<std::string>& files,
                                             const analysis_options& opt, unsigned jobs,
                                             const std::function<void(std::size_t, std::size_t)>& progress) {
    std::vector<snapshot_analysis> out(files.size());
    if (files.empty()) return out;
    // The rules are shared read-only by all workers.
    std::unique_ptr<category_rules> own;
    analysis_options o = opt;
    if (files.size() != 1) o.leave_input_to_exit = false;  // several models would add up
    if (!o.rules) {
        own = std::make_unique<category_rules>(category_rules::shipped());
        o.rules = own.get();
    }
    if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
    jobs = std::min<unsigned>(jobs, static_cast<unsigned>(files.size()));
    std::atomic<std::size_t> next{0};
    std::mutex mu;
    std::size_t done = 0;
    std::exception_ptr first_error;
    std::size_t first_error_index = files.size();
    auto work = [&]() {
        for (;;) {
            std::size_t i = next.fetch_add(1);
            if (i >= files.size()) return;
            try {
                out[i] = analyze_file(files[i], o);
            } catch (...) {
                std::lock_guard<std::mutex> lk(mu);
                if (i < first_error_index) {
                    first_error_index = i;
                    first_error = std::current_exception();
                }
            }
            std::lock_guard<std::mutex> lk(mu);
            ++done;
            if (progress) progress(done, files.size());
        }
    };
    if (jobs <= 1) {
        work();
    } else {
        std::vector<std::thread> pool;
        for (unsigned k = 0; k < jobs; ++k) pool.emplace_back(work);
        for (auto& t : pool) t.join();
    }
    if (first_error) std::rethrow_exception(first_error);
    return out;
}

void emit_facts(const std::vector<snapshot_analysis>& v, fact_sink& sink, bool as_trend) {
    if (v.empty()) return;
    std::size_t best = 0;
    auto peak = [](const snapshot_analysis& a) {
        return a.primary >= 0 ? a.devices[a.primary].peak_bytes : 0;
    };
    for (std::size_t i = 1; i < v.size(); ++i)
        if (peak(v[i]) > peak(v[best])) best = i;
    emit_analysis_facts(v[best], sink, static_cast<std::int64_t>(v.size()));
    if (v.size() >= 2 && !as_trend) emit_facts(compare_ranks(v), sink);
    if (as_trend && v.size() >= 3) emit_facts(trend(v), sink);
    if (as_trend && v.size() == 2) emit_facts(diff(v[0], v[1]), sink);
}

}  // namespace oomdx::snap
