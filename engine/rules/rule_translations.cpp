#include "engine/rules/rule_translations.h"

#include "engine/core/yaml_node.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/utf8.h"
#include "engine/core/message.h"
#include "engine/core/text_file.h"
#include "engine/core/yaml_cache.h"
#include "engine/core/yaml_file.h"
#include "engine/rules/text_template.h"

namespace oomdx {

namespace fs = std::filesystem;

std::vector<rule_text> rule_texts(const rule_def& r) {
    std::vector<rule_text> out;
    const std::string base = "rule." + r.id + ".";
    auto add = [&](std::string key, const std::string& en, text_kind kind, const source_context& where) {
        if (!en.empty()) out.push_back({base + std::move(key), en, kind, where});
    };
    add("finding", r.finding, text_kind::text, r.where);
    add("rationale", r.rationale, text_kind::plain, r.where);
    for (size_t i = 0; i < r.recommendations.size(); ++i) {
        const recommendation_def& d = r.recommendations[i];
        const std::string p = fmt::format("recommend.{}.", i);
        add(p + "text", d.text, text_kind::text, d.where);
        add(p + "rationale", d.rationale, text_kind::plain, d.where);
        add(p + "confirm", d.confirm, text_kind::text, d.where);
        for (const auto& [key, v] : d.overrides) {
            if (key.rfind("code.", 0) != 0) continue;
            if (v.expr) add(p + "set." + key, v.text, text_kind::expression, d.where);
            else if (v.literal.is_string()) add(p + "set." + key, v.literal.as_string(), text_kind::plain, d.where);
        }
    }
    for (size_t i = 0; i < r.routes.size(); ++i)
        add(fmt::format("route.{}.why", i), r.routes[i].why.empty() ? r.desc : r.routes[i].why, text_kind::text,
            r.routes[i].where);
    for (size_t i = 0; i < r.next_steps.size(); ++i)
        add(fmt::format("next_steps.{}", i), r.next_steps[i], text_kind::text, r.where);
    for (size_t i = 0; i < r.uncertain.size(); ++i)
        add(fmt::format("uncertain.{}", i), r.uncertain[i], text_kind::text, r.where);
    return out;
}

std::vector<rule_text> step_texts(const step_def& s) {
    std::vector<rule_text> out;
    if (!s.title.empty()) out.push_back({"step." + s.id + ".title", s.title, text_kind::plain, s.where});
    if (!s.goal.empty()) out.push_back({"step." + s.id + ".goal", s.goal, text_kind::plain, s.where});
    return out;
}

std::string translation_file(const std::string& pack, const std::string& lang) {
    const fs::path p(pack);
    return (p.parent_path() / "i18n" / lang / p.filename()).string();
}

bool is_translation_file(const std::string& path) {
    for (const auto& part : fs::path(path))
        if (part == "i18n") return true;
    return false;
}

namespace {

// The names an expression reads, outside its string literals: dotted facts and (rev40) the macros it names, undotted
// words that are neither a function call, an operator word, a literal nor a size unit after a number. A translation
// that writes a macro's value out (the CUDA spelling of a code line) instead of naming it says the wrong thing on
// the other device.
std::vector<std::string> expression_names(const std::string& e) {
    static const std::set<std::string> k_words{"and", "or", "not", "in", "matches", "true", "false", "null",
                                               "B", "KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB"};
    std::vector<std::string> out;
    for (size_t i = 0; i < e.size();) {
        const char c = e[i];
        if (c == '\'' || c == '"') {
            const size_t j = e.find(c, i + 1);
            i = j == std::string::npos ? e.size() : j + 1;
            continue;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            while (i < e.size() && (std::isalnum(static_cast<unsigned char>(e[i])) || e[i] == '.')) ++i;
            continue;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t j = i;
            while (j < e.size() && (std::isalnum(static_cast<unsigned char>(e[j])) || e[j] == '_' || e[j] == '.')) ++j;
            const std::string name = e.substr(i, j - i);
            size_t k = j;
            while (k < e.size() && std::isspace(static_cast<unsigned char>(e[k]))) ++k;
            const bool call = k < e.size() && e[k] == '(';
            if (name.find('.') != std::string::npos || (!call && !k_words.count(name))) out.push_back(name);
            i = j;
            continue;
        }
        ++i;
    }
    return out;
}

std::string joined(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? "none" : s;
}

std::string shorten(const std::string& s) {
    std::string one;
    for (char c : s) one += c == '\n' ? ' ' : c;
    return one.size() > 120 ? std::string(utf8_prefix(one, 117)) + "..." : one;
}

}  // namespace

void check_translation(const rule_text& t, const translation_table& table, const std::string& lang,
                       const std::string& file, std::vector<rule_diagnostic>& out) {
    const translation* tr = table.find(t.key);
    if (!tr || tr->text.empty()) {
        out.push_back({rule_error_code::missing_translation, t.where,
                       fmt::format("'{}' has no {} translation (add it to {}): \"{}\"", t.key, lang, file, shorten(t.en)),
                       "", {}});
        return;
    }
    const source_context at{tr->file, tr->line, 1};
    if (!same_text(tr->en, t.en)) {
        out.push_back({rule_error_code::stale_translation, at,
                       fmt::format("'{}': the English text changed since it was translated; it is now: \"{}\"", t.key,
                                   shorten(t.en)),
                       "", {}});
        return;
    }
    std::vector<std::string> want, got;
    bool well_formed = true;
    switch (t.kind) {
        case text_kind::plain: return;
        case text_kind::text:
            want = template_placeholders(t.en);
            got = template_placeholders(tr->text, &well_formed);
            break;
        case text_kind::expression:
            want = expression_names(t.en.substr(t.en.rfind('=', 0) == 0 ? 1 : 0));
            // a placeholder names a fact ({estimate.x|bytes}) or is an expression ({= macro + ...}) whose names count
            for (const auto& p : template_placeholders(tr->text, &well_formed)) {
                if (p.rfind('=', 0) != 0) {
                    got.push_back(p.substr(0, p.find('|')));
                    continue;
                }
                for (auto& n : expression_names(p.substr(1, p.find('|') == std::string::npos ? std::string::npos : p.find('|') - 1)))
                    got.push_back(std::move(n));
            }
            std::sort(want.begin(), want.end());
            want.erase(std::unique(want.begin(), want.end()), want.end());
            std::sort(got.begin(), got.end());
            got.erase(std::unique(got.begin(), got.end()), got.end());
            break;
        case text_kind::message:
            want = message_placeholders(t.en);
            got = message_placeholders(tr->text);
            break;
    }
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    if (!well_formed)
        out.push_back({rule_error_code::translation_mismatch, at,
                       fmt::format("'{}': the {} text has a '{{' without its '}}'", t.key, lang), "", {}});
    else if (want != got)
        out.push_back({rule_error_code::translation_mismatch, at,
                       fmt::format("'{}': the {} text uses {{{}}} but the English uses {{{}}}", t.key, lang, joined(got),
                                   joined(want)),
                       "", {}});
}

namespace {

class reader {
public:
    reader(std::string file, std::string lang, translation_table& table, std::vector<rule_diagnostic>& diags)
        : m_file(std::move(file)), m_lang(std::move(lang)), m_table(table), m_diags(diags) {}

