#include "engine/rules/expression.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/core/fact_store.h"

namespace oomdx {

const char* expr_type_name(expr_type t) {
    switch (t) {
        case expr_type::any: return "any";
        case expr_type::numeric: return "number";
        case expr_type::boolean: return "bool";
        case expr_type::string: return "string";
        case expr_type::list: return "list";
        case expr_type::null: return "null";
    }
    return "?";
}

namespace {

enum class tok { end, number, string, ident, op, lparen, rparen, lbracket, rbracket, comma, error };

struct token {
    tok kind = tok::end;
    std::string text;
    int offset = 0;
    value num;
};

class lexer {
public:
    explicit lexer(const std::string& s) : m_s(s) {}

    token next() {
        while (m_pos < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_pos]))) ++m_pos;
        token t;
        t.offset = static_cast<int>(m_pos);
        if (m_pos >= m_s.size()) return t;
        const char c = m_s[m_pos];
        if (std::isdigit(static_cast<unsigned char>(c)) ||
            (c == '.' && m_pos + 1 < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_pos + 1])))) {
            size_t start = m_pos;
            bool is_float = false;
            while (m_pos < m_s.size() && (std::isdigit(static_cast<unsigned char>(m_s[m_pos])) ||
                                          m_s[m_pos] == '.' || m_s[m_pos] == '_')) {
                if (m_s[m_pos] == '.') is_float = true;
                ++m_pos;
            }
            if (m_pos < m_s.size() && (m_s[m_pos] == 'e' || m_s[m_pos] == 'E')) {
                size_t save = m_pos++;
                if (m_pos < m_s.size() && (m_s[m_pos] == '+' || m_s[m_pos] == '-')) ++m_pos;
                if (m_pos < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_pos]))) {
                    is_float = true;
                    while (m_pos < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_pos]))) ++m_pos;
                } else {
                    m_pos = save;
                }
            }
            std::string digits;
            for (size_t i = start; i < m_pos; ++i)
                if (m_s[i] != '_') digits += m_s[i];
            t.kind = tok::number;
            t.text = m_s.substr(start, m_pos - start);
            if (is_float) {
                t.num = std::strtod(digits.c_str(), nullptr);
            } else {
                errno = 0;
                long long v = std::strtoll(digits.c_str(), nullptr, 10);
                if (errno == ERANGE) {
                    t.kind = tok::error;
                    t.text = "integer literal out of range";
                    return t;
                }
                t.num = v;
            }
            return t;
        }
        if (c == '"' || c == '\'') {
            size_t start = m_pos++;
            std::string out;
            while (m_pos < m_s.size() && m_s[m_pos] != c) {
                if (m_s[m_pos] == '\\' && m_pos + 1 < m_s.size()) {
                    ++m_pos;
                    out += m_s[m_pos] == 'n' ? '\n' : m_s[m_pos];
                } else {
                    out += m_s[m_pos];
                }
                ++m_pos;
            }
            if (m_pos >= m_s.size()) {
                t.kind = tok::error;
                t.offset = static_cast<int>(start);
                t.text = "unterminated string";
                return t;
            }
            ++m_pos;
            t.kind = tok::string;
            t.text = out;
            return t;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t start = m_pos;
            while (m_pos < m_s.size() &&
                   (std::isalnum(static_cast<unsigned char>(m_s[m_pos])) || m_s[m_pos] == '_' ||
                    (m_s[m_pos] == '.' && m_pos + 1 < m_s.size() &&
                     (std::isalpha(static_cast<unsigned char>(m_s[m_pos + 1])) || m_s[m_pos + 1] == '_' || m_s[m_pos + 1] == '*'))
                    || (m_s[m_pos] == '*' && m_pos > start && m_s[m_pos - 1] == '.')))
                ++m_pos;
            t.kind = tok::ident;
            t.text = m_s.substr(start, m_pos - start);
            return t;
        }
        static const char* two[] = {"==", "!=", "<=", ">="};
        for (const char* op : two)
            if (m_s.compare(m_pos, 2, op) == 0) {
                m_pos += 2;
                t.kind = tok::op;
                t.text = op;
                return t;
            }
        ++m_pos;
        switch (c) {
            case '(': t.kind = tok::lparen; break;
            case ')': t.kind = tok::rparen; break;
            case '[': t.kind = tok::lbracket; break;
            case ']': t.kind = tok::rbracket; break;
            case ',': t.kind = tok::comma; break;
            case '<': case '>': case '+': case '-': case '*': case '/': case '%':
                t.kind = tok::op;
                break;
            case '=':
                t.kind = tok::error;
                t.text = "'=' is not an operator; use '==' to compare";
                return t;
            default:
                t.kind = tok::error;
                t.text = fmt::format("unexpected character '{}'", c);
                return t;
        }
        t.text = std::string(1, c);
        return t;
    }

