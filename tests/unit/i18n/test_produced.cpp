// The sentences the producers write in English (log timing, snapshot patterns, trend and diff,
// estimate formulas and assumptions) all have a Chinese template in knowledge/i18n/zh: the
// fixtures and examples exercise them. A failure names the sentence whose template is missing
// or no longer matches what the producer writes.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <filesystem>

#include "engine/core/translations.h"
#include "engine/report/report_phrases.h"
#include "engine/report/snapshot_verdicts.h"
#include "parsers/log/log_analyzer.h"
#include "parsers/snapshot/analysis_batch.h"
#include "parsers/snapshot/compare.h"
#include "tests/unit/run_oomdx.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

const translation_table& zh() { return translation_table::shipped("zh"); }

// A run of 4 or more English words (lower case or capitalized; anything else breaks the run),
// as tests/scripts/examples_zh.py counts them.
bool english_prose(const std::string& s) {
    int run = 0;
    std::string tok;
    auto end_token = [&]() -> bool {
        const auto a = tok.find_first_not_of("()[]{},.;:!?'\"`");
        const auto b = tok.find_last_not_of("()[]{},.;:!?'\"`");
        std::string t = a == std::string::npos ? "" : tok.substr(a, b - a + 1);
        bool word = !t.empty() && std::isalpha(static_cast<unsigned char>(t[0]));
        for (size_t i = 1; word && i < t.size(); ++i) word = t[i] >= 'a' && t[i] <= 'z';
        run = word ? run + 1 : 0;
        tok.clear();
        return run >= 4;
    };
    for (unsigned char c : s) {
        if (c == ' ' || c >= 0x80) {  // Chinese text breaks a run
            if (end_token()) return true;
            if (c >= 0x80) run = 0;
            continue;
        }
        tok += static_cast<char>(c);
    }
    return end_token();
}

void check_translated(const std::string& prefix, const std::string& text) {
    if (text.empty()) return;
    INFO(prefix << " has no template for: " << text);
    const auto t = zh().translate_produced(prefix, text);
    REQUIRE(t);
    INFO("translated: " << *t);
    CHECK_FALSE(english_prose(*t));
}

std::vector<std::string> files_with(const std::string& dir, const std::string& ext) {
    std::vector<std::string> out;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return out;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec))
        if (e.is_regular_file() && e.path().extension() == ext) out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("log timing reasons translate") {
    const std::string root = OOMDX_SOURCE_DIR;
    std::vector<std::string> logs = files_with(root + "/tests/fixtures/logs", ".log");
    for (const auto& l : files_with(root + "/examples", ".log")) logs.push_back(l);
    REQUIRE(logs.size() >= 10);
    for (const auto& f : logs) {
        const log_analysis a = analyze_logs({f});
        check_translated("log.timing.", a.timing_reason);
    }
}

TEST_CASE("snapshot patterns, evidence, warnings, trend and diff translate") {
    const std::string root = OOMDX_SOURCE_DIR;
    std::vector<std::string> files = files_with(root + "/tests/fixtures/snapshots", ".pickle");
    for (const auto& f : files_with(root + "/examples", ".pickle")) files.push_back(f);
    REQUIRE(files.size() >= 10);
    std::vector<snap::snapshot_analysis> all;
    snap::analysis_options opt;
    opt.device_capacity_bytes = std::int64_t(80) << 30;
    int patterns = 0;
    for (const auto& f : files) {
        snap::snapshot_analysis a;
        try {
            a = snap::analyze_file(f, opt);
        } catch (const std::exception&) {
            continue;  // fixtures of unreadable inputs
        }
        apply_snapshot_verdicts(a, shipped_rules());
        for (const auto& w : a.warnings) check_translated("snapshot.warning.", w);
        for (const auto& d : a.devices) {
            for (const auto& w : d.inconsistencies) check_translated("snapshot.warning.", w);
            for (const auto& p : d.patterns) {
                ++patterns;
                check_translated("snapshot.pattern.", p.summary);
                for (const auto& e : p.evidence) check_translated("snapshot.evidence.", e);
            }
        }
        all.push_back(std::move(a));
    }
    CHECK(patterns >= 3);  // every pattern: test_patterns.cpp
    for (size_t i = 0; i + 1 < all.size(); ++i)
        for (const auto& f : snap::diff(all[i], all[i + 1]).findings) check_translated("snapshot.diff.", f);
    for (size_t i = 0; i + 3 <= all.size(); ++i) {
        std::vector<snap::snapshot_analysis> three(all.begin() + i, all.begin() + i + 3);
        snap::trend_result t = snap::trend(three);
        apply_snapshot_verdicts(t, shipped_rules());
        check_translated("snapshot.trend.", t.explanation);
    }
}