    void run() {
        YAML::Node root;
        try {
            root = load_yaml_cached(m_file, read_text_file(m_file, "a translation file (YAML)", /*allow_empty=*/true));
        } catch (const YAML::Exception& e) {
            diag(rule_error_code::yaml_syntax, {m_file, e.mark.line + 1, e.mark.column + 1}, yaml_error_text(e));
            return;
        } catch (const input_error& e) {
            diag(rule_error_code::yaml_syntax, {m_file, 1, 1}, e.what());
            return;
        }
        if (root.IsNull()) return;
        if (!root.IsSequence()) {
            diag(rule_error_code::yaml_syntax, at(root), "a translation file is a list of '- rule: id' and '- step: id' items");
            return;
        }
        for (const auto& item : root) {
            if (!item.IsMap() || (!item["rule"] && !item["step"])) {
                diag(rule_error_code::yaml_syntax, at(item), "each item is '- rule: id' or '- step: id' with its texts");
                continue;
            }
            if (item["rule"]) read_rule(item);
            else read_step(item);
        }
    }

private:
    source_context at(const YAML::Node& n) const { return {m_file, n.Mark().line + 1, n.Mark().column + 1}; }

    void diag(rule_error_code code, source_context where, std::string msg) {
        m_diags.push_back({code, std::move(where), std::move(msg), "", {}});
    }

