// Text-level view and edit of one torchtitan config-registry function (Python source, never
// executed): where it returns, the keyword arguments of the call it returns, and edits that set
// a dataclass field inside one of them, replace a section, or add `config.a.b = v` lines
// before `return config`. Used to render overrides as the function's own fields and to apply
// them back (round-trip tests, a future --apply).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oomdx {

struct registry_kwarg {
    std::string name;                      // "optimizer"
    std::size_t value_begin = 0, value_end = 0;  // byte range of the value text
    std::string callee;                    // "OptimizerConfig", "FullAC.Config" when the value is a call
    std::size_t args_open = 0, args_close = 0;   // offsets of its '(' and ')'
};

struct registry_function_view {
    bool found = false;
    std::size_t return_line_begin = 0;     // offset of the line holding `return`
    std::string indent;                    // indentation of the body
    std::string return_var;                // "config" for `return config`; empty when a call is returned
    std::size_t call_open = 0, call_close = 0;   // the returned call's '(' and ')'
    std::vector<registry_kwarg> kwargs;    // its keyword arguments
    const registry_kwarg* kwarg(const std::string& name) const;
};

// Finds `def function` at column 0. found = false when absent.
registry_function_view view_registry_function(std::string_view text, const std::string& function);

// The top-level comma-separated items of an argument list text ("a=1, b=F(c=2)").
std::vector<std::string> split_arguments(std::string_view args);

// Edits; each returns the new text. Throw std::invalid_argument when the function or its
// return statement cannot be found.
// Inside `section=Callee(...)`: sets field=value_text (replaced or appended); adds the
// section as `section=default_callee(field=value_text)` when the call does not have it.
std::string registry_set_field(std::string_view text, const std::string& function, const std::string& section,
                               const std::string& field, const std::string& value_text,
                               const std::string& default_callee);
// Replaces (or adds) the whole `section=value_text` argument.
std::string registry_set_section(std::string_view text, const std::string& function, const std::string& section,
                                 const std::string& value_text);
// Inserts `statement` (e.g. "config.training.seq_len = 4096") on its own line before the return.
std::string registry_insert_statement(std::string_view text, const std::string& function, const std::string& statement);

}  // namespace oomdx
