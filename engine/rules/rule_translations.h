// The texts of rules and steps that a report shows, by translation key, and the translation file
// beside each pack: rules/i18n/<lang>/<pack>.yaml. Each text keeps a copy of the English it
// translates, so that a changed rule text makes its translation stale (`oomdx rules lint`).
//
//   - rule: step0_caching_allocator_oom
//     finding: {en: "... {oom.requested_bytes|bytes}.", zh: "... {oom.requested_bytes|bytes} ..."}
//     rationale: {en: ..., zh: ...}
//     recommend:                      # by position
//       - text: {en: ..., zh: ...}
//         rationale: {en: ..., zh: ...}
//         confirm: {en: ..., zh: ...}
//         set: {code.fix: {en: ..., zh: ...}}   # code.* values, shown as `# code:` lines
//     route: [{why: {en: ..., zh: ...}}]         # by position; without `why` the rule's desc is shown
//     next_steps: [{en: ..., zh: ...}]
//     uncertain: [{en: ..., zh: ...}]
//   - step: step0
//     title: {en: ..., zh: ...}
//     goal: {en: ..., zh: ...}
//
// Keys: rule.<id>.finding, rule.<id>.rationale, rule.<id>.recommend.<i>.text|rationale|confirm,
// rule.<id>.recommend.<i>.set.<key>, rule.<id>.route.<i>.why, rule.<id>.next_steps.<i>,
// rule.<id>.uncertain.<i>, step.<id>.title, step.<id>.goal.
#pragma once

#include <string>
#include <vector>

#include "engine/core/translations.h"
#include "engine/rules/rule_set.h"
#include "engine/rules/source_context.h"

namespace oomdx {

enum class text_kind {
    plain,       // shown as written (rationale, titles)
    text,        // a template over facts ({fact|bytes})
    expression,  // an "= expression" override value; its translation is a template over the same facts
    message,     // a fixed phrase of the program with named arguments ({requested}), engine/core/message.h
};

struct rule_text {
    std::string key;
    std::string en;  // the current English text
    text_kind kind = text_kind::text;
    source_context where;
};

std::vector<rule_text> rule_texts(const rule_def& r);
std::vector<rule_text> step_texts(const step_def& s);

// <dir of pack>/i18n/<lang>/<file name of pack>.
std::string translation_file(const std::string& pack, const std::string& lang);
// True for files under an i18n/ folder (not rule packs).
bool is_translation_file(const std::string& path);
// Checks the translation of one text: W206 missing, W207 stale, E115 when it uses other
// placeholders (facts, expressions, arguments) than the English text. `file` names where the
// translation belongs, for the message.
void check_translation(const rule_text& t, const translation_table& table, const std::string& lang,
                       const std::string& file, std::vector<rule_diagnostic>& out);
// Reads one translation file into `table`; malformed entries become diagnostics (E100, E101, E102).
void read_rule_translations(const std::string& file, const std::string& lang, translation_table& table,
                            std::vector<rule_diagnostic>& diags);

}  // namespace oomdx
