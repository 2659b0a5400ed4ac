// Config-registry functions as text: a small scanner that knows Python strings, comments and
// brackets, enough to find a function's returned call and edit its keyword arguments.
#include "parsers/config/registry_edit.h"

#include <cctype>
#include <stdexcept>

namespace oomdx {

namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Offset just past the string literal starting at i (quote at text[i]).
std::size_t skip_string(std::string_view t, std::size_t i) {
    const char q = t[i];
    const bool triple = i + 2 < t.size() && t[i + 1] == q && t[i + 2] == q;
    i += triple ? 3 : 1;
    while (i < t.size()) {
        if (t[i] == '\\') { i += 2; continue; }
        if (triple) {
            if (t[i] == q && i + 2 < t.size() && t[i + 1] == q && t[i + 2] == q) return i + 3;
        } else if (t[i] == q || t[i] == '\n') {
            return i + 1;
        }
        ++i;
    }
    return t.size();
}

// Offset of the bracket closing the one at `open`, or npos.
std::size_t match_bracket(std::string_view t, std::size_t open) {
    int depth = 0;
    for (std::size_t i = open; i < t.size(); ++i) {
        const char c = t[i];
        if (c == '"' || c == '\'') { i = skip_string(t, i) - 1; continue; }
        if (c == '#') { while (i < t.size() && t[i] != '\n') ++i; continue; }
        if (c == '(' || c == '[' || c == '{') ++depth;
        if (c == ')' || c == ']' || c == '}') {
            if (--depth == 0) return i;
        }
    }
    return std::string_view::npos;
}

std::size_t skip_space(std::string_view t, std::size_t i) {
    while (i < t.size()) {
        if (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r') { ++i; continue; }
        if (t[i] == '#') { while (i < t.size() && t[i] != '\n') ++i; continue; }
        if (t[i] == '\\' && i + 1 < t.size() && t[i + 1] == '\n') { i += 2; continue; }
        break;
    }
    return i;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// Dotted name at i ("FullAC.Config"); end offset in `end`.
std::string dotted_name(std::string_view t, std::size_t i, std::size_t& end) {
    std::size_t j = i;
    while (j < t.size() && (ident_char(t[j]) || (t[j] == '.' && j > i))) ++j;
    end = j;
    return std::string(t.substr(i, j - i));
}

// Keyword arguments of the argument list between open and close.
std::vector<registry_kwarg> kwargs_of(std::string_view t, std::size_t open, std::size_t close) {
    std::vector<registry_kwarg> out;
    std::size_t i = open + 1;
    while (i < close) {
        i = skip_space(t, i);
        if (i >= close) break;
        // One argument: up to the next top-level comma.
        std::size_t end = i;
        int depth = 0;
        for (; end < close; ++end) {
            const char c = t[end];
            if (c == '"' || c == '\'') { end = skip_string(t, end) - 1; continue; }
            if (c == '#') { while (end < close && t[end] != '\n') ++end; continue; }
            if (c == '(' || c == '[' || c == '{') ++depth;
            if (c == ')' || c == ']' || c == '}') --depth;
            if (c == ',' && depth == 0) break;
        }
        std::size_t name_end = i;
        while (name_end < end && ident_char(t[name_end])) ++name_end;
        std::size_t eq = skip_space(t, name_end);
        if (name_end > i && eq < end && t[eq] == '=' && (eq + 1 >= end || t[eq + 1] != '=')) {
            registry_kwarg k;
            k.name = std::string(t.substr(i, name_end - i));
            k.value_begin = skip_space(t, eq + 1);
            std::size_t ve = end;
            while (ve > k.value_begin && std::isspace(static_cast<unsigned char>(t[ve - 1]))) --ve;
            k.value_end = ve;
            std::size_t ce = 0;
            std::string callee = dotted_name(t, k.value_begin, ce);
            const std::size_t paren = skip_space(t, ce);
            if (!callee.empty() && paren < ve && t[paren] == '(') {
                const std::size_t pc = match_bracket(t, paren);
                if (pc != std::string_view::npos && pc + 1 == ve) {
                    k.callee = callee;
                    k.args_open = paren;
                    k.args_close = pc;
                }
            }
            out.push_back(std::move(k));
        }
        i = end + 1;
    }
    return out;
}

registry_function_view require(std::string_view text, const std::string& function) {
    registry_function_view v = view_registry_function(text, function);
    if (!v.found) throw std::invalid_argument("no function '" + function + "' with a return statement");
    return v;
}

// Inserts `item` as the last argument of the list between open and close.
std::string append_argument(std::string_view t, std::size_t open, std::size_t close, const std::string& item) {
    std::size_t last = close;
    while (last > open + 1 && std::isspace(static_cast<unsigned char>(t[last - 1]))) --last;
    std::string out(t.substr(0, last));
    if (last == open + 1) out += item;
    else if (t[last - 1] == ',') out += " " + item + ",";
    else out += ", " + item;
    out += t.substr(last);
    return out;
}

}  // namespace

const registry_kwarg* registry_function_view::kwarg(const std::string& name) const {
    for (const auto& k : kwargs)
        if (k.name == name) return &k;
    return nullptr;
}

registry_function_view view_registry_function(std::string_view t, const std::string& function) {
    registry_function_view v;
    // `def NAME(` at the start of a line.
    std::size_t def = std::string_view::npos;
    for (std::size_t ls = 0; ls < t.size();) {
        const std::size_t le = t.find('\n', ls);
        const std::string_view line = t.substr(ls, (le == std::string_view::npos ? t.size() : le) - ls);
        if (line.rfind("def ", 0) == 0) {
            std::size_t e = 0;
            const std::string name = dotted_name(line, trim(line.substr(4)).data() - line.data(), e);
            if (name == function) { def = ls; break; }
        }
        if (le == std::string_view::npos) break;
        ls = le + 1;
    }
    if (def == std::string_view::npos) return v;
    // The signature ends at the ':' after its parenthesis.
    const std::size_t sig = t.find('(', def);
    if (sig == std::string_view::npos) return v;
    const std::size_t sig_close = match_bracket(t, sig);
    if (sig_close == std::string_view::npos) return v;
    std::size_t colon = sig_close + 1;
    while (colon < t.size() && t[colon] != ':') {
        if (t[colon] == '[' || t[colon] == '(') colon = match_bracket(t, colon);
        if (colon == std::string_view::npos) return v;
        ++colon;
    }
    // Body lines: indented more than the def; the first gives the indentation.
    std::size_t ls = t.find('\n', colon);
    while (ls != std::string_view::npos && ls < t.size()) {
        ++ls;
        const std::size_t le = std::min(t.find('\n', ls), t.size());
        const std::string_view line = t.substr(ls, le - ls);
        const std::string_view body = trim(line);
        if (body.empty() || body.front() == '#') { ls = le; continue; }
        const std::size_t ind = line.find_first_not_of(" \t");
        if (ind == 0) break;  // dedented: the function ended
        if (v.indent.empty()) v.indent = std::string(line.substr(0, ind));
        if (ind == v.indent.size() && body.rfind("return", 0) == 0 && (body.size() == 6 || !ident_char(body[6]))) {
            v.return_line_begin = ls;
            std::size_t i = skip_space(t, ls + ind + 6);
            std::size_t end = 0;
            const std::string name = dotted_name(t, i, end);
            const std::size_t after = skip_space(t, end);
            if (!name.empty() && after < t.size() && t[after] == '(') {
                const std::size_t close = match_bracket(t, after);
                if (close == std::string_view::npos) return v;
                v.call_open = after;
                v.call_close = close;
                v.kwargs = kwargs_of(t, after, close);
            } else {
                v.return_var = name;
            }
            v.found = true;
            return v;
        }
        // Skip the rest of a multi-line statement.
        std::size_t j = ls + ind;
        for (; j < le; ++j) {
            const char c = t[j];
            if (c == '"' || c == '\'') { j = skip_string(t, j) - 1; continue; }
            if (c == '#') break;
            if (c == '(' || c == '[' || c == '{') {
                const std::size_t m = match_bracket(t, j);
                if (m == std::string_view::npos) return v;
                j = m;
            }
        }
        ls = std::min(t.find('\n', j), t.size());
        if (ls >= t.size()) break;
    }
    return v;
}

std::vector<std::string> split_arguments(std::string_view args) {
    std::vector<std::string> out;
    const std::string wrapped = "(" + std::string(args) + ")";
    std::size_t i = 1;
    const std::size_t close = wrapped.size() - 1;
    while (i < close) {
        std::size_t end = i;
        int depth = 0;
        for (; end < close; ++end) {
            const char c = wrapped[end];
            if (c == '"' || c == '\'') { end = skip_string(wrapped, end) - 1; continue; }
            if (c == '(' || c == '[' || c == '{') ++depth;
            if (c == ')' || c == ']' || c == '}') --depth;
            if (c == ',' && depth == 0) break;
        }
        const std::string_view item = trim(std::string_view(wrapped).substr(i, end - i));
        if (!item.empty()) out.emplace_back(item);
        i = end + 1;
    }
    return out;
}

std::string registry_set_field(std::string_view t, const std::string& function, const std::string& section,
                               const std::string& field, const std::string& value_text,
                               const std::string& default_callee) {
    const registry_function_view v = require(t, function);
    if (!v.return_var.empty())
        return registry_insert_statement(t, function, v.return_var + "." + section + "." + field + " = " + value_text);
    const registry_kwarg* k = v.kwarg(section);
    if (!k) return append_argument(t, v.call_open, v.call_close, section + "=" + default_callee + "(" + field + "=" + value_text + ")");
    if (k->callee.empty()) {
        // A value that is not a call (a variable, a factory result): replace it.
        return std::string(t.substr(0, k->value_begin)) + default_callee + "(" + field + "=" + value_text + ")" +
               std::string(t.substr(k->value_end));
    }
    for (const auto& f : kwargs_of(t, k->args_open, k->args_close))
        if (f.name == field)
            return std::string(t.substr(0, f.value_begin)) + value_text + std::string(t.substr(f.value_end));
    return append_argument(t, k->args_open, k->args_close, field + "=" + value_text);
}

std::string registry_set_section(std::string_view t, const std::string& function, const std::string& section,
                                 const std::string& value_text) {
    const registry_function_view v = require(t, function);
    if (!v.return_var.empty())
        return registry_insert_statement(t, function, v.return_var + "." + section + " = " + value_text);
    if (const registry_kwarg* k = v.kwarg(section))
        return std::string(t.substr(0, k->value_begin)) + value_text + std::string(t.substr(k->value_end));
    return append_argument(t, v.call_open, v.call_close, section + "=" + value_text);
}

std::string registry_insert_statement(std::string_view t, const std::string& function, const std::string& statement) {
    const registry_function_view v = require(t, function);
    return std::string(t.substr(0, v.return_line_begin)) + v.indent + statement + "\n" +
           std::string(t.substr(v.return_line_begin));
}

}  // namespace oomdx
