// Python literal-subset reader: tokenizer, expression parser, function-body folding.
#include "parsers/config/py_expr.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/limits.h"

namespace oomdx {

namespace {

std::int64_t max_depth() { return current_limits().config_depth; }
std::string depth_note() { return " (more than " + std::to_string(max_depth()) + " levels, limit config_depth)"; }
using tok = py_source::token;

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80); }
bool is_name_char(char c) { return is_name_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

bool is_delim(const tok& t) {
    if (t.t == tok::type::newline || t.t == tok::type::end) return true;
    if (t.t != tok::type::op) return false;
    return t.s == "," || t.s == ")" || t.s == "]" || t.s == "}" || t.s == ":" || t.s == "=" ||
           t.s == ";";
}

}  // namespace

py_source::py_source(std::string_view text, std::string file) : m_text(text), m_file(std::move(file)) {
    const std::string& s = m_text;
    std::size_t i = 0;
    std::int64_t line = 1;
    std::size_t line_begin = 0;
    int depth = 0;
    std::vector<std::int64_t> open_lines;
    bool at_line_start = true;
    auto push = [&](tok::type t, std::string v, std::size_t b, std::size_t e, std::int64_t ln) {
        tok k;
        k.t = t;
        k.s = std::move(v);
        k.begin = b;
        k.end = e;
        k.line = ln;
        k.col = static_cast<int>(b - line_begin);
        k.line_start = at_line_start && t != tok::type::newline;
        if (t != tok::type::newline) at_line_start = false;
        m_tok.push_back(std::move(k));
    };
    auto fail = [&](std::int64_t ln, const std::string& msg) { throw input_error::at_line(m_file, ln, msg); };
    while (i < s.size()) {
        const char c = s[i];
        if (c == '\n') {
            if (depth == 0 && !at_line_start) {
                push(tok::type::newline, "", i, i + 1, line);
                at_line_start = true;
            }
            ++i;
            ++line;
            line_begin = i;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f') { ++i; continue; }
        if (c == '#') {
            while (i < s.size() && s[i] != '\n') ++i;
            continue;
        }
        if (c == '\\' && i + 1 < s.size() && (s[i + 1] == '\n' || s[i + 1] == '\r')) {
            i += (s[i + 1] == '\r' && i + 2 < s.size() && s[i + 2] == '\n') ? 3 : 2;
            ++line;
            line_begin = i;
            continue;
        }
        // String, with optional prefix letters (r, b, f, u).
        std::size_t p = i;
        bool raw = false, fstr = false;
        while (p < s.size() && p - i < 2 && std::strchr("rRbBfFuU", s[p]) && s[p] != '\0') {
            if (s[p] == 'r' || s[p] == 'R') raw = true;
            if (s[p] == 'f' || s[p] == 'F') fstr = true;
            ++p;
        }
        if (p < s.size() && (s[p] == '"' || s[p] == '\'') && (p == i || !is_name_char(s[i - 0]) || true) &&
            (p == i || (p > i && std::strchr("rRbBfFuU", s[i])))) {
            const char q = s[p];
            const bool triple = p + 2 < s.size() && s[p + 1] == q && s[p + 2] == q;
            const std::int64_t start_line = line;
            const std::size_t start_line_begin = line_begin;  // a triple-quoted string moves line_begin
            std::size_t j = p + (triple ? 3 : 1);
            std::string out;
            bool closed = false;
            while (j < s.size()) {
                if (s[j] == '\\' && j + 1 < s.size()) {
                    if (s[j + 1] == '\n') ++line;
                    if (raw) { out += s[j]; out += s[j + 1]; }
                    else {
                        const char e = s[j + 1];
                        out += e == 'n' ? '\n' : e == 't' ? '\t' : e == '\n' ? '\0' : e;
                        if (e == '\n') out.pop_back();
                    }
                    j += 2;
                    continue;
                }
                if (s[j] == q && (!triple || (j + 2 < s.size() && s[j + 1] == q && s[j + 2] == q))) {
                    j += triple ? 3 : 1;
                    closed = true;
                    break;
                }
                if (s[j] == '\n') {
                    if (!triple) break;
                    ++line;
                    line_begin = j + 1;
                }
                out += s[j++];
            }
            if (!closed) fail(start_line, "unterminated string");
            // The token's column is that of its first line (a docstring opens a function's body).
            const std::size_t end_line_begin = line_begin;
            line_begin = start_line_begin;
            push(fstr ? tok::type::op : tok::type::string, fstr ? "<f-string>" : out, i, j, start_line);
            line_begin = end_line_begin;
            i = j;
            continue;
        }
        if (is_name_start(c)) {
            std::size_t j = i;
            while (j < s.size() && is_name_char(s[j])) ++j;
            push(tok::type::name, s.substr(i, j - i), i, j, line);
            i = j;
            continue;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) ||
            (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
            std::size_t j = i;
            while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == '.' ||
                                    ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E') &&
                                     !(s[i] == '0' && j > i + 1 && (s[i + 1] == 'x' || s[i + 1] == 'X')))))
                ++j;
            push(tok::type::number, s.substr(i, j - i), i, j, line);
            i = j;
            continue;
        }
        // Operators.
        std::string op(1, c);
        if (i + 1 < s.size()) {
            const std::string two = s.substr(i, 2);
            if (two == "**" || two == "//" || two == "->" || two == "==" || two == "!=" || two == "<=" ||
                two == ">=" || two == ":=" || two == "+=" || two == "-=" || two == "*=" || two == "/=" ||
                two == "|=" || two == "&=" || two == "%=" || two == "<<" || two == ">>")
                op = two;
        }
        if (c == '(' || c == '[' || c == '{') {
            if (++depth > max_depth()) fail(line, "brackets nested too deeply" + depth_note());
            open_lines.push_back(line);
        } else if (c == ')' || c == ']' || c == '}') {
            if (--depth < 0) fail(line, fmt::format("unbalanced '{}'", c));
            open_lines.pop_back();
        }
        push(tok::type::op, op, i, i + op.size(), line);
        i += op.size();
    }
    if (depth > 0) fail(open_lines.back(), "bracket opened here is never closed");
    if (!at_line_start) push(tok::type::newline, "", s.size(), s.size(), line);
    tok e;
    e.t = tok::type::end;
    e.begin = e.end = s.size();
    e.line = line;
    m_tok.push_back(e);
}