TEST_CASE("estimate labels, formulas, stages and assumptions translate") {
    const char* variants[] = {
        "--model llama3-8b --device h100-80gb --world-size 8",
        "--model llama3-70b --device h100-80gb --world-size 64 --set parallelism.tensor_parallel_degree=8 "
        "--set parallelism.pipeline_parallel_degree=2 --set activation_checkpoint.mode=full --set training.seq_len=8192",
        "--model llama3-8b --world-size 8 --framework megatron --set parallelism.tensor_parallel_degree=2 "
        "--set parallelism.pipeline_parallel_degree=2 --set optimizer.offload=cpu",
        "--model llama3-8b --device 910b3 --world-size 16 --framework torchtitan_npu --set optimizer.swap_optimizer=true "
        "--set training.chunked_loss=true --set activation_checkpoint.mode=selective",
        "--model qwen3-8b --device a100-80gb --world-size 8 --framework deepspeed --set parallelism.zero_stage=1 "
        "--set optimizer.offload=cpu --set optimizer.swap_optimizer=true --set optimizer.name=lamb",
        "--model llama3-8b --device h100-80gb --world-size 8 --set parallelism.data_parallel_shard_degree=4 "
        "--set parallelism.data_parallel_replicate_degree=2",
        "--model deepseek-v3 --device 910b3 --world-size 256 --framework torchtitan_npu "
        "--set parallelism.expert_parallel_degree=8 --set parallelism.pipeline_parallel_degree=8",
        "--model llama3-8b --device h100-80gb --world-size 8 --framework llama_factory --set training.finetuning_type=qlora "
        "--set activation_checkpoint.mode=full",
        "--model llama3-8b --device h100-80gb --world-size 1 --framework llama_factory --set training.finetuning_type=lora",
        "--model llama3-8b --device h100-80gb --world-size 8 --framework llama_factory --set training.finetuning_type=freeze "
        "--set compile.enable=true",
        "--model llama3-8b --device h100-80gb --world-size 8 --set parallelism.tensor_parallel_degree=2 "
        "--set quantize.linear.float8=true --set compile.enable=true --set activation_checkpoint.mode=selective",
        "--model llama3-8b --device b200 --world-size 8 --set quantize.linear.recipe=mxfp8",
        "--model llama3-8b --device b200 --world-size 8 --set quantize.linear.recipe=nvfp4 "
        "--set activation_checkpoint.mode=selective",
        "--model llama3-70b --device h100-80gb --world-size 64 --framework megatron --set parallelism.tensor_parallel_degree=8 "
        "--set parallelism.pipeline_parallel_degree=4 --set training.chunked_loss=true",
        "--model llama3-8b --device h100-80gb --world-size 8 --set parallelism.tensor_parallel_degree=2 "
        "--set parallelism.async_tp=true --set compile.enable=true",
        "--model llama3-8b --device h100-80gb --world-size 1 --framework torchtune --set training.chunked_loss=true "
        "--set compile.enable=true --set activation_checkpoint.mode=full",
        "--model llama3-8b --device h100-80gb --world-size 1 --framework torchtune --set training.chunked_loss=true "
        "--set compile.enable=true --set training.finetuning_type=lora",
        // found in English by the zh review: the unsharded master copy, torchtune's torchao 0.1 and `del logits`
        // interval reasons, DeepSpeed's bf16 master label
        "--model llama3-70b --device h100-80gb --world-size 32 --framework megatron --set parallelism.tensor_parallel_degree=4 "
        "--set parallelism.pipeline_parallel_degree=4 --set parallelism.virtual_pipeline_degree=5",
        "--model llama3-8b --device rtx4090 --world-size 1 --framework torchtune --set training.finetuning_type=qlora",
        "--model llama3-8b --device a100-80gb --world-size 1 --framework deepspeed --set training.finetuning_type=full "
        "--set optimizer.master_dtype=bfloat16",
    };
    for (const char* v : variants) {
        const auto r = oomdx::test::run_oomdx(std::string("estimate ") + v + " --format json", oomdx::test::stderr_to::discard);
        INFO(v);
        REQUIRE(r.rc == 0);
        const auto j = nlohmann::json::parse(r.out);
        for (const auto& c : j["components"]) {
            estimate_component ec;
            ec.id = c["id"].get<std::string>();
            ec.label = c["label"].get<std::string>();
            CHECK_MESSAGE(estimate_label("zh", ec) != ec.label, "no current zh label for " << ec.id << ": " << ec.label);
            check_translated("estimate.formula.", c["formula"].get<std::string>());
        }
        for (const auto& a : j["assumptions"]) check_translated("estimate.assumption.", a.get<std::string>());
        if (j.contains("interval_reasons"))
            for (const auto& a : j["interval_reasons"]) check_translated("estimate.interval.", a.get<std::string>());
    }
}

