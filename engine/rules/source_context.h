// A 1-based location in a rule file, and the diagnostics reported against it.
#pragma once

#include <string>
#include <vector>

namespace oomdx {

struct source_context {
    std::string file;
    int line = 0;    // 1-based
    int column = 0;  // 1-based
};

enum class rule_error_code {
    yaml_syntax,        // E100
    unknown_key,        // E101 (warning in non-strict mode)
    missing_field,      // E102
    unknown_fact,       // E103
    type_mismatch,      // E104
    syntax,             // E105
    unknown_step,       // E106
    unknown_action,     // E107
    unknown_override,   // E108
    duplicate_id,       // E109
    bad_regex,          // E110
    bad_value,          // E111
    unknown_macro,      // E112
    macro_cycle,        // E113
    template_error,     // E114
    translation_mismatch,  // E115 a translation uses other facts or expressions than the English text
    unused_macro,       // W201
    unused_list,        // W202
    missing_test,       // W203
    duplicate_condition,// W204
    unknown_group,      // W205
    missing_translation,   // W206 a text has no translation in a report language
    stale_translation,     // W207 the English text changed since it was translated
    orphan_translation,    // W208 a translation of a text that no longer exists
};

const char* rule_error_code_str(rule_error_code c);  // "E103"
const char* rule_error_short(rule_error_code c);     // "unknown-fact"
bool rule_error_is_warning(rule_error_code c);

struct rule_diagnostic {
    rule_error_code code;
    source_context where;
    std::string message;
    std::string item;  // "rule 'x'", "macro 'y'"; empty when file-level
    source_context item_where;

    // file:line:col: error E103 unknown-fact: message, the source line, a caret, the item chain.
    std::string render() const;
};

// Reads line N (1-based) of a file, for caret display; empty when unavailable.
std::string source_line(const std::string& file, int line);

}  // namespace oomdx
