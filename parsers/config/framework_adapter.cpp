// Framework adapters: YAML key maps and renderers.
#include "parsers/config/framework_adapter.h"

#include "engine/core/yaml_node.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/yaml_file.h"
#include "parsers/config/shell_args.h"

namespace oomdx {

std::string cli_key(const std::string& k) {
    std::size_t s = 0;
    while (s < k.size() && s < 2 && k[s] == '-') ++s;
    std::string out = k.substr(s);
    std::replace(out.begin(), out.end(), '-', '_');
    return out;
}

std::string value_key(const value& v) {
    switch (v.type()) {
        case value_type::null: return "null";
        case value_type::boolean: return v.as_bool() ? "true" : "false";
        case value_type::integer: return std::to_string(v.as_integer());
        case value_type::number: {
            std::string s = fmt::format("{}", v.as_number());
            return s;
        }
        case value_type::string: return v.as_string();
        case value_type::list: {
            std::string s;
            for (const auto& x : v.as_list()) s += (s.empty() ? "" : ",") + value_key(x);
            return s;
        }
    }
    return "";
}

namespace {

std::string norm(const std::string& k) { return k.rfind("--", 0) == 0 ? cli_key(k) : k; }

value yaml_value(const YAML::Node& n) {
    if (!n || n.IsNull()) return value();
    if (n.IsSequence()) {
        value::list_t l;
        for (const auto& x : n) l.push_back(yaml_value(x));
        return value(std::move(l));
    }
    if (!n.IsScalar()) return value();
    const std::string& s = n.Scalar();
    if (n.Tag() == "!") return value(s);
    if (s == "true" || s == "True") return value(true);
    if (s == "false" || s == "False") return value(false);
    try {
        std::size_t pos = 0;
        long long i = std::stoll(s, &pos);
        if (pos == s.size()) return value(i);
    } catch (...) {
    }
    try {
        std::size_t pos = 0;
        double d = std::stod(s, &pos);
        if (pos == s.size()) return value(d);
    } catch (...) {
    }
    return value(s);
}

std::string yaml_key_text(const YAML::Node& n) { return n.IsScalar() ? n.Scalar() : std::string(); }

}  // namespace

struct adapter_loader {
    static framework_adapter load(const std::string& path) {
        const YAML::Node root = load_yaml_file(path);
        try {
            return build(root, path);
        } catch (const YAML::Exception& e) {
            throw input_error::at_line(path, e.mark.line + 1, "adapter: " + e.msg);
        }
    }

