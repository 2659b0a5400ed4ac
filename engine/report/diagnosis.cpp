#include "engine/report/diagnosis.h"

#include <chrono>

#include <algorithm>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/core/errors.h"
#include "engine/core/translations.h"
#include "engine/report/pipeline.h"

namespace oomdx {

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

std::vector<route_group> grouped_route(const std::vector<report_step>& route) {
    std::vector<route_group> out;
    for (const auto& s : route) {
        auto it = std::find_if(out.begin(), out.end(), [&](const route_group& g) { return g.step == s.step; });
        if (it == out.end()) {
            out.push_back({s.step, s.title.empty() ? s.step : s.title, {}});
            it = std::prev(out.end());
        }
        if (std::find(it->whys.begin(), it->whys.end(), s.why) == it->whys.end()) it->whys.push_back(s.why);
    }
    std::stable_sort(out.begin(), out.end(), [](const route_group& a, const route_group& b) { return a.step < b.step; });
    return out;
}

}  // namespace oomdx