value parse_number(const std::string& raw, bool& ok) {
    ok = true;
    std::string n;
    for (char c : raw)
        if (c != '_') n += c;
    if (!n.empty() && (n.back() == 'j' || n.back() == 'J')) { ok = false; return value(); }
    int base = 10;
    std::string digits = n;
    if (n.size() > 2 && n[0] == '0' && std::strchr("xXoObB", n[1])) {
        base = (n[1] == 'x' || n[1] == 'X') ? 16 : (n[1] == 'o' || n[1] == 'O') ? 8 : 2;
        digits = n.substr(2);
    }
    std::int64_t i = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), i, base);
    if (r.ec == std::errc() && r.ptr == digits.data() + digits.size()) return value(i);
    char* end = nullptr;
    double d = std::strtod(n.c_str(), &end);
    if (end != n.c_str() + n.size()) { ok = false; return value(); }
    return value(d);
}

py_node py_source::parse_expr(std::size_t& i, int depth) const {
    if (depth > max_depth()) throw input_error::at_line(m_file, m_tok[i].line, "expression nested too deeply" + depth_note());
    const std::size_t first = i;
    py_node n;
    n.line = m_tok[i].line;
    auto finish_other = [&](std::size_t from) {
        // Consume to the next delimiter at this bracket level (a lambda's ':' is its own).
        int d = 0;
        if (m_tok[i].t == tok::type::name && m_tok[i].s == "lambda") {
            while (m_tok[i].t != tok::type::end && m_tok[i].t != tok::type::newline &&
                   !(m_tok[i].t == tok::type::op && m_tok[i].s == ":"))
                ++i;
            if (m_tok[i].t == tok::type::op) ++i;
        }
        while (m_tok[i].t != tok::type::end) {
            const tok& t = m_tok[i];
            if (d == 0 && is_delim(t)) break;
            if (t.t == tok::type::op && (t.s == "(" || t.s == "[" || t.s == "{")) ++d;
            if (t.t == tok::type::op && (t.s == ")" || t.s == "]" || t.s == "}")) --d;
            if (t.t == tok::type::newline && d == 0) break;
            ++i;
        }
        py_node o;
        o.k = py_node::kind::other;
        o.line = m_tok[from].line;
        const std::size_t b = m_tok[from].begin;
        const std::size_t e = i > from ? m_tok[i - 1].end : b;
        o.text = m_text.substr(b, std::min<std::size_t>(e - b, 200));
        return o;
    };
    const tok& t = m_tok[i];
    // Atom.
    if (t.t == tok::type::number) {
        bool ok = false;
        n.lit = parse_number(t.s, ok);
        n.k = ok ? py_node::kind::literal : py_node::kind::other;
        n.text = t.s;
        ++i;
    } else if (t.t == tok::type::string) {
        std::string s;
        while (m_tok[i].t == tok::type::string) s += m_tok[i++].s;
        n.k = py_node::kind::literal;
        n.lit = value(s);
        n.text = m_text.substr(t.begin, std::min<std::size_t>(m_tok[i - 1].end - t.begin, 200));
    } else if (t.t == tok::type::op && t.s == "-" && m_tok[i + 1].t == tok::type::number) {
        bool ok = false;
        value v = parse_number(m_tok[i + 1].s, ok);
        i += 2;
        n.k = ok ? py_node::kind::literal : py_node::kind::other;
        if (ok) n.lit = v.is_integer() ? value(-v.as_integer()) : value(-v.as_number());
        n.text = "-" + m_tok[i - 1].s;
    } else if (t.t == tok::type::name && (t.s == "True" || t.s == "False" || t.s == "None")) {
        n.k = py_node::kind::literal;
        n.lit = t.s == "None" ? value() : value(t.s == "True");
        n.text = t.s;
        ++i;
    } else if (t.t == tok::type::name && t.s != "lambda" && t.s != "not" && t.s != "await" && t.s != "yield") {
        std::string dotted = t.s;
        ++i;
        while (m_tok[i].t == tok::type::op && m_tok[i].s == "." && m_tok[i + 1].t == tok::type::name) {
            dotted += "." + m_tok[i + 1].s;
            i += 2;
        }
        if (m_tok[i].t == tok::type::op && m_tok[i].s == "(") {
            n.k = py_node::kind::call;
            n.callee = dotted;
            ++i;
            while (!(m_tok[i].t == tok::type::op && m_tok[i].s == ")")) {
                if (m_tok[i].t == tok::type::end) throw input_error::at_line(m_file, n.line, "unterminated call");
                if (m_tok[i].t == tok::type::op && (m_tok[i].s == "**" || m_tok[i].s == "*")) {
                    const std::size_t from = i;
                    ++i;
                    (void)parse_expr(i, depth + 1);
                    py_node o;
                    o.k = py_node::kind::other;
                    o.line = m_tok[from].line;
                    o.text = m_text.substr(m_tok[from].begin, std::min<std::size_t>(m_tok[i - 1].end - m_tok[from].begin, 200));
                    n.kwargs.push_back({m_tok[from].s, std::move(o)});
                } else if (m_tok[i].t == tok::type::name && m_tok[i + 1].t == tok::type::op && m_tok[i + 1].s == "=") {
                    std::string key = m_tok[i].s;
                    const std::int64_t kl = m_tok[i].line;
                    i += 2;
                    py_node v = parse_expr(i, depth + 1);
                    v.line = kl;
                    n.kwargs.push_back({std::move(key), std::move(v)});
                } else {
                    n.items.push_back(parse_expr(i, depth + 1));
                }
                if (m_tok[i].t == tok::type::op && m_tok[i].s == ",") { ++i; continue; }
                if (m_tok[i].t == tok::type::op && m_tok[i].s == ")") break;
                // Generator argument or something we do not read.
                int d = 0;
                while (m_tok[i].t != tok::type::end && !(d == 0 && m_tok[i].t == tok::type::op && m_tok[i].s == ")")) {
                    if (m_tok[i].t == tok::type::op && (m_tok[i].s == "(" || m_tok[i].s == "[" || m_tok[i].s == "{")) ++d;
                    if (m_tok[i].t == tok::type::op && (m_tok[i].s == ")" || m_tok[i].s == "]" || m_tok[i].s == "}")) --d;
                    ++i;
                }
            }
            ++i;  // ')'
        } else {
            n.k = py_node::kind::other;  // a bare name: not a literal
        }
        n.text = m_text.substr(t.begin, std::min<std::size_t>(m_tok[i - 1].end - t.begin, 200));
    } else if (t.t == tok::type::op && (t.s == "[" || t.s == "(")) {
        const std::string close = t.s == "[" ? "]" : ")";
        ++i;
        n.k = py_node::kind::list;
        bool comma = false;
        while (!(m_tok[i].t == tok::type::op && m_tok[i].s == close)) {
            if (m_tok[i].t == tok::type::end) throw input_error::at_line(m_file, n.line, "unterminated list");
            n.items.push_back(parse_expr(i, depth + 1));
            if (m_tok[i].t == tok::type::op && m_tok[i].s == ",") { ++i; comma = true; continue; }
            if (!(m_tok[i].t == tok::type::op && m_tok[i].s == close)) {
                i = first;  // comprehension or similar
                return finish_other(first);
            }
        }
        ++i;
        if (close == ")" && !comma && n.items.size() == 1) n = n.items[0];  // parenthesized
        n.text = m_text.substr(t.begin, std::min<std::size_t>(m_tok[i - 1].end - t.begin, 200));
    } else if (t.t == tok::type::op && t.s == "{") {
        ++i;
        n.k = py_node::kind::dict;
        while (!(m_tok[i].t == tok::type::op && m_tok[i].s == "}")) {
            if (m_tok[i].t == tok::type::end) throw input_error::at_line(m_file, n.line, "unterminated dict");
            py_node k = parse_expr(i, depth + 1);
            if (!(m_tok[i].t == tok::type::op && m_tok[i].s == ":")) {
                i = first;
                return finish_other(first);
            }
            ++i;
            py_node v = parse_expr(i, depth + 1);
            n.entries.push_back({std::move(k), std::move(v)});
            if (m_tok[i].t == tok::type::op && m_tok[i].s == ",") { ++i; continue; }
            if (!(m_tok[i].t == tok::type::op && m_tok[i].s == "}")) {
                i = first;
                return finish_other(first);
            }
        }
        ++i;
        n.text = m_text.substr(t.begin, std::min<std::size_t>(m_tok[i - 1].end - t.begin, 200));
    } else {
        return finish_other(first);
    }
    // Integer arithmetic of literals only (`1 * 8192`, `8 * 2048`, `2**20`) is folded; other
    // trailers (subscripts, calls on results) or operators: not a literal.
    if (!is_delim(m_tok[i])) {
        std::size_t k = first;
        std::int64_t v = 0;
        if (n.k == py_node::kind::literal && n.lit.is_integer() && fold_int_expr(k, v) && is_delim(m_tok[k])) {
            n.lit = value(v);
            n.text = m_text.substr(t.begin, std::min<std::size_t>(m_tok[k - 1].end - t.begin, 200));
            i = k;
            return n;
        }
        i = first;
        return finish_other(first);
    }
    return n;
}