    static framework_adapter build(const YAML::Node& root, const std::string& path) {
        if (!root.IsMap() || !root["name"])
            throw input_error::at_line(path, 1, "an adapter needs at least 'name'");
        // A misspelt field would be silently ignored: refuse what the schema does not have.
        static const std::set<std::string> top{"name", "description", "extends", "syntax", "formats", "detect", "keys",
                                               "known", "defaults", "registry_classes", "render", "render_when", "shipped_files",
                                               "semantics", "detect_required", "detect_shared", "launchers",
                                               "detect_spelling", "console_script", "file_syntax", "bare_flags"};
        for (auto it = root.begin(); it != root.end(); ++it)
            if (!top.count(it->first.as<std::string>()))
                throw input_error::at_line(path, it->first.Mark().line + 1,
                                           "unknown adapter field '" + it->first.as<std::string>() + "'");
        framework_adapter a;
        a.m_file = path;
        a.m_name = root["name"].as<std::string>();
        a.m_syntax = root["syntax"] ? root["syntax"].as<std::string>() : "";
        if (root["extends"]) a.m_extends = root["extends"].as<std::string>();
        if (root["description"]) a.m_description = root["description"].as<std::string>();
        static const std::set<std::string> syntaxes{"", "cli", "toml", "registry", "json", "yaml", "dotlist", "module"};
        if (!syntaxes.count(a.m_syntax))
            throw input_error::at_line(path, root["syntax"].Mark().line + 1,
                                       "syntax must be cli, toml, registry, json, yaml, dotlist or module");
        if (root["file_syntax"]) {
            a.m_file_syntax = root["file_syntax"].as<std::string>();
            if (a.m_file_syntax != "dotlist")
                throw input_error::at_line(path, root["file_syntax"].Mark().line + 1, "file_syntax must be dotlist");
        }
        if (root["formats"])
            for (const auto& f : root["formats"]) a.m_formats.push_back(f.as<std::string>());
        if (root["detect_required"]) a.m_detect_required = root["detect_required"].as<bool>();
        if (root["detect_spelling"]) {
            const std::string sp = root["detect_spelling"].as<std::string>();
            if (sp != "exact" && sp != "either")
                throw input_error::at_line(path, root["detect_spelling"].Mark().line + 1,
                                           "detect_spelling must be exact or either");
            a.m_detect_exact = sp == "exact";
        }
        if (root["detect"])
            for (const auto& f : root["detect"]) a.m_detect.push_back(norm(f.as<std::string>()));
        if (root["detect_shared"])
            for (const auto& f : root["detect_shared"]) a.m_detect_shared.push_back(norm(f.as<std::string>()));
        if (root["known"])
            for (const auto& f : root["known"]) a.m_known.push_back(norm(f.as<std::string>()));
        if (root["bare_flags"])
            for (const auto& f : root["bare_flags"]) a.m_bare_flags.push_back(cli_key(f.as<std::string>()));
        if (root["launchers"])
            for (const auto& f : root["launchers"]) {
                std::vector<std::string> words;
                std::istringstream in(f.as<std::string>());
                for (std::string w; in >> w;) words.push_back(w);
                if (words.empty())
                    throw input_error::at_line(path, f.Mark().line + 1, "a launcher needs at least one word");
                a.m_launchers.push_back(std::move(words));
            }
        if (const YAML::Node cs = root["console_script"]) {
            if (!cs.IsMap() || !cs["command"] || !cs["script"] || cs.size() != 2 ||
                cs["script"].as<std::string>().find("{sub}") == std::string::npos)
                throw input_error::at_line(path, cs.Mark().line + 1,
                                           "console_script needs exactly 'command' and 'script' (a path with {sub})");
            a.m_console_command = cs["command"].as<std::string>();
            a.m_console_script = cs["script"].as<std::string>();
        }
        if (root["registry_classes"])
            for (auto it = root["registry_classes"].begin(); it != root["registry_classes"].end(); ++it)
                a.m_registry_classes[it->first.as<std::string>()] = it->second.as<std::string>();
        if (root["defaults"])
            for (auto it = root["defaults"].begin(); it != root["defaults"].end(); ++it)
                a.m_defaults[it->first.as<std::string>()] = yaml_value(it->second);
        if (root["shipped_files"]) {
            if (!root["shipped_files"].IsMap())
                throw input_error::at_line(path, root["shipped_files"].Mark().line + 1, "'shipped_files' maps file names to settings");
            for (auto it = root["shipped_files"].begin(); it != root["shipped_files"].end(); ++it) {
                if (!it->second.IsMap())
                    throw input_error::at_line(path, it->second.Mark().line + 1, "a shipped file maps canonical keys to values");
                auto& settings = a.m_shipped_files[yaml_key_text(it->first)];
                for (auto kv = it->second.begin(); kv != it->second.end(); ++kv)
                    settings[kv->first.as<std::string>()] = yaml_value(kv->second);
            }
        }
        if (root["keys"]) {
            if (!root["keys"].IsSequence()) throw input_error::at_line(path, root["keys"].Mark().line + 1, "'keys' must be a list");
            for (const auto& k : root["keys"]) {
                const int line = k.Mark().line + 1;
                if (!k.IsMap() || !k["key"] || !k["canonical"])
                    throw input_error::at_line(path, line, "a key mapping needs 'key' and 'canonical'");
                static const std::set<std::string> fields{"key",    "canonical", "type",   "values", "tokens",
                                                          "flag",   "otherwise", "scale",  "render", "note",
                                                          "since",  "match",     "join",   "nargs", "rename"};
                for (auto it = k.begin(); it != k.end(); ++it)
                    if (!fields.count(it->first.as<std::string>()))
                        throw input_error::at_line(path, it->first.Mark().line + 1,
                                                   "unknown field '" + it->first.as<std::string>() + "' in the mapping of '" +
                                                       k["key"].as<std::string>() + "'");
                key_mapping m;
                m.key = k["key"].as<std::string>();
                m.canonical = k["canonical"].as<std::string>();
                m.line = line;
                if (k["type"]) m.type = k["type"].as<std::string>();
                if (k["values"])
                    for (auto it = k["values"].begin(); it != k["values"].end(); ++it)
                        m.values[yaml_key_text(it->first)] = yaml_value(it->second);
                if (k["tokens"])
                    for (auto it = k["tokens"].begin(); it != k["tokens"].end(); ++it)
                        m.tokens[yaml_key_text(it->first)] = yaml_value(it->second);
                if (k["match"]) {
                    if (!k["match"].IsMap())
                        throw input_error::at_line(path, k["match"].Mark().line + 1,
                                                   "'match' maps patterns to canonical values");
                    for (auto it = k["match"].begin(); it != k["match"].end(); ++it) {
                        key_mapping::pattern pt;
                        pt.text = yaml_key_text(it->first);
                        auto re = std::make_shared<RE2>(pt.text, RE2::Quiet);
                        if (!re->ok())
                            throw input_error::at_line(path, it->first.Mark().line + 1,
                                                       "invalid pattern '" + pt.text + "': " + re->error());
                        if (re->NumberOfCapturingGroups() > 9)
                            throw input_error::at_line(path, it->first.Mark().line + 1,
                                                       "pattern '" + pt.text + "' has more than 9 groups");
                        pt.re = std::move(re);
                        pt.out = yaml_value(it->second);
                        m.match.push_back(std::move(pt));
                    }
                }
                if (k["join"]) m.join = k["join"].as<std::string>();
                if (k["rename"])
                    for (auto it = k["rename"].begin(); it != k["rename"].end(); ++it)
                        m.rename[it->first.as<std::string>()] = it->second.as<std::string>();
                if (k["flag"]) m.flag = yaml_value(k["flag"]);
                if (k["otherwise"]) m.otherwise = yaml_value(k["otherwise"]);
                if (k["scale"]) m.scale = k["scale"].as<double>();
                if (k["render"]) m.render = k["render"].as<bool>();
                if (k["note"]) m.note = k["note"].as<std::string>();
                if (k["nargs"]) {
                    if (k["nargs"].as<std::string>() != "+")
                        throw input_error::at_line(path, k["nargs"].Mark().line + 1,
                                                   "'nargs' can only be \"+\" (every following word up to the next flag)");
                    m.many = true;
                }
                if (k["since"]) {
                    m.since = k["since"].as<std::string>();
                    static const RE2 date(R"(\d{4}-\d{2}(-\d{2})?)");
                    if (!RE2::FullMatch(m.since, date))
                        throw input_error::at_line(path, k["since"].Mark().line + 1,
                                                   "'since' must be a date YYYY-MM or YYYY-MM-DD, not '" + m.since + "'");
                }
                a.m_keys.push_back(std::move(m));
            }
        }
        if (root["render"]) a.m_render = render_map(root["render"], path);
        // rev26: renders that depend on another fact (kohya's LoRA module by the model family)
        if (const YAML::Node rw = root["render_when"]) {
            if (!rw.IsSequence())
                throw input_error::at_line(path, rw.Mark().line + 1, "render_when is a list of {when, render}");
            for (const auto& c : rw) {
                if (!c.IsMap() || !c["when"] || !c["when"].IsMap() || !c["render"] || c.size() != (c["note"] ? 3u : 2u))
                    throw input_error::at_line(path, c.Mark().line + 1,
                                               "a render_when entry has exactly 'when' (a map of facts), 'render' and an optional 'note'");
                framework_adapter::conditional_render cr;
                for (auto w = c["when"].begin(); w != c["when"].end(); ++w)
                    cr.when[w->first.as<std::string>()] = yaml_key_text(w->second);
                cr.render = render_map(c["render"], path);
                if (c["note"]) cr.note = c["note"].Scalar();
                a.m_render_when.push_back(std::move(cr));
            }
        }
        return a;
    }

