// Finding and recommendation texts: "{fact.name}", "{fact.name|bytes}", "{= a - b | bytes}".
// Filters: bytes, pct (fraction -> "42.0%"), int, num, raw. Without a filter a fact renders by
// its declared kind (bytes facts as sizes).
#pragma once

#include <string>
#include <vector>

#include "engine/rules/expression.h"

namespace oomdx {

class fact_store;

struct template_error {
    int offset = 0;
    std::string message;
};

// Checks names and expressions at load time; returns the facts the template reads.
std::vector<std::string> check_template(const std::string& tmpl, const name_resolver& resolver,
                                        std::vector<template_error>& errors);
// `names` resolves macros and lists named in the template (the rule set's); null: facts only.
std::string render_template(const std::string& tmpl, const fact_store& facts, const name_resolver* names = nullptr);

}  // namespace oomdx
