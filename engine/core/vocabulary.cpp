#include "engine/core/vocabulary.h"

#include "engine/core/yaml_node.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/vocabulary_cache.h"
#include "engine/core/yaml_cache.h"
#include "engine/core/yaml_file.h"

namespace oomdx {

const char* fact_kind_name(fact_kind k) {
    switch (k) {
        case fact_kind::bytes: return "bytes";
        case fact_kind::integer: return "integer";
        case fact_kind::number: return "number";
        case fact_kind::boolean: return "bool";
        case fact_kind::string: return "string";
        case fact_kind::list: return "list";
        case fact_kind::any: return "any";
    }
    return "?";
}

static std::optional<fact_kind> parse_kind(const std::string& s) {
    if (s == "bytes") return fact_kind::bytes;
    if (s == "integer" || s == "int") return fact_kind::integer;
    if (s == "number") return fact_kind::number;
    if (s == "bool" || s == "boolean") return fact_kind::boolean;
    if (s == "string") return fact_kind::string;
    if (s == "list") return fact_kind::list;
    if (s == "any") return fact_kind::any;
    return std::nullopt;
}

vocabulary vocabulary::load_dir(const std::string& dir) {
    std::error_code ec;
    const std::vector<std::string> files = yaml_files_in(dir, ec);
    if (ec) throw input_error::in_file(dir, "cannot read vocabulary directory: " + ec.message());
    vocabulary v;
    for (const auto& file : files) {
        const YAML::Node root = load_yaml_file(file);
        if (!root.IsSequence()) throw input_error::in_file(file, "expected a list of facts");
        for (const auto& n : root) {
            const int line = n.Mark().line + 1;
            if (!n.IsMap() || !n["name"])
                throw input_error::at_line(file, line, "each entry needs a name");
            fact_decl d;
            d.name = n["name"].as<std::string>();
            d.file = file;
            d.line = line;
            std::string t = n["type"] ? n["type"].as<std::string>() : "any";
            auto k = parse_kind(t);
            if (!k) throw input_error::at_line(file, line, fmt::format("unknown type '{}'", t));
            d.kind = *k;
            if (n["unit"]) d.unit = n["unit"].as<std::string>();
            if (d.kind == fact_kind::bytes) d.unit = "bytes";
            if (n["desc"]) d.desc = n["desc"].as<std::string>();
            if (n["values"])
                for (const auto& x : n["values"]) d.values.push_back(x.as<std::string>());
            if (n["override"]) d.is_override = n["override"].as<bool>();
            if (const YAML::Node ph = n["phrases"]) {
                if (!ph.IsMap()) throw input_error::at_line(file, line, "phrases is a map of value: text");
                for (const auto& kv : ph) {
                    const std::string val = kv.first.as<std::string>();
                    if (!d.values.empty() && std::find(d.values.begin(), d.values.end(), val) == d.values.end())
                        throw input_error::at_line(file, kv.first.Mark().line + 1,
                                                   fmt::format("phrase for '{}', which is not a value of '{}'", val, d.name));
                    d.phrases[val] = kv.second.as<std::string>();
                }
            }
            if (v.find(d.name) && v.find(d.name)->name == d.name)
                throw input_error::at_line(file, line, fmt::format("fact '{}' declared twice", d.name));
            v.add(std::move(d));
        }
    }
    return v;
}

const vocabulary& vocabulary::shipped() {
    // Never destroyed: the process exit returns its memory (freeing it took 4% of a snapshot run).
    static const vocabulary& v = *new vocabulary(load_vocabulary_cached(data_path("knowledge/facts"), yaml_cache_dir()));
    return v;
}

void vocabulary::add(fact_decl d) {
    const size_t idx = m_decls.size();
    const bool family = d.name.size() >= 2 && d.name.ends_with(".*");
    m_decls.push_back(std::move(d));
    if (family)
        m_prefix.push_back(idx);
    else
        m_exact[m_decls[idx].name] = idx;
}

const fact_decl* vocabulary::find(const std::string& name) const {
    auto it = m_exact.find(name);
    if (it != m_exact.end()) return &m_decls[it->second];
    const fact_decl* best = nullptr;
    for (size_t i : m_prefix) {
        const std::string& pat = m_decls[i].name;
        const std::string prefix = pat.substr(0, pat.size() - 1);  // keep the dot
        if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0)
            if (!best || pat.size() > best->name.size()) best = &m_decls[i];
    }
    return best;
}

bool vocabulary::is_override_key(const std::string& name) const {
    const fact_decl* d = find(name);
    return d && d->is_override;
}

void vocabulary::check(const std::string& name, const value& v) const {
    const fact_decl* d = find(name);
    if (!d) throw std::invalid_argument(fmt::format("undeclared fact '{}'", name));
    if (v.is_null()) return;
    bool ok = true;
    switch (d->kind) {
        case fact_kind::bytes:
        case fact_kind::integer: ok = v.is_integer(); break;
        case fact_kind::number: ok = v.is_numeric(); break;
        case fact_kind::boolean: ok = v.is_bool(); break;
        case fact_kind::string: ok = v.is_string(); break;
        case fact_kind::list: ok = v.is_list(); break;
        case fact_kind::any: break;
    }
    if (!ok)
        throw std::invalid_argument(fmt::format("fact '{}' is declared {} but got {}", name,
                                                fact_kind_name(d->kind), value_type_name(v.type())));
    if (!d->values.empty() && v.is_string() &&
        std::find(d->values.begin(), d->values.end(), v.as_string()) == d->values.end())
        throw std::invalid_argument(
            fmt::format("fact '{}' does not allow the value \"{}\"", name, v.as_string()));
}

value fact_value_from_text(const std::string& name, const std::string& s, const vocabulary& vocab,
                           bool quoted) {
    const fact_decl* d = vocab.find(name);
    const fact_kind k = d ? d->kind : fact_kind::any;
    if (k == fact_kind::string || (quoted && k != fact_kind::bytes)) return value(s);
    if (k == fact_kind::bytes) {
        if (auto b = parse_size(s)) return value(*b);
    }
    if (s == "true") return value(true);
    if (s == "false") return value(false);
    if (s == "null" || s == "~") return value();
    char* end = nullptr;
    errno = 0;
    long long i = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && *end == 0 && errno == 0) {
        if (k == fact_kind::number) return value(static_cast<double>(i));
        return value(static_cast<std::int64_t>(i));
    }
    double x = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == 0) {
        if (k == fact_kind::integer || k == fact_kind::bytes) return value(static_cast<std::int64_t>(x));
        return value(x);
    }
    return value(s);
}

}  // namespace oomdx
