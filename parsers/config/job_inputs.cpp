// Job inputs: config + model + device + --set, as facts.
#include "parsers/config/job_inputs.h"

#include <filesystem>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "parsers/config/job_validate.h"
#include "parsers/config/shell_args.h"

namespace oomdx {

canonical_override parse_set_override(const std::string& kv) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw usage_error("--set expects key=value, got '" + kv + "'");
    canonical_override o;
    o.key = kv.substr(0, eq);
    const std::string text = kv.substr(eq + 1);
    const vocabulary& voc = vocabulary::shipped();
    const fact_decl* d = voc.find(o.key);
    if (!d) throw usage_error(fmt::format("--set: unknown fact name '{}' (see knowledge/facts/*.yaml)", o.key));
    value v = typed_word(text);
    switch (d->kind) {
        case fact_kind::string: v = value(text); break;
        case fact_kind::number:
            if (v.is_integer()) v = value(static_cast<double>(v.as_integer()));
            break;
        case fact_kind::bytes:
            if (!v.is_integer()) {
                if (auto b = parse_size(text)) v = value(*b);
            }
            break;
        default: break;
    }
    try {
        voc.check(o.key, v);
    } catch (const std::exception& e) {
        throw usage_error(fmt::format("--set {}: {}", kv, e.what()));
    }
    o.val = std::move(v);
    return o;
}

namespace {

std::optional<model_dims> model_from_config(const job_config& job) {
    const fact* name = job.find("job.model_name");
    const fact* flavor = job.find("job.model_flavor");
    std::vector<std::string> tries;
    if (name && name->val.is_string()) {
        // A flavor names the size within the family ("deepseek_v3" + "debugmodel"): without a preset
        // for that pair the family name alone would pick some other size (the 671B model for a debug one).
        if (flavor && flavor->val.is_string()) tries.push_back(name->val.as_string() + "/" + flavor->val.as_string());
        else tries.push_back(name->val.as_string());
    }
    for (const auto& t : tries)
        if (const model_dims* p = find_model_preset(t)) return *p;
    if (name && name->val.is_string()) {
        std::error_code ec;
        const std::string& n = name->val.as_string();
        if (std::filesystem::exists(std::filesystem::path(n) / "config.json", ec)) return load_model(n);
    }
    return std::nullopt;
}

// A config that trains on a pre-quantized checkpoint ("unsloth/...-bnb-4bit", "...-GPTQ-Int4")
// without setting the quantization: the name says how wide the frozen weights are.
void note_prequantized(job_config& job) {
    const fact* name = job.find("job.model_name");
    if (!name || !name->val.is_string()) return;
    const checkpoint_quant q = checkpoint_quantization(name->val.as_string());
    if (q.cut == std::string::npos || q.bits == 0) return;
    const fact* bits = job.find("training.quantization_bit");
    if (bits && !bits->prov.from_default()) return;
    provenance p = name->prov;
    p.producer = "config.model_name";
    p.derived_from = {"job.model_name"};
    p.excerpt = fmt::format("{}: a pre-quantized {}-bit checkpoint", name->val.as_string(), q.bits);
    std::erase_if(job.facts, [](const fact& f) { return f.name == "training.quantization_bit"; });
    job.facts.push_back(fact{"training.quantization_bit", value(std::int64_t(q.bits)), p});
    if (!q.method.empty() && !job.find("training.quantization_method"))
        job.facts.push_back(fact{"training.quantization_method", value(q.method), p});
}

}  // namespace

