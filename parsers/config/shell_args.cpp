// Shell subset reader for launch scripts, and --flag splitting.
#include "parsers/config/shell_args.h"

#include <algorithm>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace oomdx {

namespace {

constexpr std::size_t max_words = 100000;
constexpr int max_expand_depth = 16;
constexpr std::size_t max_expansion = 1u << 20;  // bytes of one expanded word or variable
struct expansion_too_large {};

// Text with the source line of every character, and whether the character may be split on
// (it came from an unquoted expansion).
struct lined {
    std::string s;
    std::vector<std::int64_t> ln;
    std::vector<char> split;
    // A non-literal piece appended with its characters marks them `opaque`: after word splitting
    // only the words holding them are non-literal (`${ARGS[@]}` with one unresolved element). A
    // taint with no characters to carry it (`explained` false) makes every word non-literal.
    std::vector<char> opaque;
    bool literal = true;
    bool explained = true;
    void add(char c, std::int64_t l, bool sp, bool op = false) {
        if (s.size() >= max_expansion) throw expansion_too_large{};
        s += c;
        ln.push_back(l);
        split.push_back(sp);
        opaque.push_back(op);
    }
    void append(const lined& o, bool sp) {
        // o's own marks carry its non-literal parts when it has them; otherwise all its characters do
        const bool mark = !o.literal && !o.explained;
        for (std::size_t i = 0; i < o.s.size(); ++i) add(o.s[i], o.ln[i], sp || o.split[i], mark || o.opaque[i]);
        if (!o.literal) {
            literal = false;
            if (o.s.empty()) explained = false;
        }
    }
    void taint() {
        literal = false;
        explained = false;
    }
    // Text the reader cannot evaluate (an unset variable, `$(cmd)`): kept as written and marked, so that after word
    // splitting only the word holding it is non-literal, not every flag beside it in the same string.
    void unevaluated(const std::string& text, std::size_t from, std::size_t to, std::int64_t l) {
        literal = false;
        for (std::size_t q = from; q < to && q < text.size(); ++q) add(text[q], l, false, true);
    }
};

struct part {
    enum kind { unquoted, single, dbl } k;
    std::string text;
    std::vector<std::int64_t> ln;
};

struct raw_word {
    std::vector<part> parts;
    std::int64_t line = 0;
    bool array = false;                 // NAME=( ... ) or NAME+=( ... )
    std::vector<raw_word> elements;     // array elements
};

bool valid_name(std::string_view s);

// Prefix of an assignment word "NAME=" / "NAME+=": the name, and whether it appends.
struct assign_head {
    std::string name;
    bool append = false;
};
std::optional<assign_head> assignment_name(std::string_view t) {
    const auto eq = t.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const bool append = eq > 0 && t[eq - 1] == '+';
    const std::string_view name = t.substr(0, append ? eq - 1 : eq);
    if (!valid_name(name)) return std::nullopt;
    return assign_head{std::string(name), append};
}

bool keyword_word(const raw_word& w, std::string_view k) {
    return w.parts.size() == 1 && w.parts[0].k == part::unquoted && w.parts[0].text == k && !w.array;
}

// The whole text as a decimal integer, or nothing.
std::optional<std::int64_t> whole_int(std::string_view s) {
    std::int64_t v = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

// Three-valued truth (1, 0, -1 unknown) of tests joined left to right by `||` / `&&`, each
// possibly negated by `!`.
class tri_chain {
public:
    void add(int v, bool negate) {
        if (negate && v >= 0) v = 1 - v;
        if (m_result == none) m_result = v;
        else if (m_or) m_result = m_result == 1 || v == 1 ? 1 : (m_result == 0 && v == 0 ? 0 : -1);
        else m_result = m_result == 0 || v == 0 ? 0 : (m_result == 1 && v == 1 ? 1 : -1);
    }
    // `||` or `&&` before the next test; false for any other word
    bool join(const std::string& op) {
        if (op != "||" && op != "&&") return false;
        m_or = op == "||";
        return true;
    }
    int value() const { return m_result == none ? -1 : m_result; }

private:
    static constexpr int none = -2;
    int m_result = none;
    bool m_or = false;
};

struct variable {
    std::vector<lined> elems;  // one element for scalars
};

bool valid_name(std::string_view s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

class shell_reader {
public:
    shell_reader(std::string_view t, const std::string& f) : m_t(t), m_file(f) {}

    std::int64_t line() const { return m_line; }

    shell_script run() {
        shell_script out;
        while (m_p < m_t.size()) {
            std::vector<raw_word> words;
            const std::int64_t cmd_line = m_line;
            read_command(words, 0);
            if (words.empty()) continue;
            handle(words, cmd_line, out);
        }
        return out;
    }

private:
    [[noreturn]] void fail(std::int64_t line, const std::string& msg) const {
        throw input_error::at_line(m_file, line, msg);
    }

    // Reads words up to a command separator. Inside an array (depth>0) stops at ')'.
    void read_command(std::vector<raw_word>& words, int depth) {
        while (m_p < m_t.size()) {
            char c = m_t[m_p];
            if (c == '\\' && m_p + 1 < m_t.size() && m_t[m_p + 1] == '\n') { m_p += 2; ++m_line; continue; }
            if (c == '\\' && m_p + 2 < m_t.size() && m_t[m_p + 1] == '\r' && m_t[m_p + 2] == '\n') { m_p += 3; ++m_line; continue; }
            if (c == ' ' || c == '\t' || c == '\r') { ++m_p; continue; }
            if (c == '\n') {
                ++m_p;
                ++m_line;
                if (depth == 0) return;
                continue;
            }
            if (c == '#') {
                while (m_p < m_t.size() && m_t[m_p] != '\n') ++m_p;
                continue;
            }
            if (depth > 0 && c == ')') { ++m_p; m_closed_paren = true; return; }
            // `||` / `&&` inside an if/elif/while condition stay words, so the condition can be read
            if (depth == 0 && (c == '|' || c == '&') && m_p + 1 < m_t.size() && m_t[m_p + 1] == c && !words.empty() &&
                (keyword_word(words[0], "if") || keyword_word(words[0], "elif") || keyword_word(words[0], "while"))) {
                raw_word op;
                op.line = m_line;
                op.parts.push_back({part::unquoted, std::string(2, c), {m_line, m_line}});
                words.push_back(std::move(op));
                m_p += 2;
                continue;
            }
            if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>') {
                ++m_p;
                if (c == '<' || c == '>') {  // redirection: skip its target word
                    if (m_p < m_t.size() && (m_t[m_p] == '&' || m_t[m_p] == '>')) ++m_p;
                    raw_word w;
                    read_word(w);
                    continue;
                }
                if (depth == 0) return;
                continue;
            }
            if (words.size() > max_words) fail(m_line, "too many words in one command");
            raw_word w;
            w.line = m_line;
            read_word(w);
            if (w.parts.empty()) { ++m_p; continue; }
            // NAME=( ... ) array assignment, NAME+=( ... ) append.
            if (m_p < m_t.size() && m_t[m_p] == '(' && w.parts.size() == 1 && w.parts[0].k == part::unquoted &&
                !w.parts[0].text.empty() && w.parts[0].text.find('=') + 1 == w.parts[0].text.size() &&
                assignment_name(w.parts[0].text)) {
                ++m_p;
                if (depth > 4) fail(m_line, "arrays nested too deeply");
                w.array = true;
                const std::int64_t open = m_line;
                std::vector<raw_word> elems;
                m_closed_paren = false;
                read_command(elems, depth + 1);
                if (!m_closed_paren) fail(open, "array '(' is never closed");
                w.elements = std::move(elems);
            }
            words.push_back(std::move(w));
        }
    }

    void read_word(raw_word& w) {
        while (m_p < m_t.size()) {
            char c = m_t[m_p];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' || c == '|' || c == '<' ||
                c == '>' || c == ')' || c == '(') {
                if (c == '(' && !w.parts.empty() && w.parts.back().k == part::unquoted && !w.parts.back().text.empty() &&
                    w.parts.back().text.back() == '$') {
                    // $( ... ) or $(( ... )): keep balanced text inside the word.
                    read_balanced(w);
                    continue;
                }
                return;
            }
            if (c == '\\' && m_p + 1 < m_t.size()) {
                if (m_t[m_p + 1] == '\n') { m_p += 2; ++m_line; continue; }
                unq(w).text += m_t[m_p + 1];
                unq(w).ln.push_back(m_line);
                m_p += 2;
                continue;
            }
            if (c == '\'') {
                const std::int64_t open = m_line;
                part p{part::single, {}, {}};
                ++m_p;
                while (m_p < m_t.size() && m_t[m_p] != '\'') {
                    if (m_t[m_p] == '\n') ++m_line;
                    p.text += m_t[m_p++];
                    p.ln.push_back(m_line);
                }
                if (m_p >= m_t.size()) fail(open, "unterminated single quote");
                ++m_p;
                w.parts.push_back(std::move(p));
                continue;
            }
            if (c == '"') {
                const std::int64_t open = m_line;
                part p{part::dbl, {}, {}};
                ++m_p;
                while (m_p < m_t.size() && m_t[m_p] != '"') {
                    if (m_t[m_p] == '\\' && m_p + 1 < m_t.size()) {
                        if (m_t[m_p + 1] == '\n') { m_p += 2; ++m_line; continue; }
                        if (m_t[m_p + 1] == '$' || m_t[m_p + 1] == '`') {
                            // `\$X`: a literal '$' the expansion must not read (a quoted piece of its own)
                            w.parts.push_back(std::move(p));
                            w.parts.push_back({part::single, std::string(1, m_t[m_p + 1]), {m_line}});
                            p = part{part::dbl, {}, {}};
                            m_p += 2;
                            continue;
                        }
                        if (std::string_view("\"\\").find(m_t[m_p + 1]) != std::string_view::npos) ++m_p;
                    }
                    if (m_t[m_p] == '\n') ++m_line;
                    p.text += m_t[m_p++];
                    p.ln.push_back(m_line);
                }
                if (m_p >= m_t.size()) fail(open, "unterminated double quote");
                ++m_p;
                w.parts.push_back(std::move(p));
                continue;
            }
            if (c == '`') {
                const std::int64_t open = m_line;
                unq(w).text += c;
                unq(w).ln.push_back(m_line);
                ++m_p;
                while (m_p < m_t.size() && m_t[m_p] != '`') {
                    if (m_t[m_p] == '\n') ++m_line;
                    unq(w).text += m_t[m_p++];
                    unq(w).ln.push_back(m_line);
                }
                if (m_p >= m_t.size()) fail(open, "unterminated backquote");
                unq(w).text += '`';
                unq(w).ln.push_back(m_line);
                ++m_p;
                continue;
            }
            if (c == '$' && m_p + 1 < m_t.size() && m_t[m_p + 1] == '{') {
                const std::int64_t open = m_line;
                int d = 0;
                while (m_p < m_t.size()) {
                    char k = m_t[m_p];
                    if (k == '{') ++d;
                    if (k == '}' && --d == 0) break;
                    if (k == '\n') ++m_line;
                    unq(w).text += k;
                    unq(w).ln.push_back(m_line);
                    ++m_p;
                }
                if (m_p >= m_t.size()) fail(open, "unterminated ${");
                unq(w).text += '}';
                unq(w).ln.push_back(m_line);
                ++m_p;
                continue;
            }
            unq(w).text += c;
            unq(w).ln.push_back(m_line);
            ++m_p;
        }
    }

    void read_balanced(raw_word& w) {
        const std::int64_t open = m_line;
        int d = 0;
        while (m_p < m_t.size()) {
            char k = m_t[m_p];
            if (k == '(') ++d;
            if (k == ')') --d;
            if (k == '\n') ++m_line;
            unq(w).text += k;
            unq(w).ln.push_back(m_line);
            ++m_p;
            if (d == 0) return;
            if (d > 64) fail(open, "parentheses nested too deeply");
        }
        fail(open, "unterminated $(");
    }

    part& unq(raw_word& w) {
        if (w.parts.empty() || w.parts.back().k != part::unquoted) w.parts.push_back({part::unquoted, {}, {}});
        return w.parts.back();
    }

    // ----- expansion
    std::optional<std::int64_t> arith(std::string_view e, int depth) {
        std::size_t p = 0;
        auto v = arith_sum(e, p, depth);
        skip_sp(e, p);
        if (!v || p != e.size()) return std::nullopt;
        return v;
    }
    void skip_sp(std::string_view e, std::size_t& p) {
        while (p < e.size() && std::isspace(static_cast<unsigned char>(e[p]))) ++p;
    }
    std::optional<std::int64_t> arith_atom(std::string_view e, std::size_t& p, int depth) {
        skip_sp(e, p);
        if (p >= e.size() || depth > max_expand_depth) return std::nullopt;
        if (e[p] == '(') {
            ++p;
            auto v = arith_sum(e, p, depth + 1);
            skip_sp(e, p);
            if (!v || p >= e.size() || e[p] != ')') return std::nullopt;
            ++p;
            return v;
        }
        if (e[p] == '-') { ++p; auto v = arith_atom(e, p, depth + 1); if (!v) return v; return -*v; }
        if (e[p] == '$') ++p;
        if (p < e.size() && e[p] == '{') ++p;
        std::size_t s = p;
        while (p < e.size() && (std::isalnum(static_cast<unsigned char>(e[p])) || e[p] == '_')) ++p;
        if (p < e.size() && e[p] == '}') ++p;
        std::string tokn(e.substr(s, p - s));
        if (!tokn.empty() && tokn.back() == '}') tokn.pop_back();
        if (tokn.empty()) return std::nullopt;
        if (std::isdigit(static_cast<unsigned char>(tokn[0]))) return whole_int(tokn);
        auto it = m_vars.find(tokn);
        if (it == m_vars.end() || it->second.elems.size() != 1 || !it->second.elems[0].literal) return std::nullopt;
        return whole_int(it->second.elems[0].s);
    }
    std::optional<std::int64_t> arith_prod(std::string_view e, std::size_t& p, int depth) {
        auto v = arith_atom(e, p, depth);
        while (v) {
            skip_sp(e, p);
            if (p >= e.size() || (e[p] != '*' && e[p] != '/' && e[p] != '%')) break;
            char op = e[p++];
            auto r = arith_atom(e, p, depth);
            if (!r) return r;
            if (op == '*') {
                if (__builtin_mul_overflow(*v, *r, &*v)) return std::nullopt;
            } else {
                if (*r == 0) return std::nullopt;
                v = op == '/' ? *v / *r : *v % *r;
            }
        }
        return v;
    }
    std::optional<std::int64_t> arith_sum(std::string_view e, std::size_t& p, int depth) {
        auto v = arith_prod(e, p, depth);
        while (v) {
            skip_sp(e, p);
            if (p >= e.size() || (e[p] != '+' && e[p] != '-')) break;
            char op = e[p++];
            auto r = arith_prod(e, p, depth);
            if (!r) return r;
            if (__builtin_add_overflow(*v, op == '+' ? *r : -*r, &*v)) return std::nullopt;
        }
        return v;
    }

    // Expands `$...` inside text; quoted=false marks expansion results splittable.
    // Array expansions "${A[@]}" produce separate elements in `extra_words`.
    lined expand_text(const std::string& text, const std::vector<std::int64_t>& ln, bool quoted, int depth,
                      std::vector<lined>* array_out) {
        lined out;
        if (depth > max_expand_depth) { out.taint(); return out; }
        std::size_t i = 0;
        while (i < text.size()) {
            const std::int64_t l = i < ln.size() ? ln[i] : 0;
            if (text[i] == '`') {
                std::size_t e = text.find('`', i + 1);
                e = e == std::string::npos ? text.size() : e + 1;
                out.unevaluated(text, i, e, l);
                i = e;
                continue;
            }
            if (text[i] != '$' || i + 1 >= text.size()) { out.add(text[i], l, false); ++i; continue; }
            // $(( arithmetic ))
            if (text.compare(i, 3, "$((") == 0) {
                int d = 0;
                std::size_t k = i + 1;
                for (; k < text.size(); ++k) {
                    if (text[k] == '(') ++d;
                    if (text[k] == ')' && --d == 0) break;
                }
                const std::string expr = k < text.size() && k >= i + 4 ? text.substr(i + 3, k - i - 4) : "";
                auto v = arith(expr, depth + 1);
                if (v) {
                    for (char c : std::to_string(*v)) out.add(c, l, !quoted);
                } else {
                    out.unevaluated(text, i, std::min(k, text.size() - 1) + 1, l);
                }
                i = k + 1;
                continue;
            }
            if (text[i + 1] == '(') {  // command substitution
                int d = 0;
                std::size_t k = i + 1;
                for (; k < text.size(); ++k) {
                    if (text[k] == '(') ++d;
                    if (text[k] == ')' && --d == 0) break;
                }
                out.unevaluated(text, i, std::min(k, text.size() - 1) + 1, l);
                i = k + 1;
                continue;
            }
            std::string name, op, arg;
            std::size_t end = i + 1;
            bool braced = text[i + 1] == '{';
            if (braced) {
                int d = 0;
                std::size_t k = i + 1;
                for (; k < text.size(); ++k) {
                    if (text[k] == '{') ++d;
                    if (text[k] == '}' && --d == 0) break;
                }
                const std::string inner = text.substr(i + 2, k > i + 2 ? k - i - 2 : 0);
                end = k + 1;
                std::size_t n = 0;
                while (n < inner.size() && (std::isalnum(static_cast<unsigned char>(inner[n])) || inner[n] == '_')) ++n;
                name = inner.substr(0, n);
                op = inner.substr(n);
            } else {
                std::size_t k = i + 1;
                if (std::isdigit(static_cast<unsigned char>(text[k])) || std::strchr("@*#?$!-", text[k])) ++k;
                else
                    while (k < text.size() && (std::isalnum(static_cast<unsigned char>(text[k])) || text[k] == '_')) ++k;
                name = text.substr(i + 1, k - i - 1);
                end = k;
            }
            if (name.empty()) { out.add('$', l, false); ++i; continue; }
            auto it = m_vars.find(name);
            const bool defined = it != m_vars.end();
            // "$VAR" is one word (bash splits only unquoted expansions): `bash -c "$LAUNCHER $CMD"`
            auto emit_var = [&](const lined& v) {
                if (!quoted) return out.append(v, true);
                lined whole = v;
                std::fill(whole.split.begin(), whole.split.end(), char(0));
                out.append(whole, false);
            };
            auto default_value = [&](std::size_t skip) {
                std::string d;
                for (char ch : op.substr(skip))
                    if (ch != '"' && ch != '\'') d += ch;  // quotes inside ${A:-"x"}
                std::vector<std::int64_t> dl(d.size(), l);
                lined v = expand_text(d, dl, true, depth + 1, nullptr);
                for (auto& s : v.split) s = !quoted;
                return v;
            };
            if (op.empty()) {
                if (defined && !it->second.elems.empty()) emit_var(it->second.elems[0]);
                else out.unevaluated(text, i, end, l);
            } else if (op == "[@]" || op == "[*]") {
                if (defined) {
                    if (array_out && quoted && it->second.elems.size() > 0) {
                        // "${A[@]}": each element is its own word.
                        for (std::size_t e = 0; e + 1 < it->second.elems.size(); ++e) array_out->push_back(it->second.elems[e]);
                        if (!array_out->empty()) {
                            // Text before the expansion belongs to the first element.
                            lined first = out;
                            first.append((*array_out)[array_out->size() - (it->second.elems.size() - 1)], false);
                            (*array_out)[array_out->size() - (it->second.elems.size() - 1)] = first;
                            out = lined{};
                        }
                        emit_var(it->second.elems.back());
                    } else {
                        for (std::size_t e = 0; e < it->second.elems.size(); ++e) {
                            if (e) out.add(' ', l, true);
                            out.append(it->second.elems[e], true);
                        }
                    }
                } else {
                    out.taint();
                }
            } else if (op.rfind(":-", 0) == 0 || op.rfind(":=", 0) == 0) {
                if (defined && !it->second.elems.empty() && !it->second.elems[0].s.empty()) emit_var(it->second.elems[0]);
                else {
                    lined v = default_value(2);
                    if (op[1] == '=') m_vars[name].elems = {v};
                    out.append(v, false);
                }
            } else if (op[0] == '-' || op[0] == '=') {
                if (defined && !it->second.elems.empty()) emit_var(it->second.elems[0]);
                else out.append(default_value(1), false);
            } else {
                out.unevaluated(text, i, end, l);  // ${#A}, ${A%x}, ${A/x/y}, ...
            }
            i = end;
        }
        return out;
    }

    // Expands one raw word into zero or more words.
    std::vector<lined> expand(const raw_word& w) {
        std::vector<lined> pre;  // complete words produced by "${A[@]}"
        lined cur;
        for (const auto& p : w.parts) {
            if (p.k == part::single) {
                for (std::size_t i = 0; i < p.text.size(); ++i) cur.add(p.text[i], p.ln[i], false);
                continue;
            }
            std::vector<lined> arr;
            lined e = expand_text(p.text, p.ln, p.k == part::dbl, 0, &arr);
            if (!arr.empty()) {
                arr.front().append(cur, false);  // (rare) text before: keep it simple
                for (auto& a : arr) pre.push_back(a);
                cur = lined{};
            }
            cur.append(e, false);
            cur.literal = cur.literal && e.literal;
        }
        // Split on unquoted-expansion whitespace.
        std::vector<lined> out = pre;
        lined word;
        bool has = !w.parts.empty() && cur.s.empty() && pre.empty();
        // A word is non-literal when the whole text is, or when it holds characters of a non-literal piece.
        auto word_literal = [&](const lined& wd) {
            if (cur.literal) return true;
            if (!cur.explained) return false;
            return std::find(wd.opaque.begin(), wd.opaque.end(), char(1)) == wd.opaque.end();
        };
        for (std::size_t i = 0; i < cur.s.size(); ++i) {
            if (cur.split[i] && std::isspace(static_cast<unsigned char>(cur.s[i]))) {
                if (!word.s.empty()) { word.literal = word_literal(word); out.push_back(word); }
                word = lined{};
                continue;
            }
            word.add(cur.s[i], cur.ln[i], false, cur.opaque[i]);
        }
        if (!word.s.empty()) { word.literal = word_literal(word); out.push_back(word); }
        else if (has && !cur.literal) { word.literal = false; out.push_back(word); }
        else if (has) {
            // An explicitly empty quoted word ("") stays a word.
            bool quoted = false;
            for (const auto& p : w.parts) quoted = quoted || p.k != part::unquoted;
            if (quoted) out.push_back(word);
        }
        return out;
    }

    // if / elif / else / fi: a branch whose condition is known false is skipped; an unknown
    // condition (a file test, an unset variable) runs the branch as before, and so does its else.
    struct branch {
        bool parent_active = true;
        int taken = 0;  // 1: an earlier branch certainly ran, 0: none did, -1: one may have
        bool active = true;
    };
    static constexpr std::size_t max_branches = 64;

    bool active() const { return m_branches.empty() || m_branches.back().active; }

    // Truth of `[[ a == b ]] || [ -z "$c" ] && test x != y` (1, 0, or -1 when unknown).
    int condition(const std::vector<raw_word>& words, std::size_t from) {
        std::vector<shell_word> w;
        for (std::size_t i = from; i < words.size(); ++i)
            for (auto& x : expand(words[i])) w.push_back({x.s, x.literal, 0});
        tri_chain chain;
        std::size_t i = 0;
        while (i < w.size()) {
            bool negate = false;
            while (i < w.size() && w[i].text == "!") { negate = !negate; ++i; }
            if (i >= w.size()) return -1;
            std::vector<shell_word> t;
            if (w[i].text == "[[" || w[i].text == "[" || w[i].text == "test") {
                const std::string close = w[i].text == "[[" ? "]]" : (w[i].text == "[" ? "]" : "");
                ++i;
                while (i < w.size() && w[i].text != close && (close.size() || (w[i].text != "||" && w[i].text != "&&")))
                    t.push_back(w[i++]);
                if (close.size()) {
                    if (i >= w.size()) return -1;
                    ++i;
                }
            } else {
                return -1;  // a command's exit status
            }
            chain.add(test_list(t), negate);
            if (i >= w.size()) break;
            if (!chain.join(w[i].text)) return -1;
            ++i;
        }
        return chain.value();
    }

    // `a == b || c != d && e -eq 1` inside [[ ]]: && binds tighter than || (bash's [[ ]] grammar)
    static int test_list(const std::vector<shell_word>& t) {
        tri_chain any, all;
        std::vector<shell_word> one;
        auto test = [&] {
            bool neg = false;
            std::size_t k = 0;
            while (k < one.size() && one[k].text == "!") { neg = !neg; ++k; }
            all.add(test_value(std::vector<shell_word>(one.begin() + static_cast<long>(k), one.end())), neg);
            one.clear();
        };
        for (const auto& x : t) {
            if (x.text == "&&") {
                test();
                all.join(x.text);
            } else if (x.text == "||") {
                test();
                any.add(all.value(), false);
                any.join(x.text);
                all = tri_chain{};
            } else {
                one.push_back(x);
            }
        }
        test();
        any.add(all.value(), false);
        return any.value();
    }

    static int test_value(const std::vector<shell_word>& t) {
        for (const auto& x : t)
            if (!x.literal) return -1;
        if (t.size() == 1) return t[0].text.empty() ? 0 : 1;
        if (t.size() == 2 && t[0].text == "-z") return t[1].text.empty() ? 1 : 0;
        if (t.size() == 2 && t[0].text == "-n") return t[1].text.empty() ? 0 : 1;
        if (t.size() != 3) return -1;
        const std::string& op = t[1].text;
        if (op == "==" || op == "=" || op == "!=") {
            if (t[2].text.find_first_of("*?[") != std::string::npos) return -1;  // a pattern
            const bool eq = t[0].text == t[2].text;
            return op == "!=" ? !eq : eq;
        }
        static const char* const ints[] = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"};
        for (const char* k : ints) {
            if (op != k) continue;
            const auto x = whole_int(t[0].text), y = whole_int(t[2].text);
            if (!x || !y) return -1;
            const std::int64_t a = *x, b = *y;
            if (op == "-eq") return a == b;
            if (op == "-ne") return a != b;
            if (op == "-lt") return a < b;
            if (op == "-le") return a <= b;
            if (op == "-gt") return a > b;
            return a >= b;
        }
        return -1;
    }

    // Applies if/elif/else/fi/then; returns the index of the first word of the command proper
    // (words.size() when nothing is left to run).
    std::size_t control(const std::vector<raw_word>& words) {
        if (words.empty()) return 0;
        if (keyword_word(words[0], "if")) {
            branch b;
            b.parent_active = active();
            const int c = b.parent_active && m_branches.size() < max_branches ? condition(words, 1) : -1;
            b.taken = c;
            b.active = b.parent_active && c != 0;
            m_branches.push_back(b);
            return words.size();
        }
        if (keyword_word(words[0], "elif")) {
            if (m_branches.empty()) return words.size();
            branch& b = m_branches.back();
            if (b.taken == 1) { b.active = false; return words.size(); }
            const int c = b.parent_active ? condition(words, 1) : -1;
            b.active = b.parent_active && c != 0;
            b.taken = c == 1 ? 1 : (b.taken == -1 || c == -1 ? -1 : 0);
            return words.size();
        }
        if (keyword_word(words[0], "else")) {
            if (!m_branches.empty()) {
                branch& b = m_branches.back();
                b.active = b.parent_active && b.taken != 1;
                b.taken = 1;
            }
            return 1;
        }
        if (keyword_word(words[0], "fi")) {
            if (!m_branches.empty()) m_branches.pop_back();
            return 1;
        }
        if (keyword_word(words[0], "then") || keyword_word(words[0], "do")) return 1;
        return 0;
    }

    void handle(std::vector<raw_word>& words, std::int64_t cmd_line, shell_script& out) {
        std::size_t i = control(words);
        if (i >= words.size() || !active()) return;
        bool exported = false;
        if (words[i].parts.size() == 1 && words[i].parts[0].k == part::unquoted &&
            (words[i].parts[0].text == "export" || words[i].parts[0].text == "declare" ||
             words[i].parts[0].text == "local" || words[i].parts[0].text == "readonly")) {
            exported = words[i].parts[0].text == "export";
            ++i;
            while (i < words.size() && !words[i].parts.empty() && words[i].parts[0].k == part::unquoted &&
                   words[i].parts[0].text.rfind("-", 0) == 0)
                ++i;
        }
        // Leading NAME=value assignments: the script's own, or a prefix of the command after them.
        std::vector<raw_entry> env;
        std::size_t assigned = 0;
        for (; i < words.size(); ++i) {
            const raw_word& w = words[i];
            if (w.parts.empty() || w.parts[0].k != part::unquoted) break;
            const std::string& t0 = w.parts[0].text;
            const auto eq = t0.find('=');
            const auto head = assignment_name(t0);
            if (!head) {
                if (exported && valid_name(t0) && w.parts.size() == 1) {
                    // `export NAME` of an already defined variable.
                    if (auto it = m_vars.find(t0); it != m_vars.end() && !it->second.elems.empty())
                        add_env(env, t0, it->second.elems[0], w.line);
                    ++assigned;
                    continue;
                }
                break;
            }
            const std::string& name = head->name;
            variable v;
            if (w.array) {
                for (const auto& el : w.elements)
                    for (auto& x : expand(el)) v.elems.push_back(std::move(x));
            } else {
                raw_word rhs = w;
                rhs.parts[0].text = t0.substr(eq + 1);
                rhs.parts[0].ln.erase(rhs.parts[0].ln.begin(), rhs.parts[0].ln.begin() + static_cast<long>(std::min(eq + 1, rhs.parts[0].ln.size())));
                // Assignment values are not word-split: join the expansion.
                lined joined;
                auto parts = expand(rhs);
                for (std::size_t k = 0; k < parts.size(); ++k) {
                    if (k) joined.add(' ', w.line, true);
                    joined.append(parts[k], false);
                    joined.literal = joined.literal && parts[k].literal;
                }
                // Keep split marks so that $VAR (unquoted) splits later.
                for (auto& s : joined.split) s = true;
                v.elems.push_back(std::move(joined));
            }
            if (head->append && m_vars.count(name)) {
                variable& old = m_vars[name];
                if (w.array || old.elems.size() != 1) {
                    for (auto& x : v.elems) old.elems.push_back(std::move(x));
                } else if (!v.elems.empty()) {
                    old.elems[0].append(v.elems[0], false);
                    old.elems[0].literal = old.elems[0].literal && v.elems[0].literal;
                }
                v = old;
            } else {
                m_vars[name] = v;
            }
            if (exported || is_env_name(name)) add_env(env, name, v.elems.empty() ? lined{} : v.elems[0], w.line);
            ++assigned;
        }
        if (i >= words.size() || exported) {
            for (auto& e : env) out.env.push_back(std::move(e));
            env.clear();
            if (i >= words.size()) return;
        }
        shell_command cmd;
        cmd.line = cmd_line;
        cmd.env = std::move(env);
        std::vector<lined> expanded;  // beside cmd.words: the lines of each character, for a `-c` string
        for (; i < words.size(); ++i) {
            for (auto& x : expand(words[i])) {
                shell_word sw;
                sw.text = x.s.substr(0, 4096);
                sw.literal = x.literal;
                sw.line = x.ln.empty() ? words[i].line : x.ln.front();
                cmd.words.push_back(std::move(sw));
                expanded.push_back(std::move(x));
            }
        }
        if (cmd.words.empty()) return;
        const std::size_t c = shell_c_operand(cmd.words);
        out.commands.push_back(std::move(cmd));
        if (c != 0) read_nested(expanded[c], cmd_line, out);
    }

    // `bash -c "torchrun ... train.py --flags"` (SLURM's `srun bash -x -c "$LAUNCHER ..."`): the index of
    // the string a shell runs (after its options, one of them holding `c`: -c, -lc, -x -c), already
    // expanded as the outer shell would (what it could not expand, `${UNSET}` or `$(cmd)`, is still in the
    // text, and the inner read finds it again); 0 when the command runs none.
    static std::size_t shell_c_operand(const std::vector<shell_word>& w) {
        for (std::size_t j = 0; j < w.size(); ++j) {
            const std::string name = command_name(w[j].text);
            if (name != "bash" && name != "sh" && name != "zsh" && name != "dash") continue;
            bool c = false;
            std::size_t k = j + 1;
            for (; k < w.size() && w[k].text.size() > 1 && w[k].text[0] == '-'; ++k)
                c = c || (w[k].text[1] != '-' && w[k].text.find('c') != std::string::npos);
            if (!c || k >= w.size()) continue;
            return k;
        }
        return 0;
    }

    // The commands of a `-c` string, read with the variables set so far. Each word takes the line its
    // text was written on in this file (found in order in the string; else the running command's line).
    // A string the reader cannot take (an unterminated quote inside) adds nothing.
    void read_nested(const lined& src, std::int64_t cmd_line, shell_script& out) {
        if (m_depth >= 3) return;
        shell_reader inner(src.s, m_file);
        inner.m_vars = m_vars;
        inner.m_depth = m_depth + 1;
        shell_script got;
        try {
            got = inner.run();
        } catch (const input_error&) {
            return;
        } catch (const expansion_too_large&) {
            return;
        }
        std::size_t cursor = 0;
        auto line_of = [&](const std::string& text) {
            const std::size_t at = text.empty() ? std::string::npos : src.s.find(text, cursor);
            if (at == std::string::npos || at >= src.ln.size()) return cmd_line;
            cursor = at + text.size();
            return src.ln[at];
        };
        for (auto& e : got.env) e.line = cmd_line;
        for (auto& c : got.commands) {
            for (auto& e : c.env) e.line = line_of(e.key.substr(4) + "=");
            for (auto& w : c.words) w.line = line_of(w.text);
            c.line = c.words.front().line;
            out.commands.push_back(std::move(c));
        }
        for (auto& e : got.env) out.env.push_back(std::move(e));
    }

    static bool is_env_name(const std::string& n) {
        return n.rfind("PYTORCH_", 0) == 0 || n.rfind("NCCL_", 0) == 0 || n.rfind("HCCL_", 0) == 0 ||
               n == "TASK_QUEUE_ENABLE" || n == "CUDA_DEVICE_MAX_CONNECTIONS" || n == "MULTI_STREAM_MEMORY_RESERVE" ||
               n == "NPROC_PER_NODE" || n == "NNODES";  // launchers that read them (swift, LLaMA-Factory's torchrun)
    }

    void add_env(std::vector<raw_entry>& out, const std::string& name, const lined& v, std::int64_t line) {
        raw_entry e;
        e.key = "env." + name;
        e.val = v.literal ? value(v.s) : value();
        e.literal = v.literal;
        e.text = v.s.substr(0, 200);
        e.line = line;
        e.excerpt = line_excerpt(m_t, line);
        out.push_back(std::move(e));
    }

    std::string_view m_t;
    const std::string& m_file;
    std::size_t m_p = 0;
    std::int64_t m_line = 1;
    bool m_closed_paren = true;
    std::map<std::string, variable> m_vars;
    std::vector<branch> m_branches;
    int m_depth = 0;  // `bash -c` strings inside `bash -c` strings
};

}  // namespace