private:
    const std::string& m_s;
    size_t m_pos = 0;
};

std::optional<double> size_unit(const std::string& u) {
    if (u == "B") return 1.0;
    if (u == "KiB") return 1024.0;
    if (u == "MiB") return 1024.0 * 1024;
    if (u == "GiB") return 1024.0 * 1024 * 1024;
    if (u == "TiB") return 1024.0 * 1024 * 1024 * 1024;
    if (u == "KB") return 1e3;
    if (u == "MB") return 1e6;
    if (u == "GB") return 1e9;
    if (u == "TB") return 1e12;
    return std::nullopt;
}

expr_type kind_type(fact_kind k) {
    switch (k) {
        case fact_kind::bytes:
        case fact_kind::integer:
        case fact_kind::number: return expr_type::numeric;
        case fact_kind::boolean: return expr_type::boolean;
        case fact_kind::string: return expr_type::string;
        case fact_kind::list: return expr_type::list;
        case fact_kind::any: return expr_type::any;
    }
    return expr_type::any;
}

expr_type literal_type(const value& v) {
    switch (v.type()) {
        case value_type::null: return expr_type::null;
        case value_type::integer:
        case value_type::number: return expr_type::numeric;
        case value_type::boolean: return expr_type::boolean;
        case value_type::string: return expr_type::string;
        case value_type::list: return expr_type::list;
    }
    return expr_type::any;
}

bool compatible(expr_type a, expr_type b) {
    return a == b || a == expr_type::any || b == expr_type::any || a == expr_type::null ||
           b == expr_type::null;
}

using node_ptr = std::unique_ptr<expr_node>;

constexpr int max_expression_depth = 128;  // parenthesis / list / call levels
constexpr int guards_per_level = 3;         // parse_or, parse_not and parse_unary each count one
constexpr int max_expression_nodes = 2048;

class parser {
public:
    parser(const std::string& text, const name_resolver& r, parsed_expr& out)
        : m_text(text), m_lex(text), m_res(r), m_out(out) {
        advance();
    }

    node_ptr parse_all() {
        node_ptr n = parse_or();
        if (n && m_cur.kind != tok::end) error(m_cur.offset, fmt::format("unexpected '{}'", m_cur.text));
        return m_failed ? nullptr : std::move(n);
    }

private:
    void advance() {
        m_prev_end = m_cur.kind == tok::end ? m_prev_end : m_cur.offset + static_cast<int>(m_cur_len);
        m_cur = m_lex.next();
        m_cur_len = m_cur.kind == tok::string ? 0 : m_cur.text.size();
        if (m_cur.kind == tok::string) {
            // length in source: find the closing quote
            const char q = m_text[m_cur.offset];
            size_t p = m_cur.offset + 1;
            while (p < m_text.size() && m_text[p] != q) p += (m_text[p] == '\\') ? 2 : 1;
            m_cur_len = p + 1 - m_cur.offset;
        }
        if (m_cur.kind == tok::error) error(m_cur.offset, m_cur.text);
    }

    bool is_kw(const char* kw) const { return m_cur.kind == tok::ident && m_cur.text == kw; }
    bool is_op(const char* op) const { return m_cur.kind == tok::op && m_cur.text == op; }

    void error(int offset, std::string msg, bool unknown = false) {
        if (m_failed) return;
        m_failed = true;
        m_out.errors.push_back({offset, std::move(msg), unknown});
    }

    node_ptr make(expr_op op, int offset) {
        if (++m_node_count == max_expression_nodes)
            error(offset, fmt::format("expression too large (more than {} terms)", max_expression_nodes));
        auto n = std::make_unique<expr_node>();
        n->op = op;
        n->offset = offset;
        return n;
    }

    void set_text(expr_node& n, int start) {
        const int end = std::max(start, m_prev_end);
        n.text = m_text.substr(start, end - start);
    }

    void require_type(const expr_node& n, expr_type want, const char* what) {
        if (!compatible(n.type, want))
            error(n.offset, fmt::format("{} needs a {} but '{}' is {}", what, expr_type_name(want),
                                        n.text, expr_type_name(n.type)));
    }

    // Bounds recursion (parentheses, lists, calls, `not`, unary minus) so hostile text cannot
    // exhaust the stack; evaluation recursion is bounded by the node limit in make().
    struct depth_guard {
        parser& p;
        explicit depth_guard(parser& pp) : p(pp) {
            if (++p.m_depth == max_expression_depth * guards_per_level)
                p.error(p.m_cur.offset, fmt::format("expression nested deeper than {} levels", max_expression_depth));
        }
        ~depth_guard() { --p.m_depth; }
        depth_guard(const depth_guard&) = delete;
        depth_guard& operator=(const depth_guard&) = delete;
    };

