// One config parser on arbitrary bytes; OOMDX_FUZZ_EXT picks it (built once per format):
// .toml torchtitan, .py config registry, .sh launch script, .json DeepSpeed, .yaml HF/LLaMA-Factory,
// .args a command line (split, then read as torchtitan/Megatron/HF flags).
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "parsers/config/job_config.h"
#include "parsers/config/py_expr.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

void use(const oomdx::job_config& job) {
    oomdx::fact_store facts(&oomdx::vocabulary::shipped());
    oomdx::emit_facts(job, facts);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace oomdx;
    const std::string ext = OOMDX_FUZZ_EXT;
    try {
        if (ext == ".args") {
            const std::string_view text = fuzz::as_text(data, size);
            const auto words = split_command_line(std::string(text));
            for (const char* fw : {"torchtitan", "megatron", "hf_trainer"}) use(parse_cli_args(words, fw, "fuzz.args", 1));
            return 0;
        }
        const std::string path = fuzz::write_scratch("job" + ext, data, size);
        if (ext == ".py") {
            py_source src(fuzz::as_text(data, size), path);
            for (const auto& f : src.functions()) {
                try {
                    (void)src.function_result(f);
                } catch (const input_error&) {
                }
            }
            (void)src.keyed_calls();
        }
        use(parse_job_config(path));
    } catch (const input_error&) {
    }
    return 0;
}