shell_script parse_shell(std::string_view text, const std::string& file) {
    shell_reader r(text, file);
    try {
        return r.run();
    } catch (const expansion_too_large&) {
        throw input_error::at_line(file, r.line(), "variable expansion larger than 1 MiB");
    }
}

const shell_command* launch_command(const shell_script& s) {
    // The command with the most --flags (key=value operands count too, for LLaMA-Factory; so do a launcher,
    // a script and a YAML config operand).
    const shell_command* best = nullptr;
    std::size_t best_n = 0;
    for (const auto& c : s.commands) {
        std::size_t n = 0;
        for (const auto& w : c.words) {
            if (w.text.rfind("--", 0) == 0) n += 2;
            else if (w.text.find('=') != std::string::npos && w.text.front() != '-') n += 1;
            else if (w.text.find("torchrun") != std::string::npos || w.text.find("llamafactory-cli") != std::string::npos ||
                     w.text.find("deepspeed") != std::string::npos || w.text.ends_with(".py") ||
                     w.text.ends_with(".yaml") || w.text.ends_with(".yml"))  // `megatron sft cfg.yaml`
                n += 1;
        }
        if (n > 0 && n >= best_n) {
            best = &c;
            best_n = n;
        }
    }
    return best;
}

std::string command_name(const std::string& word) {
    const auto slash = word.rfind('/');
    return slash == std::string::npos ? word : word.substr(slash + 1);
}