    node_ptr parse_or() {
        depth_guard g(*this);
        if (m_failed) return nullptr;
        return parse_logic(expr_op::or_, "or", &parser::parse_and);
    }
    node_ptr parse_and() { return parse_logic(expr_op::and_, "and", &parser::parse_not); }

    // Left-associative `and` / `or` chains over operands parsed by `next`.
    node_ptr parse_logic(expr_op op, const char* kw, node_ptr (parser::*next)()) {
        const int start = m_cur.offset;
        node_ptr l = (this->*next)();
        while (!m_failed && is_kw(kw)) {
            auto n = make(op, m_cur.offset);
            advance();
            node_ptr r = (this->*next)();
            if (m_failed) return nullptr;
            const std::string what = std::string("'") + kw + "'";
            require_type(*l, expr_type::boolean, what.c_str());
            require_type(*r, expr_type::boolean, what.c_str());
            n->kids.push_back(std::move(l));
            n->kids.push_back(std::move(r));
            n->type = expr_type::boolean;
            set_text(*n, start);
            l = std::move(n);
        }
        return l;
    }

    node_ptr parse_not() {
        depth_guard g(*this);
        if (m_failed) return nullptr;
        if (is_kw("not")) {
            const int start = m_cur.offset;
            auto n = make(expr_op::not_, m_cur.offset);
            advance();
            node_ptr k = parse_not();
            if (m_failed) return nullptr;
            require_type(*k, expr_type::boolean, "'not'");
            n->kids.push_back(std::move(k));
            n->type = expr_type::boolean;
            set_text(*n, start);
            return n;
        }
        return parse_comparison();
    }

    node_ptr parse_comparison() {
        const int start = m_cur.offset;
        node_ptr l = parse_additive();
        if (m_failed) return nullptr;
        static const std::pair<const char*, expr_op> ops[] = {
            {"==", expr_op::eq}, {"!=", expr_op::ne}, {"<", expr_op::lt},
            {"<=", expr_op::le}, {">", expr_op::gt},  {">=", expr_op::ge}};
        for (const auto& [s, op] : ops) {
            if (is_op(s)) {
                auto n = make(op, m_cur.offset);
                advance();
                node_ptr r = parse_additive();
                if (m_failed) return nullptr;
                if (op == expr_op::eq || op == expr_op::ne) {
                    if (!compatible(l->type, r->type))
                        error(n->offset, fmt::format("cannot compare {} '{}' with {} '{}'",
                                                     expr_type_name(l->type), l->text,
                                                     expr_type_name(r->type), r->text));
                } else {
                    const bool ok = (compatible(l->type, expr_type::numeric) &&
                                     compatible(r->type, expr_type::numeric)) ||
                                    (l->type == expr_type::string && r->type == expr_type::string);
                    if (!ok)
                        error(n->offset, fmt::format("'{}' orders numbers, not {} and {}", s,
                                                     expr_type_name(l->type), expr_type_name(r->type)));
                }
                check_enum(*l, *r);
                check_enum(*r, *l);
                n->kids.push_back(std::move(l));
                n->kids.push_back(std::move(r));
                n->type = expr_type::boolean;
                set_text(*n, start);
                return n;
            }
        }
        bool negated = false;
        if (is_kw("not")) {
            negated = true;
            advance();
            if (!is_kw("in")) {
                error(m_cur.offset, "expected 'in' after 'not'");
                return nullptr;
            }
        }
        if (is_kw("in")) {
            auto n = make(negated ? expr_op::not_in : expr_op::in, m_cur.offset);
            advance();
            node_ptr r;
            if (m_cur.kind == tok::lparen || m_cur.kind == tok::lbracket) {
                r = parse_list_literal();
            } else if (m_cur.kind == tok::ident) {
                const int off = m_cur.offset;
                const std::string name = m_cur.text;
                if (const auto* items = m_res.list ? m_res.list(name) : nullptr) {
                    r = make(expr_op::literal, off);
                    r->lit = value(*items);
                    r->type = expr_type::list;
                    r->text = name;
                    r->name = name;
                    m_out.lists.push_back(name);
                    advance();
                } else {
                    r = parse_primary();
                }
            } else {
                error(m_cur.offset, "expected a list after 'in'");
                return nullptr;
            }
            if (m_failed) return nullptr;
            require_type(*r, expr_type::list, "'in'");
            if (r->op == expr_op::literal && r->lit.is_list())
                for (const auto& item : r->lit.as_list()) {
                    expr_node tmp;
                    tmp.op = expr_op::literal;
                    tmp.lit = item;
                    tmp.type = literal_type(item);
                    tmp.offset = r->offset;
                    check_enum(*l, tmp);
                }
            n->kids.push_back(std::move(l));
            n->kids.push_back(std::move(r));
            n->type = expr_type::boolean;
            set_text(*n, start);
            return n;
        }
        if (is_kw("matches")) {
            auto n = make(expr_op::matches, m_cur.offset);
            advance();
            if (m_cur.kind != tok::string) {
                error(m_cur.offset, "'matches' needs a string pattern");
                return nullptr;
            }
            require_type(*l, expr_type::string, "'matches'");
            auto re = std::make_shared<re2::RE2>(m_cur.text, re2::RE2::Quiet);
            if (!re->ok()) {
                error(m_cur.offset, fmt::format("bad regular expression: {}", re->error()));
                return nullptr;
            }
            n->regex = std::move(re);
            n->lit = value(m_cur.text);
            advance();
            n->kids.push_back(std::move(l));
            n->type = expr_type::boolean;
            set_text(*n, start);
            return n;
        }
        return l;
    }

