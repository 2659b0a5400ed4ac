#include "engine/report/diagnosis.h"

#include <chrono>

#include <algorithm>

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

}  // namespace oomdx
