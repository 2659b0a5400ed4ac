// Override syntax: detection from the parsed config, rendering per syntax, what a framework
// can express, and the allocator variable name.
#include "parsers/config/override_syntax.h"

#include <optional>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/fact_store.h"
#include "engine/core/version.h"
#include "parsers/config/job_config.h"
#include "parsers/config/raw_entry.h"
#include "parsers/config/registry_edit.h"

namespace oomdx {

namespace {

// rev31: overlap_comm too, which the ZeRO-3 patch writes and the plan reads back (a key of the JSON, not the trainer's)
const char* const k_ds_keys[] = {"parallelism.zero_stage", "optimizer.offload", "parallelism.offload_params",
                                 "parallelism.overlap_comm"};

bool routed_to_deepspeed(const override_syntax& s, const std::string& key) {
    if (s.deepspeed_file.empty()) return false;
    for (const char* k : k_ds_keys)
        if (key == k) return true;
    return false;
}

// Allocator keys under this job's variable; keys bound for the DeepSpeed JSON set apart.
void prepare(const override_syntax& s, const std::vector<canonical_override>& in, std::vector<canonical_override>& own,
             std::vector<canonical_override>& ds) {
    for (const auto& o : in) {
        if (is_allocator_env_key(o.key)) own.push_back({"env." + allocator_env_var(s.device_kind, s.torch_version), o.val});
        else if (routed_to_deepspeed(s, o.key)) ds.push_back(o);
        else own.push_back(o);
    }
}

std::string py_literal(const value& v) {
    switch (v.type()) {
        case value_type::null: return "None";
        case value_type::boolean: return v.as_bool() ? "True" : "False";
        case value_type::integer: return std::to_string(v.as_integer());
        case value_type::number: return fmt::format("{}", v.as_number());
        case value_type::string: return nlohmann::json(v.as_string()).dump();
        case value_type::list: {
            std::string s = "[";
            for (const auto& x : v.as_list()) s += (s.size() > 1 ? ", " : "") + py_literal(x);
            return s + "]";
        }
    }
    return "None";
}

bool is_ac_component(const std::string& callee) {
    return callee.size() > 7 && callee.ends_with(".Config") && callee != "ActivationCheckpointConfig";
}

std::string section_class(const override_syntax& s, const framework_adapter& a, const std::string& section) {
    if (auto it = s.classes.find(section); it != s.classes.end()) return it->second;
    if (auto it = a.registry_classes().find(section); it != a.registry_classes().end()) return it->second;
    std::string c = section;
    bool up = true;
    std::string out;
    for (char ch : c) {
        if (ch == '_') { up = true; continue; }
        out += up ? char(std::toupper(static_cast<unsigned char>(ch))) : ch;
        up = false;
    }
    return out + "Config";
}

// Lines for everything that is not a framework key (exports, code changes, "has no setting").
std::vector<std::string> side_lines(const framework_adapter& a, const std::vector<render_item>& items) {
    std::vector<canonical_override> side;
    for (const auto& it : items)
        if (it.key.rfind("env.", 0) == 0 || it.key.rfind("code.", 0) == 0) side.push_back({it.key, it.val});
    std::vector<std::string> lines = side.empty() ? std::vector<std::string>{} : a.render_lines_as(side, "cli");
    for (const auto& it : items)
        if (it.key.rfind("#", 0) == 0)
            lines.push_back(fmt::format("# {} has no setting for {} = {}", a.name(), it.key.substr(1), value_key(it.val)));
        else if (it.key.rfind("note.", 0) == 0)
            lines.push_back("# " + value_key(it.val));
    return lines;
}

bool framework_item(const render_item& it) {
    return it.key.rfind("env.", 0) != 0 && it.key.rfind("code.", 0) != 0 && it.key.rfind("#", 0) != 0 &&
           it.key.rfind("note.", 0) != 0;
}

// The fields of the registry function: `section=Class(field=value, ...)` arguments of the
// returned call, or `config.section.field = value` statements before `return config`.
std::vector<std::string> render_registry(const override_syntax& s, const framework_adapter& a,
                                         const std::vector<canonical_override>& ovs) {
    const std::vector<render_item> items = a.translate(ovs, s.spelled, s.context);
    std::vector<std::string> lines = side_lines(a, items);
    const std::string var = s.return_var.empty() && s.function.empty() ? "config" : s.return_var;
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> fields;  // section -> (field, python)
    std::map<std::string, std::string> whole;                                         // section -> value text
    const std::string ac_callee = s.classes.count("activation_checkpoint") ? s.classes.at("activation_checkpoint") : "";
    for (const auto& it : items) {
        if (!framework_item(it)) continue;
        const auto dot = it.key.find('.');
        const std::string section = dot == std::string::npos ? it.key : it.key.substr(0, dot);
        const std::string field = dot == std::string::npos ? "" : it.key.substr(dot + 1);
        if (std::find(order.begin(), order.end(), section) == order.end()) order.push_back(section);
        if (section == "activation_checkpoint" && is_ac_component(ac_callee)) {
            // 2026-06+: checkpointing is a component class, not a mode string.
            if (field == "mode" && it.val.is_string()) {
                const std::string& m = it.val.as_string();
                whole[section] = m == "full" ? "FullAC.Config()" : m == "none" ? "NoAC.Config()" : "SelectiveAC.Config()";
            }
            continue;
        }
        if (it.remove) {
            lines.push_back(fmt::format("# reset {}.{} to its default", var.empty() ? "config" : var, it.key));
            continue;
        }
        if (field.empty()) whole[section] = py_literal(it.val);
        else fields[section].push_back({field, py_literal(it.val)});
    }
    std::vector<std::string> body;
    for (const auto& section : order) {
        if (!var.empty()) {
            if (auto w = whole.find(section); w != whole.end()) body.push_back(fmt::format("{}.{} = {}", var, section, w->second));
            for (const auto& [f, v] : fields[section]) body.push_back(fmt::format("{}.{}.{} = {}", var, section, f, v));
            continue;
        }
        if (auto w = whole.find(section); w != whole.end()) {
            body.push_back(fmt::format("{}={}", section, w->second));
            continue;
        }
        if (fields[section].empty()) continue;
        std::string args;
        for (const auto& [f, v] : fields[section]) args += (args.empty() ? "" : ", ") + f + "=" + v;
        body.push_back(fmt::format("{}={}({})", section, section_class(s, a, section), args));
    }
    if (!body.empty()) {
        const std::string where = s.file.empty() ? std::string("the config function")
                                                 : fmt::format("{}:{}", std::filesystem::path(s.file).filename().string(),
                                                               s.function.empty() ? "FUNCTION" : s.function);
        lines.insert(lines.begin(), var.empty() ? fmt::format("# {}: fields of the returned config", where)
                                                : fmt::format("# {}: before `return {}`", where, var));
    }
    lines.insert(lines.end(), body.begin(), body.end());
    return lines;
}

std::string shell_word(const std::string& w) {
    if (!w.empty() && w.find_first_of(" \t\"'$`\\;&|<>()*?[]{}") == std::string::npos) return w;
    std::string q = "'";
    for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// `key=value` operands: LLaMA-Factory's `llamafactory-cli train cfg.yaml key=value`, Hydra overrides (verl).
std::vector<std::string> render_dotlist(const override_syntax& s, const framework_adapter& a,
                                       const std::vector<canonical_override>& ovs) {
    const std::vector<render_item> items = a.translate(ovs, s.spelled, s.context);
    std::vector<std::string> lines = side_lines(a, items);
    for (const auto& it : items) {
        if (!framework_item(it)) continue;
        if (it.remove) lines.push_back("# remove " + it.key + "=...");
        else lines.push_back(shell_word(it.key + "=" + value_key(it.val)));
    }
    return lines;
}

const framework_adapter& adapter_of(const override_syntax& s) { return framework_adapter::get(s.framework); }

}  // namespace

bool is_allocator_env_key(const std::string& k) {
    return k == "env.PYTORCH_CUDA_ALLOC_CONF" || k == "env.PYTORCH_NPU_ALLOC_CONF" || k == "env.PYTORCH_ALLOC_CONF";
}

std::string allocator_env_var(const std::string& device_kind, const std::string& torch_version) {
    if (device_kind == "npu") return "PYTORCH_NPU_ALLOC_CONF";
    // PYTORCH_ALLOC_CONF is the device-generic name since PyTorch 2.9 (pytorch/pytorch#149601,
    // docs cuda_environment_variables: "PYTORCH_CUDA_ALLOC_CONF is its alias"), but 2.9.x ignores
    // it for CUDA expandable_segments (pytorch/pytorch#183387, fixed in 2.11.0 per
    // karpathy/autoresearch#588). The old name works in every release.
    if (const auto v = parse_release_version(torch_version); v && v->at_least(2, 11)) return "PYTORCH_ALLOC_CONF";
    return "PYTORCH_CUDA_ALLOC_CONF";
}

override_syntax override_syntax_for(const std::string& framework) {
    override_syntax s;
    s.framework = framework_adapter::get(framework).name();
    s.syntax = framework_adapter::get(framework).syntax();
    return s;
}

override_syntax detect_override_syntax(const job_config& job) {
    override_syntax s = override_syntax_for(job.framework);
    s.file = job.file;
    const std::string& f = job.format;
    if (f == "toml" || f == "json" || f == "yaml") {
        const std::string& fs = framework_adapter::get(s.framework).file_syntax();
        s.syntax = fs.empty() ? f : fs;  // a Hydra config is overridden on the command line
    } else if (f == "registry") {
        s.syntax = "registry";
        s.function = job.function;
        for (const auto& e : job.entries)
            if (e.container && e.key.find('.') == std::string::npos && e.val.is_string()) s.classes[e.key] = e.val.as_string();
        try {
            const registry_function_view v = view_registry_function(read_config_file(job.file), job.function);
            s.return_var = v.found ? v.return_var : "config";
        } catch (const std::exception&) {
            s.return_var = "config";
        }
    } else if (f == "module") {
        s.syntax = "module";
    } else {
        // Launch scripts and argument lists: flags (torchtitan --section.field=value, Megatron,
        // HF --key value), LLaMA-Factory key=value operands.
        s.syntax = s.framework == "llama_factory" || framework_adapter::get(s.framework).syntax() == "dotlist" ? "dotlist" : "cli";
    }
    for (const auto& e : job.entries)
        if (!e.container) s.spelled.push_back(e.key);  // a value the job wrote (not a TOML table header)
    if (const fact* ds = job.find("job.deepspeed_config"); ds && ds->val.is_string() && s.framework != "deepspeed")
        s.deepspeed_file = ds->val.as_string();
    // torch FSDP run through accelerate's config file: sharding and offload are that file's settings
    if (const fact* f = job.find("job.fsdp_via_accelerate"); f && f->val.is_bool() && f->val.as_bool() && s.deepspeed_file.empty()) {
        s.deepspeed_adapter = "accelerate_fsdp";
        s.deepspeed_file = "the job's accelerate config";
        if (const fact* c = job.find("job.config_file"); c && c->val.is_string() &&
            (c->val.as_string().ends_with(".yaml") || c->val.as_string().ends_with(".yml")))
            s.deepspeed_file = c->val.as_string();
    }
    return s;
}

void set_runtime(override_syntax& s, const fact_store& facts) {
    if (auto k = facts.string("device.kind")) s.device_kind = *k;
    else if (auto j = facts.string("job.device_kind"); j && *j != "unknown") s.device_kind = *j;
    else if (s.framework == "torchtitan_npu" || s.framework == "mindspeed") s.device_kind = "npu";
    if (auto v = version_fact(facts, "job.torch_version")) s.torch_version = v->text;
    for (const auto* a : {&framework_adapter::get(s.framework), &framework_adapter::get(s.deepspeed_adapter)})
        for (const auto& k : a->context_keys())
            if (const fact* f = facts.get(k); f && !f->val.is_null()) s.context[k] = value_key(f->val);
}

std::vector<std::string> render_overrides(const override_syntax& s, const std::vector<canonical_override>& in) {
    const framework_adapter& a = adapter_of(s);
    std::vector<canonical_override> own, ds;
    prepare(s, in, own, ds);
    const std::string syn = s.syntax.empty() ? a.syntax() : s.syntax;
    std::vector<std::string> lines;
    if (!own.empty()) {
        if (syn == "registry") lines = render_registry(s, a, own);
        else if (syn == "dotlist") lines = render_dotlist(s, a, own);
        else lines = a.render_lines_as(own, syn, s.spelled, s.context);
    }
    if (!ds.empty()) {
        const framework_adapter& d = framework_adapter::get(s.deepspeed_adapter);
        lines.push_back(fmt::format("# {} ({}):", s.deepspeed_file, d.syntax() == "json" ? "JSON merge patch" : "YAML"));
        for (auto& l : d.render_lines_as(ds, d.syntax(), {}, s.context)) lines.push_back(std::move(l));
    }
    return lines;
}

std::optional<render_item> job_setting(const override_syntax& s, const std::string& canonical_key, const value& v) {
    if (routed_to_deepspeed(s, canonical_key)) return std::nullopt;
    const std::vector<canonical_override> one = {canonical_override{canonical_key, v}};
    const std::vector<render_item> items = adapter_of(s).translate(one, s.spelled, s.context);
    if (items.size() != 1 || items.front().remove || !framework_item(items.front())) return std::nullopt;
    return items.front();
}

std::string job_key_name(const override_syntax& s, const std::string& canonical_key, const value& v) {
    const auto it = job_setting(s, canonical_key, v);
    return it ? it->key : "";
}

expressibility can_express(const override_syntax& s, const std::vector<canonical_override>& in) {
    std::vector<canonical_override> own, ds;
    prepare(s, in, own, ds);
    expressibility r;
    auto check = [&](const framework_adapter& a, const std::vector<canonical_override>& ovs,
                     const std::vector<std::string>& spelled) {
        for (const auto& it : a.translate(ovs, spelled, s.context))
            if (r.ok && it.key.rfind("#", 0) == 0) {
                r.ok = false;
                r.why = fmt::format("{} has no setting for {} = {}", a.name(), it.key.substr(1), value_key(it.val));
            }
    };
    check(adapter_of(s), own, s.spelled);
    check(framework_adapter::get(s.deepspeed_adapter), ds, {});
    if (r.ok && s.syntax == "registry" && s.classes.count("activation_checkpoint") &&
        is_ac_component(s.classes.at("activation_checkpoint")))
        for (const auto& o : own)
            if (o.key == "activation_checkpoint.selective_ac_option" && value_key(o.val) != "op") {
                r.ok = false;
                r.why = fmt::format("the config registry's SelectiveAC.Config has no setting for selective_ac_option = {}",
                                    value_key(o.val));
            }
    return r;
}

expressibility can_express(const override_syntax& s, const std::string& key, const value& v) {
    return can_express(s, std::vector<canonical_override>{{key, v}});
}

std::vector<canonical_override> canonical_closure(const override_syntax& s, const std::vector<canonical_override>& in) {
    std::vector<canonical_override> own, ds;
    prepare(s, in, own, ds);
    std::vector<canonical_override> out = in;
    // What the job reads back is what it runs with: it wins over the requested value.
    auto merge = [&](const std::vector<canonical_override>& back) {
        for (const auto& b : back) {
            bool have = false;
            for (auto& o : out)
                if (o.key == b.key) {
                    o.val = b.val;
                    have = true;
                }
            if (!have) out.push_back(b);
        }
    };
    const framework_adapter& a = adapter_of(s);
    merge(read_back(a, a.translate(own, s.spelled, s.context)));
    // A registry written with AC components: SelectiveAC.Config() is per-op SAC.
    if (s.syntax == "registry" && s.classes.count("activation_checkpoint") && is_ac_component(s.classes.at("activation_checkpoint")))
        for (const auto& o : own)
            if (o.key == "activation_checkpoint.mode" && value_key(o.val) == "selective")
                merge({{"activation_checkpoint.selective_ac_option", value("op")}});
    const framework_adapter& d = framework_adapter::get(s.deepspeed_adapter);
    merge(read_back(d, d.translate(ds)));
    return out;
}

}  // namespace oomdx