    // A string literal compared with an enumerated string fact must be one of its values.
    void check_enum(const expr_node& fact_side, const expr_node& lit_side) {
        if (fact_side.op != expr_op::fact || lit_side.op != expr_op::literal || !lit_side.lit.is_string())
            return;
        if (!m_res.vocab) return;
        const fact_decl* d = m_res.vocab->find(fact_side.name);
        if (!d || d->values.empty()) return;
        if (std::find(d->values.begin(), d->values.end(), lit_side.lit.as_string()) == d->values.end()) {
            std::string allowed;
            for (const auto& v : d->values) allowed += (allowed.empty() ? "" : ", ") + v;
            error(lit_side.offset, fmt::format("\"{}\" is not a value of '{}' (one of: {})",
                                               lit_side.lit.as_string(), fact_side.name, allowed));
        }
    }

    node_ptr parse_list_literal() {
        const int start = m_cur.offset;
        const tok close = m_cur.kind == tok::lparen ? tok::rparen : tok::rbracket;
        advance();
        value::list_t items;
        auto n = make(expr_op::list, start);
        bool all_literal = true;
        while (!m_failed && m_cur.kind != close) {
            node_ptr item = parse_additive();
            if (m_failed) return nullptr;
            if (item->op != expr_op::literal) all_literal = false;
            else items.push_back(item->lit);
            n->kids.push_back(std::move(item));
            if (m_cur.kind == tok::comma) advance();
            else if (m_cur.kind != close) {
                error(m_cur.offset, "expected ',' or the end of the list");
                return nullptr;
            }
        }
        advance();
        if (all_literal) {
            n->op = expr_op::literal;
            n->lit = value(std::move(items));
            n->kids.clear();
        }
        n->type = expr_type::list;
        set_text(*n, start);
        return n;
    }

    node_ptr parse_additive() {
        const int start = m_cur.offset;
        node_ptr l = parse_term();
        while (!m_failed && (is_op("+") || is_op("-"))) {
            auto n = make(m_cur.text == "+" ? expr_op::add : expr_op::sub, m_cur.offset);
            advance();
            node_ptr r = parse_term();
            if (m_failed) return nullptr;
            const bool concat = n->op == expr_op::add && (l->type == expr_type::string || r->type == expr_type::string);
            if (concat) {
                require_type(*l, expr_type::string, "'+' on text");
                require_type(*r, expr_type::string, "'+' on text");
            } else {
                require_type(*l, expr_type::numeric, "arithmetic");
                require_type(*r, expr_type::numeric, "arithmetic");
            }
            n->kids.push_back(std::move(l));
            n->kids.push_back(std::move(r));
            n->type = concat ? expr_type::string : expr_type::numeric;
            set_text(*n, start);
            l = std::move(n);
        }
        return l;
    }

    node_ptr parse_term() {
        const int start = m_cur.offset;
        node_ptr l = parse_unary();
        while (!m_failed && (is_op("*") || is_op("/") || is_op("%"))) {
            expr_op op = m_cur.text == "*" ? expr_op::mul : m_cur.text == "/" ? expr_op::div : expr_op::mod;
            auto n = make(op, m_cur.offset);
            advance();
            node_ptr r = parse_unary();
            if (m_failed) return nullptr;
            require_type(*l, expr_type::numeric, "arithmetic");
            require_type(*r, expr_type::numeric, "arithmetic");
            n->kids.push_back(std::move(l));
            n->kids.push_back(std::move(r));
            n->type = expr_type::numeric;
            set_text(*n, start);
            l = std::move(n);
        }
        return l;
    }

