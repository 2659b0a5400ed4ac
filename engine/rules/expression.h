// Condition and value expressions of the rule language.
//
// Grammar (EBNF; keywords are lower case, whitespace is free):
//   expr       = or_expr ;
//   or_expr    = and_expr { "or" and_expr } ;
//   and_expr   = not_expr { "and" not_expr } ;
//   not_expr   = "not" not_expr | comparison ;
//   comparison = additive [ ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) additive
//                         | [ "not" ] "in" ( list_literal | identifier )
//                         | "matches" string ] ;
//   additive   = term { ( "+" | "-" ) term } ;       ("+" also joins two strings)
//   term       = unary { ( "*" | "/" | "%" ) unary } ;
//   unary      = "-" unary | primary ;
//   primary    = number [ size_unit ] | string | "true" | "false" | "null"
//              | "(" expr ")" | list_literal | call | identifier ;
//   size_unit  = "B" | "KiB" | "MiB" | "GiB" | "TiB" | "KB" | "MB" | "GB" | "TB" ;
//   call       = name "(" [ expr { "," expr } ] ")" ;   (exists, min, max, abs, floor, ceil, round, int, len, str, coalesce)
//   list_literal = "[" [ expr { "," expr } ] "]" | "(" expr "," ... ")" after "in" ;
//   identifier = name { "." name } ;   a fact (declared in knowledge/facts), a macro, or a list
//   string     = '"' chars '"' | "'" chars "'" ;
//
// Semantics: three-valued logic. A missing fact is `unknown`; comparisons and arithmetic with an
// unknown operand are unknown; `and`/`or`/`not` follow Kleene; a rule fires only when its
// condition is true. `exists(name)` is always true or false. Sizes are integer bytes, so
// `oom.requested_bytes > 2 GiB` reads as written (KB/MB/GB are decimal).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/value.h"
#include "engine/core/vocabulary.h"

namespace re2 {
class RE2;
}

namespace oomdx {

class fact_store;

enum class expr_op {
    literal, fact, list, call,
    neg, add, sub, mul, div, mod,
    eq, ne, lt, le, gt, ge, in, not_in, matches,
    and_, or_, not_,
};

// Static type of an expression, from literals and the fact vocabulary.
enum class expr_type { any, numeric, boolean, string, list, null };
const char* expr_type_name(expr_type t);

struct expr_node {
    expr_op op = expr_op::literal;
    int offset = 0;  // 0-based offset in the expression text
    value lit;                      // literal
    std::string name;               // fact name / function name
    std::vector<std::unique_ptr<expr_node>> kids;
    expr_type type = expr_type::any;
    std::shared_ptr<re2::RE2> regex;  // matches
    std::string text;               // source text of this node (for explanation)
};

struct expr_error {
    int offset = 0;
    std::string message;
    bool unknown_name = false;
};

// Resolves identifiers while parsing: macros expand into their parsed tree, lists into literals,
// everything else must be a declared fact.
struct name_resolver {
    std::function<const expr_node*(const std::string&)> macro;       // parsed macro body or null
    std::function<const std::vector<value>*(const std::string&)> list;  // list items or null
    const vocabulary* vocab = nullptr;
};

struct parsed_expr {
    std::unique_ptr<expr_node> root;
    std::vector<expr_error> errors;
    std::vector<std::string> facts;   // facts referenced (sorted, unique)
    std::vector<std::string> macros;  // macros referenced
    std::vector<std::string> lists;   // lists referenced
    bool ok() const { return root && errors.empty(); }
};

parsed_expr parse_expression(const std::string& text, const name_resolver& resolver);
std::unique_ptr<expr_node> clone_expr(const expr_node& n);

enum class truth { false_, true_, unknown };

// Result of evaluating a node: a value (null = unknown) plus, for boolean nodes, truth.
struct eval_result {
    value val;  // null when unknown
    truth t = truth::unknown;
};

eval_result evaluate(const expr_node& n, const fact_store& facts);
truth evaluate_condition(const expr_node& n, const fact_store& facts);

// "Why not": the first clause (in evaluation order) that made the condition not true, with the
// actual values of the facts it reads, e.g. `estimate.peak_fraction > 0.95` (estimate.peak_fraction = 0.61).
std::string explain_failure(const expr_node& n, const fact_store& facts);

// Render a value for humans according to a fact's declared kind (bytes -> "1.50 GiB").
std::string render_value(const value& v, const fact_decl* decl);

}  // namespace oomdx
