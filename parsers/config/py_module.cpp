// mmengine-style Python config modules read as data (no Python is run).
#include "parsers/config/py_module.h"

#include <cmath>
#include <cstdint>
#include <map>

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace oomdx {

namespace {

using mtok = py_source::token;

std::string mod_join(const std::string& a, const std::string& b) {
    if (a.empty()) return b;
    return b.empty() ? a : a + "." + b;
}

bool mod_is_dotted_name(const std::string& s) {
    if (s.empty() || s.front() == '.' || s.back() == '.') return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool word = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80);
        if (!word && c != '.') return false;
        if (i == 0 && std::isdigit(static_cast<unsigned char>(c))) return false;
    }
    return true;
}

// Number arithmetic over literals and names bound to numbers: + - * / // % ** and parentheses.
class mod_arith {
public:
    mod_arith(const std::vector<mtok>& t, const std::map<std::string, std::vector<raw_entry>>& vars) : T(t), vars(vars) {}
    bool eval(value& out) {
        std::size_t i = 0;
        if (!sum(i, out, 0)) return false;
        return T[i].t == mtok::type::newline || T[i].t == mtok::type::end;
    }

private:
    const std::vector<mtok>& T;
    const std::map<std::string, std::vector<raw_entry>>& vars;
    bool op(std::size_t i, const char* s) const { return T[i].t == mtok::type::op && T[i].s == s; }
    // Nesting of parentheses and unary signs the arithmetic follows; deeper is left unread.
    static constexpr int k_max_depth = 32;
    // Integers stay exact in a double up to 2^53 (~9.007e15): a result past this is left unread, not rounded.
    static constexpr double k_exact = 9e15;
    static value num(double d, bool integer) { return integer ? value(static_cast<std::int64_t>(d)) : value(d); }
    // An integer result that a double no longer holds exactly is unread; a float must be finite.
    static bool representable(double x, bool integer) { return std::isfinite(x) && !(integer && std::fabs(x) > k_exact); }
    bool atom(std::size_t& i, value& v, int depth) {
        if (depth > k_max_depth) return false;
        if (T[i].t == mtok::type::number) {
            bool ok = false;
            const value x = parse_number(T[i].s, ok);
            if (!ok) return false;
            v = x;
            ++i;
            return true;
        }
        if (T[i].t == mtok::type::name) {
            std::string name = T[i].s;
            ++i;
            auto it = vars.find(name);
            if (it == vars.end() || it->second.size() != 1 || !it->second[0].key.empty() || !it->second[0].literal) return false;
            const value& b = it->second[0].val;
            if (!b.is_integer() && !b.is_number()) return false;
            v = b;
            return true;
        }
        if (op(i, "-") || op(i, "+")) {
            const bool neg = op(i, "-");
            ++i;
            if (!power(i, v, depth + 1)) return false;
            if (neg) v = v.is_integer() ? value(-v.as_integer()) : value(-v.as_number());
            return true;
        }
        if (op(i, "(")) {
            ++i;
            if (!sum(i, v, depth + 1) || !op(i, ")")) return false;
            ++i;
            return true;
        }
        return false;
    }
    bool power(std::size_t& i, value& v, int depth) {
        if (!atom(i, v, depth + 1)) return false;
        if (!op(i, "**")) return true;
        ++i;
        value e;
        if (!power(i, e, depth + 1)) return false;
        const double r = std::pow(v.as_number(), e.as_number());
        if (!std::isfinite(r)) return false;
        v = num(r, v.is_integer() && e.is_integer() && e.as_integer() >= 0 && std::fabs(r) < k_exact);
        return true;
    }
    bool product(std::size_t& i, value& v, int depth) {
        if (!power(i, v, depth)) return false;
        while (op(i, "*") || op(i, "/") || op(i, "//") || op(i, "%")) {
            const std::string o = T[i].s;
            ++i;
            value r;
            if (!power(i, r, depth)) return false;
            const double a = v.as_number(), b = r.as_number();
            const bool ints = v.is_integer() && r.is_integer();
            if (o != "*" && b == 0) return false;
            double x = o == "*" ? a * b : o == "/" ? a / b : o == "//" ? std::floor(a / b) : a - b * std::floor(a / b);
            if (!representable(x, ints)) return false;
            v = num(x, ints && o != "/");
        }
        return true;
    }
    bool sum(std::size_t& i, value& v, int depth) {
        if (depth > k_max_depth || !product(i, v, depth)) return false;
        while (op(i, "+") || op(i, "-")) {
            const bool add = op(i, "+");
            ++i;
            value r;
            if (!product(i, r, depth)) return false;
            const bool ints = v.is_integer() && r.is_integer();
            const double x = add ? v.as_number() + r.as_number() : v.as_number() - r.as_number();
            if (!representable(x, ints)) return false;
            v = num(x, ints);
        }
        return true;
    }
};