    node_ptr parse_unary() {
        depth_guard g(*this);
        if (m_failed) return nullptr;
        if (is_op("-")) {
            const int start = m_cur.offset;
            auto n = make(expr_op::neg, m_cur.offset);
            advance();
            node_ptr k = parse_unary();
            if (m_failed) return nullptr;
            require_type(*k, expr_type::numeric, "'-'");
            if (k->op == expr_op::literal && k->lit.is_numeric()) {
                k->lit = k->lit.is_integer() && k->lit.as_integer() != INT64_MIN ? value(-k->lit.as_integer())
                                                                                 : value(-k->lit.as_number());
                k->offset = start;
                set_text(*k, start);
                return k;
            }
            n->kids.push_back(std::move(k));
            n->type = expr_type::numeric;
            set_text(*n, start);
            return n;
        }
        return parse_primary();
    }

    node_ptr parse_primary() {
        const int start = m_cur.offset;
        if (m_failed) return nullptr;
        switch (m_cur.kind) {
            case tok::number: {
                auto n = make(expr_op::literal, start);
                n->lit = m_cur.num;
                advance();
                if (m_cur.kind == tok::ident) {
                    if (auto mult = size_unit(m_cur.text)) {
                        const double bytes = std::round(n->lit.as_number() * *mult);
                        if (!(bytes < 9.0e18)) {
                            error(start, "size too large: " + m_text.substr(start, 40));
                            return nullptr;
                        }
                        n->lit = value(static_cast<std::int64_t>(bytes));
                        advance();
                    }
                }
                n->type = expr_type::numeric;
                set_text(*n, start);
                return n;
            }
            case tok::string: {
                auto n = make(expr_op::literal, start);
                n->lit = value(m_cur.text);
                n->type = expr_type::string;
                advance();
                set_text(*n, start);
                return n;
            }
            case tok::lparen: {
                advance();
                node_ptr n = parse_or();
                if (m_failed) return nullptr;
                if (m_cur.kind != tok::rparen) {
                    error(m_cur.offset, "expected ')'");
                    return nullptr;
                }
                advance();
                set_text(*n, start);
                return n;
            }
            case tok::lbracket: return parse_list_literal();
            case tok::ident: return parse_identifier();
            case tok::end: error(start, "unexpected end of expression"); return nullptr;
            default: error(start, fmt::format("unexpected '{}'", m_cur.text)); return nullptr;
        }
    }

    node_ptr parse_identifier() {
        const int start = m_cur.offset;
        const std::string name = m_cur.text;
        if (name == "true" || name == "false" || name == "null") {
            auto n = make(expr_op::literal, start);
            if (name == "null") {
                n->type = expr_type::null;
            } else {
                n->lit = value(name == "true");
                n->type = expr_type::boolean;
            }
            advance();
            set_text(*n, start);
            return n;
        }
        static const char* keywords[] = {"and", "or", "not", "in", "matches"};
        for (const char* kw : keywords)
            if (name == kw) {
                error(start, fmt::format("unexpected keyword '{}'", kw));
                return nullptr;
            }
        advance();
        if (m_cur.kind == tok::lparen) return parse_call(name, start);
        if (m_res.macro) {
            if (const expr_node* body = m_res.macro(name)) {
                node_ptr n = clone_expr(*body);
                n->text = name;
                n->offset = start;
                m_out.macros.push_back(name);
                return n;
            }
        }
        if (m_res.list) {
            if (const auto* items = m_res.list(name)) {
                auto n = make(expr_op::literal, start);
                n->lit = value(*items);
                n->type = expr_type::list;
                n->text = name;
                n->name = name;
                m_out.lists.push_back(name);
                return n;
            }
        }
        auto n = make(expr_op::fact, start);
        n->name = name;
        n->text = name;
        if (m_res.vocab) {
            const fact_decl* d = m_res.vocab->find(name);
            if (!d) {
                error(start, fmt::format("'{}' is not a declared fact, macro or list", name), true);
                return nullptr;
            }
            n->type = kind_type(d->kind);
        }
        m_out.facts.push_back(name);
        return n;
    }

