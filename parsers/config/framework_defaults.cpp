#include "parsers/config/framework_defaults.h"

#include <exception>
#include <filesystem>

#include <fmt/format.h>

#include "engine/core/fact_store.h"
#include "parsers/config/framework_adapter.h"

namespace oomdx {

void emit_framework_defaults(const std::string& framework, fact_store& facts,
                             const std::function<bool(const std::string& key, const value& v)>& keep) {
    try {
        const framework_adapter& ad = framework_adapter::get(framework);
        for (const auto& [key, v] : ad.defaults()) {
            // a default of older builds ("canonical@key", est69) needs the config's spelling: not for a bare job
            if (key.find('@') != std::string::npos || facts.has(key) || !keep(key, v)) continue;
            provenance p;
            p.producer = "config." + ad.name() + ".default";
            p.file = ad.file();
            p.excerpt = fmt::format("{} default when the job does not set it", ad.name());
            facts.emit(key, v, p);
        }
    } catch (const std::exception&) {
    }
}

namespace {

// Whether the framework's default activation checkpointing is on (false when unknown).
bool framework_checkpoints_by_default(const std::string& framework) {
    try {
        const auto& defaults = framework_adapter::get(framework).defaults();
        const auto mode = defaults.find("activation_checkpoint.mode");
        return mode != defaults.end() && mode->second.is_string() && mode->second.as_string() != "none";
    } catch (const std::exception&) {
        return false;
    }
}

}  // namespace

void emit_lever_withdrawing_defaults(const std::string& framework, fact_store& facts) {
    const bool ac = framework_checkpoints_by_default(framework);
    emit_framework_defaults(framework, facts, [&](const std::string& key, const value& v) {
        if (key.rfind("activation_checkpoint.", 0) == 0) return ac;
        // cases76: a base the script always loads quantized (Alpaca-LoRA's load_in_8bit) is a lever already pulled
        if (key == "training.quantization_bit") return v.is_integer() && v.as_integer() < 16;
        // cases77: states a framework shards by default (verl's FSDP actor, OpenRLHF's ZeRO-2, ms-swift Megatron's
        // distributed optimizer) are a sharding lever already pulled; "no sharding" (HF Trainer's 0) adds none
        if (key == "parallelism.zero_stage") return v.is_integer() && v.as_integer() > 0;
        return key == "training.mixed_precision_param" && v.is_string() &&
               (v.as_string() == "bfloat16" || v.as_string() == "float16");
    });
}

namespace {

// "recipes/configs/llama3_1/8B_lora.yaml" and "llama3_1/8B_lora.yaml" name the config "llama3_1/8B_lora".
std::string shipped_config_name(std::string n) {
    if (const auto at = n.rfind("configs/"); at != std::string::npos) n = n.substr(at + 8);
    if (n.ends_with(".yaml")) n.resize(n.size() - 5);
    else if (n.ends_with(".yml")) n.resize(n.size() - 4);
    return n;
}

}  // namespace

namespace {

// The settings of the adapter's shipped_files entry `name`, for the file or config `named` names: each key the store
// leaves open or holds only as a default.
bool emit_shipped_settings(const std::string& framework, fact_store& facts, const char* named_fact,
                           std::string (*file_name)(std::string), const char* what) {
    const fact* named = facts.get(named_fact);
    if (!named || !named->val.is_string()) return false;
    try {
        const framework_adapter& ad = framework_adapter::get(framework);
        const std::string name = file_name(named->val.as_string());
        const auto* shipped = ad.shipped_file(name);
        if (!shipped) return false;
        provenance p = named->prov;  // a copy: emitting may move the store's facts
        p.producer = "config." + ad.name() + ".shipped_" + what;
        p.derived_from = {named_fact};
        p.excerpt = fmt::format("{}: the settings of the {} {} ships under that name ({})", name, what, ad.name(), ad.file());
        for (const auto& [key, v] : *shipped) {
            if (const fact* cur = facts.get(key); cur && !cur->prov.from_default()) continue;
            facts.emit(key, v, p);
        }
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

std::string file_name_of(std::string path) { return std::filesystem::path(path).filename().string(); }

}  // namespace

bool emit_named_config_settings(const std::string& framework, fact_store& facts) {
    const bool config = emit_shipped_settings(framework, facts, "job.recipe_config", shipped_config_name, "config");
    // rev39: the DeepSpeed file a log names (a pasted LLaMA-Factory config's `deepspeed: examples/deepspeed/ds_z3_config.json`)
    const bool ds = emit_shipped_settings(framework, facts, "job.deepspeed_config", file_name_of, "file");
    return config || ds;
}

}  // namespace oomdx
