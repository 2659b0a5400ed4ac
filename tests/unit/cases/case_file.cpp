#include "case_file.h"

#include "engine/core/yaml_node.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "engine/core/data_dir.h"
#include "engine/rules/rule_loader.h"

namespace fs = std::filesystem;

namespace oomdx::cases {

namespace {

// `id:` of every entry of a YAML list file (devices.yaml, models/*.yaml) or `name:` (facts).
void collect(const std::string& path, const char* key, std::set<std::string>& out) {
    const YAML::Node root = YAML::LoadFile(path);
    for (const auto& e : root)
        if (e.IsMap() && e[key]) out.insert(e[key].as<std::string>());
}

std::vector<std::string> yaml_files(const std::string& dir) {
    std::vector<std::string> out;
    if (!fs::is_directory(dir)) return out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

std::string where(const YAML::Node& n) {
    const YAML::Mark m = n.Mark();
    return m.line >= 0 ? ":" + std::to_string(m.line + 1) : "";
}

}  // namespace

const catalog& catalog::shipped() {
    static const catalog c = [] {
        catalog k;
        for (const auto& a : shipped_actions()) k.actions.insert(a.id);
        collect(data_path("knowledge/devices.yaml"), "id", k.devices);
        for (const auto& f : yaml_files(data_path("knowledge/models"))) collect(f, "id", k.models);
        for (const auto& f : yaml_files(data_path("knowledge/frameworks"))) k.frameworks.insert(fs::path(f).stem());
        collect(data_path("knowledge/facts/config.yaml"), "name", k.config_keys);
        k.kinds = {"fragmentation", "activations",   "micro_batch", "seq_len",     "optimizer_states", "mixed_precision",
                   "finetuning_method", "logits",    "leak",        "eval_oom",    "comm_buffers",     "npu_workspace",
                   "host_oom",      "data_loader",   "other_process", "other"};
        return k;
    }();
    return c;
}

std::vector<std::string> test_case::set_args() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : sets) out.push_back(k + "=" + v);
    return out;
}

