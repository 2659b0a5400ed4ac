// Rendered overrides back into a config: one patcher per syntax.
#include "parsers/config/config_patch.h"

#include "engine/core/yaml_node.h"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "parsers/config/job_config.h"
#include "parsers/config/registry_edit.h"
#include "parsers/config/shell_args.h"
#include "engine/core/yaml_guard.h"

namespace oomdx {

namespace {

std::string trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(s);
}

std::vector<std::string> split_lines(std::string_view text) {
    std::vector<std::string> out;
    std::size_t s = 0;
    while (s <= text.size()) {
        const std::size_t e = text.find('\n', s);
        out.emplace_back(text.substr(s, (e == std::string_view::npos ? text.size() : e) - s));
        if (e == std::string_view::npos) break;
        s = e + 1;
    }
    if (!out.empty() && out.back().empty()) out.pop_back();
    return out;
}

std::string join_lines(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

bool is_env_line(const std::string& l) { return l.rfind("export ", 0) == 0 || l.rfind("unset ", 0) == 0; }

// The lines rendered for the config itself (up to a block addressed to another file).
std::vector<std::string> own_lines(const std::vector<std::string>& lines) {
    std::vector<std::string> out;
    for (const auto& raw : lines) {
        const std::string l = trim(raw);
        if (l.rfind("# ", 0) == 0 && l.find("(JSON merge patch):") != std::string::npos) break;
        out.push_back(raw);
    }
    return out;
}

[[noreturn]] void cannot(const override_syntax& s, const std::string& line, const std::string& why) {
    throw input_error::in_file(s.file.empty() ? std::string("config") : s.file,
                               fmt::format("cannot apply '{}': {}", line, why));
}

// --- TOML: replace or add `key = value` inside its [section] --------------------------------

std::string toml_set(const std::string& text, const std::string& section, const std::string& key,
                     const std::optional<std::string>& value_text) {
    std::vector<std::string> lines = split_lines(text);
    auto is_header = [](const std::string& l) { return !l.empty() && l.front() == '['; };
    std::size_t begin = 0, end = lines.size();
    bool found = section.empty();
    if (!section.empty()) {
        for (std::size_t i = 0; i < lines.size(); ++i)
            if (trim(lines[i]) == "[" + section + "]") {
                begin = i + 1;
                found = true;
                break;
            }
    }
    if (found) {
        end = begin;
        while (end < lines.size() && !is_header(trim(lines[end]))) ++end;
        std::size_t last_key = begin;
        for (std::size_t i = begin; i < end; ++i) {
            const std::string t = trim(lines[i]);
            if (t.empty() || t.front() == '#') continue;
            last_key = i + 1;
            const auto eq = t.find('=');
            if (eq != std::string::npos && trim(t.substr(0, eq)) == key) {
                if (value_text) lines[i] = key + " = " + *value_text;
                else lines.erase(lines.begin() + std::ptrdiff_t(i));
                return join_lines(lines);
            }
        }
        if (value_text) lines.insert(lines.begin() + std::ptrdiff_t(last_key), key + " = " + *value_text);
        return join_lines(lines);
    }
    if (!value_text) return text;
    lines.push_back("");
    lines.push_back("[" + section + "]");
    lines.push_back(key + " = " + *value_text);
    return join_lines(lines);
}

std::string patch_toml(const override_syntax& s, std::string text, const std::vector<std::string>& rendered) {
    std::string section;
    for (const auto& raw : rendered) {
        const std::string l = trim(raw);
        if (l.empty() || is_env_line(l)) continue;
        if (l.front() == '[' && l.back() == ']') {
            section = l.substr(1, l.size() - 2);
            continue;
        }
        if (l.rfind("# remove ", 0) == 0) {
            text = toml_set(text, section, trim(l.substr(9)), std::nullopt);
            continue;
        }
        if (l.front() == '#') continue;
        const auto eq = l.find('=');
        if (eq == std::string::npos) cannot(s, l, "expected key = value");
        text = toml_set(text, section, trim(l.substr(0, eq)), trim(l.substr(eq + 1)));
    }
    return text;
}

// --- launch scripts: flags (and key=value operands) at the end of the launch command -----------

struct token {
    std::size_t begin, end;
    std::string text;  // unquoted
};

std::vector<token> tokens_of(const std::string& line) {
    std::vector<token> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        if (i >= line.size() || line[i] == '#') break;
        token t{i, i, ""};
        char quote = 0;
        for (; i < line.size(); ++i) {
            const char c = line[i];
            if (quote) {
                if (c == quote) quote = 0;
                else t.text += c;
                continue;
            }
            if (c == '\'' || c == '"') { quote = c; continue; }
            if (c == ' ' || c == '\t') break;
            t.text += c;
        }
        t.end = i;
        out.push_back(std::move(t));
    }
    return out;
}

// Flag name of a word: "--a.b=v" -> "a.b"; "key=value" -> "key" (operand); "" otherwise.
std::string flag_name(const std::string& w, bool& operand) {
    operand = false;
    if (w.rfind("--", 0) == 0) {
        const auto eq = w.find('=');
        return cli_key(w.substr(0, eq));
    }
    const auto eq = w.find('=');
    if (eq != std::string::npos && eq > 0) {
        operand = true;
        return w.substr(0, eq);
    }
    return "";
}

// Removes `name` (and its value word, when the flag takes one) from the line.
std::string remove_flag(std::string line, const std::string& name, bool operand, bool takes_value) {
    for (bool again = true; again;) {
        again = false;
        const std::vector<token> toks = tokens_of(line);
        for (std::size_t i = 0; i < toks.size(); ++i) {
            bool op = false;
            const std::string n = flag_name(toks[i].text, op);
            if (n.empty() || op != operand) continue;
            std::string neg;  // torchtitan's --section.no_field is the same setting
            if (const auto dot = name.rfind('.'); dot != std::string::npos) neg = name.substr(0, dot + 1) + "no_" + name.substr(dot + 1);
            if (n != name && n != neg) continue;
            std::size_t end = toks[i].end;
            const bool has_eq = toks[i].text.find('=') != std::string::npos;
            if (!operand && !has_eq && takes_value && n == name && i + 1 < toks.size() &&
                toks[i + 1].text.rfind("--", 0) != 0 && toks[i + 1].text != "\\")
                end = toks[i + 1].end;
            std::size_t begin = toks[i].begin;
            while (begin > 0 && (line[begin - 1] == ' ' || line[begin - 1] == '\t')) --begin;
            line.erase(begin, end - begin);
            again = true;
            break;
        }
    }
    return line;
}

std::string patch_script(const override_syntax& s, std::string_view text, const std::vector<std::string>& rendered) {
    const shell_script sh = parse_shell(text, s.file);
    const shell_command* cmd = launch_command(sh);
    if (!cmd) cannot(s, rendered.empty() ? std::string() : rendered.front(), "the script has no launch command");
    std::vector<std::string> lines = split_lines(text);
    // The launch command's physical lines (with `\` continuations) and those its words come from.
    std::size_t first = std::size_t(std::max<std::int64_t>(1, cmd->line)) - 1, last = first;
    for (const auto& w : cmd->words) first = std::min<std::size_t>(first, std::size_t(std::max<std::int64_t>(1, w.line)) - 1);
    last = std::size_t(std::max<std::int64_t>(1, cmd->line)) - 1;
    while (last + 1 < lines.size() && !lines[last].empty() && trim(lines[last]).back() == '\\') ++last;
    std::set<std::size_t> where;
    for (std::size_t i = first; i <= last && i < lines.size(); ++i) where.insert(i);
    for (const auto& w : cmd->words)
        if (w.line > 0) where.insert(std::size_t(w.line) - 1);
    const framework_adapter& a = framework_adapter::get(s.framework);

    std::vector<std::string> add, env;
    for (const auto& raw : rendered) {
        const std::string l = trim(raw);
        if (l.empty()) continue;
        if (is_env_line(l)) { env.push_back(l); continue; }
        if (l.rfind("# remove ", 0) == 0) {
            bool op = false;
            const std::string n = flag_name(trim(l.substr(9)), op);
            for (std::size_t i : where) lines[i] = remove_flag(lines[i], n.empty() ? cli_key(trim(l.substr(9))) : n, op, a.takes_value(n) != 0);
            continue;
        }
        if (l.front() == '#') continue;
        const std::vector<std::string> words = split_command_line(l);
        if (words.empty()) continue;
        bool op = false;
        const std::string n = flag_name(words[0], op);
        if (n.empty()) cannot(s, l, "expected --flag [value] or key=value");
        for (std::size_t i : where) lines[i] = remove_flag(lines[i], n, op, a.takes_value(n) != 0);
        add.push_back(l);
    }
    if (!add.empty()) {
        std::string& tail = lines[last];
        std::string extra;
        for (const auto& x : add) extra += " " + x;
        // Keep a trailing comment or redirection after the arguments.
        std::size_t cut = tail.size();
        for (const char* stop : {" #", " >", " 2>", " |", " &&", " ;"}) {
            const auto p = tail.find(stop);
            if (p != std::string::npos) cut = std::min(cut, p);
        }
        tail.insert(cut, extra);
    }
    if (!env.empty()) lines.insert(lines.begin() + std::ptrdiff_t(first), env.begin(), env.end());
    return join_lines(lines);
}

// --- registry: the function's dataclass fields -------------------------------------------------

std::string patch_registry(const override_syntax& s, std::string text, const std::vector<std::string>& rendered) {
    if (s.function.empty()) cannot(s, "", "no registry function named");
    for (const auto& raw : rendered) {
        const std::string l = trim(raw);
        if (l.empty() || l.front() == '#' || is_env_line(l)) continue;
        const auto eq = l.find('=');
        if (eq == std::string::npos) cannot(s, l, "expected section=Class(field=value, ...) or config.a.b = value");
        const std::string lhs = trim(l.substr(0, eq));
        if (lhs.find('.') != std::string::npos) {
            text = registry_insert_statement(text, s.function, l);
            continue;
        }
        const std::string rhs = trim(l.substr(eq + 1));
        const auto open = rhs.find('('), close = rhs.rfind(')');
        const registry_function_view v = view_registry_function(text, s.function);
        if (!v.found) cannot(s, l, "function " + s.function + " not found");
        const registry_kwarg* k = v.kwarg(lhs);
        if (open == std::string::npos || close == std::string::npos || close < open) {
            text = registry_set_section(text, s.function, lhs, rhs);
            continue;
        }
        const std::string callee = trim(rhs.substr(0, open));
        const std::string args = rhs.substr(open + 1, close - open - 1);
        if (!v.return_var.empty() || !k || k->callee != callee || trim(args).empty()) {
            // A new section, another class (FullAC.Config -> SelectiveAC.Config), or `return config`.
            text = registry_set_section(text, s.function, lhs, rhs);
            continue;
        }
        for (const auto& arg : split_arguments(args)) {
            const auto e = arg.find('=');
            if (e == std::string::npos) cannot(s, l, "expected field=value");
            text = registry_set_field(text, s.function, lhs, trim(arg.substr(0, e)), trim(arg.substr(e + 1)), callee);
        }
    }
    return text;
}

// --- JSON merge patch, YAML merge ------------------------------------------------------------

std::string patch_json(const override_syntax& s, std::string_view text, const std::vector<std::string>& rendered) {
    std::string body;
    bool in = false;
    for (const auto& raw : rendered) {
        const std::string l = trim(raw);
        if (!in && l.rfind("{", 0) != 0) continue;
        in = true;
        body += raw + "\n";
    }
    if (body.empty()) return std::string(text);
    nlohmann::json doc, patch;
    try {
        doc = nlohmann::json::parse(text);
        patch = nlohmann::json::parse(body);
    } catch (const std::exception& e) {
        cannot(s, body, e.what());
    }
    doc.merge_patch(patch);
    return doc.dump(2) + "\n";
}

void yaml_merge(YAML::Node dst, const YAML::Node& src) {
    for (auto it = src.begin(); it != src.end(); ++it) {
        const std::string key = it->first.as<std::string>();
        if (it->second.IsMap() && dst[key] && dst[key].IsMap()) yaml_merge(dst[key], it->second);
        else dst[key] = it->second;
    }
}

std::string patch_yaml(const override_syntax& s, std::string_view text, const std::vector<std::string>& rendered) {
    std::string body;
    for (const auto& raw : rendered) {
        const std::string l = trim(raw);
        if (l.empty() || l.front() == '#' || is_env_line(l)) continue;
        body += raw + "\n";
    }
    if (body.empty()) return std::string(text);
    try {
        YAML::Node doc = load_yaml_text(std::string(text), "the config");
        yaml_merge(doc, YAML::Load(body));
        YAML::Emitter out;
        out << doc;
        return std::string(out.c_str()) + "\n";
    } catch (const YAML::Exception& e) {
        cannot(s, body, e.what());
    }
}

}  // namespace

std::string apply_rendered(const override_syntax& s, std::string_view text, const std::vector<std::string>& lines_in) {
    const std::vector<std::string> lines = own_lines(lines_in);
    const std::string syn = s.syntax.empty() ? framework_adapter::get(s.framework).syntax() : s.syntax;
    if (syn == "toml") return patch_toml(s, std::string(text), lines);
    if (syn == "registry") return patch_registry(s, std::string(text), lines);
    if (syn == "json") return patch_json(s, text, lines);
    if (syn == "yaml") return patch_yaml(s, text, lines);
    return patch_script(s, text, lines);  // cli, dotlist
}

}  // namespace oomdx
