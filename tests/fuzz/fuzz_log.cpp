// The log analyzer on arbitrary text, and on the same bytes as a .gz file when they start like one.
#include "parsers/log/log_analyzer.h"
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace oomdx;
    try {
        log_analysis a = size >= 2 && data[0] == 0x1f && data[1] == 0x8b
                             ? analyze_logs({fuzz::write_scratch("train.log.gz", data, size)})
                             : analyze_log_text(fuzz::as_text(data, size), "fuzz.log");
        (void)to_json(a).dump();
        (void)render_text(a, false, false);
        fact_store facts(&vocabulary::shipped());
        emit_facts(a, facts);
    } catch (const input_error&) {
    }
    return 0;
}
