#include "parsers/config/framework_semantics.h"

#include "engine/core/yaml_node.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/yaml_file.h"

namespace oomdx {

namespace {

struct raw_semantics {
    framework_semantics s;
    std::string extends;
    YAML::Node node;  // the semantics: map (may be null)
};

value scalar_value(const YAML::Node& n) {
    const std::string t = n.Scalar();
    if (t == "true") return value(true);
    if (t == "false") return value(false);
    char* end = nullptr;
    const long long i = std::strtoll(t.c_str(), &end, 10);
    if (!t.empty() && end && *end == 0) return value(static_cast<std::int64_t>(i));
    return value(t);
}

// Applies one adapter's semantics map on top of `s`. An ancestor's log_names and device_variants
// name that ancestor, so they are not inherited (`own` is false for ancestors).
void apply(framework_semantics& s, const YAML::Node& n, const std::string& file, bool own) {
    if (!n || n.IsNull()) return;
    if (!n.IsMap()) throw input_error::at_line(file, n.Mark().line + 1, "semantics must be a map");
    static const std::set<std::string> known = {"device_kind", "estimator", "log_names", "device_variants",
                                                "estimate_ignores", "features", "not_training_scripts",
                                                "training_keys"};
    for (const auto& kv : n) {
        const std::string k = kv.first.as<std::string>();
        if (!known.count(k))
            throw input_error::at_line(file, kv.first.Mark().line + 1,
                                       fmt::format("unknown semantics key '{}' (known: device_kind, estimator, log_names, "
                                                   "device_variants, estimate_ignores, features, not_training_scripts, "
                                                   "training_keys)", k));
    }
    static const std::set<std::string> estimators = {"torchtitan", "megatron", "deepspeed", "torchtune", "generic"};
    if (n["device_kind"]) s.device_kind = n["device_kind"].as<std::string>();
    if (n["estimator"]) {
        s.estimator = n["estimator"].as<std::string>();
        if (!estimators.count(s.estimator))
            throw input_error::at_line(file, n["estimator"].Mark().line + 1,
                                       "estimator must be torchtitan, megatron, deepspeed, torchtune or generic");
    }
    if (n["log_names"] && own)
        for (const auto& x : n["log_names"]) s.log_names.push_back(x.as<std::string>());
    if (n["device_variants"] && own)
        for (const auto& kv : n["device_variants"]) s.device_variants[kv.first.as<std::string>()] = kv.second.as<std::string>();
    if (n["estimate_ignores"])
        for (const auto& x : n["estimate_ignores"]) s.estimate_ignores.push_back(x.as<std::string>());
    if (n["features"])
        for (const auto& kv : n["features"]) s.features[kv.first.as<std::string>()] = scalar_value(kv.second);
    if (n["not_training_scripts"])
        for (const auto& x : n["not_training_scripts"]) s.not_training_scripts.push_back(x.as<std::string>());
    if (n["training_keys"])
        for (const auto& x : n["training_keys"]) s.training_keys.push_back(x.as<std::string>());
}

std::vector<framework_semantics> load_all() {
    const std::string dir = data_path("knowledge/frameworks");
    std::error_code ec;
    std::vector<std::string> files = yaml_files_in(dir, ec);
    if (ec) throw input_error::in_file(dir, "cannot read adapter directory: " + ec.message());
    std::vector<raw_semantics> raw;
    for (const auto& f : files) {
        const YAML::Node root = load_yaml_file(f);
        if (!root.IsMap() || !root["name"]) continue;  // the adapter loader reports malformed files
        raw_semantics r;
        r.s.name = root["name"].as<std::string>();
        r.s.file = f;
        if (root["extends"]) r.extends = root["extends"].as<std::string>();
        if (root["semantics"]) r.node = root["semantics"];  // cfg67: an adapter without semantics (mmengine)
        raw.push_back(std::move(r));
    }
    std::vector<framework_semantics> out;
    for (const auto& r : raw) {
        // The chain from the root ancestor down to this adapter; later entries win.
        std::vector<const raw_semantics*> chain{&r};
        std::set<std::string> seen{r.s.name};
        for (std::string ext = r.extends; !ext.empty();) {
            if (!seen.insert(ext).second) throw input_error::in_file(r.s.file, "adapter 'extends' loops");
            auto it = std::find_if(raw.begin(), raw.end(), [&](const raw_semantics& x) { return x.s.name == ext; });
            if (it == raw.end()) throw input_error::in_file(r.s.file, "extends unknown adapter '" + ext + "'");
            chain.push_back(&*it);
            ext = it->extends;
        }
        framework_semantics s;
        for (auto c = chain.rbegin(); c != chain.rend(); ++c) apply(s, (*c)->node, (*c)->s.file, *c == &r);
        s.name = r.s.name;
        s.file = r.s.file;
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace

bool framework_semantics::script_does_not_train(const std::string& script) const {
    const std::string base = std::filesystem::path(script).filename().string();
    for (const auto& g : not_training_scripts)
        if (::fnmatch(g.c_str(), base.c_str(), 0) == 0) return true;
    return false;
}

bool framework_semantics::is_training_key(const std::string& raw_key) const {
    for (const auto& g : training_keys)
        if (::fnmatch(g.c_str(), raw_key.c_str(), 0) == 0) return true;
    return false;
}

// Globs: `env.*` (a namespace), `training.rollout_*` (a family of keys), or an exact key.
bool framework_semantics::ignores_for_estimate(const std::string& key) const {
    for (const auto& p : estimate_ignores)
        if (::fnmatch(p.c_str(), key.c_str(), 0) == 0) return true;
    return false;
}

const std::vector<framework_semantics>& shipped_semantics() {
    static const std::vector<framework_semantics> all = load_all();
    return all;
}

const framework_semantics* find_semantics(const std::string& framework) {
    for (const auto& s : shipped_semantics())
        if (s.name == framework) return &s;
    return nullptr;
}

std::optional<std::string> framework_for_log(const std::string& log_framework, const std::string& device_kind) {
    for (const auto& s : shipped_semantics())
        if (std::find(s.log_names.begin(), s.log_names.end(), log_framework) != s.log_names.end()) {
            auto v = s.device_variants.find(device_kind);
            return v != s.device_variants.end() ? v->second : s.name;
        }
    return std::nullopt;
}

void emit_facts(const framework_semantics& s, fact_sink& sink) {
    provenance p;
    p.producer = "knowledge";
    p.file = s.file;
    p.excerpt = "semantics of " + s.name;
    if (!s.estimator.empty()) sink.emit("framework.estimator", value(s.estimator), p);
    if (!s.device_kind.empty()) sink.emit("framework.device_kind", value(s.device_kind), p);
    for (const auto& [k, v] : s.features) sink.emit("framework." + k, v, p);
}

}  // namespace oomdx