// expr := term (('+' | '-') term)*; term := power (('*' | '//') power)*; power := atom ('**' power)?;
// atom := INT | '-' atom | '(' expr ')'. False (i unspecified) on anything else or on overflow.
bool py_source::fold_int_expr(std::size_t& i, std::int64_t& out, int depth) const {
    if (depth > 16) return false;
    auto is_op = [&](std::size_t k, const char* op) { return m_tok[k].t == tok::type::op && m_tok[k].s == op; };
    std::function<bool(std::int64_t&)> atom, power, term;
    int chain = 0;  // unary minus and `2 ** 2 ** ...` nest: bounded like the parentheses
    atom = [&](std::int64_t& v) -> bool {
        if (m_tok[i].t == tok::type::number) {
            bool ok = false;
            const value x = parse_number(m_tok[i].s, ok);
            if (!ok || !x.is_integer()) return false;
            v = x.as_integer();
            ++i;
            return true;
        }
        if (is_op(i, "-")) {
            if (++chain > 16) return false;
            ++i;
            if (!atom(v) || v == std::numeric_limits<std::int64_t>::min()) return false;
            v = -v;
            return true;
        }
        if (is_op(i, "(")) {
            ++i;
            if (!fold_int_expr(i, v, depth + 1) || !is_op(i, ")")) return false;
            ++i;
            return true;
        }
        return false;
    };
    power = [&](std::int64_t& v) -> bool {
        if (!atom(v)) return false;
        if (!is_op(i, "**")) return true;
        if (++chain > 16) return false;
        ++i;
        std::int64_t e = 0;
        if (!power(e) || e < 0 || e > 62) return false;
        std::int64_t r = 1;
        for (std::int64_t k = 0; k < e; ++k)
            if (__builtin_mul_overflow(r, v, &r)) return false;
        v = r;
        return true;
    };
    term = [&](std::int64_t& v) -> bool {
        if (!power(v)) return false;
        while (is_op(i, "*") || is_op(i, "//")) {
            const bool mul = is_op(i, "*");
            ++i;
            std::int64_t r = 0;
            if (!power(r)) return false;
            if (mul) {
                if (__builtin_mul_overflow(v, r, &v)) return false;
            } else {
                if (r == 0) return false;
                v = v / r - ((v % r != 0) && ((v < 0) != (r < 0)));  // Python floors
            }
        }
        return true;
    };
    if (!term(out)) return false;
    while (is_op(i, "+") || is_op(i, "-")) {
        const bool add = is_op(i, "+");
        ++i;
        std::int64_t r = 0;
        if (!term(r)) return false;
        if (add ? __builtin_add_overflow(out, r, &out) : __builtin_sub_overflow(out, r, &out)) return false;
    }
    return true;
}