value typed_word(const std::string& s) {
    if (s == "true" || s == "True") return value(true);
    if (s == "false" || s == "False") return value(false);
    if (auto i = whole_int(s)) return value(*i);
    if (!s.empty() && s.find_first_of("0123456789") != std::string::npos) {
        char* end = nullptr;
        double d = std::strtod(s.c_str(), &end);
        if (end == s.c_str() + s.size() && s.find_first_of("xXnN") == std::string::npos) return value(d);
    }
    return value(s);
}

std::vector<raw_entry> args_to_entries(const std::vector<shell_word>& words, std::string_view text,
                                       const std::function<int(const std::string&)>& takes_value,
                                       std::vector<shell_word>* operands) {
    std::vector<raw_entry> out;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const shell_word& w = words[i];
        if (w.text.size() < 3 || w.text.rfind("--", 0) != 0) {
            if (operands) operands->push_back(w);
            continue;
        }
        raw_entry e;
        e.line = w.line;
        e.excerpt = line_excerpt(text, w.line);
        std::string flag = w.text.substr(2);
        if (auto eq = flag.find('='); eq != std::string::npos) {
            e.key = flag.substr(0, eq);
            e.text = flag.substr(eq + 1);
            e.literal = w.literal;
            e.val = w.literal ? typed_word(e.text) : value();
        } else {
            e.key = flag;
            const int tv = takes_value ? takes_value(flag) : -1;
            const bool next_is_value = i + 1 < words.size() && words[i + 1].text.rfind("--", 0) != 0;
            if (tv == 2 && next_is_value) {
                e.literal = w.literal;
                while (i + 1 < words.size() && words[i + 1].text.rfind("--", 0) != 0) {
                    const shell_word& v = words[++i];
                    if (!e.text.empty()) e.text += ',';
                    e.text += v.text;
                    e.literal = e.literal && v.literal;
                }
                e.val = e.literal ? value(e.text) : value();
            } else if ((tv == 1 || tv == -1) && next_is_value) {
                if (i + 1 < words.size()) {
                    const shell_word& v = words[++i];
                    e.text = v.text;
                    e.literal = v.literal && w.literal;
                    e.val = e.literal ? typed_word(v.text) : value();
                    if (v.line != w.line) e.excerpt = line_excerpt(text, w.line) + " " + line_excerpt(text, v.line);
                } else {
                    e.literal = false;
                    e.text = "(missing value)";
                }
            } else {
                e.val = value(true);
                e.text = "";
            }
        }
        if (!w.literal) e.literal = false;
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace oomdx
