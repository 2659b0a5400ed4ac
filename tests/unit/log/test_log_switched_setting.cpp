// rev27: a method the reporter switched to ("后面修改模式为LoRA", "switched to LoRA") is the failing run's
// setting only where a line that says the failure persisted follows within the signature's window
// (set_finetuning_switched_in_words needs_report log.failure_persisted_reported). A switch that fixed it
// is the thread's fix, not the job's setting. LLaMA-Factory#1250 (the persisting OOM) against #544.
#include <doctest/doctest.h>

#include <string>

#include "parsers/log/log_analyzer.h"

using namespace oomdx;

namespace {

std::string setting(const log_analysis& a, const std::string& fact) {
    std::string v;
    for (const auto& s : a.settings)
        if (s.fact == fact) v = s.value;
    return v;
}

}  // namespace

TEST_CASE("switched to LoRA, then the OOM persisted on the next line: the failing run was LoRA") {
    const log_analysis a = analyze_log_text(
        "【DPO】训练过程中显存OOM\n后面修改模式为LoRA\n使用ZeRO2配置，可以进行训练，但是在训练过程中会出现显存OOM报错\n",
        "dpo.log", {});
    CHECK(setting(a, "training.finetuning_type") == "lora");
    CHECK(a.reports.count("log.failure_persisted_reported") == 1);
}

TEST_CASE("the switch and the persisting failure on one line") {
    const log_analysis a = analyze_log_text("I switched to LoRA but it still runs out of memory at step 3\n", "en.log", {});
    CHECK(setting(a, "training.finetuning_type") == "lora");
}

TEST_CASE("switched to LoRA and it trains: the switch is the fix, no setting") {
    const log_analysis a =
        analyze_log_text("全量DPO显存OOM\n后面修改模式为LoRA\n可以正常训练了\n", "fixed.log", {});
    CHECK(setting(a, "training.finetuning_type").empty());
}

TEST_CASE("a persisting failure too far after the switch (beyond the window) or before it: no setting") {
    const log_analysis far = analyze_log_text(
        "后面修改模式为LoRA\n第一行\n第二行\n第三行\n但是训练过程中还是显存OOM\n", "far.log", {});
    CHECK(setting(far, "training.finetuning_type").empty());
    const log_analysis before =
        analyze_log_text("ZeRO2 但是训练过程中还是显存OOM\n第一行\n第二行\n第三行\n后面修改模式为LoRA\n", "before.log", {});
    CHECK(setting(before, "training.finetuning_type").empty());
}

TEST_CASE("a setting the job prints after the switch still wins") {
    const log_analysis a = analyze_log_text(
        "后面修改模式为LoRA，但是还是OOM\n[INFO] Fine-tuning method: Full\n", "printed.log", {});
    CHECK(setting(a, "training.finetuning_type") == "full");
}