    node_ptr parse_call(const std::string& fn, int start) {
        static const std::set<std::string> known = {"exists", "min", "max", "abs", "floor",
                                                     "ceil", "round", "int", "len", "str", "coalesce", "if"};
        if (!known.count(fn)) {
            error(start, fmt::format("unknown function '{}'", fn));
            return nullptr;
        }
        advance();  // (
        auto n = make(expr_op::call, start);
        n->name = fn;
        if (fn == "exists") {
            if (m_cur.kind != tok::ident) {
                error(m_cur.offset, "exists() takes a fact name");
                return nullptr;
            }
            node_ptr arg = parse_identifier();
            if (m_failed) return nullptr;
            if (arg->op != expr_op::fact) {
                error(arg->offset, "exists() takes a fact name");
                return nullptr;
            }
            n->kids.push_back(std::move(arg));
        } else {
            while (!m_failed && m_cur.kind != tok::rparen) {
                node_ptr a = parse_or();
                if (m_failed) return nullptr;
                n->kids.push_back(std::move(a));
                if (m_cur.kind == tok::comma) advance();
                else if (m_cur.kind != tok::rparen) {
                    error(m_cur.offset, "expected ',' or ')'");
                    return nullptr;
                }
            }
        }
        if (m_cur.kind != tok::rparen) {
            error(m_cur.offset, "expected ')'");
            return nullptr;
        }
        advance();
        const size_t argc = n->kids.size();
        const bool one = fn == "exists" || fn == "abs" || fn == "floor" || fn == "ceil" ||
                         fn == "round" || fn == "int" || fn == "len" || fn == "str";
        if (fn == "if") {
            if (argc != 3) {
                error(start, "if() takes three arguments: if(condition, then, else)");
                return nullptr;
            }
            require_type(*n->kids[0], expr_type::boolean, "if");
            if (!compatible(n->kids[1]->type, n->kids[2]->type))
                error(n->kids[2]->offset, "if() needs a then and an else of one type");
            n->type = n->kids[1]->type;
            set_text(*n, start);
            return n;
        }
        if ((one && argc != 1) || (!one && argc < 1)) {
            error(start, fmt::format("{}() takes {} argument{}", fn, one ? "one" : "at least one",
                                     one ? "" : "s"));
            return nullptr;
        }
        if (fn == "exists") n->type = expr_type::boolean;
        else if (fn == "len") n->type = expr_type::numeric;
        else if (fn == "str") n->type = expr_type::string;
        else if (fn == "coalesce") {
            n->type = n->kids[0]->type;
            for (const auto& k : n->kids)
                if (!compatible(k->type, n->type)) error(k->offset, "coalesce() needs arguments of one type");
        }
        else {
            for (const auto& k : n->kids) require_type(*k, expr_type::numeric, fn.c_str());
            n->type = expr_type::numeric;
        }
        set_text(*n, start);
        return n;
    }

    const std::string& m_text;
    lexer m_lex;
    const name_resolver& m_res;
    parsed_expr& m_out;
    token m_cur;
    size_t m_cur_len = 0;
    int m_prev_end = 0;
    bool m_failed = false;
    int m_depth = 0;
    int m_node_count = 0;
};

void sort_unique(std::vector<std::string>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

void collect_facts(const expr_node& n, std::vector<std::string>& out) {
    if (n.op == expr_op::fact) out.push_back(n.name);
    for (const auto& k : n.kids) collect_facts(*k, out);
}

}  // namespace

std::unique_ptr<expr_node> clone_expr(const expr_node& n) {
    auto c = std::make_unique<expr_node>();
    c->op = n.op;
    c->offset = n.offset;
    c->lit = n.lit;
    c->name = n.name;
    c->type = n.type;
    c->regex = n.regex;
    c->text = n.text;
    for (const auto& k : n.kids) c->kids.push_back(clone_expr(*k));
    return c;
}

parsed_expr parse_expression(const std::string& text, const name_resolver& resolver) {
    parsed_expr out;
    parser p(text, resolver, out);
    out.root = p.parse_all();
    if (out.root) {
        out.facts.clear();
        collect_facts(*out.root, out.facts);
    }
    sort_unique(out.facts);
    sort_unique(out.macros);
    sort_unique(out.lists);
    return out;
}

// ---- evaluation -------------------------------------------------------------------------

