// Flatteners for JSON (nlohmann validates, a small scanner keeps lines), TOML (toml++) and
// YAML (yaml-cpp) into dotted raw entries.
#include "engine/core/yaml_node.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#if __has_include(<toml++/toml.hpp>)
#include <toml++/toml.hpp>
#else
#include <toml++/toml.h>  // Debian ships the header under this name
#endif

#include "engine/core/errors.h"
#include "engine/core/limits.h"
#include "engine/core/text_file.h"
#include "engine/core/yaml_file.h"
#include "parsers/config/raw_entry.h"
#include "engine/core/yaml_guard.h"

namespace oomdx {

namespace {
std::int64_t max_depth() { return current_limits().config_depth; }
std::string depth_note() { return " (more than " + std::to_string(max_depth()) + " levels, limit config_depth)"; }

std::string join_key(const std::string& a, const std::string& b) {
    return a.empty() ? b : a + "." + b;
}
}  // namespace

bool whole_number(double d, std::int64_t& out) {
    if (!(d >= -9.2e18 && d <= 9.2e18)) return false;  // also false for NaN
    const auto i = static_cast<std::int64_t>(d);
    if (static_cast<double>(i) != d) return false;
    out = i;
    return true;
}

std::string line_excerpt(std::string_view text, std::int64_t line) {
    if (line < 1) return {};
    // Parsers ask for many lines of the same text: index its line starts once per text (the
    // scan per call made a 250,000-line config take minutes).
    thread_local struct {
        const char* data = nullptr;
        std::size_t size = 0;
        std::vector<std::size_t> starts;
    } index;
    auto consistent = [&](std::size_t l) {
        const std::size_t st = index.starts[l - 1];
        return st <= text.size() && (st == 0 || text[st - 1] == '\n');
    };
    if (index.data != text.data() || index.size != text.size() ||
        (static_cast<std::size_t>(line) <= index.starts.size() && !consistent(static_cast<std::size_t>(line)))) {
        index.data = text.data();
        index.size = text.size();
        index.starts.assign(1, 0);
        for (std::size_t p = text.find('\n'); p != std::string_view::npos; p = text.find('\n', p + 1))
            index.starts.push_back(p + 1);
    }
    if (static_cast<std::size_t>(line) > index.starts.size()) return {};
    const std::size_t pos = index.starts[static_cast<std::size_t>(line) - 1];
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view s = text.substr(pos, end - pos);
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    std::string out(s.substr(0, 200));
    for (auto& c : out)
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t') c = '?';
    return out;
}

std::string read_config_file(const std::string& path) { return read_text_file(path, "a config"); }

// ---------------------------------------------------------------- JSON
namespace {

class json_scanner {
public:
    json_scanner(std::string_view t, const std::string& f, std::vector<raw_entry>& out)
        : m_t(t), m_file(f), m_out(out) {}

