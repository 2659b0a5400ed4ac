// The fact vocabulary: every fact name with its type, unit and meaning, loaded from
// knowledge/facts/*.yaml. Entries may end in ".*" to declare a family of names.
// An entry with `override: true` is a canonical config key a recommendation may set.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/value.h"

namespace oomdx {

enum class fact_kind { bytes, integer, number, boolean, string, list, any };

const char* fact_kind_name(fact_kind k);

struct fact_decl {
    std::string name;
    fact_kind kind = fact_kind::any;
    std::string unit;
    std::string desc;
    std::vector<std::string> values;  // allowed strings, empty = any
    std::map<std::string, std::string> phrases;  // value -> how a sentence says it ({fact|phrase})
    bool is_override = false;
    std::string file;
    int line = 0;
};

class vocabulary {
public:
    // Loads every *.yaml under dir (sorted); throws input_error naming file:line.
    static vocabulary load_dir(const std::string& dir);
    // The shipped vocabulary (knowledge/facts under the data dir).
    static const vocabulary& shipped();

    void add(fact_decl d);
    const fact_decl* find(const std::string& name) const;
    bool is_override_key(const std::string& name) const;
    // Throws std::invalid_argument when the name is unknown or the value has the wrong type.
    void check(const std::string& name, const value& v) const;
    const std::vector<fact_decl>& all() const { return m_decls; }

private:
    std::vector<fact_decl> m_decls;
    std::map<std::string, size_t> m_exact;
    std::vector<size_t> m_prefix;  // entries ending in ".*"
};

// A fact's value written as text (a YAML scalar, "key=value" lists) in the declared kind: "20 GiB" for bytes facts,
// true/false, integers, numbers; a string fact (or a quoted scalar) stays text.
value fact_value_from_text(const std::string& name, const std::string& text, const vocabulary& vocab, bool quoted);

}  // namespace oomdx
