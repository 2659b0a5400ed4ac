// Launch scripts and argument lists: a reader for the shell subset Megatron/MindSpeed and
// torchtitan launch scripts use (variables, ${VAR:-default}, $((arithmetic)), arrays,
// `\` continuations, exports), and the split of argument words into --flag entries.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/config/raw_entry.h"

namespace oomdx {

struct shell_word {
    std::string text;        // expanded text (raw text when not literal)
    bool literal = true;     // false: command substitution, unknown variable, $1, ...
    std::int64_t line = 0;   // line the word (or the variable it came from) was written on
};

struct shell_command {
    std::vector<shell_word> words;
    std::int64_t line = 0;
    std::vector<raw_entry> env;  // `NAME=value cmd ...`: variables set for this command only, as "env.NAME"
};

struct shell_script {
    std::vector<shell_command> commands;  // commands with arguments, in order
    std::vector<raw_entry> env;           // exported / assigned variables as "env.NAME" (not a command's prefix)
};

// Throws input_error (file:line) on unterminated quotes or nesting beyond bounds.
shell_script parse_shell(std::string_view text, const std::string& file);

// The launch command: the one with the most --flags.
const shell_command* launch_command(const shell_script&);

// Splits words into entries keyed by the flag without leading dashes ("micro-batch-size").
// `takes_value(flag)` says whether a bare flag consumes the next word; when it returns -1
// ("unknown") the next word is consumed unless it starts with "--"; 2: every following word
// up to the next "--" flag, joined with ','. Words that are not flags
// (script paths, launcher names) are skipped; a YAML/JSON/TOML file operand is returned in
// `operands` when given.
std::vector<raw_entry> args_to_entries(const std::vector<shell_word>& words, std::string_view text,
                                       const std::function<int(const std::string&)>& takes_value,
                                       std::vector<shell_word>* operands = nullptr);

// A command word's file name, as a shell looks the command up (`/usr/local/bin/swift` -> `swift`).
std::string command_name(const std::string& word);

// "8" -> integer, "1e-4" -> number, "true"/"false" -> bool, else string.
value typed_word(const std::string& s);

}  // namespace oomdx
