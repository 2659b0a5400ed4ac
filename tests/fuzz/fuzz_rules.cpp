// The rule loader on an arbitrary rule file (with the shipped vocabulary and actions); a pack
// that loads is run over an empty fact store.
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "engine/rules/inference.h"
#include "engine/rules/rule_loader.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace oomdx;
    const std::string path = fuzz::write_scratch("pack.yaml", data, size);
    try {
        load_result r = load_rules({path}, vocabulary::shipped(), shipped_actions());
        for (const auto& d : r.diagnostics) (void)d;
        if (r.ok()) {
            fact_store facts(&vocabulary::shipped());
            inference_options opts;
            (void)run_inference(r.rules, facts, opts);
        }
    } catch (const input_error&) {
    } catch (const inference_error&) {
    }
    return 0;
}
