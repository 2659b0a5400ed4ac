#include "engine/core/translations.h"

#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/message.h"
#include "engine/core/yaml_file.h"

namespace oomdx {

const std::vector<std::string>& report_languages() {
    static const std::vector<std::string> langs = {"zh"};
    return langs;
}

bool same_text(std::string_view a, std::string_view b) {
    auto next = [](std::string_view s, size_t& i) -> int {  // next char, runs of space as one ' '
        const auto space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
        if (i >= s.size()) return -1;
        if (space(s[i])) {
            while (i < s.size() && space(s[i])) ++i;
            return i >= s.size() ? -1 : ' ';
        }
        return static_cast<unsigned char>(s[i++]);
    };
    auto trim = [](std::string_view s) {
        const size_t a0 = s.find_first_not_of(" \n\t\r");
        if (a0 == std::string_view::npos) return std::string_view{};
        return s.substr(a0, s.find_last_not_of(" \n\t\r") - a0 + 1);
    };
    a = trim(a);
    b = trim(b);
    size_t i = 0, j = 0;
    for (;;) {
        const int x = next(a, i), y = next(b, j);
        if (x != y) return false;
        if (x < 0) return true;
    }
}

void translation_table::add(const std::string& key, translation t) {
    if (!m_map.count(key)) m_order.push_back(key);
    if (key.rfind("term.", 0) == 0 && !t.text.empty()) m_terms[t.en] = t.text;
    m_map[key] = std::move(t);
}

const translation* translation_table::find(const std::string& key) const {
    auto it = m_map.find(key);
    return it == m_map.end() ? nullptr : &it->second;
}

std::string translation_table::pick(const std::string& key, const std::string& en) const {
    const translation* t = find(key);
    if (!t || t->text.empty() || !same_text(t->en, en)) return en;
    return t->text;
}

std::optional<std::string> translation_table::translate_produced(const std::string& prefix,
                                                                 std::string_view english) const {
    return translate_produced(prefix, english, 0);
}

std::optional<std::string> translation_table::translate_produced(const std::string& prefix, std::string_view english,
                                                                 int depth) const {
    const std::string parts = prefix + "part.";
    auto translate_args = [&](message_args& args) {
        for (auto& [name, v] : args) {
            if (auto term = m_terms.find(v); term != m_terms.end()) v = term->second;
            else if (depth < 1)  // an argument that is itself a sentence of the same kind
                if (auto inner = translate_produced(prefix, v, depth + 1)) v = *inner;
        }
    };
    // A template of the whole sentence.
    for (const auto& key : m_order) {
        if (key.rfind(prefix, 0) != 0 || key.rfind(parts, 0) == 0) continue;
        const translation& t = m_map.at(key);
        if (t.text.empty()) continue;
        auto args = match_message(t.en, english);
        if (!args) continue;
        translate_args(*args);
        return format_message(t.text, *args);
    }
    // Else its parts: each `<prefix>part.*` template replaces the fragments it matches, in order.
    std::string out(english);
    bool any = false;
    for (const auto& key : m_order) {
        if (key.rfind(parts, 0) != 0) continue;
        const translation& t = m_map.at(key);
        const size_t brace = t.en.find('{');
        const std::string lead = t.en.substr(0, brace);  // the literal a fragment starts with
        if (t.text.empty() || lead.empty()) continue;
        for (size_t pos = out.find(lead); pos != std::string::npos; pos = out.find(lead, pos)) {
            auto m = match_message_prefix(t.en, std::string_view(out).substr(pos));
            if (!m) {
                ++pos;
                continue;
            }
            translate_args(m->first);
            const std::string zh = format_message(t.text, m->first);
            out.replace(pos, m->second, zh);
            pos += zh.size();
            any = true;
        }
    }
    if (any) return out;
    return std::nullopt;
}

std::string translation_table::produced(const std::string& prefix, std::string_view english) const {
    auto t = translate_produced(prefix, english);
    return t ? *t : std::string(english);
}

translation_table translation_table::load_dir(const std::string& dir, const std::string& lang) {
    translation_table out;
    std::error_code ec;
    const std::vector<std::string> files = yaml_files_in(dir, ec);
    std::map<std::string, std::string> seen;  // key -> file:line
    for (const auto& file : files) {
        const YAML::Node root = load_yaml_file(file);
        if (root.IsNull()) continue;
        if (!root.IsMap())
            throw input_error::at_line(file, root.Mark().line + 1,
                                       fmt::format("a translation file is a map: key: {{en: ..., {}: ...}}", lang));
        for (const auto& kv : root) {
            const std::string key = kv.first.as<std::string>("");
            const int line = kv.first.Mark().line + 1;
            const YAML::Node& v = kv.second;
            if (!v.IsMap())
                throw input_error::at_line(file, line, fmt::format("'{}' must be a map {{en: ..., {}: ...}}", key, lang));
            for (const auto& f : v) {
                const std::string k = f.first.as<std::string>("");
                if (k != "en" && k != lang && k != "note")
                    throw input_error::at_line(file, f.first.Mark().line + 1,
                                               fmt::format("'{}': unknown key '{}' (en, {}, note)", key, k, lang));
                if (!f.second.IsScalar() && !f.second.IsNull())
                    throw input_error::at_line(file, f.first.Mark().line + 1,
                                               fmt::format("'{}': '{}' must be a string", key, k));
            }
            if (!v["en"]) throw input_error::at_line(file, line, fmt::format("'{}' has no 'en' text", key));
            if (auto s = seen.find(key); s != seen.end())
                throw input_error::at_line(file, line, fmt::format("'{}' is translated twice (first at {})", key, s->second));
            seen[key] = fmt::format("{}:{}", file, line);
            translation t;
            t.en = v["en"].as<std::string>("");
            t.text = v[lang] ? v[lang].as<std::string>("") : "";
            t.file = file;
            t.line = line;
            out.add(key, std::move(t));
        }
    }
    return out;
}

const translation_table& translation_table::shipped(const std::string& lang) {
    static std::mutex mu;
    static std::map<std::string, std::unique_ptr<translation_table>> cache;
    std::lock_guard<std::mutex> lock(mu);
    auto& slot = cache[lang];
    if (!slot) {
        slot = std::make_unique<translation_table>();
        if (lang != "en") *slot = load_dir(data_path("knowledge/i18n/" + lang), lang);
    }
    return *slot;
}

}  // namespace oomdx
