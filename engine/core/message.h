// Message templates with named arguments: "requested {requested}, capacity {capacity}".
// The report's fixed phrases and the translations of producer texts use them; "{{" is a literal
// brace. Arguments are already rendered (sizes, counts), so every language formats them alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oomdx {

using message_args = std::vector<std::pair<std::string, std::string>>;

// The placeholder names of a template, in order of appearance (repeats included).
std::vector<std::string> message_placeholders(std::string_view tmpl);
// Substitutes the arguments; a placeholder without an argument is kept as written.
std::string format_message(std::string_view tmpl, const message_args& args);
// The arguments that make `tmpl` produce exactly `text`, or nothing. Each placeholder takes at
// least one character; when several splits fit, the earliest (shortest) captures win.
std::optional<message_args> match_message(std::string_view tmpl, std::string_view text);
// The same for a template that matches the start of `text` (a fragment of a longer text): the
// arguments and the length matched. A final placeholder takes the rest of the text.
std::optional<std::pair<message_args, size_t>> match_message_prefix(std::string_view tmpl, std::string_view text);

}  // namespace oomdx