job_inputs load_job_inputs(const job_inputs_options& o) {
    job_inputs in;
    if (!o.config.empty()) {
        in.job = parse_job_config(o.config, o.framework);
        // A file no adapter recognizes (`torchrun --nproc_per_node 8 train.py`, a user's own script) names no
        // framework: the format's fallback is a guess, so neither it nor its defaults become facts.
        if (in.job->framework_guessed)
            std::erase_if(in.job->facts, [](const fact& f) { return f.name == "job.framework" || f.prov.from_default(); });
    }
    // A launch line read through the named framework's adapter, when that adapter reads command lines: a DeepSpeed
    // JSON adapter named for a job whose log shows `deepspeed --module openrlhf.cli.train_sft --bf16 ...` maps none
    // of those flags, and its defaults (fp32) would stand in for what the line says.
    const std::string hint = in.job && !in.job->framework_guessed ? in.job->framework : o.framework;
    // A framework no adapter has is a usage error whatever else is given (a log alone reads no config to refuse it).
    if (!o.framework.empty()) framework_adapter::named(o.framework);
    if (!o.launch_args.empty() && (hint.empty() || framework_adapter::named(hint).reads("cli"))) {
        job_config cli = parse_cli_args(o.launch_args, hint, "command line", 0, o.launch_script);
        // A launch line no adapter recognizes (a plain `python train.py ...`) names no framework: the
        // format's fallback is a guess, so neither it nor its defaults become facts (the log's markers may
        // still tell the framework).
        if (cli.framework_guessed)
            std::erase_if(cli.facts, [](const fact& f) { return f.name == "job.framework" || f.prov.from_default(); });
        if (!in.job) {
            in.job = std::move(cli);
        } else if (in.job->framework_guessed && !cli.framework_guessed) {
            // The file told no framework and the logged line does: the line's framework reads the job.
            merge_job_config(*in.job, cli);
            in.job->facts.push_back(*cli.find("job.framework"));
            in.job->framework = cli.framework;
            in.job->framework_guessed = false;
        } else {
            merge_job_config(*in.job, cli);
        }
    }
    if (!o.model.empty()) in.model = load_model(o.model);
    else if (in.job) {
        in.model = model_from_config(*in.job);
        in.model_from_config = in.model.has_value();
    }
    if (in.job) note_prequantized(*in.job);
    if (!o.device.empty()) {
        in.device = lookup_device(o.device);
        if (!in.device) {
            // A bare size is the capacity itself.
            if (auto bytes = parse_size(o.device); bytes && *bytes > 0) {
                device_info d;
                d.id = "custom";
                d.name = "device with " + o.device.substr(0, 40);
                d.kind = "cuda";
                d.capacity_bytes = *bytes;
                d.confidence = "user";
                in.device = d;
                in.device_source = "user";
            }
        }
        if (!in.device) {
            std::string ids;
            for (const auto& d : all_devices()) ids += (ids.empty() ? "" : ", ") + d.id;
            throw usage_error(fmt::format("unknown device '{}' (known: {})", o.device, ids));
        }
    }
    in.syntax = in.job ? detect_override_syntax(*in.job) : override_syntax_for(o.framework.empty() ? "torchtitan" : o.framework);
    for (const auto& s : o.sets) {
        canonical_override ov = parse_set_override(s);
        provenance p;
        p.producer = "user";
        p.excerpt = "--set " + s;
        in.user.push_back(fact{ov.key, ov.val, p});
    }
    return in;
}

void emit_facts(const job_inputs& in, fact_sink& sink) {
    if (in.job) emit_facts(*in.job, sink);
    if (in.model) {
        if (in.model_from_config) {
            model_dims m = *in.model;
            m.source.derived_from = {"job.model_name", "job.model_flavor"};
            emit_facts(m, sink);
        } else {
            emit_facts(*in.model, sink);
        }
    }
    if (in.device) emit_facts(*in.device, sink, in.device_source);
    for (const auto& f : in.user) sink.emit(f);
}

void finish_job_inputs(job_inputs& in, fact_store& facts) {
    finish_job_facts(facts);
    if (auto fw = facts.string("job.framework"); fw && *fw != in.syntax.framework && !in.job)
        in.syntax = override_syntax_for(*fw);
    set_runtime(in.syntax, facts);
    // A DeepSpeed file the log names under another framework (a pasted LLaMA-Factory config, rev39): ZeRO settings
    // go to that file, as they do when the config itself names it.
    if (in.syntax.deepspeed_file.empty() && in.syntax.framework != "deepspeed")
        if (auto ds = facts.string("job.deepspeed_config")) in.syntax.deepspeed_file = *ds;
    // A log that shows the DeepSpeed engine under another framework: ZeRO settings go to its JSON,
    // whose name the log does not give.
    if (in.syntax.deepspeed_file.empty() && in.syntax.framework != "deepspeed" &&
        facts.boolean("job.runs_deepspeed").value_or(false))
        in.syntax.deepspeed_file = "the job's DeepSpeed config";
    // DeepSpeed run through accelerate's plugin (accelerate config `distributed_type: DEEPSPEED`, its
    // deepspeed_config section, as the log or the config shows) with no DeepSpeed JSON named: ZeRO settings
    // go to that section of the accelerate config (rev25)
    if (in.syntax.deepspeed_file.empty() && in.syntax.framework != "deepspeed" &&
        facts.boolean("job.deepspeed_via_accelerate").value_or(false)) {
        in.syntax.deepspeed_file = "the job's accelerate config";
        in.syntax.deepspeed_adapter = "accelerate_deepspeed";
    }
}

}  // namespace oomdx
