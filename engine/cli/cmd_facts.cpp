// `oomdx facts --config F [--framework X] [--model M] [--device D] [--set key=value ...]`:
// the facts oomdx reads from a job's own inputs, each with where it came from.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/cli/commands.h"
#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "parsers/config/job_inputs.h"

namespace oomdx::cli {

namespace {

nlohmann::json to_json(const value& v) {
    switch (v.type()) {
        case value_type::null: return nullptr;
        case value_type::integer: return v.as_integer();
        case value_type::number: return v.as_number();
        case value_type::boolean: return v.as_bool();
        case value_type::string: return v.as_string();
        case value_type::list: {
            auto a = nlohmann::json::array();
            for (const auto& x : v.as_list()) a.push_back(to_json(x));
            return a;
        }
    }
    return nullptr;
}

std::string show(const fact& f) {
    const fact_decl* d = vocabulary::shipped().find(f.name);
    if (d && d->kind == fact_kind::bytes && f.val.is_integer())
        return fmt::format("{} ({})", f.val.as_integer(), format_bytes(f.val.as_integer()));
    if (f.val.is_list() && f.val.as_list().empty()) return "[]";
    if (f.val.is_list()) return fmt::format("{} item(s)", f.val.as_list().size());
    return f.val.to_string();
}

}  // namespace

void add_facts_command(CLI::App& app, int& exit_code) {
    struct opts {
        job_inputs_options in;
        output_format fmt = output_format::text;
    };
    auto o = std::make_shared<opts>();
    auto* cmd = app.add_subcommand(
        "facts", "Print the facts read from a training config, model and device, with provenance");
    cmd->add_option("-c,--config", o->in.config,
                    "Training config: torchtitan TOML / config_registry.py:FUNC, Megatron/MindSpeed script, "
                    "DeepSpeed JSON, HF / accelerate / LLaMA-Factory YAML or JSON");
    cmd->add_option("--framework", o->in.framework,
                    "Framework adapter (torchtitan, torchtitan_npu, megatron, mindspeed, deepspeed, hf_trainer, "
                    "llama_factory, axolotl, ...); detected when omitted");
    cmd->add_option("-m,--model", o->in.model, "Model preset id, HF config.json, torchtitan flavor file (file.py:FLAVOR)");
    cmd->add_option("-d,--device", o->in.device, "Device (h100, a100-40gb, 910b3, ...)");
    cmd->add_option("--set", o->in.sets, "Canonical key=value set by hand (wins over the config)");
    cmd->add_option("--args", o->in.launch_args, "Launch-line words parsed as CLI overrides (after --)");
    add_format_option(cmd, o->fmt);
    cmd->callback([o, &exit_code] {
        if (o->in.config.empty() && o->in.model.empty() && o->in.device.empty() && o->in.sets.empty() &&
            o->in.launch_args.empty())
            throw usage_error("facts: give at least one of --config, --model, --device, --set");
        job_inputs in = load_job_inputs(o->in);
        fact_store store(&vocabulary::shipped());
        emit_facts(in, store);
        const auto facts = store.current();
        if (o->fmt == output_format::json) {
            nlohmann::json j;
            j["schema"] = "oomdx.facts/1";
            if (in.job) {
                // null: no adapter recognized the file (read by its format's fallback, no defaults applied)
                j["framework"] = in.job->framework_guessed ? nlohmann::json() : nlohmann::json(in.job->framework);
                j["config_file"] = in.job->file;
                j["unknown_keys"] = in.job->unknown_keys;
                j["non_literal"] = in.job->non_literal;
            }
            auto arr = nlohmann::json::array();
            for (const fact* f : facts) {
                nlohmann::json e;
                e["name"] = f->name;
                e["value"] = to_json(f->val);
                e["producer"] = f->prov.producer;
                e["file"] = f->prov.file;
                e["line"] = f->prov.line;
                if (f->prov.offset >= 0) e["offset"] = f->prov.offset;
                e["excerpt"] = f->prov.excerpt;
                if (!f->prov.derived_from.empty()) e["derived_from"] = f->prov.derived_from;
                arr.push_back(std::move(e));
            }
            j["facts"] = std::move(arr);
            fmt::print("{}\n", j.dump(2));
        } else {
            const bool md = o->fmt == output_format::markdown;
            if (in.job)
                fmt::print("{}config {} ({}, {})\n\n", md ? "## " : "", in.job->file,
                           in.job->framework_guessed ? "no framework recognized" : in.job->framework, in.job->format);
            std::size_t w = 0;
            for (const fact* f : facts)
                if (f->name != "job.unknown_keys" && f->name != "job.non_literal_keys") w = std::max(w, f->name.size());
            for (const fact* f : facts) {
                if (f->name == "job.unknown_keys" || f->name == "job.non_literal_keys") continue;
                const std::string where = f->prov.location();
                const bool dflt = f->prov.from_default();
                fmt::print("{}{:<{}} = {:<24} {}{}\n", md ? "- " : "  ", f->name, w, show(*f),
                           dflt ? "(framework default) " : "", where.empty() ? f->prov.producer : where);
                if (!f->prov.excerpt.empty() && !dflt) fmt::print("{}{:<{}}     | {}\n", md ? "  " : "  ", "", w, f->prov.excerpt);
            }
            if (in.job && !in.job->unknown_keys.empty()) {
                fmt::print("\n{}unknown keys (read, not mapped to a canonical key):\n", md ? "### " : "");
                for (const auto& u : in.job->unknown_keys) fmt::print("  {}\n", u);
            }
            if (in.job && !in.job->non_literal.empty()) {
                fmt::print("\n{}values that are not literals (not evaluated):\n", md ? "### " : "");
                for (const auto& n : in.job->non_literal) fmt::print("  {}\n", n);
            }
        }
        exit_code = 0;
    });
}

}  // namespace oomdx::cli
