// Model dimensions from an HF config.json of arbitrary bytes.
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "parsers/config/model_dims.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace oomdx;
    try {
        model_dims m = load_model(fuzz::write_scratch("config.json", data, size));
        (void)param_count(m);
        (void)active_param_count(m);
        fact_store facts(&vocabulary::shipped());
        emit_facts(m, facts);
    } catch (const input_error&) {
    }
    return 0;
}
