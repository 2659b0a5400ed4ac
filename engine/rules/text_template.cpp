#include "engine/rules/text_template.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/core/cjk_spacing.h"
#include "engine/core/fact_store.h"
#include "engine/core/translations.h"
#include "engine/core/vocabulary.h"

namespace oomdx {

namespace {

struct placeholder {
    size_t start = 0, end = 0;  // [start, end) including braces
    std::string body;           // expression text
    std::string filter;
    bool is_expr = false;
};

std::string trim(const std::string& s) {
    size_t a = s.find_first_not_of(" \t\n");
    if (a == std::string::npos) return {};
    size_t b = s.find_last_not_of(" \t\n");
    return s.substr(a, b - a + 1);
}

std::vector<placeholder> scan(const std::string& t, std::vector<template_error>* errors) {
    std::vector<placeholder> out;
    size_t i = 0;
    while ((i = t.find('{', i)) != std::string::npos) {
        if (i + 1 < t.size() && t[i + 1] == '{') {  // "{{" is a literal brace
            i += 2;
            continue;
        }
        size_t j = t.find('}', i);
        if (j == std::string::npos) {
            if (errors) errors->push_back({static_cast<int>(i), "unclosed '{' in text"});
            break;
        }
        placeholder p;
        p.start = i;
        p.end = j + 1;
        std::string inner = t.substr(i + 1, j - i - 1);
        size_t bar = inner.rfind('|');
        if (bar != std::string::npos) {
            p.filter = trim(inner.substr(bar + 1));
            inner = inner.substr(0, bar);
        }
        inner = trim(inner);
        if (!inner.empty() && inner[0] == '=') {
            p.is_expr = true;
            inner = trim(inner.substr(1));
        }
        p.body = inner;
        out.push_back(p);
        i = j + 1;
    }
    return out;
}

std::string apply_filter(const value& v, const std::string& filter, const fact_decl* decl,
                         const translation_table* tr) {
    if (v.is_null()) return tr ? tr->pick("template.unknown", "unknown") : "unknown";
    if (filter == "phrase") {
        const std::string key = v.is_string() ? v.as_string() : v.to_string();
        if (decl) {
            auto it = decl->phrases.find(key);
            if (it != decl->phrases.end())
                return tr ? tr->pick("phrase." + decl->name + "." + key, it->second) : it->second;
        }
        return key;
    }
    // rev28: a list written "a, b, c" (plan.overrides) joined with the language's separator ("，" in Chinese)
    if (filter == "list") {
        const std::string sep = tr ? tr->pick("template.list_sep", ", ") : ", ";
        // cases69: a list value (job.missing_files) is its items joined, strings without quotes
        if (v.is_list()) {
            std::string out;
            for (const auto& item : v.as_list()) {
                if (!out.empty()) out += sep;
                out += item.is_string() ? item.as_string() : item.to_string();
            }
            return out;
        }
        std::string s = v.is_string() ? v.as_string() : v.to_string();
        if (sep == ", ") return s;
        std::string out;
        for (size_t i = 0; i < s.size();) {
            if (s.compare(i, 2, ", ") == 0) {
                out += sep;
                i += 2;
            } else {
                out += s[i++];
            }
        }
        return out;
    }
    if (filter.empty() || filter == "raw") {
        if (filter == "raw") return v.is_string() ? v.as_string() : v.to_string();
        return render_value(v, decl);
    }
    if (!v.is_numeric()) return v.is_string() ? v.as_string() : v.to_string();
    const double x = v.as_number();
    if (filter == "bytes") return format_bytes(static_cast<std::int64_t>(std::llround(x)));
    if (filter == "pct") return fmt::format("{:.1f}%", x * 100.0);
    if (filter == "int") return fmt::format("{}", static_cast<std::int64_t>(std::llround(x)));
    if (filter == "num") return fmt::format("{:.3g}", x);
    if (filter == "gib") return fmt::format("{:.1f}", x / (1024.0 * 1024 * 1024));
    return v.to_string();
}

// The fact whose phrases `|phrase` uses: the expression itself, or the first argument of
// coalesce(fact, 'default').
const expr_node* phrase_fact(const expr_node* root) {
    if (root && root->op == expr_op::call && root->name == "coalesce" && !root->kids.empty()) root = root->kids[0].get();
    return root && root->op == expr_op::fact ? root : nullptr;
}

bool known_filter(const std::string& f) {
    return f.empty() || f == "bytes" || f == "pct" || f == "int" || f == "num" || f == "raw" || f == "gib" ||
           f == "phrase" || f == "list";
}

}  // namespace

std::vector<std::string> check_template(const std::string& tmpl, const name_resolver& resolver,
                                        std::vector<template_error>& errors) {
    std::vector<std::string> facts;
    for (const auto& p : scan(tmpl, &errors)) {
        if (!known_filter(p.filter)) {
            errors.push_back({static_cast<int>(p.start), fmt::format("unknown filter '{}'", p.filter)});
            continue;
        }
        parsed_expr e = parse_expression(p.body, resolver);
        for (const auto& err : e.errors)
            errors.push_back({static_cast<int>(p.start) + 1 + err.offset, err.message});
        for (const auto& f : e.facts) facts.push_back(f);
        if (p.filter == "phrase" && phrase_fact(e.root.get()) && resolver.vocab) {
            const fact_decl* d = resolver.vocab->find(phrase_fact(e.root.get())->name);
            if (d && !d->values.empty())
                for (const auto& v : d->values)
                    if (!d->phrases.count(v))
                        errors.push_back({static_cast<int>(p.start),
                                          fmt::format("'{}' has no phrase for its value '{}' (knowledge/facts)", d->name, v)});
        }
        if (!p.is_expr && e.root && e.root->op != expr_op::fact)
            errors.push_back({static_cast<int>(p.start),
                              fmt::format("'{}' is not a fact name; write '{{= ...}}' for an expression", p.body)});
    }
    return facts;
}

std::vector<std::string> template_placeholders(const std::string& tmpl, bool* well_formed) {
    std::vector<std::string> out;
    std::vector<template_error> errs;
    const auto found = scan(tmpl, &errs);
    if (well_formed) *well_formed = errs.empty();
    for (const auto& p : found) {
        // String literals are text (a translation words them in its language): compared empty.
        const std::string raw = (p.is_expr ? "=" : "") + p.body + (p.filter.empty() ? "" : "|" + p.filter);
        std::string s;
        char quote = 0;
        for (char c : raw) {
            if (quote) {
                if (c == quote) quote = 0, s += c;
                continue;
            }
            if (c == '\'' || c == '"') quote = c;
            if (c != ' ' && c != '\t' && c != '\n') s += c;
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::string render_template(const std::string& tmpl, const fact_store& facts, const name_resolver* names,
                            const translation_table* tr) {
    std::string out;
    std::vector<size_t> seams;  // where each value starts and ends: Chinese beside it takes a space
    size_t pos = 0;
    name_resolver r;
    if (names) r = *names;
    r.vocab = facts.vocab();
    for (const auto& p : scan(tmpl, nullptr)) {
        out += tmpl.substr(pos, p.start - pos);
        pos = p.end;
        parsed_expr e = parse_expression(p.body, r);
        if (!e.root) {
            out += "?";
            continue;
        }
        const fact_decl* decl = nullptr;
        const expr_node* f = p.filter == "phrase" ? phrase_fact(e.root.get()) : e.root.get();
        if (f && f->op == expr_op::fact && facts.vocab()) decl = facts.vocab()->find(f->name);
        seams.push_back(out.size());
        out += apply_filter(evaluate(*e.root, facts).val, p.filter, decl, tr);
        seams.push_back(out.size());
    }
    out += tmpl.substr(pos);
    space_cjk_seams(out, seams);
    // "{{" renders as "{"
    std::string clean;
    for (size_t i = 0; i < out.size(); ++i) {
        clean += out[i];
        if (out[i] == '{' && i + 1 < out.size() && out[i + 1] == '{') ++i;
    }
    return clean;
}

}  // namespace oomdx