class mod_reader {
public:
    explicit mod_reader(const py_source& s) : src(s) {}

    py_module run() {
        const auto& T = src.tokens();
        std::size_t i = 0;
        while (T[i].t != mtok::type::end) {
            std::size_t e = i;
            while (T[e].t != mtok::type::newline && T[e].t != mtok::type::end) ++e;
            if (T[i].line_start && T[i].col == 0 && e > i) statement(i, e);
            // an indented line belongs to a block whose header was listed as skipped
            i = e;
            if (T[i].t == mtok::type::newline) ++i;
        }
        return std::move(out);
    }

private:
    const py_source& src;
    std::map<std::string, std::vector<raw_entry>> vars;  // name -> entries, keys relative to the name
    py_module out;

    std::string where(std::int64_t line) const { return fmt::format("{}:{}", src.file(), line); }

    void statement(std::size_t i, std::size_t e) {
        const auto& T = src.tokens();
        if (e == i + 1 && T[i].t == mtok::type::string) return;  // a docstring
        if (T[i].t == mtok::type::name && T[i + 1].t == mtok::type::op && T[i + 1].s == "=" && e > i + 2) {
            std::size_t k = i + 2;
            py_node v = src.parse_expr(k);
            if (k == e) {
                assign(T[i].s, v);
                return;
            }
        }
        // cfg67: `_base_.optim_wrapper.type = 'AmpOptimWrapper'` (a field of the bases' value, as mmengine's own
        // configs write it: mmdetection faster-rcnn_r50_fpn_amp-1x_coco.py) and `model.lora.r = 16` (a field of a
        // dict bound above) set that one field
        std::size_t k = i;
        std::string target;
        while (k + 1 < e && T[k].t == mtok::type::name) {
            target += (target.empty() ? "" : ".") + T[k].s;
            if (T[k + 1].t == mtok::type::op && T[k + 1].s == ".") k += 2;
            else break;
        }
        if (target.find('.') != std::string::npos && k + 2 < e && T[k + 1].t == mtok::type::op && T[k + 1].s == "=") {
            const std::string head = target.substr(0, target.find('.'));
            if (head == "_base_" || vars.count(head)) {
                std::size_t j = k + 2;
                py_node v = src.parse_expr(j);
                if (j == e) {
                    assign_field(head == "_base_" ? target.substr(7) : target, v);
                    return;
                }
            }
        }
        std::string text(src.text().substr(T[i].begin, T[e - 1].end - T[i].begin));
        if (const auto nl = text.find('\n'); nl != std::string::npos) text = text.substr(0, nl) + " ...";
        if (text.size() > 120) text = text.substr(0, 117) + "...";
        out.skipped.push_back(fmt::format("{} ({})", text, where(T[i].line)));
    }

    void assign(const std::string& name, const py_node& v) {
        std::vector<raw_entry> rel;
        convert(v, "", rel);
        std::erase_if(out.entries, [&](const raw_entry& e) { return e.key == name || e.key.rfind(name + ".", 0) == 0; });
        for (auto e : rel) {
            e.key = mod_join(name, e.key);
            if (!e.literal && !e.container) out.skipped.push_back(fmt::format("{} = {} ({})", e.key, e.text, where(e.line)));
            out.entries.push_back(std::move(e));
        }
        vars[name] = std::move(rel);
    }