    // canonical key -> canonical value text -> framework items
    static std::map<std::string, std::map<std::string, std::vector<render_item>>> render_map(const YAML::Node& node,
                                                                                           const std::string& path) {
        std::map<std::string, std::map<std::string, std::vector<render_item>>> out;
        if (!node.IsMap()) throw input_error::at_line(path, node.Mark().line + 1, "render maps canonical keys to values");
        for (auto it = node.begin(); it != node.end(); ++it) {
            const std::string canonical = it->first.as<std::string>();
            if (!it->second.IsMap())
                throw input_error::at_line(path, it->second.Mark().line + 1, "render entries map values to key sets");
            for (auto v = it->second.begin(); v != it->second.end(); ++v) {
                std::vector<render_item> items;
                if (!v->second.IsMap())
                    throw input_error::at_line(path, v->second.Mark().line + 1, "expected a map of framework keys");
                for (auto r = v->second.begin(); r != v->second.end(); ++r) {
                    render_item ri;
                    ri.key = r->first.as<std::string>();
                    ri.val = yaml_value(r->second);
                    ri.remove = r->second.IsNull();
                    items.push_back(std::move(ri));
                }
                out[canonical][yaml_key_text(v->first)] = std::move(items);
            }
        }
        return out;
    }
};

void framework_adapter::inherit(const framework_adapter& base) {
    if (m_syntax.empty()) m_syntax = base.m_syntax;
    if (m_file_syntax.empty()) m_file_syntax = base.m_file_syntax;
    if (m_formats.empty()) m_formats = base.m_formats;
    // Own keys first so that they win.
    for (const auto& k : base.m_keys) m_keys.push_back(k);
    for (const auto& k : base.m_known) m_known.push_back(k);
    for (const auto& k : base.m_detect) m_detect.push_back(k);
    for (const auto& k : base.m_detect_shared) m_detect_shared.push_back(k);
    for (const auto& k : base.m_bare_flags) m_bare_flags.push_back(k);
    for (const auto& k : base.m_launchers) m_launchers.push_back(k);
    for (const auto& [k, v] : base.m_defaults) m_defaults.emplace(k, v);
    for (const auto& [k, v] : base.m_shipped_files) m_shipped_files.emplace(k, v);
    for (const auto& [k, v] : base.m_render) m_render.emplace(k, v);
    for (const auto& c : base.m_render_when) m_render_when.push_back(c);
    for (const auto& [k, v] : base.m_registry_classes) m_registry_classes.emplace(k, v);
}

const std::map<std::string, value>* framework_adapter::shipped_file(const std::string& file_name) const {
    const auto it = m_shipped_files.find(file_name);
    return it == m_shipped_files.end() ? nullptr : &it->second;
}

framework_adapter framework_adapter::load(const std::string& yaml_path) {
    framework_adapter a = adapter_loader::load(yaml_path);
    if (!a.m_extends.empty()) {
        namespace fs = std::filesystem;
        const fs::path sibling = fs::path(yaml_path).parent_path() / (a.m_extends + ".yaml");
        std::error_code ec;
        if (fs::exists(sibling, ec) && fs::path(yaml_path).filename() != sibling.filename())
            a.inherit(load(sibling.string()));
        else {
            bool found = false;
            for (const auto& s : shipped())
                if (s.name() == a.m_extends) { a.inherit(s); found = true; }
            if (!found) throw input_error::in_file(yaml_path, "extends unknown adapter '" + a.m_extends + "'");
        }
    }
    if (a.m_syntax.empty()) throw input_error::in_file(yaml_path, "adapter needs 'syntax' (or 'extends')");
    return a;
}

std::vector<framework_adapter> framework_adapter::load_dir(const std::string& dir) {
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".yaml") files.push_back(e.path());
    if (ec) throw input_error::in_file(dir, "cannot read adapter directory: " + ec.message());
    std::sort(files.begin(), files.end());
    std::vector<framework_adapter> out;
    for (const auto& f : files) out.push_back(load(f.string()));
    return out;
}