namespace {

truth to_truth(const value& v) {
    if (v.is_bool()) return v.as_bool() ? truth::true_ : truth::false_;
    return truth::unknown;
}

value from_truth(truth t) {
    if (t == truth::unknown) return value();
    return value(t == truth::true_);
}

value arith(expr_op op, const value& a, const value& b) {
    if (op == expr_op::add && a.is_string() && b.is_string()) return value(a.as_string() + b.as_string());
    if (!a.is_numeric() || !b.is_numeric()) return value();
    if (a.is_integer() && b.is_integer()) {
        const std::int64_t x = a.as_integer(), y = b.as_integer();
        std::int64_t r = 0;
        switch (op) {
            case expr_op::add:
                if (!__builtin_add_overflow(x, y, &r)) return value(r);
                break;
            case expr_op::sub:
                if (!__builtin_sub_overflow(x, y, &r)) return value(r);
                break;
            case expr_op::mul:
                if (!__builtin_mul_overflow(x, y, &r)) return value(r);
                break;
            case expr_op::div:
                if (y == 0) return value();
                if (y == -1 && x == INT64_MIN) break;  // the quotient does not fit
                if (x % y == 0) return value(x / y);
                break;
            case expr_op::mod:
                if (y == 0) return value();
                if (y == -1) return value(0);  // INT64_MIN % -1 would trap
                return value(x % y);
            default: break;
        }
    }
    const double x = a.as_number(), y = b.as_number();
    switch (op) {
        case expr_op::add: return value(x + y);
        case expr_op::sub: return value(x - y);
        case expr_op::mul: return value(x * y);
        case expr_op::div: return y == 0 ? value() : value(x / y);
        case expr_op::mod: return y == 0 ? value() : value(std::fmod(x, y));
        default: return value();
    }
}

truth compare(expr_op op, const value& a, const value& b) {
    if (a.is_null() || b.is_null()) return truth::unknown;
    int c = 0;
    if (a.is_numeric() && b.is_numeric()) {
        if (a.is_integer() && b.is_integer())
            c = a.as_integer() < b.as_integer() ? -1 : a.as_integer() > b.as_integer() ? 1 : 0;
        else
            c = a.as_number() < b.as_number() ? -1 : a.as_number() > b.as_number() ? 1 : 0;
    } else if (a.is_string() && b.is_string()) {
        c = a.as_string().compare(b.as_string());
        c = c < 0 ? -1 : c > 0 ? 1 : 0;
    } else if (a.is_bool() && b.is_bool()) {
        if (op != expr_op::eq && op != expr_op::ne) return truth::unknown;
        c = a.as_bool() == b.as_bool() ? 0 : 1;
    } else {
        if (op == expr_op::eq) return truth::false_;
        if (op == expr_op::ne) return truth::true_;
        return truth::unknown;
    }
    bool r = false;
    switch (op) {
        case expr_op::eq: r = c == 0; break;
        case expr_op::ne: r = c != 0; break;
        case expr_op::lt: r = c < 0; break;
        case expr_op::le: r = c <= 0; break;
        case expr_op::gt: r = c > 0; break;
        case expr_op::ge: r = c >= 0; break;
        default: return truth::unknown;
    }
    return r ? truth::true_ : truth::false_;
}

value call(const expr_node& n, const fact_store& facts) {
    const std::string& fn = n.name;
    if (fn == "exists") return value(facts.get(n.kids[0]->name) != nullptr &&
                                     !facts.get(n.kids[0]->name)->val.is_null());
    if (fn == "if")  // the else branch also when the condition is unknown
        return evaluate(*n.kids[evaluate_condition(*n.kids[0], facts) == truth::true_ ? 1 : 2], facts).val;
    std::vector<value> args;
    for (const auto& k : n.kids) args.push_back(evaluate(*k, facts).val);
    if (fn == "coalesce") {
        for (const auto& a : args)
            if (!a.is_null()) return a;
        return value();
    }
    if (fn == "str") {
        if (args[0].is_null()) return value();
        if (args[0].is_string()) return args[0];
        if (args[0].is_number()) return value(fmt::format("{:g}", args[0].as_number()));
        return value(args[0].to_string());
    }
    if (fn == "len") {
        if (args[0].is_string()) return value(static_cast<std::int64_t>(args[0].as_string().size()));
        if (args[0].is_list()) return value(static_cast<std::int64_t>(args[0].as_list().size()));
        return value();
    }
    for (const auto& a : args)
        if (!a.is_numeric()) return value();
    if (fn == "min" || fn == "max") {
        value best = args[0];
        for (size_t i = 1; i < args.size(); ++i) {
            const bool less = compare(expr_op::lt, args[i], best) == truth::true_;
            if ((fn == "min") == less) best = args[i];
        }
        return best;
    }
    const value& a = args[0];
    if (fn == "abs") return a.is_integer() && a.as_integer() != INT64_MIN
                                ? value(a.as_integer() < 0 ? -a.as_integer() : a.as_integer())
                                : value(std::fabs(a.as_number()));
    if (a.is_integer()) return a;
    const double x = a.as_number();
    if (!std::isfinite(x) || std::fabs(x) > 9.2e18) return value();
    if (fn == "floor" || fn == "int") return value(static_cast<std::int64_t>(std::floor(x)));
    if (fn == "ceil") return value(static_cast<std::int64_t>(std::ceil(x)));
    if (fn == "round") return value(static_cast<std::int64_t>(std::llround(x)));
    return value();
}

}  // namespace