    void run() {
        skip_ws();
        parse_value("", 0, line());
        skip_ws();
        if (m_p != m_t.size()) fail("trailing characters after the JSON document");
    }

private:
    std::int64_t line() const { return line_of_offset(m_t, m_p); }
    [[noreturn]] void fail(const std::string& msg) const {
        throw input_error::at_line(m_file, line(), msg);
    }
    void skip_ws() {
        while (m_p < m_t.size() && (m_t[m_p] == ' ' || m_t[m_p] == '\t' || m_t[m_p] == '\n' ||
                                    m_t[m_p] == '\r'))
            ++m_p;
    }
    std::string parse_string() {
        // m_t[m_p] == '"'; nlohmann already validated escapes.
        std::string s;
        ++m_p;
        while (m_p < m_t.size() && m_t[m_p] != '"') {
            char c = m_t[m_p++];
            if (c == '\\' && m_p < m_t.size()) {
                char e = m_t[m_p++];
                switch (e) {
                    case 'n': s += '\n'; break;
                    case 't': s += '\t'; break;
                    case 'r': s += '\r'; break;
                    case 'b': s += '\b'; break;
                    case 'f': s += '\f'; break;
                    case 'u': {
                        unsigned cp = 0;
                        for (int i = 0; i < 4 && m_p < m_t.size(); ++i, ++m_p) {
                            char h = m_t[m_p];
                            cp = cp * 16 + static_cast<unsigned>(
                                (h >= '0' && h <= '9') ? h - '0' : (h | 0x20) - 'a' + 10);
                        }
                        if (cp < 0x80) s += static_cast<char>(cp);
                        else if (cp < 0x800) {
                            s += static_cast<char>(0xC0 | (cp >> 6));
                            s += static_cast<char>(0x80 | (cp & 0x3F));
                        } else {
                            s += static_cast<char>(0xE0 | (cp >> 12));
                            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
                            s += static_cast<char>(0x80 | (cp & 0x3F));
                        }
                        break;
                    }
                    default: s += e;
                }
            } else {
                s += c;
            }
        }
        if (m_p >= m_t.size()) fail("unterminated string");
        ++m_p;
        return s;
    }
    void emit(const std::string& key, value v, std::size_t start, std::int64_t ln, bool container) {
        raw_entry e;
        e.key = key;
        e.val = std::move(v);
        e.container = container;
        e.text = std::string(m_t.substr(start, std::min<std::size_t>(m_p - start, 200)));
        e.line = ln;
        e.excerpt = line_excerpt(m_t, ln);
        m_out.push_back(std::move(e));
    }
    value parse_scalar() {
        if (m_t[m_p] == '"') return value(parse_string());
        if (m_t.compare(m_p, 4, "true") == 0) { m_p += 4; return value(true); }
        if (m_t.compare(m_p, 5, "false") == 0) { m_p += 5; return value(false); }
        if (m_t.compare(m_p, 4, "null") == 0) { m_p += 4; return value(); }
        std::size_t s = m_p;
        bool is_float = false;
        while (m_p < m_t.size() && std::string_view("+-0123456789.eE").find(m_t[m_p]) !=
                                       std::string_view::npos) {
            if (m_t[m_p] == '.' || m_t[m_p] == 'e' || m_t[m_p] == 'E') is_float = true;
            ++m_p;
        }
        if (s == m_p) fail("unexpected character in JSON");
        std::string num(m_t.substr(s, m_p - s));
        if (!is_float) {
            std::int64_t i = 0;
            auto r = std::from_chars(num.data(), num.data() + num.size(), i);
            if (r.ec == std::errc() && r.ptr == num.data() + num.size()) return value(i);
            if (r.ec == std::errc::result_out_of_range) fail("integer out of range: " + num.substr(0, 40));
        }
        const double d = std::strtod(num.c_str(), nullptr);
        if (!std::isfinite(d)) fail("number out of range: " + num.substr(0, 40));
        return value(d);
    }
    void parse_value(const std::string& key, int depth, std::int64_t key_line) {
        if (depth > max_depth()) fail("JSON nested too deeply" + depth_note());
        skip_ws();
        if (m_p >= m_t.size()) fail("unexpected end of JSON");
        const std::size_t start = m_p;
        char c = m_t[m_p];
        if (c == '{') {
            if (!key.empty()) emit(key, value(), start, key_line, true);
            ++m_p;
            skip_ws();
            if (m_p < m_t.size() && m_t[m_p] == '}') { ++m_p; return; }
            while (m_p < m_t.size()) {
                skip_ws();
                const std::int64_t kl = line();
                if (m_p >= m_t.size() || m_t[m_p] != '"') fail("expected a key string");
                std::string k = parse_string();
                skip_ws();
                if (m_p >= m_t.size() || m_t[m_p] != ':') fail("expected ':'");
                ++m_p;
                parse_value(join_key(key, k), depth + 1, kl);
                skip_ws();
                if (m_p < m_t.size() && m_t[m_p] == ',') { ++m_p; continue; }
                if (m_p < m_t.size() && m_t[m_p] == '}') { ++m_p; return; }
                fail("expected ',' or '}'");
            }
            fail("unterminated object");
        }
        if (c == '[') {
            ++m_p;
            value::list_t items;
            bool scalars = true;
            std::size_t idx = 0;
            skip_ws();
            if (m_p < m_t.size() && m_t[m_p] == ']') {
                ++m_p;
                emit(key, value(items), start, key_line, false);
                return;
            }
            while (m_p < m_t.size()) {
                skip_ws();
                if (m_p < m_t.size() && (m_t[m_p] == '{' || m_t[m_p] == '[')) {
                    scalars = false;
                    parse_value(join_key(key, std::to_string(idx)), depth + 1, line());
                } else if (m_p < m_t.size()) {
                    items.push_back(parse_scalar());
                }
                ++idx;
                skip_ws();
                if (m_p < m_t.size() && m_t[m_p] == ',') { ++m_p; continue; }
                if (m_p < m_t.size() && m_t[m_p] == ']') { ++m_p; break; }
                fail("expected ',' or ']'");
            }
            if (scalars) emit(key, value(std::move(items)), start, key_line, false);
            return;
        }
        value v = parse_scalar();
        emit(key, std::move(v), start, key_line, false);
    }