const std::vector<framework_adapter>& framework_adapter::shipped() {
    static const std::vector<framework_adapter> all = [] {
        namespace fs = std::filesystem;
        const std::string dir = data_path("knowledge/frameworks");
        std::vector<fs::path> files;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (e.path().extension() == ".yaml") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        // Two passes so that `extends` can name any shipped adapter.
        std::vector<framework_adapter> raw;
        for (const auto& f : files) raw.push_back(adapter_loader::load(f.string()));
        std::vector<framework_adapter> done;
        for (auto a : raw) {
            std::set<std::string> seen{a.m_name};
            std::string ext = a.m_extends;
            while (!ext.empty()) {
                if (seen.count(ext)) throw input_error::in_file(a.m_file, "adapter 'extends' loops");
                seen.insert(ext);
                const framework_adapter* base = nullptr;
                for (const auto& r : raw)
                    if (r.m_name == ext) base = &r;
                if (!base) throw input_error::in_file(a.m_file, "extends unknown adapter '" + ext + "'");
                a.inherit(*base);
                ext = base->m_extends;
            }
            done.push_back(std::move(a));
        }
        return done;
    }();
    return all;
}

const framework_adapter& framework_adapter::get(const std::string& framework) {
    const auto& all = shipped();
    for (const auto& a : all)
        if (a.name() == framework) return a;
    for (const auto& a : all)
        if (a.name() == "torchtitan") return a;
    throw input_error("no framework adapters found under " + data_path("knowledge/frameworks"));
}

const framework_adapter& framework_adapter::named(const std::string& framework) {
    const auto& all = shipped();
    for (const auto& a : all)
        if (a.name() == framework) return a;
    std::string names;
    for (const auto& a : all) names += (names.empty() ? "" : ", ") + a.name();
    throw usage_error(fmt::format("unknown framework '{}' (known: {})", framework, names));
}

std::vector<const key_mapping*> framework_adapter::find(const std::string& raw_key) const {
    std::vector<const key_mapping*> out;
    const std::string c = cli_key(raw_key);
    for (const auto& k : m_keys) {
        const bool cli = k.key.rfind("--", 0) == 0;
        if ((cli && cli_key(k.key) == c) || (!cli && k.key == raw_key)) out.push_back(&k);
    }
    return out;
}

bool framework_adapter::is_known(const std::string& raw_key) const {
    const std::string c = cli_key(raw_key);
    for (const auto& k : m_known) {
        if (!k.empty() && k.back() == '*') {
            const std::string p = k.substr(0, k.size() - 1);
            if (raw_key.rfind(p, 0) == 0 || c.rfind(cli_key(p), 0) == 0) return true;
        } else if (k == raw_key || k == c) {
            return true;
        }
    }
    return false;
}

namespace {

// Levenshtein distance, one row at a time.
std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

}  // namespace

std::string framework_adapter::nearest_key(const std::string& raw_key, std::size_t max_distance, std::size_t* distance) const {
    const std::string c = cli_key(raw_key);
    std::string best;
    std::size_t best_d = max_distance + 1;
    auto consider = [&](const std::string& k) {
        if (k.empty() || k.back() == '*') return;
        const std::size_t d = edit_distance(c, cli_key(k));
        if (d > 0 && d < best_d) best_d = d, best = k;
    };
    for (const auto& m : m_keys) consider(m.key);
    for (const auto& k : m_known) consider(k);
    if (distance) *distance = best_d;
    return best;
}

int framework_adapter::takes_value(const std::string& flag) const {
    if (std::find(m_bare_flags.begin(), m_bare_flags.end(), cli_key(flag)) != m_bare_flags.end()) return 0;
    auto ms = find(flag);
    if (ms.empty()) return -1;
    for (const auto* m : ms)
        if (m->many) return 2;
    for (const auto* m : ms)
        if (!m->flag) return 1;
    return 0;
}

bool framework_adapter::reads(const std::string& format) const {
    return m_formats.empty() || std::find(m_formats.begin(), m_formats.end(), format) != m_formats.end();
}

