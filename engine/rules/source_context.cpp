#include "engine/rules/source_context.h"

#include <fstream>
#include <map>
#include <mutex>

#include <fmt/format.h>

namespace oomdx {

const char* rule_error_code_str(rule_error_code c) {
    switch (c) {
        case rule_error_code::yaml_syntax: return "E100";
        case rule_error_code::unknown_key: return "E101";
        case rule_error_code::missing_field: return "E102";
        case rule_error_code::unknown_fact: return "E103";
        case rule_error_code::type_mismatch: return "E104";
        case rule_error_code::syntax: return "E105";
        case rule_error_code::unknown_step: return "E106";
        case rule_error_code::unknown_action: return "E107";
        case rule_error_code::unknown_override: return "E108";
        case rule_error_code::duplicate_id: return "E109";
        case rule_error_code::bad_regex: return "E110";
        case rule_error_code::bad_value: return "E111";
        case rule_error_code::unknown_macro: return "E112";
        case rule_error_code::macro_cycle: return "E113";
        case rule_error_code::template_error: return "E114";
        case rule_error_code::translation_mismatch: return "E115";
        case rule_error_code::unused_macro: return "W201";
        case rule_error_code::unused_list: return "W202";
        case rule_error_code::missing_test: return "W203";
        case rule_error_code::duplicate_condition: return "W204";
        case rule_error_code::unknown_group: return "W205";
        case rule_error_code::missing_translation: return "W206";
        case rule_error_code::stale_translation: return "W207";
        case rule_error_code::orphan_translation: return "W208";
    }
    return "E000";
}

const char* rule_error_short(rule_error_code c) {
    switch (c) {
        case rule_error_code::yaml_syntax: return "yaml-syntax";
        case rule_error_code::unknown_key: return "unknown-key";
        case rule_error_code::missing_field: return "missing-field";
        case rule_error_code::unknown_fact: return "unknown-fact";
        case rule_error_code::type_mismatch: return "type-mismatch";
        case rule_error_code::syntax: return "syntax";
        case rule_error_code::unknown_step: return "unknown-step";
        case rule_error_code::unknown_action: return "unknown-action";
        case rule_error_code::unknown_override: return "unknown-override";
        case rule_error_code::duplicate_id: return "duplicate-id";
        case rule_error_code::bad_regex: return "bad-regex";
        case rule_error_code::bad_value: return "bad-value";
        case rule_error_code::unknown_macro: return "unknown-name";
        case rule_error_code::macro_cycle: return "macro-cycle";
        case rule_error_code::template_error: return "template";
        case rule_error_code::translation_mismatch: return "translation-mismatch";
        case rule_error_code::unused_macro: return "unused-macro";
        case rule_error_code::unused_list: return "unused-list";
        case rule_error_code::missing_test: return "missing-test";
        case rule_error_code::duplicate_condition: return "duplicate-condition";
        case rule_error_code::unknown_group: return "unknown-group";
        case rule_error_code::missing_translation: return "missing-translation";
        case rule_error_code::stale_translation: return "stale-translation";
        case rule_error_code::orphan_translation: return "orphan-translation";
    }
    return "?";
}

bool rule_error_is_warning(rule_error_code c) {
    switch (c) {
        case rule_error_code::unused_macro:
        case rule_error_code::unused_list:
        case rule_error_code::missing_test:
        case rule_error_code::duplicate_condition:
        case rule_error_code::unknown_group:
        case rule_error_code::missing_translation:
        case rule_error_code::stale_translation:
        case rule_error_code::orphan_translation: return true;
        default: return false;
    }
}

std::string source_line(const std::string& file, int line) {
    static std::mutex mu;
    static std::map<std::string, std::vector<std::string>> cache;
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(file);
    if (it == cache.end()) {
        std::vector<std::string> lines;
        std::ifstream in(file);
        std::string s;
        while (std::getline(in, s)) lines.push_back(s);
        it = cache.emplace(file, std::move(lines)).first;
    }
    if (line < 1 || line > static_cast<int>(it->second.size())) return {};
    return it->second[line - 1];
}

std::string rule_diagnostic::render() const {
    std::string out = fmt::format("{}:{}:{}: {} {} {}: {}", where.file, where.line, where.column,
                                  rule_error_is_warning(code) ? "warning" : "error",
                                  rule_error_code_str(code), rule_error_short(code), message);
    const std::string src = source_line(where.file, where.line);
    if (!src.empty()) {
        out += "\n    " + src + "\n    ";
        const int col = std::max(1, where.column);
        for (int i = 1; i < col && i <= static_cast<int>(src.size()); ++i)
            out += (src[i - 1] == '\t') ? '\t' : ' ';
        out += '^';
    }
    if (!item.empty())
        out += fmt::format("\n  in {} ({}:{}:{})", item, item_where.file, item_where.line,
                           item_where.column);
    return out;
}

}  // namespace oomdx