    std::string_view m_t;
    const std::string& m_file;
    std::vector<raw_entry>& m_out;
    std::size_t m_p = 0;
};

}  // namespace

std::vector<raw_entry> flatten_json(std::string_view text, const std::string& file) {
    // Bound nesting before handing the text to a recursive parser.
    int depth = 0;
    bool in_str = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (in_str) {
            if (c == '\\') ++i;
            else if (c == '"') in_str = false;
            continue;
        }
        if (c == '"') in_str = true;
        else if (c == '{' || c == '[') {
            if (++depth > max_depth())
                throw input_error::at_line(file, line_of_offset(text, i), "JSON nested too deeply" + depth_note());
        } else if (c == '}' || c == ']') --depth;
    }
    try {
        [[maybe_unused]] const auto parsed = nlohmann::json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::parse_error& e) {
        std::string msg = e.what();
        if (auto p = msg.find("parse error"); p != std::string::npos) msg = msg.substr(p);
        const std::size_t off = e.byte > 0 ? e.byte - 1 : 0;
        throw input_error::at_line(file, line_of_offset(text, off), "invalid JSON: " + msg);
    } catch (const nlohmann::json::exception&) {
        // Number overflow and the like: the document is well formed; the scanner below keeps
        // such values as non-finite numbers that no mapping accepts.
    }
    std::vector<raw_entry> out;
    json_scanner(text, file, out).run();
    return out;
}

// ---------------------------------------------------------------- TOML
namespace {

value toml_scalar(const toml::node& n, bool& ok) {
    ok = true;
    if (auto v = n.as_integer()) return value(static_cast<std::int64_t>(v->get()));
    if (auto v = n.as_floating_point()) return value(v->get());
    if (auto v = n.as_boolean()) return value(v->get());
    if (auto v = n.as_string()) return value(v->get());
    ok = false;
    std::ostringstream os;
    if (auto v = n.as_date()) os << *v;
    else if (auto v = n.as_time()) os << *v;
    else if (auto v = n.as_date_time()) os << *v;
    if (!os.str().empty()) { ok = true; return value(os.str()); }
    return value();
}

void walk_toml(const toml::table& t, const std::string& prefix, std::string_view text,
               std::vector<raw_entry>& out, int depth, const std::string& file) {
    if (depth > max_depth()) throw input_error::in_file(file, "TOML nested too deeply" + depth_note());
    for (auto&& [k, node] : t) {
        const std::string key = join_key(prefix, std::string(k.str()));
        raw_entry e;
        e.key = key;
        e.line = static_cast<std::int64_t>(node.source().begin.line);
        if (e.line == 0) e.line = static_cast<std::int64_t>(k.source().begin.line);
        e.excerpt = line_excerpt(text, e.line);
        if (auto sub = node.as_table()) {
            e.container = true;
            out.push_back(e);
            walk_toml(*sub, key, text, out, depth + 1, file);
        } else if (auto arr = node.as_array()) {
            value::list_t items;
            bool scalars = true;
            std::size_t i = 0;
            for (auto&& el : *arr) {
                if (auto st = el.as_table()) {
                    scalars = false;
                    walk_toml(*st, join_key(key, std::to_string(i)), text, out, depth + 1, file);
                } else {
                    bool ok = false;
                    value v = toml_scalar(el, ok);
                    if (ok) items.push_back(std::move(v));
                    else scalars = false;
                }
                ++i;
            }
            if (scalars) {
                e.val = value(std::move(items));
                e.text = e.excerpt;
                out.push_back(e);
            }
        } else {
            bool ok = false;
            e.val = toml_scalar(node, ok);
            if (auto p = e.excerpt.find('='); p != std::string::npos) {
                e.text = e.excerpt.substr(p + 1);
                while (!e.text.empty() && e.text.front() == ' ') e.text.erase(0, 1);
            }
            out.push_back(std::move(e));
        }
    }
}

}  // namespace

std::vector<raw_entry> flatten_toml(std::string_view text, const std::string& file) {
    toml::table tbl;
    try {
        tbl = toml::parse(text, file);
    } catch (const toml::parse_error& err) {
        throw input_error::at_line(file, static_cast<std::int64_t>(err.source().begin.line),
                                   "invalid TOML: " + std::string(err.description()));
    }
    std::vector<raw_entry> out;
    walk_toml(tbl, "", text, out, 0, file);
    return out;
}

