// Finding and recommendation texts: "{fact.name}", "{fact.name|bytes}", "{= a - b | bytes}".
// Filters: bytes, pct (fraction -> "42.0%"), int, num, raw. Without a filter a fact renders by
// its declared kind (bytes facts as sizes).
#pragma once

#include <string>
#include <vector>

#include "engine/rules/expression.h"

namespace oomdx {

class fact_store;
class translation_table;

struct template_error {
    int offset = 0;
    std::string message;
};

// Checks names and expressions at load time; returns the facts the template reads.
std::vector<std::string> check_template(const std::string& tmpl, const name_resolver& resolver,
                                        std::vector<template_error>& errors);
// The placeholders of a template as written, white space removed ("{= a - b | bytes}" ->
// "=a-b|bytes"; string literals emptied: "= 'x' + a" -> "=''+a"), in order: a translation must
// use the same ones. `well_formed` (optional) is set
// false when a brace is not closed.
std::vector<std::string> template_placeholders(const std::string& tmpl, bool* well_formed = nullptr);
// `names` resolves macros and lists named in the template (the rule set's); null: facts only.
// `tr`: the report language's knowledge translations, for `{fact|phrase}` and unknown values.
std::string render_template(const std::string& tmpl, const fact_store& facts, const name_resolver* names = nullptr,
                            const translation_table* tr = nullptr);

}  // namespace oomdx
