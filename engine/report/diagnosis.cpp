#include "engine/report/diagnosis.h"

#include <chrono>

#include <algorithm>
#include <cctype>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/core/translations.h"
#include "engine/report/pipeline.h"

namespace oomdx {

const char* rec_verdict_key(const report_recommendation& rec) {
    if (rec.expected_fits && *rec.expected_fits) return "report.rec.fits";
    return rec.expected_budget_unknown ? "report.rec.fit_unknown" : "report.rec.still_over";
}

std::string expected_device_text(const report_recommendation& rec) {
    if (!rec.expected_device_peak_bytes) return "";
    std::string t = format_bytes(*rec.expected_device_peak_bytes);
    if (rec.expected_device_high_bytes) t += " .. " + format_bytes(*rec.expected_device_high_bytes);
    return t;
}

diagnosis_report run_diagnosis(const diagnosis_request& req) {
    diagnosis_report rep(&vocabulary::shipped());
    rep.mode = req.preflight ? "preflight" : "diagnose";
    const auto& langs = report_languages();
    if (req.lang != "en" && std::find(langs.begin(), langs.end(), req.lang) == langs.end())
        throw usage_error(fmt::format("--lang {}: the report languages are en and {}", req.lang, fmt::join(langs, ", ")));
    rep.lang = req.lang;
    pipeline_state s{req, rep, {}, nullptr, {}};
    static constexpr struct {
        const char* name;
        void (*run)(pipeline_state&);
    } stages[] = {{"inputs", stage_inputs}, {"facts", stage_facts}, {"estimate", stage_estimate},
                  {"baseline", stage_baseline}, {"plan", stage_plan}, {"rules", stage_rules},
                  {"report", stage_report}};
    for (const auto& st : stages) {
        const auto t0 = std::chrono::steady_clock::now();
        st.run(s);
        rep.stage_seconds.push_back(
            {st.name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
    }
    return rep;
}

namespace {

// "Step 0: reason" or "Step 0：reason" (zh): the step named at the front of a rule's route reason, and the rest.
std::string leading_step(const std::string& s, std::size_t& rest) {
    static const std::string word = "Step ";
    if (s.rfind(word, 0) != 0) return {};
    std::size_t i = word.size();
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == '-')) ++i;
    if (i == word.size()) return {};
    const std::string step = s.substr(0, i);
    if (s.compare(i, 1, ":") == 0) rest = i + 1;
    else if (s.compare(i, 3, "\xEF\xBC\x9A") == 0) rest = i + 3;  // the full-width colon
    else return {};
    while (rest < s.size() && s[rest] == ' ') ++rest;
    return step;
}

void split_route_origin(route_group& g) {
    g.first = g.whys.front();
    std::size_t rest = 0, title_rest = 0;
    const std::string from = leading_step(g.first, rest);
    if (from.empty()) return;
    g.first = g.first.substr(rest);
    const std::string own = leading_step(g.title, title_rest);  // "Step 3.5-3.6" sent by "Step 3.5" is its own
    if (from != own && own.rfind(from + "-", 0) != 0) g.from = from;
}

}  // namespace

std::vector<route_group> grouped_route(const std::vector<report_step>& route) {
    std::vector<route_group> out;
    for (const auto& s : route) {
        auto it = std::find_if(out.begin(), out.end(), [&](const route_group& g) { return g.step == s.step; });
        if (it == out.end()) {
            out.push_back({s.step, s.title.empty() ? s.step : s.title, {}, {}, {}});
            it = std::prev(out.end());
        }
        if (std::find(it->whys.begin(), it->whys.end(), s.why) == it->whys.end()) it->whys.push_back(s.why);
    }
    std::stable_sort(out.begin(), out.end(), [](const route_group& a, const route_group& b) { return a.step < b.step; });
    for (auto& g : out) split_route_origin(g);
    return out;
}

}  // namespace oomdx