bool framework_adapter::launched_by(const std::vector<std::string>& launch) const {
    // The launcher's words at the start of the command, the first one by its file name
    // (`/usr/local/bin/swift` is `swift`).
    for (const auto& l : m_launchers) {
        if (launch.size() < l.size()) continue;
        bool same = true;
        for (std::size_t i = 0; i < l.size() && same; ++i) {
            same = (i == 0 ? command_name(launch[i]) : launch[i]) == l[i];
        }
        if (same) return true;
    }
    return false;
}

std::string framework_adapter::console_script_for(const std::string& command, const std::string& sub) const {
    if (m_console_command.empty() || command != m_console_command) return "";
    // A subcommand is a plain word (`vllm-serve`, `merge-lora`); its module is spelt with '_'.
    if (sub.empty() || sub[0] == '-' || sub.find_first_of("./=$") != std::string::npos) return "";
    std::string module = sub;
    std::replace(module.begin(), module.end(), '-', '_');
    std::string script = m_console_script;
    script.replace(script.find("{sub}"), 5, module);
    return std::filesystem::path(script).filename().string();
}

namespace {

// Two aliases of one canonical key that write its values the same way.
bool same_value_spelling(const key_mapping& a, const key_mapping& b) {
    return a.values == b.values && a.tokens == b.tokens && a.flag == b.flag && a.scale == b.scale && a.match.empty() &&
           b.match.empty();
}

// torchrun's, accelerate's and the deepspeed launcher's process counts: every adapter whose jobs
// are launched that way maps them, so they tell the launcher, not the framework.
bool launch_topology(const std::vector<const key_mapping*>& ms) {
    for (const auto* m : ms)
        if (m->canonical != "job.nproc_per_node" && m->canonical != "job.nnodes" && m->canonical != "job.world_size")
            return false;
    return true;
}

}  // namespace

int framework_adapter::detect_score(const std::vector<raw_entry>& entries, const std::string& format,
                                    const std::vector<std::string>& launch) const {
    if (!reads(format)) return -1;
    if (launched_by(launch)) return 1 << 20;
    int score = 0;
    bool signed_ = false;
    for (const auto& e : entries) {
        // detect_spelling exact: '-' and '_' differ, so `--tensor-model-parallel-size` (Megatron-LM)
        // does not sign an adapter whose jobs write `--tensor_model_parallel_size` (Megatron-SWIFT)
        const std::string c = m_detect_exact ? e.key.substr(std::min<std::size_t>(e.key.find_first_not_of('-'), e.key.size()))
                                             : cli_key(e.key);
        for (const auto& d : m_detect)
            if (d == e.key || d == c) {
                score += 10;
                signed_ = true;
            }
        for (const auto& d : m_detect_shared)
            if (d == e.key || d == c) score += 10;
        // rev39: `--config FILE` is a flag scripts of every kind take (TRL's recipe, a user's own YAML): it signs no
        // adapter; the file it names tells the framework
        const auto ms = find(e.key);
        const bool config_flag = std::all_of(ms.begin(), ms.end(), [](const key_mapping* m) {
            return m->canonical == "job.config_file" && (m->key == "--config" || m->key == "config");
        });
        if (!ms.empty() && !launch_topology(ms) && !config_flag) score += 1;
    }
    // detect_required: keys it shares with every launcher (--model, --dataset) do not make a job its own
    return m_detect_required && !signed_ ? 0 : score;
}

namespace {

// The canonical values that mean "not on": what leaving a bare flag out expresses.
bool off_value(const value& v) {
    if (v.is_null()) return true;
    if (v.is_bool()) return !v.as_bool();
    if (v.is_integer()) return v.as_integer() == 0;
    if (v.is_string()) {
        const std::string& t = v.as_string();
        return t == "none" || t == "off" || t == "false" || t == "no";
    }
    return false;
}

}  // namespace

const key_mapping* framework_adapter::spelling_for(const std::string& canonical,
                                                  const std::vector<std::string>& spelled) const {
    if (spelled.empty()) return nullptr;
    std::vector<const key_mapping*> cands;
    for (const auto& k : m_keys)
        if (k.canonical == canonical) cands.push_back(&k);
    if (cands.size() < 2) return nullptr;
    for (const auto& w : spelled)  // a key the job wrote, matched as the parser matched it
        for (const auto* k : find(w))
            if (k->canonical == canonical) return k;
    // No alias written: the flag namespace the job writes ("--model." of --model.model_name_or_path).
    // Only for flags: a TOML or YAML section is the file's structure, not a choice of alias.
    auto section = [](const std::string& key) {
        const auto dot = key.rfind('.');
        return dot == std::string::npos || key.rfind("--", 0) != 0 ? std::string() : cli_key(key.substr(0, dot + 1));
    };
    auto uses = [&](const key_mapping* k) {
        const std::string sec = section(k->key);
        int n = 0;
        if (!sec.empty())
            for (const auto& w : spelled) n += cli_key(w).rfind(sec, 0) == 0;
        return n;
    };
    const key_mapping* first = nullptr;
    for (const auto* k : cands)
        if (k->render) { first = k; break; }
    if (first && uses(first) > 0) return nullptr;
    const key_mapping* best = nullptr;
    int most = 0;
    for (const auto* k : cands)
        if (const int n = uses(k); n > most) { most = n; best = k; }
    return best;
}