std::vector<std::string> py_source::functions() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i + 1 < m_tok.size(); ++i)
        if (m_tok[i].t == tok::type::name && m_tok[i].s == "def" && m_tok[i].line_start && m_tok[i].col == 0 &&
            m_tok[i + 1].t == tok::type::name)
            out.push_back(m_tok[i + 1].s);
    return out;
}

void flatten_py(const py_node& n, const std::string& prefix, const py_source& src, std::vector<raw_entry>& out) {
    raw_entry e;
    e.key = prefix;
    e.line = n.line;
    e.excerpt = line_excerpt(src.text(), n.line);
    e.text = n.text;
    switch (n.k) {
        case py_node::kind::literal:
            e.val = n.lit;
            out.push_back(std::move(e));
            break;
        case py_node::kind::call:
            e.container = true;
            e.val = value(n.callee);
            out.push_back(std::move(e));
            for (std::size_t a = 0; a < n.items.size(); ++a)
                flatten_py(n.items[a], prefix + "." + std::to_string(a), src, out);
            for (const auto& [k, v] : n.kwargs)
                if (k != "*" && k != "**") flatten_py(v, prefix.empty() ? k : prefix + "." + k, src, out);
                else flatten_py(v, prefix + "." + k, src, out);
            break;
        case py_node::kind::list: {
            value::list_t items;
            bool literal = true;
            for (const auto& it : n.items) {
                if (it.k == py_node::kind::literal) items.push_back(it.lit);
                else if (it.k == py_node::kind::call) items.push_back(value(it.callee));
                else literal = false;
            }
            e.val = literal ? value(std::move(items)) : value();
            e.literal = literal;
            out.push_back(std::move(e));
            for (std::size_t a = 0; a < n.items.size(); ++a)
                if (n.items[a].k == py_node::kind::call || n.items[a].k == py_node::kind::dict)
                    flatten_py(n.items[a], prefix + "." + std::to_string(a), src, out);
            break;
        }
        case py_node::kind::dict:
            e.container = true;
            out.push_back(std::move(e));
            for (const auto& [k, v] : n.entries) {
                if (k.k == py_node::kind::literal && k.lit.is_string()) flatten_py(v, prefix + "." + k.lit.as_string(), src, out);
            }
            break;
        case py_node::kind::other:
            e.literal = false;
            out.push_back(std::move(e));
            break;
    }
}