    // One field of a value: what was under it is replaced, the rest of the value kept.
    void assign_field(const std::string& key, const py_node& v) {
        std::vector<raw_entry> rel;
        convert(v, key, rel);
        auto under = [&](const raw_entry& x) { return x.key == key || x.key.rfind(key + ".", 0) == 0; };
        std::erase_if(out.entries, under);
        const std::string head = key.substr(0, key.find('.'));
        if (auto it = vars.find(head); it != vars.end()) {
            const std::string rest = key.substr(head.size() + 1);
            std::erase_if(it->second, [&](const raw_entry& x) { return x.key == rest || x.key.rfind(rest + ".", 0) == 0; });
            for (auto x : rel) {
                x.key = x.key.substr(head.size() + 1);
                it->second.push_back(std::move(x));
            }
        }
        for (auto& x : rel) {
            if (!x.literal && !x.container) out.skipped.push_back(fmt::format("{} = {} ({})", x.key, x.text, where(x.line)));
            out.entries.push_back(std::move(x));
        }
    }

    raw_entry base(const py_node& n, const std::string& key) const {
        raw_entry e;
        e.key = key;
        e.line = n.line;
        e.excerpt = line_excerpt(src.text(), n.line);
        e.text = n.text;
        return e;
    }

    void convert(const py_node& n, const std::string& key, std::vector<raw_entry>& dst) {
        raw_entry e = base(n, key);
        switch (n.k) {
            case py_node::kind::literal:
                e.val = n.lit;
                dst.push_back(std::move(e));
                return;
            case py_node::kind::call:
                if (n.callee != "dict") break;
                e.container = true;
                dst.push_back(std::move(e));
                for (const auto& [k, v] : n.kwargs) {
                    if (k == "*" || k == "**") {
                        raw_entry x = base(v, mod_join(key, k));
                        x.literal = false;
                        dst.push_back(std::move(x));
                        continue;
                    }
                    convert(v, mod_join(key, k), dst);
                }
                return;
            case py_node::kind::dict:
                e.container = true;
                dst.push_back(std::move(e));
                for (const auto& [k, v] : n.entries)
                    if (k.k == py_node::kind::literal && k.lit.is_string()) convert(v, mod_join(key, k.lit.as_string()), dst);
                return;
            case py_node::kind::list: {
                value::list_t items;
                bool literal = true;
                std::vector<raw_entry> nested;
                for (std::size_t a = 0; a < n.items.size(); ++a) {
                    std::vector<raw_entry> one;
                    convert(n.items[a], mod_join(key, std::to_string(a)), one);
                    if (one.size() == 1 && !one[0].container && one[0].literal) items.push_back(one[0].val);
                    else if (!one.empty() && one[0].container) items.emplace_back();
                    else literal = false;
                    for (auto& x : one)
                        if (x.container || one.size() > 1) nested.push_back(std::move(x));
                }
                e.val = literal ? value(std::move(items)) : value();
                e.literal = literal;
                dst.push_back(std::move(e));
                for (auto& x : nested) dst.push_back(std::move(x));
                return;
            }
            case py_node::kind::other:
                if (mod_is_dotted_name(n.text)) {
                    if (auto it = vars.find(n.text); it != vars.end()) {
                        for (auto b : it->second) {  // a name bound earlier: its value, where it was written
                            b.key = mod_join(key, b.key);
                            dst.push_back(std::move(b));
                        }
                        return;
                    }
                    e.val = value(n.text);  // a class or constant (type=SupervisedFinetune): kept as its name
                    dst.push_back(std::move(e));
                    return;
                }
                if (fold(n, e.val)) {
                    dst.push_back(std::move(e));
                    return;
                }
                break;
        }
        e.literal = false;
        e.container = false;
        e.val = value();
        dst.push_back(std::move(e));
    }

    bool fold(const py_node& n, value& v) const {
        if (n.text.empty() || n.text.size() >= 200) return false;
        try {
            const py_source sub(n.text, src.file());
            return mod_arith(sub.tokens(), vars).eval(v);
        } catch (const input_error&) {
            return false;
        }
    }
};

}  // namespace

bool looks_like_py_module(const py_source& src, bool mmengine_only) {
    const auto& T = src.tokens();
    for (std::size_t i = 0; i + 3 < T.size(); ++i)
        if (T[i].line_start && T[i].col == 0 && T[i].t == mtok::type::name && T[i + 1].t == mtok::type::op &&
            T[i + 1].s == "=") {
            const bool dict_call = T[i + 2].t == mtok::type::name && T[i + 2].s == "dict" &&
                                   T[i + 3].t == mtok::type::op && T[i + 3].s == "(";
            if (!mmengine_only || dict_call || T[i].s == "_base_") return true;
        }
    return false;
}

py_module read_py_module(const py_source& src) { return mod_reader(src).run(); }

}  // namespace oomdx