std::vector<std::string> framework_adapter::context_keys() const {
    std::vector<std::string> out;
    for (const auto& c : m_render_when)
        for (const auto& [k, v] : c.when)
            if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    return out;
}

const std::vector<render_item>* framework_adapter::render_for(const std::string& canonical, const value& v,
                                                              const render_context& context, const std::string** note) const {
    auto pick = [&](const std::map<std::string, std::map<std::string, std::vector<render_item>>>& table)
        -> const std::vector<render_item>* {
        const auto r = table.find(canonical);
        if (r == table.end()) return nullptr;
        auto it = r->second.find(value_key(v));
        if (it == r->second.end()) it = r->second.find("*");
        return it == r->second.end() ? nullptr : &it->second;
    };
    // the first conditional render whose facts all hold and that spells this value wins
    for (const auto& c : m_render_when) {
        bool holds = true;
        for (const auto& [k, want] : c.when)
            if (auto f = context.find(k); f == context.end() || f->second != want) { holds = false; break; }
        if (!holds) continue;
        if (const auto* items = pick(c.render)) {
            if (note && !c.note.empty()) *note = &c.note;
            return items;
        }
    }
    return pick(m_render);
}

std::vector<render_item> framework_adapter::translate(const std::vector<canonical_override>& ovs,
                                                      const std::vector<std::string>& spelled,
                                                      const render_context& context) const {
    std::vector<render_item> out;
    // Two overrides that render to one key (HF's `fsdp` takes the stage and the offload): a later value whose words the
    // earlier one already holds ("full_shard auto_wrap" after "full_shard auto_wrap offload") does not undo it.
    auto covers = [](const value& have, const value& next) {
        if (!have.is_string() || !next.is_string()) return false;
        std::istringstream words(next.as_string());
        const std::string h = " " + have.as_string() + " ";
        for (std::string w; words >> w;)
            if (h.find(" " + w + " ") == std::string::npos) return false;
        return true;
    };
    auto put = [&](render_item it) {
        for (auto& o : out)
            if (o.key == it.key) {
                if (!covers(o.val, it.val)) o = std::move(it);
                return;
            }
        out.push_back(std::move(it));
    };
    for (const auto& ov : ovs) {
        if (ov.key.rfind("env.", 0) == 0 || ov.key.rfind("code.", 0) == 0) {
            put({ov.key, ov.val, ov.val.is_null()});
            continue;
        }
        const key_mapping* own = spelling_for(ov.key, spelled);
        // cases69: the job wrote the value as a sum of parts (join "+": prompt + response); one part cannot take the
        // whole, so the parts are named with the total they must add up to.
        if (own && own->join == "+" && !own->render) {
            std::vector<std::string> parts;
            for (const auto& w : spelled)
                for (const auto* k : find(w))
                    if (k->canonical == ov.key && k->join == "+" &&
                        std::find(parts.begin(), parts.end(), k->key) == parts.end())
                        parts.push_back(k->key);
            if (parts.size() > 1) {
                put({"note." + ov.key, value(fmt::format("{} = {} in all", fmt::join(parts, " + "), value_key(ov.val))), false});
                continue;
            }
        }
        const std::string* note = nullptr;
        if (const auto* rendered = render_for(ov.key, ov.val, context, &note)) {
            if (note) put({"note." + ov.key, value(*note), false});
            for (auto item : *rendered) {
                if (item.val.is_string() && item.val.as_string() == "{value}") item.val = ov.val;
                if (own)  // an item written under another alias of this key: the job's spelling, where both spell the
                          // value alike (HF's `fsdp: "full_shard auto_wrap offload"` is no value of fsdp_offload_params)
                    for (const auto* k : find(item.key))
                        if (k->canonical == ov.key && same_value_spelling(*k, *own)) { item.key = own->key; break; }
                put(std::move(item));
            }
            continue;
        }
        const key_mapping* m = own;
        for (const auto& k : m_keys)
            if (!m && k.canonical == ov.key && k.render) { m = &k; break; }
        if (!m) {
            put({"#" + ov.key, ov.val, false});
            continue;
        }
        render_item it{m->key, ov.val, false};
        if (m->flag) {
            if (ov.val == *m->flag) it.val = value(true);
            else if (ov.val.is_bool() && !ov.val.as_bool()) it.remove = true;
            else if (!m->values.empty()) {
                // A flag key can also carry values ("--recompute-granularity full").
            } else if (off_value(ov.val)) {
                it.remove = true;
            } else {
                // A bare flag says one value; leaving it out says "off", not another value
                // ("--gradient_checkpointing" is full checkpointing: selective has no spelling).
                put({"#" + ov.key, ov.val, false});
                continue;
            }
        }
        if (!m->values.empty() && !(m->flag && ov.val == *m->flag)) {
            // The raw spelling equal to the canonical value first ("selective" -> "selective",
            // not the "memory_budget" alias that also reads as selective).
            bool found = false;
            if (auto same = m->values.find(value_key(ov.val)); same != m->values.end() && same->second == ov.val) {
                it.val = typed_raw(same->first);
                found = true;
            }
            for (const auto& [raw, canon] : m->values)
                if (!found && raw != "*" && canon == ov.val) {
                    it.val = typed_raw(raw);
                    found = true;
                    break;
                }
            if (auto any = m->values.find("*"); !found && any != m->values.end()) {
                // "*": anything else passes through ("{value}") or is one fixed value.
                if (any->second.is_string() && any->second.as_string() == "{value}") found = true;
                else if (any->second == ov.val) { it.val = value(true); found = true; }
            }
            if (!found && m->flag) it.remove = true;
            else if (!found) {
                put({"#" + ov.key, ov.val, false});
                continue;
            }
        } else if (!m->tokens.empty()) {
            bool found = false;
            for (const auto& [tok, canon] : m->tokens)
                if (canon == ov.val) { it.val = value(tok); found = true; break; }
            if (!found) {
                put({"#" + ov.key, ov.val, false});
                continue;
            }
        } else if (m->scale > 0 && ov.val.is_numeric()) {
            const double d = ov.val.as_number() / m->scale;
            std::int64_t whole = 0;
            it.val = whole_number(d, whole) ? value(whole) : value(d);
        }
        put(std::move(it));
    }
    return out;
}

