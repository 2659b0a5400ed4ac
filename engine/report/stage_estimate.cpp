// Stage `estimate`: the static estimate of a training step, when the model's dimensions are known
// and the config trains (job.trains is false for an evaluation- or prediction-only config).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/report/pipeline.h"
#include "engine/report/report_phrases.h"
#include "engine/rules/inference.h"
#include "parsers/config/override_syntax.h"

namespace oomdx {

namespace {

// rev35: the framework defaults the estimate applied where the config is silent, in the job's own keys, so a
// reader sees that LLaMA-Factory checkpoints by default or that a 4-bit load is NF4 with double quantization. Only
// the settings that size memory and a user checks first; quantization and adapter defaults only where they apply.
std::vector<std::string> applied_defaults(const fact_store& facts, const override_syntax& syn, std::string& source) {
    static const char* const k_shown[] = {"activation_checkpoint.mode", "training.quantization_type",
                                          "training.double_quantization", "training.load_dtype",
                                          "training.mixed_precision_param", "optimizer.name", "training.lora_rank",
                                          "training.lora_target"};
    const fact* bits = facts.get("training.quantization_bit");
    const bool four_bit = bits && bits->val.is_integer() && bits->val.as_integer() == 4;
    const std::string ft = facts.string("training.finetuning_type").value_or("");
    const bool adapters = ft == "lora" || ft == "qlora" || ft == "dora";
    std::vector<std::string> out;
    for (const char* k : k_shown) {
        const fact* f = facts.get(k);
        if (!f || !f->prov.from_default()) continue;
        const std::string key = k;
        if ((key == "training.quantization_type" || key == "training.double_quantization") && !four_bit) continue;
        if (key.rfind("training.lora_", 0) == 0 && !adapters) continue;
        if (source.empty()) source = f->prov.file;  // the adapter's file, which cites the framework's own source
        const auto named = job_setting(syn, key, f->val);
        out.push_back(named ? named->key + "=" + value_key(named->val) : key + "=" + value_key(f->val));
    }
    return out;
}

}  // namespace

void stage_estimate(pipeline_state& s) {
    fact_store& facts = s.rep.facts;
    if (facts.boolean("job.trains") == std::optional<bool>(false)) return;
    // rev39: the defaults are listed with an estimate or without one: the advice rests on them either way (cases69).
    // Without an estimate they are an input the report names, with the file that gives them.
    if (s.job) s.rep.applied_defaults = applied_defaults(facts, s.job->syntax, s.rep.applied_defaults_source);
    // The rule packs decide what an inference process is (macro inference_process, rules/common.yaml): it keeps the
    // weights and a KV cache, not gradients or optimizer states, so a training estimate (and a plan from it) would
    // contradict the report's own finding; step1_no_estimate says why none is made.
    if (evaluate_macro(select_rules(s), "inference_process", facts) == truth::true_) return;
    if (!facts.has("model.hidden_size") || !facts.has("model.num_layers")) {
        if (!s.rep.applied_defaults.empty())
            s.rep.inputs.push_back(phrase(s.rep.lang, "report.input.framework_defaults",
                                          {{"framework", facts.string("job.framework").value_or("?")},
                                           {"defaults", fmt::format("{}", fmt::join(s.rep.applied_defaults, ", "))},
                                           {"source", s.rep.applied_defaults_source}}));
        return;
    }
    s.rep.estimate = estimate(from_facts(facts));
    emit_facts(*s.rep.estimate, facts);
}

}  // namespace oomdx