TEST_CASE("the pipeline stage of the peak is named in Chinese") {
    const auto r = oomdx::test::run_oomdx(
        "diagnose --model llama3-70b --device h100-80gb --world-size 64 --set parallelism.pipeline_parallel_degree=4 "
        "--set parallelism.tensor_parallel_degree=8 --lang zh --format text",
        oomdx::test::stderr_to::discard);
    REQUIRE(r.rc == 0);
    CHECK(r.out.find("stage ") != std::string::npos);
    CHECK(r.out.find("(last)") == std::string::npos);
    CHECK(r.out.find("(first)") == std::string::npos);
}

TEST_CASE("the plan's notes, cost terms and comment lines translate") {
    const char* variants[] = {
        "--model llama3-70b --device h100-80gb --world-size 8",
        "--model llama3-8b --device h100-80gb --world-size 8 --set training.seq_len=32768 --set training.local_batch_size=4 "
        "--set training.global_batch_size=64",
        "--model llama3-8b --device a100-40gb --world-size 8 --framework deepspeed --set training.local_batch_size=8 "
        "--set training.gradient_accumulation_steps=4",
        "--model llama3-70b --device 910b3 --world-size 16 --framework megatron --set training.seq_len=8192",
        "--model deepseek-v3 --device 910b3 --world-size 64 --framework torchtitan_npu",
        "--model qwen2.5-7b --device a100-40gb --world-size 4 --framework hf_trainer --set training.gradient_accumulation_steps=3",
        // a colocated rollout engine: the plan lowers its share (beside the update without sleep mode, beside the
        // trainer's states with it)
        "--config tests/fixtures/configs/trl/grpo_colocate.yaml --device h100-80gb --world-size 8",
        "--config tests/fixtures/configs/verl/grpo_dynamic_bsz.sh --device h100-80gb --world-size 2 "
        "--set training.rollout_memory_fraction=0.85",
        // nothing fits on the one device unless the frozen base is quantized (QLoRA) or the states offloaded
        "--model llama3-70b --device a100-80gb --world-size 1 --framework llama_factory --set training.finetuning_type=lora "
        "--set training.lora_rank=16 --set training.seq_len=4096 --set training.local_batch_size=2",
    };
    int terms = 0, notes = 0;
    for (const char* v : variants) {
        const auto r = oomdx::test::run_oomdx(std::string("preflight --plan ") + v + " --format json", oomdx::test::stderr_to::discard);
        INFO(v);
        REQUIRE(r.rc <= 1);
        const auto j = nlohmann::json::parse(r.out);
        REQUIRE(j.contains("plan"));
        const auto& p = j["plan"];
        auto comments = [&](const nlohmann::json& lines) {
            for (const auto& l : lines) {
                const std::string s = l.get<std::string>();
                if (s.rfind("#", 0) != 0) continue;
                const auto t = zh().translate_produced("plan.line.", s);
                if (!t) check_translated("adapter.", s);
                else CHECK_FALSE(english_prose(*t));
            }
        };
        for (const auto& n : p["notes"]) check_translated("plan.note.", n.get<std::string>()), ++notes;
        // the name is a value phrase (chunked_loss was shown in English), the why a template
        auto term = [&](const nlohmann::json& t) {
            const std::string name = t["name"].get<std::string>();
            CHECK_MESSAGE(value_phrase("zh", "cost_term", name) != name, "no value.cost_term." << name);
            check_translated("plan.term.", t["why"].get<std::string>());
            ++terms;
        };
        for (const auto& t : p["cost_terms"]) term(t);
        for (const auto& c : p["candidates"])
            for (const auto& t : c["cost_terms"]) term(t);
        comments(p["rendered"]);
        if (p.contains("at_current_size")) {
            comments(p["at_current_size"]["rendered"]);
            for (const auto& t : p["at_current_size"]["cost_terms"]) check_translated("plan.term.", t["why"].get<std::string>());
        }
        for (const auto& n : j["not_offered"]) {
            const std::string why = n.value("why", "");
            // three sources: the input checks, the adapters' "has no setting", the report's own phrases (rev31:
            // "the estimate with this change is the same ...")
            check_translated(zh().translate_produced("check.", why)         ? "check."
                             : zh().translate_produced("report.rec.", why) ? "report.rec."
                                                                           : "adapter.",
                             why);
        }
    }
    CHECK(terms >= 5);
    CHECK(notes >= 2);
}

TEST_CASE("a recommendation not offered says why in Chinese") {
    // The input checks' messages and the adapters' "has no setting" reasons.
    for (const char* s : {"parallelism.data_parallel_shard_degree = 8 (job.toml:12): dp_replicate 1 x dp_shard 8 x TP 1 x PP 1 x CP 2 = 16, not the world size 8",
                          "parallelism.tensor_parallel_degree = 3 (--set): TP 3 does not divide the 32 attention heads",
                          "job.world_size = 12 (--world-size): not a multiple of TP 8 x PP 1 x CP 1 = 8"})
        check_translated("check.", s);
    check_translated("adapter.", "mindspeed has no setting for training.torch_npu_memory_ratio = 0.9");
    check_translated("adapter.", "the config registry's SelectiveAC.Config has no setting for selective_ac_option = 2");
}