value framework_adapter::typed_raw(const std::string& raw) {
    if (raw == "true") return value(true);
    if (raw == "false") return value(false);
    try {
        std::size_t pos = 0;
        long long i = std::stoll(raw, &pos);
        if (pos == raw.size()) return value(i);
    } catch (...) {
    }
    return value(raw);
}

namespace {

std::string toml_literal(const value& v) {
    switch (v.type()) {
        case value_type::null: return "\"\"";
        case value_type::boolean: return v.as_bool() ? "true" : "false";
        case value_type::integer: return std::to_string(v.as_integer());
        case value_type::number: return fmt::format("{}", v.as_number());
        case value_type::string: return nlohmann::json(v.as_string()).dump();
        case value_type::list: {
            std::string s = "[";
            for (const auto& x : v.as_list()) s += (s.size() > 1 ? ", " : "") + toml_literal(x);
            return s + "]";
        }
    }
    return "";
}

std::string py_literal(const value& v) {
    switch (v.type()) {
        case value_type::null: return "None";
        case value_type::boolean: return v.as_bool() ? "True" : "False";
        case value_type::list: {
            std::string s = "[";
            for (const auto& x : v.as_list()) s += (s.size() > 1 ? ", " : "") + py_literal(x);
            return s + "]";
        }
        default: return toml_literal(v);
    }
}

std::string shell_word_text(const value& v) {
    std::string s = v.is_list() ? value_key(v) : v.is_string() ? v.as_string() : value_key(v);
    if (s.empty() || s.find_first_of(" \t\"'$`\\;&|<>()*?[]{}") != std::string::npos) {
        std::string q = "'";
        for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return q + "'";
    }
    return s;
}

nlohmann::json to_json(const value& v) {
    switch (v.type()) {
        case value_type::null: return nullptr;
        case value_type::boolean: return v.as_bool();
        case value_type::integer: return v.as_integer();
        case value_type::number: return v.as_number();
        case value_type::string: return v.as_string();
        case value_type::list: {
            nlohmann::json a = nlohmann::json::array();
            for (const auto& x : v.as_list()) a.push_back(to_json(x));
            return a;
        }
    }
    return nullptr;
}

std::string yaml_scalar_text(const value& v) {
    if (v.is_string()) {
        const std::string& s = v.as_string();
        bool plain = !s.empty() && s.find_first_of(":#{}[],&*!|>'\"%@`") == std::string::npos &&
                     s != "true" && s != "false" && s != "null" && s.front() != ' ' && s.back() != ' ' &&
                     s.find_first_not_of("0123456789.-+eE") != std::string::npos;
        return plain ? s : nlohmann::json(s).dump();
    }
    if (v.is_null()) return "null";
    return toml_literal(v);
}

}  // namespace