// ---------------------------------------------------------------- YAML
namespace {

value yaml_scalar(const YAML::Node& n) {
    if (n.IsNull()) return value();
    const std::string& s = n.Scalar();
    if (n.Tag() == "!") return value(s);  // quoted: keep as string
    if (s == "true" || s == "True" || s == "TRUE") return value(true);
    if (s == "false" || s == "False" || s == "FALSE") return value(false);
    if (s == "null" || s == "~" || s == "Null" || s == "NULL") return value();
    {
        std::int64_t i = 0;
        auto r = std::from_chars(s.data(), s.data() + s.size(), i);
        if (r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty()) return value(i);
        // PyYAML (YAML 1.1), which the Python trainers load their configs with, reads 500_000 as an int
        std::string digits;
        bool ok = s.size() > 2 && s.front() != '_' && s.back() != '_' && s.find("__") == std::string::npos;
        for (std::size_t k = 0; ok && k < s.size(); ++k) {
            const char c = s[k];
            if (c == '_') continue;
            if ((c == '-' || c == '+') && k == 0) digits += c;
            else if (c >= '0' && c <= '9') digits += c;
            else ok = false;
        }
        if (ok && digits.size() < s.size()) {
            r = std::from_chars(digits.data() + (digits[0] == '+'), digits.data() + digits.size(), i);
            if (r.ec == std::errc() && r.ptr == digits.data() + digits.size()) return value(i);
        }
    }
    {
        char* end = nullptr;
        errno = 0;
        double d = std::strtod(s.c_str(), &end);
        if (!s.empty() && end == s.c_str() + s.size() && errno == 0 &&
            s.find_first_of("0123456789") != std::string::npos && s.find_first_of("xX") == std::string::npos)
            return value(d);
    }
    return value(s);
}

void walk_yaml(const YAML::Node& n, const std::string& key, std::string_view text,
               std::vector<raw_entry>& out, int depth, const std::string& file,
               std::int64_t key_line) {
    if (depth > max_depth()) throw input_error::at_line(file, key_line, "YAML nested too deeply" + depth_note());
    raw_entry e;
    e.key = key;
    e.line = key_line;
    e.excerpt = line_excerpt(text, key_line);
    if (n.IsMap()) {
        if (!key.empty()) {
            e.container = true;
            out.push_back(e);
        }
        for (auto it = n.begin(); it != n.end(); ++it) {
            if (!it->first.IsScalar()) continue;
            walk_yaml(it->second, join_key(key, it->first.Scalar()), text, out, depth + 1, file,
                      it->first.Mark().line + 1);
        }
    } else if (n.IsSequence()) {
        value::list_t items;
        bool scalars = true;
        std::size_t i = 0;
        for (auto it = n.begin(); it != n.end(); ++it, ++i) {
            if (it->IsScalar() || it->IsNull()) items.push_back(yaml_scalar(*it));
            else {
                scalars = false;
                walk_yaml(*it, join_key(key, std::to_string(i)), text, out, depth + 1, file,
                          it->Mark().line + 1);
            }
        }
        if (scalars) {
            e.val = value(std::move(items));
            e.text = e.excerpt;
            out.push_back(std::move(e));
        }
    } else {
        e.val = yaml_scalar(n);
        e.text = n.IsScalar() ? n.Scalar().substr(0, 200) : "";
        out.push_back(std::move(e));
    }
}

}  // namespace

std::vector<raw_entry> flatten_yaml(std::string_view text, const std::string& file) {
    // Bound flow nesting before handing the text to a recursive parser.
    int depth = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '[' || text[i] == '{') {
            if (++depth > max_depth())
                throw input_error::at_line(file, line_of_offset(text, i), "YAML nested too deeply" + depth_note());
        } else if (text[i] == ']' || text[i] == '}') {
            if (depth > 0) --depth;
        }
    }
    // Block nesting is indentation: bound it too.
    {
        std::size_t col = 0;
        bool leading = true;
        std::int64_t line = 1;
        for (char c : text) {
            if (c == '\n') {
                col = 0;
                leading = true;
                ++line;
            } else if (leading && c == ' ') {
                if (++col > 1024) throw input_error::at_line(file, line, "YAML nested too deeply");
            } else {
                leading = false;
            }
        }
    }
    YAML::Node root;
    try {
        root = load_yaml_text(std::string(text), file);
    } catch (const YAML::Exception& ex) {
        throw input_error::at_line(file, ex.mark.line + 1, "invalid YAML: " + yaml_error_text(ex));
    }
    std::vector<raw_entry> out;
    if (root.IsNull()) return out;
    if (!root.IsMap()) throw input_error::at_line(file, 1, "expected a mapping of keys at the top level");
    try {
        walk_yaml(root, "", text, out, 0, file, 1);
    } catch (const YAML::Exception& ex) {
        throw input_error::at_line(file, ex.mark.line + 1, "invalid YAML: " + yaml_error_text(ex));
    }
    return out;
}

}  // namespace oomdx
