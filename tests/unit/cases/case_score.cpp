#include "case_score.h"

#include "engine/core/yaml_node.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/core/utf8.h"
#include "engine/report/diagnosis.h"
#include "engine/report/render_diagnosis.h"

namespace fs = std::filesystem;

namespace oomdx::cases {

bool case_result::hit(size_t k) const {
    for (size_t i = 0; i < ranked.size() && i < k; ++i)
        if (std::find(fix.begin(), fix.end(), ranked[i]) != fix.end()) return true;
    return false;
}

case_result run_case(const test_case& tc, const std::string& scratch_dir) {
    case_result r;
    r.id = tc.id;
    r.kind = tc.kind;
    r.fix = tc.fix;
    const fs::path log = fs::path(scratch_dir) / (tc.id + ".log");
    {
        std::ofstream out(log, std::ios::binary);
        out << tc.log;
    }
    diagnosis_request req;
    req.logs = {log.string()};
    const fs::path cfg_dir = fs::path(scratch_dir) / tc.id;
    if (!tc.config_file.empty()) {
        fs::create_directories(cfg_dir);
        std::ofstream(cfg_dir / tc.config_file, std::ios::binary) << tc.config_text;
        req.config = (cfg_dir / tc.config_file).string();
    }
    req.device = tc.device;
    req.model = tc.model;
    req.framework = tc.framework;
    req.world_size = tc.world_size;
    req.sets = tc.set_args();
    try {
        const diagnosis_report rep = run_diagnosis(req);
        std::vector<const report_recommendation*> recs;
        for (const auto& rec : rep.recommendations) recs.push_back(&rec);
        std::stable_sort(recs.begin(), recs.end(), [](auto* a, auto* b) { return a->rank < b->rank; });
        for (const auto* rec : recs)
            if (std::find(r.ranked.begin(), r.ranked.end(), rec->action) == r.ranked.end()) r.ranked.push_back(rec->action);
        for (const auto& [a, b] : rep.contradictions) r.defects.push_back("contradiction " + a + " vs " + b);
        for (const auto& rec : rep.recommendations) {
            for (const auto& o : rec.overrides)
                if (const fact* f = rep.facts.get(o.key); f && f->val == o.val)
                    r.defects.push_back("no-op " + rec.rule_id + " " + o.key + "=" + o.val.to_string());
            if (rep.estimate && rec.expected_device_peak_bytes && *rec.expected_device_peak_bytes > rep.estimate->device_peak_bytes)
                r.defects.push_back("raises the peak " + rec.rule_id + " " + rec.action);
            for (const auto& e : rep.recommendations)
                if (&e != &rec && e.rank < rec.rank && e.action == rec.action && (rec.rendered.empty() || rec.rendered == e.rendered))
                    r.defects.push_back("offered twice " + rec.action + " (" + e.rule_id + ", " + rec.rule_id + ")");
            for (const auto& n : rep.not_offered)
                if (rec.action == n.action)
                    r.defects.push_back("offered and not offered " + n.action + " (" + rec.rule_id + ", " + n.rule_id + ")");
        }
        // The rendered report is valid UTF-8 (excerpts cut on a character boundary). The text report with
        // --explain holds every excerpt the markdown one does (one renderer, the same cuts).
        render_options o;
        o.explain = true;
        o.lang = rep.lang;
        const std::string text = render_diagnosis_text(rep, o);
        if (const size_t at = first_invalid_utf8(text); at != std::string::npos)
            r.defects.push_back(fmt::format("invalid UTF-8 in the text report at byte {}", at));
    } catch (const std::exception& e) {
        r.error = e.what();
    }
    fs::remove(log);
    if (!tc.config_file.empty()) fs::remove_all(cfg_dir);
    return r;
}

void tally::add(const case_result& r) {
    ++cases;
    top1 += r.hit(1);
    top3 += r.hit(3);
}

score score_of(const std::vector<case_result>& results) {
    score s;
    for (const auto& r : results) {
        s.all.add(r);
        s.by_kind[r.kind].add(r);
    }
    return s;
}

namespace {

std::string join(const std::vector<std::string>& v, size_t n = std::string::npos) {
    std::string out;
    for (size_t i = 0; i < v.size() && i < n; ++i) out += (i ? "," : "") + v[i];
    return out.empty() ? "-" : out;
}

int pct(int x, int n) { return n ? (200 * x + n) / (2 * n) : 0; }

std::string tally_text(const tally& t) {
    return fmt::format("cases: {}, top-1: {} ({}%), top-3: {} ({}%)", t.cases, t.top1, pct(t.top1, t.cases), t.top3,
                       pct(t.top3, t.cases));
}

}  // namespace

std::string result_line(const case_result& r) {
    const std::string top = r.error.empty() ? join(r.ranked, 3) : "ERROR: " + r.error;
    std::string line = fmt::format("{:<48} {:<17} fix={:<34} top3={:<60} hit@1={} hit@3={}", r.id, r.kind, join(r.fix),
                                   top, r.hit(1) ? 1 : 0, r.hit(3) ? 1 : 0);
    for (const auto& d : r.defects) line += "  DEFECT " + d;
    return line;
}

std::string totals_text(const score& s) {
    std::string out = tally_text(s.all) + "\n";
    for (const auto& [kind, t] : s.by_kind) out += fmt::format("  {:<17} {}\n", kind, tally_text(t));
    return out;
}

std::string report_text(const std::vector<case_result>& results) {
    std::string out;
    for (const auto& r : results) out += result_line(r) + "\n";
    return out + totals_text(score_of(results));
}

floor_counts read_floor(const std::string& path) {
    floor_counts f;
    try {
        const YAML::Node n = YAML::LoadFile(path);
        if (!n.IsMap() || !n["top1"] || !n["top3"]) throw std::runtime_error(path + ": needs top1 and top3");
        for (const auto& kv : n) {
            const std::string k = kv.first.as<std::string>();
            if (k != "top1" && k != "top3") throw std::runtime_error(path + ": unknown key '" + k + "'");
        }
        f.top1 = n["top1"].as<int>();
        f.top3 = n["top3"].as<int>();
    } catch (const YAML::Exception& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    return f;
}

}  // namespace oomdx::cases