load_outcome parse_case(const std::string& text, const std::string& file, const catalog& cat) {
    load_outcome o;
    test_case& tc = o.tc;
    tc.file = file;
    auto err = [&](const std::string& msg, const YAML::Node* n = nullptr) {
        o.errors.push_back(file + (n ? where(*n) : "") + ": " + msg);
    };
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        err("not valid YAML: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")");
        return o;
    }
    if (!root.IsMap()) {
        err("a case is a YAML mapping");
        return o;
    }
    static const std::set<std::string> top = {"id", "source", "confirmed", "kind", "inputs", "log", "fix", "notes", "config"};
    static const std::set<std::string> input_keys = {"device", "world_size", "model", "framework", "sets"};
    for (const auto& kv : root) {
        const std::string k = kv.first.as<std::string>();
        if (!top.count(k)) err("unknown key '" + k + "'", &kv.first);
    }
    auto text_of = [&](const char* key, std::string& out, bool required) {
        const YAML::Node n = root[key];
        if (!n) {
            if (required) err(std::string("missing '") + key + "'");
            return;
        }
        if (!n.IsScalar() || n.Scalar().empty()) {
            err(std::string("'") + key + "' must be a non-empty string", &n);
            return;
        }
        out = n.Scalar();
    };
    text_of("id", tc.id, true);
    text_of("source", tc.source, true);
    text_of("confirmed", tc.confirmed, true);
    text_of("kind", tc.kind, true);
    text_of("log", tc.log, true);
    text_of("notes", tc.notes, false);

    const std::string stem = fs::path(file).stem().string();
    static const std::regex kebab("^[a-z0-9]+(-[a-z0-9]+)*$");
    if (!tc.id.empty() && !std::regex_match(tc.id, kebab)) err("id '" + tc.id + "' is not kebab-case");
    if (!tc.id.empty() && tc.id != stem) err("id '" + tc.id + "' differs from the file name '" + stem + "'");
    if (!tc.source.empty() && tc.source.rfind("https://", 0) != 0) err("source must be an https:// URL");
    if (!tc.kind.empty() && !cat.kinds.count(tc.kind)) {
        const YAML::Node kind_node = root["kind"];
        err("unknown kind '" + tc.kind + "'", &kind_node);
    }

    if (const YAML::Node fix = root["fix"]; !fix) {
        err("missing 'fix'");
    } else if (!fix.IsSequence() || fix.size() == 0) {
        err("'fix' must be a non-empty list of action ids", &fix);
    } else {
        for (const auto& a : fix) {
            const std::string id = a.IsScalar() ? a.Scalar() : "";
            if (!cat.actions.count(id)) err("unknown action '" + id + "' (knowledge/actions.yaml)", &a);
            else tc.fix.push_back(id);
        }
    }

    if (const YAML::Node cfg = root["config"]) {
        static const std::regex base_name("^[A-Za-z0-9_.-]+\\.[A-Za-z0-9]+$");
        const YAML::Node f = cfg.IsMap() ? cfg["file"] : YAML::Node();
        const YAML::Node t = cfg.IsMap() ? cfg["text"] : YAML::Node();
        if (!cfg.IsMap() || cfg.size() != 2 || !f || !t) {
            err("'config' must be a mapping of 'file' (a base name with an extension) and 'text'", &cfg);
        } else if (!f.IsScalar() || !std::regex_match(f.Scalar(), base_name)) {
            err("'config.file' must be a base name with an extension, such as train.yaml", &f);
        } else if (!t.IsScalar() || t.Scalar().empty()) {
            err("'config.text' must be a non-empty string", &t);
        } else {
            tc.config_file = f.Scalar();
            tc.config_text = t.Scalar();
        }
    }

    if (const YAML::Node in = root["inputs"]; in && !in.IsNull()) {
        if (!in.IsMap()) {
            err("'inputs' must be a mapping", &in);
            return o;
        }
        for (const auto& kv : in) {
            const std::string k = kv.first.as<std::string>();
            if (!input_keys.count(k)) err("unknown inputs key '" + k + "'", &kv.first);
        }
        auto id_in = [&](const char* key, const std::set<std::string>& known, const char* what, const char* where,
                         std::string& out) {
            const YAML::Node n = in[key];
            if (!n) return;
            out = n.IsScalar() ? n.Scalar() : "";
            if (!known.count(out)) err(std::string("unknown ") + what + " '" + out + "' (" + where + ")", &n);
        };
        id_in("device", cat.devices, "device id", "knowledge/devices.yaml", tc.device);
        id_in("model", cat.models, "model preset", "knowledge/models", tc.model);
        id_in("framework", cat.frameworks, "framework", "knowledge/frameworks", tc.framework);
        if (const YAML::Node ws = in["world_size"]) {
            try {
                tc.world_size = ws.as<std::int64_t>();
            } catch (const YAML::Exception&) {
                tc.world_size = 0;
            }
            if (tc.world_size <= 0) err("world_size must be a positive integer", &ws);
        }
        if (const YAML::Node sets = in["sets"]) {
            if (!sets.IsMap()) {
                err("'inputs.sets' must be a mapping of canonical keys", &sets);
            } else {
                for (const auto& kv : sets) {
                    const std::string k = kv.first.as<std::string>();
                    if (!cat.config_keys.count(k)) err("unknown canonical key '" + k + "' (knowledge/facts/config.yaml)", &kv.first);
                    else if (!kv.second.IsScalar()) err("value of '" + k + "' must be a scalar", &kv.second);
                    else tc.sets.emplace_back(k, kv.second.Scalar());
                }
            }
        }
    }
    return o;
}

load_outcome load_case(const std::string& path, const catalog& cat) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        load_outcome o;
        o.tc.file = path;
        o.errors.push_back(path + ": cannot be read");
        return o;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse_case(ss.str(), path, cat);
}

std::vector<std::string> case_files(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& f : yaml_files(dir))
        if (fs::path(f).filename() != "score_floor.yaml") out.push_back(f);
    return out;
}

}  // namespace oomdx::cases