    // {en: ..., <lang>: ...} under `key`.
    void pair(const YAML::Node& n, const std::string& key) {
        if (!n.IsMap()) {
            diag(rule_error_code::bad_value, at(n), fmt::format("'{}' must be {{en: ..., {}: ...}}", key, m_lang));
            return;
        }
        for (const auto& kv : n) {
            const std::string k = kv.first.as<std::string>("");
            if (k != "en" && k != m_lang && k != "note")
                diag(rule_error_code::unknown_key, at(kv.first), fmt::format("unknown key '{}' (en, {}, note)", k, m_lang));
        }
        if (!n["en"] || !n["en"].IsScalar()) {
            diag(rule_error_code::missing_field, at(n), fmt::format("'{}' needs the English text it translates (en:)", key));
            return;
        }
        translation t;
        t.en = n["en"].as<std::string>("");
        t.text = n[m_lang] && n[m_lang].IsScalar() ? n[m_lang].as<std::string>("") : "";
        t.file = m_file;
        t.line = n.Mark().line + 1;
        m_table.add(key, std::move(t));
    }

    void fields(const YAML::Node& item, std::initializer_list<const char*> allowed) {
        for (const auto& kv : item) {
            const std::string k = kv.first.as<std::string>("");
            bool ok = false;
            for (const char* a : allowed) ok = ok || k == a;
            if (!ok) diag(rule_error_code::unknown_key, at(kv.first), fmt::format("unknown key '{}'", k));
        }
    }

    template <class F>
    void each(const YAML::Node& list, const char* what, F&& f) {
        if (!list) return;
        if (!list.IsSequence()) {
            diag(rule_error_code::bad_value, at(list), fmt::format("'{}' is a list, by position", what));
            return;
        }
        size_t i = 0;
        for (const auto& x : list) f(x, i++);
    }

    void read_rule(const YAML::Node& item) {
        const std::string base = "rule." + item["rule"].as<std::string>("") + ".";
        fields(item, {"rule", "finding", "rationale", "recommend", "route", "next_steps", "uncertain"});
        if (item["finding"]) pair(item["finding"], base + "finding");
        if (item["rationale"]) pair(item["rationale"], base + "rationale");
        each(item["recommend"], "recommend", [&](const YAML::Node& x, size_t i) {
            if (x.IsNull()) return;
            const std::string p = fmt::format("{}recommend.{}.", base, i);
            if (!x.IsMap()) {
                diag(rule_error_code::bad_value, at(x), "a recommendation's texts are a map (text, rationale, confirm, set)");
                return;
            }
            fields(x, {"text", "rationale", "confirm", "set"});
            for (const char* k : {"text", "rationale", "confirm"})
                if (x[k]) pair(x[k], p + k);
            if (const YAML::Node set = x["set"]) {
                if (!set.IsMap()) diag(rule_error_code::bad_value, at(set), "set is a map of key: {en, zh}");
                else
                    for (const auto& kv : set) pair(kv.second, p + "set." + kv.first.as<std::string>(""));
            }
        });
        each(item["route"], "route", [&](const YAML::Node& x, size_t i) {
            if (x.IsNull() || (x.IsMap() && x.size() == 0)) return;
            if (!x.IsMap() || !x["why"]) {
                diag(rule_error_code::bad_value, at(x), "a route's text is {why: {en: ..., zh: ...}}");
                return;
            }
            fields(x, {"why"});
            pair(x["why"], fmt::format("{}route.{}.why", base, i));
        });
        for (const char* k : {"next_steps", "uncertain"})
            each(item[k], k, [&](const YAML::Node& x, size_t i) {
                if (!x.IsNull()) pair(x, fmt::format("{}{}.{}", base, k, i));
            });
    }

    void read_step(const YAML::Node& item) {
        const std::string base = "step." + item["step"].as<std::string>("") + ".";
        fields(item, {"step", "title", "goal"});
        if (item["title"]) pair(item["title"], base + "title");
        if (item["goal"]) pair(item["goal"], base + "goal");
    }

    std::string m_file, m_lang;
    translation_table& m_table;
    std::vector<rule_diagnostic>& m_diags;
};

}  // namespace

void read_rule_translations(const std::string& file, const std::string& lang, translation_table& table,
                            std::vector<rule_diagnostic>& diags) {
    reader(file, lang, table, diags).run();
}

}  // namespace oomdx