std::vector<std::string> framework_adapter::render_lines_as(const std::vector<canonical_override>& ovs,
                                                            const std::string& syntax,
                                                            const std::vector<std::string>& spelled,
                                                            const render_context& context) const {
    std::vector<std::string> lines;
    std::vector<render_item> items = translate(ovs, spelled, context);
    std::vector<render_item> fw;
    for (const auto& it : items) {
        if (it.key.rfind("env.", 0) == 0) {
            const std::string var = it.key.substr(4);
            lines.push_back(it.remove ? "unset " + var : "export " + var + "=" + shell_word_text(it.val));
        } else if (it.key.rfind("code.", 0) == 0) {
            lines.push_back("# code change: " + value_key(it.val));
        } else if (it.key.rfind("note.", 0) == 0) {
            lines.push_back("# " + value_key(it.val));
        } else if (it.key.rfind("#", 0) == 0) {
            lines.push_back(fmt::format("# {} has no setting for {} = {}", m_name, it.key.substr(1), value_key(it.val)));
        } else {
            fw.push_back(it);
        }
    }
    if (fw.empty()) return lines;
    if (syntax == "cli") {
        for (const auto& it : fw) {
            const std::string flag = it.key.rfind("-", 0) == 0 ? it.key : "--" + it.key;
            // torchtitan's `--section.field`: `=value`, booleans as tyro flags (--x.y / --x.no_y).
            const bool dotted = it.key.rfind("-", 0) != 0 && it.key.find('.') != std::string::npos;
            if (dotted && !it.remove) {
                if (it.val.is_bool()) {
                    const auto dot = it.key.rfind('.');
                    lines.push_back(it.val.as_bool() ? flag : "--" + it.key.substr(0, dot) + ".no_" + it.key.substr(dot + 1));
                } else {
                    lines.push_back(flag + "=" + shell_word_text(it.val.is_list() ? value(value_key(it.val)) : it.val));
                }
                continue;
            }
            if (it.remove) lines.push_back("# remove " + flag);
            else if (it.val.is_bool() && it.val.as_bool() && !find(it.key).empty() && find(it.key)[0]->flag)
                lines.push_back(flag);
            else if (it.val.is_list()) lines.push_back(flag + " " + shell_word_text(value(value_key(it.val))));
            else lines.push_back(flag + " " + shell_word_text(it.val));
        }
    } else if (syntax == "toml") {
        std::map<std::string, std::vector<const render_item*>> sections;
        std::vector<std::string> order;
        for (const auto& it : fw) {
            const auto dot = it.key.rfind('.');
            const std::string sec = dot == std::string::npos ? "" : it.key.substr(0, dot);
            if (!sections.count(sec)) order.push_back(sec);
            sections[sec].push_back(&it);
        }
        for (const auto& sec : order) {
            if (!sec.empty()) lines.push_back("[" + sec + "]");
            for (const auto* it : sections[sec]) {
                const std::string field = it->key.substr(sec.empty() ? 0 : sec.size() + 1);
                if (it->remove) lines.push_back("# remove " + field);
                else lines.push_back(field + " = " + toml_literal(it->val));
            }
        }
    } else if (syntax == "registry") {
        for (const auto& it : fw) {
            if (it.remove) lines.push_back("# reset config." + it.key + " to its default");
            else lines.push_back("config." + it.key + " = " + py_literal(it.val));
        }
    } else if (syntax == "module") {
        // mmengine-style module (mmcfg): the top-level assignment line to change; a nested key as the
        // launcher's --cfg-options (mmengine DictAction: dotted keys)
        for (const auto& it : fw) {
            const bool top = it.key.find('.') == std::string::npos;
            if (it.remove) lines.push_back("# remove " + it.key);
            else if (top) lines.push_back(it.key + " = " + py_literal(it.val));
            else lines.push_back("--cfg-options " + shell_word_text(value(it.key + "=" + value_key(it.val))));
        }
    } else if (syntax == "json") {
        nlohmann::json patch = nlohmann::json::object();
        for (const auto& it : fw) {
            nlohmann::json* cur = &patch;
            std::size_t s = 0;
            while (true) {
                const auto dot = it.key.find('.', s);
                const std::string part = it.key.substr(s, dot == std::string::npos ? std::string::npos : dot - s);
                if (dot == std::string::npos) {
                    (*cur)[part] = it.remove ? nlohmann::json(nullptr) : to_json(it.val);
                    break;
                }
                if (!(*cur)[part].is_object()) (*cur)[part] = nlohmann::json::object();
                cur = &(*cur)[part];
                s = dot + 1;
            }
        }
        std::string text = patch.dump(2);
        std::size_t s = 0;
        while (s <= text.size()) {
            const auto nl = text.find('\n', s);
            lines.push_back(text.substr(s, nl == std::string::npos ? std::string::npos : nl - s));
            if (nl == std::string::npos) break;
            s = nl + 1;
        }
    } else {  // yaml
        std::vector<std::string> prev;
        for (const auto& it : fw) {
            std::vector<std::string> parts;
            std::size_t s = 0;
            while (true) {
                const auto dot = it.key.find('.', s);
                parts.push_back(it.key.substr(s, dot == std::string::npos ? std::string::npos : dot - s));
                if (dot == std::string::npos) break;
                s = dot + 1;
            }
            std::size_t common = 0;
            while (common + 1 < parts.size() && common < prev.size() && prev[common] == parts[common]) ++common;
            for (std::size_t k = common; k + 1 < parts.size(); ++k)
                lines.push_back(std::string(2 * k, ' ') + parts[k] + ":");
            const std::string indent(2 * (parts.size() - 1), ' ');
            if (it.remove) lines.push_back(indent + "# remove " + parts.back());
            else lines.push_back(indent + parts.back() + ": " + yaml_scalar_text(it.val));
            prev.assign(parts.begin(), parts.end() - 1);
        }
    }
    return lines;
}

std::vector<std::string> framework_adapter::render_lines(const std::vector<canonical_override>& ovs) const {
    return render_lines_as(ovs, m_syntax);
}

std::string framework_adapter::render(const std::vector<canonical_override>& ovs) const {
    std::string out;
    for (const auto& l : render_lines(ovs)) out += l + "\n";
    return out;
}

}  // namespace oomdx