eval_result evaluate(const expr_node& n, const fact_store& facts) {
    eval_result r;
    switch (n.op) {
        case expr_op::literal: r.val = n.lit; break;
        case expr_op::fact: {
            const fact* f = facts.get(n.name);
            if (f) r.val = f->val;
            break;
        }
        case expr_op::list: {
            value::list_t items;
            for (const auto& k : n.kids) items.push_back(evaluate(*k, facts).val);
            r.val = value(std::move(items));
            break;
        }
        case expr_op::call: r.val = call(n, facts); break;
        case expr_op::neg: {
            value v = evaluate(*n.kids[0], facts).val;
            if (v.is_integer() && v.as_integer() != INT64_MIN) r.val = value(-v.as_integer());
            else if (v.is_numeric()) r.val = value(-v.as_number());
            break;
        }
        case expr_op::add: case expr_op::sub: case expr_op::mul: case expr_op::div: case expr_op::mod:
            r.val = arith(n.op, evaluate(*n.kids[0], facts).val, evaluate(*n.kids[1], facts).val);
            break;
        case expr_op::eq: case expr_op::ne: case expr_op::lt: case expr_op::le: case expr_op::gt:
        case expr_op::ge:
            r.t = compare(n.op, evaluate(*n.kids[0], facts).val, evaluate(*n.kids[1], facts).val);
            r.val = from_truth(r.t);
            return r;
        case expr_op::in: case expr_op::not_in: {
            value a = evaluate(*n.kids[0], facts).val;
            value l = evaluate(*n.kids[1], facts).val;
            if (a.is_null() || !l.is_list()) {
                r.t = truth::unknown;
            } else {
                bool found = false;
                for (const auto& item : l.as_list())
                    if (item == a) found = true;
                if (n.op == expr_op::not_in) found = !found;
                r.t = found ? truth::true_ : truth::false_;
            }
            r.val = from_truth(r.t);
            return r;
        }
        case expr_op::matches: {
            value a = evaluate(*n.kids[0], facts).val;
            if (!a.is_string()) r.t = truth::unknown;
            else r.t = re2::RE2::PartialMatch(a.as_string(), *n.regex) ? truth::true_ : truth::false_;
            r.val = from_truth(r.t);
            return r;
        }
        case expr_op::and_: {
            truth t = truth::true_;
            for (const auto& k : n.kids) {
                truth kt = evaluate_condition(*k, facts);
                if (kt == truth::false_) { t = truth::false_; break; }
                if (kt == truth::unknown) t = truth::unknown;
            }
            r.t = t;
            r.val = from_truth(t);
            return r;
        }
        case expr_op::or_: {
            truth t = truth::false_;
            for (const auto& k : n.kids) {
                truth kt = evaluate_condition(*k, facts);
                if (kt == truth::true_) { t = truth::true_; break; }
                if (kt == truth::unknown) t = truth::unknown;
            }
            r.t = t;
            r.val = from_truth(t);
            return r;
        }
        case expr_op::not_: {
            truth kt = evaluate_condition(*n.kids[0], facts);
            r.t = kt == truth::unknown ? truth::unknown : kt == truth::true_ ? truth::false_ : truth::true_;
            r.val = from_truth(r.t);
            return r;
        }
    }
    r.t = to_truth(r.val);
    return r;
}

truth evaluate_condition(const expr_node& n, const fact_store& facts) {
    return evaluate(n, facts).t;
}

std::string render_value(const value& v, const fact_decl* decl) {
    if (v.is_null()) return "unknown";
    if (decl && decl->kind == fact_kind::bytes && v.is_numeric())
        return format_bytes(static_cast<std::int64_t>(v.as_number()));
    if (v.is_number()) return fmt::format("{:.4g}", v.as_number());
    if (v.is_string()) return v.as_string();
    return v.to_string();
}

namespace {

void fact_values(const expr_node& n, const fact_store& facts, std::vector<std::string>& out,
                 std::set<std::string>& seen) {
    if (n.op == expr_op::fact && seen.insert(n.name).second) {
        const fact* f = facts.get(n.name);
        const vocabulary* vocab = facts.vocab();
        const fact_decl* d = vocab ? vocab->find(n.name) : nullptr;
        out.push_back(f ? fmt::format("{} = {}", n.name, f->val.is_string() ? f->val.to_string() : render_value(f->val, d))
                        : fmt::format("{} is missing", n.name));
    }
    for (const auto& k : n.kids) fact_values(*k, facts, out, seen);
}

std::string leaf_reason(const expr_node& n, const fact_store& facts, truth t) {
    std::vector<std::string> vals;
    std::set<std::string> seen;
    fact_values(n, facts, vals, seen);
    std::string joined;
    for (const auto& s : vals) joined += (joined.empty() ? "" : ", ") + s;
    return fmt::format("`{}` is {}{}", n.text, t == truth::unknown ? "unknown" : "false",
                       joined.empty() ? "" : " (" + joined + ")");
}

}  // namespace

std::string explain_failure(const expr_node& n, const fact_store& facts) {
    const truth t = evaluate_condition(n, facts);
    if (t == truth::true_) return {};
    if (n.op == expr_op::and_) {
        for (const auto& k : n.kids)
            if (evaluate_condition(*k, facts) != truth::true_) return explain_failure(*k, facts);
    }
    if (n.op == expr_op::or_) {
        std::string out;
        for (const auto& k : n.kids) {
            if (!out.empty()) out += "; and ";
            out += explain_failure(*k, facts);
        }
        return out;
    }
    return leaf_reason(n, facts, t);
}

}  // namespace oomdx