namespace {

std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

}  // namespace

std::vector<raw_entry> py_source::function_result(const std::string& name) const {
    std::vector<std::string> stack;
    struct impl {
        const py_source& src;
        std::vector<std::string>& stack;
        std::vector<raw_entry> run(const std::string& name, std::int64_t ref_line) {
            const auto& T = src.m_tok;
            std::size_t d = 0;
            for (; d + 1 < T.size(); ++d)
                if (T[d].t == tok::type::name && T[d].s == "def" && T[d].line_start && T[d].col == 0 &&
                    T[d + 1].t == tok::type::name && T[d + 1].s == name)
                    break;
            if (d + 1 >= T.size()) {
                std::string names;
                for (const auto& f : src.functions()) names += (names.empty() ? "" : ", ") + f;
                throw input_error::at_line(src.m_file, ref_line,
                                           fmt::format("no function '{}' in this file (functions: {})", name,
                                                       names.empty() ? "none" : names));
            }
            if (stack.size() > 8) throw input_error::at_line(src.m_file, T[d].line, "config functions call each other too deeply");
            for (const auto& s : stack)
                if (s == name) throw input_error::at_line(src.m_file, T[d].line, "config function '" + name + "' calls itself");
            stack.push_back(name);
            // Skip the signature up to the ':' that ends it.
            std::size_t i = d + 2;
            int depth = 0;
            for (; T[i].t != tok::type::end; ++i) {
                if (T[i].t == tok::type::op && (T[i].s == "(" || T[i].s == "[")) ++depth;
                if (T[i].t == tok::type::op && (T[i].s == ")" || T[i].s == "]")) --depth;
                if (depth == 0 && T[i].t == tok::type::op && T[i].s == ":") break;
            }
            if (T[i].t == tok::type::end)
                throw input_error::at_line(src.m_file, T[d].line, "config function '" + name + "' has no body");
            ++i;
            if (T[i].t == tok::type::newline) ++i;
            const int body_col = T[i].col;
            std::map<std::string, std::vector<raw_entry>> vars;
            std::vector<raw_entry> result;
            bool returned = false;
            while (T[i].t != tok::type::end) {
                if (T[i].line_start && T[i].col < body_col) break;
                if (T[i].line_start && T[i].col <= T[d].col) break;
                const std::size_t stmt = i;
                const bool nested = T[i].col > body_col;
                // Find the end of this logical line.
                std::size_t end = i;
                while (T[end].t != tok::type::newline && T[end].t != tok::type::end) ++end;
                // Assignment target: NAME(.NAME)* =
                std::size_t j = i;
                std::string target;
                if (T[j].t == tok::type::name && T[j].s != "return") {
                    target = T[j].s;
                    ++j;
                    while (T[j].t == tok::type::op && T[j].s == "." && T[j + 1].t == tok::type::name) {
                        target += "." + T[j + 1].s;
                        j += 2;
                    }
                }
                if (T[i].t == tok::type::name && T[i].s == "return" && !nested) {
                    std::size_t k = i + 1;
                    py_node v = src.parse_expr(k);
                    result = resolve(v, "", vars);
                    returned = true;
                } else if (!target.empty() && T[j].t == tok::type::op &&
                           (T[j].s == "=" || (T[j].s.size() == 2 && T[j].s[1] == '='))) {
                    const bool plain = T[j].s == "=";
                    std::size_t k = j + 1;
                    py_node v = src.parse_expr(k);
                    const auto dot = target.find('.');
                    const std::string var = target.substr(0, dot);
                    const std::string path = dot == std::string::npos ? "" : target.substr(dot + 1);
                    if (!plain || nested) {
                        // Augmented or conditional assignment: its value is not a literal.
                        v.k = py_node::kind::other;
                        v.text = src.m_text.substr(T[stmt].begin, std::min<std::size_t>(T[end - 1].end - T[stmt].begin, 200));
                    }
                    auto entries = resolve(v, path, vars);
                    auto& dst = vars[var];
                    if (!path.empty()) {
                        // Replace what was under this path.
                        std::erase_if(dst, [&](const raw_entry& e) {
                            return e.key == path || e.key.rfind(path + ".", 0) == 0;
                        });
                    } else {
                        dst.clear();
                    }
                    for (auto& e : entries) dst.push_back(std::move(e));
                    if (!returned) {}
                }
                i = end;
                if (T[i].t == tok::type::newline) ++i;
            }
            // `return config` where config was built up by statements.
            if (returned && result.size() == 1 && result[0].key.empty() && !result[0].literal) {
                auto it = vars.find(result[0].text);
                if (it != vars.end()) result = it->second;
            }
            stack.pop_back();
            if (!returned)
                throw input_error::at_line(src.m_file, T[d].line, "config function '" + name + "' has no return statement");
            // Later assignments win.
            std::vector<raw_entry> dedup;
            std::map<std::string, std::size_t> pos;
            for (auto& e : result) {
                if (auto it = pos.find(e.key); it != pos.end()) dedup[it->second] = e;
                else { pos[e.key] = dedup.size(); dedup.push_back(e); }
            }
            return dedup;
        }
        std::vector<raw_entry> resolve(const py_node& v, const std::string& path,
                                       const std::map<std::string, std::vector<raw_entry>>& vars) {
            std::vector<raw_entry> out;
            if (v.k == py_node::kind::other) {
                auto it = vars.find(v.text);
                if (it != vars.end()) {
                    for (auto e : it->second) {
                        e.key = join(path, e.key);
                        out.push_back(std::move(e));
                    }
                    return out;
                }
            }
            if (v.k == py_node::kind::call && v.kwargs.empty() && v.items.empty()) {
                // A call of another config function in this file: inline its result.
                for (const auto& f : src.functions())
                    if (f == v.callee) {
                        for (auto e : run(f, v.line)) {
                            e.key = join(path, e.key);
                            out.push_back(std::move(e));
                        }
                        return out;
                    }
            }
            flatten_py(v, path, src, out);
            // A name bound earlier in the body (`model_spec = model_registry("8B")` then
            // `model_spec=model_spec` inside the returned call) stands for what it was bound to.
            std::vector<raw_entry> spliced;
            for (auto& e : out) {
                auto it = !e.literal && !e.container ? vars.find(e.text) : vars.end();
                if (it == vars.end() || e.key.empty()) {
                    spliced.push_back(std::move(e));
                    continue;
                }
                for (auto b : it->second) {
                    b.key = b.key.empty() ? e.key : b.key[0] == '.' ? e.key + b.key : e.key + "." + b.key;
                    spliced.push_back(std::move(b));
                }
            }
            return spliced;
        }
    };
    impl im{*this, stack};
    auto r = im.run(name, 1);
    // The root entry (the Trainer.Config call itself) carries no key.
    std::erase_if(r, [](const raw_entry& e) { return e.key.empty() && e.container; });
    return r;
}

std::vector<std::pair<std::string, py_node>> py_source::keyed_calls() const {
    std::vector<std::pair<std::string, py_node>> out;
    for (std::size_t i = 0; i + 3 < m_tok.size(); ++i) {
        if (m_tok[i].t == tok::type::string && m_tok[i + 1].t == tok::type::op && m_tok[i + 1].s == ":" &&
            m_tok[i + 2].t == tok::type::name) {
            std::size_t k = i + 2;
            py_node v = parse_expr(k);
            if (v.k == py_node::kind::call) out.emplace_back(m_tok[i].s, std::move(v));
        }
    }
    return out;
}

}  // namespace oomdx
