// rev43: four report defects rev42 saw and left (docs/cases.md "rev43"): the plan's finding in canonical keys, one
// action offered twice, a language model's input lever that speaks of images, a misspelt key read without a word.
// Each test failed on main 246d354a.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/unit/cases/megatron_llama2_70b_log.h"
#include "tests/unit/diagnose_text.h"
#include "tests/unit/run_oomdx.h"

namespace {

// rev42's Megatron-LM log: the plan needs 32 devices, offload fits on the 8.
const char* const k_r43_megatron = oomdx::test::k_megatron_llama2_70b_log;

std::string r43_fixture(const std::string& rel) { return std::string(OOMDX_SOURCE_DIR) + "/tests/fixtures/configs/" + rel; }

nlohmann::json r43_run(const std::string& args) {
    const auto r = oomdx::test::run_oomdx(args + " --format json", oomdx::test::stderr_to::discard);
    REQUIRE(r.rc <= 1);
    return nlohmann::json::parse(r.out);
}

std::string r43_finding(const nlohmann::json& j, const std::string& rule) {
    for (const auto& f : j["findings"])
        if (f["rule"] == rule) return f["text"].get<std::string>();
    return "";
}

}  // namespace

TEST_CASE("rev43: the plan's finding names its changes in the job's syntax, as the plan block does") {
    // LLaMA-Factory YAML: per_device_train_batch_size, enable_liger_kernel; not training.local_batch_size
    const auto lf = r43_run("preflight --config '" + r43_fixture("llama_factory/llama3_lora_sft.yaml") + "' --device rtx4090");
    const std::string fits = r43_finding(lf, "step4_plan_fits");
    REQUIRE(!fits.empty());
    CHECK(fits.find("enable_liger_kernel: true") != std::string::npos);
    CHECK(fits.find("training.") == std::string::npos);
    // Megatron flags: --pipeline-model-parallel-size 2, not parallelism.pipeline_parallel_degree=2
    const auto meg = oomdx::test::diagnose_log_text(k_r43_megatron);
    const std::string more = r43_finding(meg, "step4_plan_needs_more_devices");
    REQUIRE(!more.empty());
    CHECK(more.find("--recompute-granularity full") != std::string::npos);
    CHECK(more.find("parallelism.") == std::string::npos);
    CHECK(more.find("activation_checkpoint.") == std::string::npos);
}

TEST_CASE("rev43: offload is offered once where the plan's offload alternative fits on the job's devices") {
    const auto j = oomdx::test::diagnose_log_text(k_r43_megatron);
    int offload = 0;
    for (const auto& r : j["recommendations"]) offload += r["action"] == "offload_or_swap_optimizer";
    CHECK(offload == 1);
}

TEST_CASE("rev43: a language model's log alone gets a sequence lever, not images or tiles") {
    const std::string log =
        "[INFO|trainer.py:1786] 2023-04-02 10:12:01,118 >> ***** Running training *****\n"
        "[INFO|trainer.py:1789] 2023-04-02 10:12:01,118 >>   Instantaneous batch size per device = 4\n"
        "[INFO|trainer.py:1791] 2023-04-02 10:12:01,118 >>   Gradient Accumulation steps = 8\n"
        "  0%|          | 0/1218 [00:00<?, ?it/s]\n"
        "Traceback (most recent call last):\n"
        "  File \"/usr/lib/python3.10/site-packages/transformers/models/llama/modeling_llama.py\", line 1204, in forward\n"
        "    logits = logits.float()\n"
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB (GPU 0; 79.35 GiB total capacity; "
        "76.12 GiB already allocated; 618.19 MiB free; 77.50 GiB reserved in total by PyTorch)\n";
    const auto j = oomdx::test::diagnose_log_text(log);
    bool seq = false;
    for (const auto& r : j["recommendations"])
        if (r["action"] == "reduce_seq_len") {
            seq = true;
            const std::string t = r["text"].get<std::string>();
            CHECK_MESSAGE(t.find("images") == std::string::npos, t);
            CHECK_MESSAGE(t.find("tiles") == std::string::npos, t);
        }
    CHECK(seq);
}

TEST_CASE("rev43: a misspelt LLaMA-Factory key is named with its nearest key, and the file is still read") {
    const auto r = oomdx::test::run_oomdx("preflight --config '" + r43_fixture("llama_factory/llama3_lora_sft.yaml") +
                                              "' --device rtx4090 --format json",
                                          oomdx::test::stderr_to::discard);
    REQUIRE(r.rc == 1);  // an answer (does not fit), not a refusal (2)
    const auto j = nlohmann::json::parse(r.out);
    bool said = false;
    for (const auto& u : j["uncertain"]) {
        const std::string t = u.is_string() ? u.get<std::string>() : u.dump();
        if (t.find("enable_liger_kernl") != std::string::npos) {
            said = true;
            CHECK(t.find("enable_liger_kernel") != std::string::npos);
            CHECK(t.find("refuses") != std::string::npos);
        }
    }
    CHECK(said);
    const auto zh = oomdx::test::run_oomdx("preflight --lang zh --config '" + r43_fixture("llama_factory/llama3_lora_sft.yaml") +
                                           "' --device rtx4090", oomdx::test::stderr_to::discard);
    CHECK(zh.out.find("最接近的键是 enable_liger_kernel") != std::string::npos);
}
