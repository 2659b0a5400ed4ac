// A reader for the literal subset of Python used by torchtitan's config registry and model
// flavor files: calls with keyword arguments, literals, lists, tuples, dicts, integer arithmetic of
// literals. Nothing is executed; anything else (names, comprehensions) is kept as non-literal text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/value.h"
#include "parsers/config/raw_entry.h"

namespace oomdx {

struct py_kwarg;  // name = value
struct py_entry;  // key: value

struct py_node {
    enum class kind { literal, call, list, dict, other };
    kind k = kind::other;
    value lit;                                          // literal
    std::string callee;                                 // call: "TrainingConfig", "SelectiveAC.Config"
    std::vector<py_kwarg> kwargs;                       // call keyword arguments
    std::vector<py_node> items;                         // call positional args, list/tuple items
    std::vector<py_entry> entries;                      // dict
    std::string text;                                   // source text (bounded)
    std::int64_t line = 0;
};

// Named like std::pair's members so that structured bindings and .first/.second read the same.
struct py_kwarg {
    std::string first;
    py_node second;
};
struct py_entry {
    py_node first;
    py_node second;
};

class py_source {
public:
    // Tokenizes the whole file; throws input_error (file:line) on unterminated strings,
    // unbalanced brackets or nesting deeper than 64.
    py_source(std::string_view text, std::string file);

    // Names of top-level `def` functions.
    std::vector<std::string> functions() const;
    // The expression a function returns, with `x = Call(...)` bindings and `x.a.b = v`
    // attribute assignments in its body folded in, flattened to dotted keys.
    // Throws input_error when the function is missing or returns nothing readable.
    std::vector<raw_entry> function_result(const std::string& name) const;
    // Every `"key": Call(...)` pair anywhere in the file (model flavor tables).
    std::vector<std::pair<std::string, py_node>> keyed_calls() const;

    const std::string& file() const { return m_file; }
    std::string_view text() const { return m_text; }

    struct token {
        enum class type { name, number, string, op, newline, end };
        type t = type::end;
        std::string s;           // name, operator, decoded string
        std::size_t begin = 0, end = 0;
        std::int64_t line = 0;
        int col = 0;             // column of the token in its line
        bool line_start = false; // first token of a logical line
    };

    // Parses one expression starting at token i; i is left after it.
    py_node parse_expr(std::size_t& i, int depth = 0) const;
    // Folds an integer expression of literals (+ - * // ** and parentheses) starting at token i.
    bool fold_int_expr(std::size_t& i, std::int64_t& out, int depth = 0) const;
    const std::vector<token>& tokens() const { return m_tok; }

private:
    std::string m_text;
    std::string m_file;
    std::vector<token> m_tok;
};

// Flattens a node under `prefix` into raw entries (calls become containers whose value is
// the callee name; non-literals have literal=false and their source text).
void flatten_py(const py_node& n, const std::string& prefix, const py_source& src,
                std::vector<raw_entry>& out);

// A Python number literal's token (underscores, 0x / 0o / 0b, exponents): an integer where it is one, else a
// float; `ok` false for what is not a number (a complex literal, junk).
value parse_number(const std::string& raw, bool& ok);

}  // namespace oomdx
