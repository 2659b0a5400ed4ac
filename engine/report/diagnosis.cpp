#include "engine/report/diagnosis.h"

#include <chrono>

#include "engine/report/pipeline.h"

namespace oomdx {

diagnosis_report run_diagnosis(const diagnosis_request& req) {
    diagnosis_report rep(&vocabulary::shipped());
    rep.mode = req.preflight ? "preflight" : "diagnose";
    pipeline_state s{req, rep, {}, nullptr, {}};
    static constexpr struct {
        const char* name;
        void (*run)(pipeline_state&);
    } stages[] = {{"inputs", stage_inputs},     {"facts", stage_facts}, {"estimate", stage_estimate},
                  {"rules", stage_rules},       {"plan", stage_plan},   {"report", stage_report}};
    for (const auto& st : stages) {
        const auto t0 = std::chrono::steady_clock::now();
        st.run(s);
        rep.stage_seconds.push_back(
            {st.name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
    }
    return rep;
}

}  // namespace oomdx
