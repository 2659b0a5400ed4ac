#include "engine/report/i18n_lint.h"

#include <set>

#include <fmt/format.h>

#include "engine/core/data_dir.h"
#include "engine/core/translations.h"
#include "engine/core/vocabulary.h"
#include "engine/report/report_phrases.h"
#include "engine/rules/rule_loader.h"
#include "engine/rules/rule_translations.h"

namespace oomdx {

namespace {

// Keys whose English is a producer's sentence, matched by template (no source to compare with).
const char* const k_produced[] = {"log.", "estimate.", "snapshot.", "adapter.", "plan.", "check.", "term."};

bool is_produced(const std::string& key) {
    for (const char* p : k_produced)
        if (key.rfind(p, 0) == 0) return true;
    return false;
}

}  // namespace

std::vector<rule_diagnostic> lint_knowledge_translations(const std::string& lang) {
    std::vector<rule_diagnostic> out;
    const std::string dir = data_path("knowledge/i18n/" + lang);
    translation_table table;
    try {
        table = translation_table::load_dir(dir, lang);
    } catch (const std::exception& e) {
        out.push_back({rule_error_code::yaml_syntax, {dir, 1, 1}, e.what(), "", {}});
        return out;
    }
    const std::string file_hint = fmt::format("knowledge/i18n/{}/", lang);
    std::set<std::string> expected;
    auto check = [&](rule_text t, const std::string& file) {
        expected.insert(t.key);
        check_translation(t, table, lang, file_hint + file, out);
    };
    const source_context phrases_src{"engine/report/report_phrases.cpp", 1, 1};
    for (const auto& [key, en] : report_phrases())
        check({key, en, text_kind::message, phrases_src}, key.rfind("html.", 0) == 0 ? "html.yaml" : "report.yaml");
    for (const auto& d : vocabulary::shipped().all())
        for (const auto& [value, en] : d.phrases)
            check({"phrase." + d.name + "." + value, en, text_kind::plain, {d.file, d.line, 1}}, "phrases.yaml");
    check({"template.unknown", "unknown", text_kind::plain, {"engine/rules/text_template.cpp", 1, 1}}, "phrases.yaml");
    check({"template.list_sep", ", ", text_kind::plain, {"engine/rules/text_template.cpp", 1, 1}}, "phrases.yaml");
    for (const auto& a : shipped_actions())
        if (!a.desc.empty())
            check({"action." + a.id, a.desc, text_kind::plain, {data_path("knowledge/actions.yaml"), 1, 1}}, "actions.yaml");
    for (const auto& key : table.keys()) {
        const translation* t = table.find(key);
        if (is_produced(key)) {
            // The template is its own source: a translation with the same placeholders.
            check({key, t->en, text_kind::message, {t->file, t->line, 1}}, "");
            continue;
        }
        if (!expected.count(key))
            out.push_back({rule_error_code::orphan_translation, {t->file, t->line, 1},
                           fmt::format("'{}' translates a text the program no longer has (remove it)", key), "", {}});
    }
    return out;
}

}  // namespace oomdx
