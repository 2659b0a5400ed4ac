#include "engine/rules/rule_loader.h"

#include "engine/core/yaml_node.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "engine/core/atomic_file.h"
#include "engine/core/binary_io.h"
#include "engine/core/bytes.h"
#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/file_stamps.h"
#include "engine/core/text_file.h"
#include "engine/core/yaml_cache.h"
#include "engine/core/yaml_file.h"
#include "engine/rules/rule_scope.h"
#include "engine/rules/rule_set_cache.h"
#include "engine/rules/rule_translations.h"
#include "engine/rules/text_template.h"

namespace oomdx {

namespace fs = std::filesystem;

bool load_result::ok() const { return error_count() == 0; }

size_t load_result::error_count() const {
    return std::count_if(diagnostics.begin(), diagnostics.end(),
                         [](const rule_diagnostic& d) { return !rule_error_is_warning(d.code); });
}

size_t load_result::warning_count() const { return diagnostics.size() - error_count(); }

std::vector<action_decl> load_actions(const std::string& path) {
    const YAML::Node root = load_yaml_file(path);
    std::vector<action_decl> out;
    for (const auto& n : root) {
        action_decl a;
        a.id = n["id"].as<std::string>();
        if (n["priority"]) a.priority = n["priority"].as<int>();
        if (n["desc"]) a.desc = n["desc"].as<std::string>();
        out.push_back(a);
    }
    return out;
}

const std::vector<action_decl>& shipped_actions() {
    // Never destroyed (as the rule sets below): the process exit returns the memory.
    static const std::vector<action_decl>& a = *new std::vector<action_decl>(load_actions(data_path("knowledge/actions.yaml")));
    return a;
}

namespace {

// A folded block (`rationale: >`) keeps its final newline; the text is the sentence without it.
std::string without_final_newline(std::string t) {
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    return t;
}


void attach_lazy_translations(rule_set& rs, const std::vector<std::string>& files);

// The rule packs of a folder, sorted: its .yaml files at any depth, not the rule tests
// (.test.yaml) nor the translations (read lazily, apart from the compilation).
std::vector<std::string> pack_files_in(const std::string& dir, std::error_code& ec) {
    std::vector<std::string> found;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
        const std::string s = e.path().string();
        if (e.is_regular_file() && s.ends_with(".yaml") && !s.ends_with(".test.yaml") &&
            !is_translation_file(fs::relative(e.path(), dir, ec).string()))
            found.push_back(s);
    }
    std::sort(found.begin(), found.end());
    return found;
}

struct raw_item {
    YAML::Node node;
    std::string file;
    int index = 0;
};

struct macro_state {
    YAML::Node cond;
    std::string file;
    source_context where;
    std::unique_ptr<expr_node> parsed;
    bool busy = false;
    bool failed = false;
    bool used = false;
};

class loader {
public:
    loader(const vocabulary& vocab, const std::vector<action_decl>& actions, translation_loading translations,
           const std::vector<std::string>& only_steps)
        : m_vocab(vocab), m_actions(actions), m_translations(translations), m_only_steps(only_steps) {}

    load_result run(const std::vector<std::string>& paths) {
        std::vector<std::string> files;
        for (const auto& p : paths) collect_files(p, files);
        for (const auto& f : files) read_file(f);
        if (m_translations == translation_loading::lazy) {
            attach_lazy_translations(m_out.rules, files);
        } else {
            for (const auto& lang : report_languages())
                if (has_translations(files, lang))
                    read_translations(files, lang, m_out.rules.i18n[lang], m_out.diagnostics);
        }
        for (const auto& it : m_items) declare(it);
        std::sort(m_out.rules.steps.begin(), m_out.rules.steps.end(),
                  [](const step_def& a, const step_def& b) { return a.order < b.order; });
        for (const auto& it : m_items)
            if (it.node["rule"] && wanted(it)) compile_rule(it);
        for (auto& [name, m] : m_macros)
            if (!m.used && m_only_steps.empty()) {
                m_out.macros_unused.push_back({name, m.where});
                diag(rule_error_code::unused_macro, m.where, fmt::format("macro '{}' is never used", name));
            }
        for (auto& [name, l] : m_list_where)
            if (!m_lists_used.count(name) && m_only_steps.empty()) {
                m_out.lists_unused.push_back({name, l});
                diag(rule_error_code::unused_list, l, fmt::format("list '{}' is never used", name));
            }
        std::stable_sort(m_out.diagnostics.begin(), m_out.diagnostics.end(),
                         [](const rule_diagnostic& a, const rule_diagnostic& b) {
                             if (a.where.file != b.where.file) return a.where.file < b.where.file;
                             return a.where.line < b.where.line;
                         });
        m_out.rules.files = files;
        return std::move(m_out);
    }

private:
    bool wanted(const raw_item& it) const {
        if (m_only_steps.empty()) return true;
        const YAML::Node step = it.node["step"];
        const std::string s = step && step.IsScalar() ? step.Scalar() : "";
        return std::find(m_only_steps.begin(), m_only_steps.end(), s) != m_only_steps.end();
    }

    void collect_files(const std::string& p, std::vector<std::string>& out) {
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            const auto found = pack_files_in(p, ec);
            out.insert(out.end(), found.begin(), found.end());
        } else if (fs::exists(p, ec)) {
            out.push_back(p);
        } else {
            diag(rule_error_code::missing_field, {p, 1, 1}, "no such rule file or directory");
        }
    }

    void read_file(const std::string& file) {
        YAML::Node root;
        try {
            root = load_yaml_cached(file, read_text_file(file, "a rule pack (YAML)", /*allow_empty=*/true));
        } catch (const YAML::Exception& e) {
            diag(rule_error_code::yaml_syntax, {file, e.mark.line + 1, e.mark.column + 1}, yaml_error_text(e));
            return;
        } catch (const input_error& e) {
            std::string msg = e.what();
            if (msg.rfind(file + ": ", 0) == 0) msg = msg.substr(file.size() + 2);
            diag(rule_error_code::yaml_syntax, {file, 1, 1}, msg);
            return;
        }
        if (root.IsNull()) return;
        if (!root.IsSequence()) {
            diag(rule_error_code::yaml_syntax, ctx(file, root),
                 "a rule file is a YAML list of items (- rule: ..., - macro: ..., - list: ...)");
            return;
        }
        int idx = 0;
        for (const auto& n : root) {
            if (!n.IsMap()) {
                diag(rule_error_code::yaml_syntax, ctx(file, n), "each item must be a map");
                continue;
            }
            m_items.push_back({n, file, idx++});
        }
    }

    static source_context ctx(const std::string& file, const YAML::Node& n) {
        const YAML::Mark m = n.Mark();
        return {file, m.line + 1, m.column + 1};
    }

    // Location of character `offset` inside scalar node n (handles quoted and block scalars).
    static source_context locate(const std::string& file, const YAML::Node& n, int offset) {
        source_context c = ctx(file, n);
        const std::string line = source_line(file, c.line);
        const int col0 = c.column - 1;
        if (col0 < static_cast<int>(line.size()) && (line[col0] == '>' || line[col0] == '|')) {
            int ln = c.line + 1;
            int remaining = offset;
            for (int guard = 0; guard < 1000; ++guard, ++ln) {
                const std::string s = source_line(file, ln);
                const size_t ind = s.find_first_not_of(' ');
                if (ind == std::string::npos) continue;
                const int len = static_cast<int>(s.size() - ind);
                if (remaining <= len) return {file, ln, static_cast<int>(ind) + remaining + 1};
                remaining -= len + 1;
            }
            return c;
        }
        if (col0 < static_cast<int>(line.size()) && (line[col0] == '"' || line[col0] == '\''))
            return {file, c.line, c.column + 1 + offset};
        return {file, c.line, c.column + offset};
    }

    void diag(rule_error_code code, source_context where, std::string msg, std::string item = "",
              source_context item_where = {}) {
        m_out.diagnostics.push_back({code, std::move(where), std::move(msg), std::move(item), item_where});
    }

    void check_keys(const raw_item& it, const std::set<std::string>& allowed, const std::string& item) {
        for (const auto& kv : it.node) {
            const std::string k = kv.first.as<std::string>();
            if (!allowed.count(k))
                diag(rule_error_code::unknown_key, ctx(it.file, kv.first),
                     fmt::format("unknown key '{}'", k), item, ctx(it.file, it.node));
        }
    }

    std::string scalar(const raw_item& it, const char* key, const std::string& item, bool required) {
        const YAML::Node n = it.node[key];
        if (!n) {
            if (required)
                diag(rule_error_code::missing_field, ctx(it.file, it.node),
                     fmt::format("missing required field '{}'", key), item, ctx(it.file, it.node));
            return {};
        }
        if (!n.IsScalar()) {
            diag(rule_error_code::bad_value, ctx(it.file, n), fmt::format("'{}' must be a scalar", key),
                 item, ctx(it.file, it.node));
            return {};
        }
        return n.as<std::string>();
    }

    // `override: true`: this item replaces one of the same name from an earlier pack.
    bool is_override(const raw_item& it, const std::string& item) {
        const YAML::Node o = it.node["override"];
        if (!o) return false;
        try {
            return o.as<bool>();
        } catch (const YAML::Exception&) {
            diag(rule_error_code::bad_value, ctx(it.file, o), "override must be true or false", item, ctx(it.file, it.node));
            return false;
        }
    }

    void declare(const raw_item& it) {
        const YAML::Node& n = it.node;
        if (n["step"] && !n["rule"]) {
            const std::string item = fmt::format("step '{}'", n["step"].as<std::string>(""));
            check_keys(it, {"step", "title", "goal", "order", "always", "listed"}, item);
            step_def s;
            s.id = scalar(it, "step", item, true);
            s.title = scalar(it, "title", item, false);
            s.goal = scalar(it, "goal", item, false);
            s.where = ctx(it.file, n);
            try {
                s.order = n["order"] ? n["order"].as<int>() : static_cast<int>(m_out.rules.steps.size());
                s.always = n["always"] ? n["always"].as<bool>() : false;
                s.listed = n["listed"] ? n["listed"].as<bool>() : true;
            } catch (const YAML::Exception&) {
                diag(rule_error_code::bad_value, s.where, "order must be an integer, always and listed bools", item, s.where);
            }
            if (m_out.rules.step(s.id))
                diag(rule_error_code::duplicate_id, s.where, fmt::format("step '{}' declared twice", s.id));
            else
                m_out.rules.steps.push_back(s);
        } else if (n["claim"]) {
            const std::string name = n["claim"].as<std::string>("");
            check_keys(it, {"claim", "desc", "contradicts"}, fmt::format("claim '{}'", name));
            m_claims.insert(name);
            for (const auto& x : n["contradicts"]) {
                const std::string other = x.as<std::string>("");
                m_out.rules.contradicts[name].push_back(other);
                m_out.rules.contradicts[other].push_back(name);
            }
        } else if (n["group"]) {
            check_keys(it, {"group", "desc"}, "group");
            m_out.declared_groups.push_back(n["group"].as<std::string>(""));
        } else if (n["list"]) {
            const std::string name = n["list"].as<std::string>("");
            const std::string item = fmt::format("list '{}'", name);
            check_keys(it, {"list", "items", "desc", "override"}, item);
            const bool replace = is_override(it, item);
            value::list_t items;
            if (!n["items"] || !n["items"].IsSequence()) {
                diag(rule_error_code::missing_field, ctx(it.file, n), "a list needs 'items: [...]'", item, ctx(it.file, n));
            } else {
                for (const auto& x : n["items"]) items.push_back(yaml_literal(x));
            }
            if (m_lists.count(name) && !replace)
                diag(rule_error_code::duplicate_id, ctx(it.file, n),
                     fmt::format("list '{}' declared twice (a site pack replaces it with 'override: true')", name));
            else if (!m_lists.count(name) && replace)
                diag(rule_error_code::unknown_macro, ctx(it.file, n),
                     fmt::format("list '{}' has 'override: true' but no earlier pack declares it", name));
            m_out.rules.lists[name] = items;
            m_lists[name] = std::move(items);
            m_list_where[name] = ctx(it.file, n);
        } else if (n["macro"]) {
            const std::string name = n["macro"].as<std::string>("");
            const std::string item = fmt::format("macro '{}'", name);
            check_keys(it, {"macro", "condition", "desc", "override"}, item);
            const bool replace = is_override(it, item);
            if (!n["condition"]) {
                diag(rule_error_code::missing_field, ctx(it.file, n), "a macro needs a condition", item, ctx(it.file, n));
                return;
            }
            if (m_macros.count(name) && !replace) {
                diag(rule_error_code::duplicate_id, ctx(it.file, n),
                     fmt::format("macro '{}' declared twice (a site pack replaces it with 'override: true')", name));
                return;
            }
            if (!m_macros.count(name) && replace) {
                diag(rule_error_code::unknown_macro, ctx(it.file, n),
                     fmt::format("macro '{}' has 'override: true' but no earlier pack declares it", name));
                return;
            }
            m_macros.erase(name);
            macro_state m;
            m.cond = n["condition"];
            m.file = it.file;
            m.where = ctx(it.file, n);
            m_macros.emplace(name, std::move(m));
            m_out.rules.macro_text[name] = n["condition"].as<std::string>("");
        } else if (n["rule"]) {
            // compiled in the second pass
        } else if (n["required_engine_version"]) {
            // accepted; this engine reads version 0.1 packs
        } else {
            diag(rule_error_code::unknown_key, ctx(it.file, n),
                 "item kind not recognised: expected rule, macro, list, step, group or claim");
        }
    }

    static value yaml_literal(const YAML::Node& n) {
        if (!n.IsScalar()) {
            if (n.IsSequence()) {
                value::list_t l;
                for (const auto& x : n) l.push_back(yaml_literal(x));
                return value(std::move(l));
            }
            return value();
        }
        const std::string s = n.Scalar();
        if (n.Tag() == "!") return value(s);  // quoted: always a string
        if (s == "true" || s == "True") return value(true);
        if (s == "false" || s == "False") return value(false);
        if (s == "null" || s == "~") return value();
        char* end = nullptr;
        errno = 0;
        long long i = std::strtoll(s.c_str(), &end, 10);
        if (!s.empty() && end && *end == 0 && errno == 0) return value(static_cast<std::int64_t>(i));
        double d = std::strtod(s.c_str(), &end);
        if (!s.empty() && end && *end == 0) return value(d);
        return value(s);
    }

    name_resolver resolver() {
        name_resolver r;
        r.vocab = &m_vocab;
        r.macro = [this](const std::string& name) -> const expr_node* { return macro_body(name); };
        r.list = [this](const std::string& name) -> const std::vector<value>* {
            auto it = m_lists.find(name);
            if (it == m_lists.end()) return nullptr;
            m_lists_used.insert(name);
            return &it->second;
        };
        return r;
    }

    const expr_node* macro_body(const std::string& name) {
        auto it = m_macros.find(name);
        if (it == m_macros.end()) return nullptr;
        macro_state& m = it->second;
        m.used = true;
        if (m.parsed) return m.parsed.get();
        if (m.failed) return nullptr;
        if (m.busy) {
            diag(rule_error_code::macro_cycle, m.where, fmt::format("macro '{}' refers to itself", name));
            m.failed = true;
            return nullptr;
        }
        m.busy = true;
        // A macro is a condition or a named value (a threshold such as `0.85` or `2 GiB`).
        parsed_expr e = compile_condition(m.file, m.cond, fmt::format("macro '{}'", name), m.where, false);
        m.busy = false;
        if (!e.ok()) {
            m.failed = true;
            return nullptr;
        }
        m.parsed = std::move(e.root);
        return m.parsed.get();
    }

    rule_error_code classify(const expr_error& e) {
        if (e.unknown_name) return rule_error_code::unknown_fact;
        const std::string& m = e.message;
        if (m.find("bad regular expression") != std::string::npos) return rule_error_code::bad_regex;
        if (m.find("is not a value of") != std::string::npos) return rule_error_code::bad_value;
        if (m.find("needs a") != std::string::npos || m.find("cannot compare") != std::string::npos ||
            m.find("orders numbers") != std::string::npos)
            return rule_error_code::type_mismatch;
        return rule_error_code::syntax;
    }

    parsed_expr compile_condition(const std::string& file, const YAML::Node& node, const std::string& item,
                                  source_context item_where, bool require_bool = true) {
        parsed_expr e;
        if (!node.IsScalar()) {
            diag(rule_error_code::bad_value, ctx(file, node), "a condition must be a string", item, item_where);
            return e;
        }
        std::string text = node.Scalar();
        e = parse_expression(text, resolver());
        for (const auto& err : e.errors)
            diag(classify(err), locate(file, node, err.offset), err.message, item, item_where);
        if (e.root && !e.errors.empty()) e.root.reset();
        if (require_bool && e.root && e.root->type != expr_type::boolean && e.root->type != expr_type::any) {
            diag(rule_error_code::type_mismatch, locate(file, node, 0),
                 fmt::format("a condition must be true or false, but this is a {}", expr_type_name(e.root->type)),
                 item, item_where);
            e.root.reset();
        }
        return e;
    }

    void check_text(const std::string& file, const YAML::Node& node, const std::string& item,
                    source_context item_where, std::vector<std::string>* facts = nullptr) {
        std::vector<template_error> errs;
        auto used = check_template(node.as<std::string>(""), resolver(), errs);
        for (const auto& e : errs)
            diag(e.message.find("not a declared fact") != std::string::npos ? rule_error_code::unknown_fact
                                                                             : rule_error_code::template_error,
                 locate(file, node, e.offset), e.message, item, item_where);
        if (facts) facts->insert(facts->end(), used.begin(), used.end());
    }

    bool parse_action_value(const std::string& file, const YAML::Node& v, action_value& out,
                            const std::string& item, source_context item_where) {
        if (v.IsScalar() && !v.Scalar().empty() && v.Scalar()[0] == '=') {  // "= expr", quoted or not
            out.text = v.Scalar();
            parsed_expr e = parse_expression(v.Scalar().substr(1), resolver());
            for (const auto& err : e.errors)
                diag(classify(err), locate(file, v, err.offset + 1), err.message, item, item_where);
            if (!e.ok()) return false;
            out.expr = std::move(e.root);
            return true;
        }
        out.literal = yaml_literal(v);
        out.text = v.IsScalar() ? v.Scalar() : out.literal.to_string();
        return true;
    }

    void check_fact_value(const std::string& file, const YAML::Node& key_node, const std::string& key,
                          const action_value& v, const std::string& item, source_context item_where,
                          bool must_be_override) {
        const fact_decl* d = m_vocab.find(key);
        if (!d) {
            diag(must_be_override ? rule_error_code::unknown_override : rule_error_code::unknown_fact,
                 ctx(file, key_node), fmt::format("'{}' is not declared in knowledge/facts", key), item, item_where);
            return;
        }
        if (must_be_override && !d->is_override) {
            diag(rule_error_code::unknown_override, ctx(file, key_node),
                 fmt::format("'{}' is a fact but not a config key a recommendation may set (override: true)", key),
                 item, item_where);
            return;
        }
        if (!v.expr && !(v.literal.is_null() && !must_be_override)) {  // an assert's null withdraws the fact
            try {
                value lit = v.literal;
                if (d->kind == fact_kind::bytes && lit.is_string())
                    if (auto b = parse_size(lit.as_string())) lit = value(*b);
                m_vocab.check(key, lit);
            } catch (const std::exception& e) {
                diag(rule_error_code::bad_value, ctx(file, key_node), e.what(), item, item_where);
            }
        }
    }

    void compile_rule(const raw_item& it) {
        const YAML::Node& n = it.node;
        auto r = std::make_unique<rule_def>();
        r->id = n["rule"].as<std::string>("");
        const std::string item = fmt::format("rule '{}'", r->id);
        r->where = ctx(it.file, n);
        const source_context iw = r->where;
        check_keys(it, {"rule", "desc", "step", "salience", "exclusive_group", "condition", "exceptions",
                        "asserts", "finding", "severity", "rationale", "recommend", "route", "next_steps",
                        "uncertain", "tags", "status", "enabled", "references", "notes", "override", "claims"},
                   item);
        const bool replace = is_override(it, item);
        if (replace && !m_rule_ids.count(r->id)) {
            diag(rule_error_code::unknown_macro, iw,
                 fmt::format("rule '{}' has 'override: true' but no earlier pack declares it", r->id), item, iw);
            return;
        }
        if (replace) {  // a later pack (a site's) replaces the whole rule
            auto& rs = m_out.rules.rules;
            rs.erase(std::remove_if(rs.begin(), rs.end(), [&](const auto& x) { return x->id == r->id; }), rs.end());
        } else if (m_rule_ids.count(r->id)) {
            diag(rule_error_code::duplicate_id, iw,
                 fmt::format("rule id '{}' already used at {}", r->id, m_rule_ids[r->id]), item, iw);
            return;
        }
        m_rule_ids[r->id] = fmt::format("{}:{}", iw.file, iw.line);
        r->desc = scalar(it, "desc", item, false);
        r->step = scalar(it, "step", item, true);
        if (!r->step.empty() && !m_out.rules.step(r->step))
            diag(rule_error_code::unknown_step, ctx(it.file, n["step"]),
                 fmt::format("step '{}' is not declared (declare it with '- step: {}')", r->step, r->step), item, iw);
        try {
            if (n["salience"]) r->salience = n["salience"].as<int>();
            if (n["enabled"]) r->enabled = n["enabled"].as<bool>();
        } catch (const YAML::Exception&) {
            diag(rule_error_code::bad_value, iw, "salience must be an integer and enabled a bool", item, iw);
        }
        r->exclusive_group = scalar(it, "exclusive_group", item, false);
        if (!r->exclusive_group.empty() &&
            std::find(m_out.declared_groups.begin(), m_out.declared_groups.end(), r->exclusive_group) ==
                m_out.declared_groups.end())
            diag(rule_error_code::unknown_group, ctx(it.file, n["exclusive_group"]),
                 fmt::format("exclusive group '{}' is not declared (- group: {})", r->exclusive_group,
                             r->exclusive_group),
                 item, iw);
        r->rationale = without_final_newline(scalar(it, "rationale", item, false));
        r->status = n["status"] ? scalar(it, "status", item, false) : "stable";
        if (r->status != "stable" && r->status != "experimental")
            diag(rule_error_code::bad_value, ctx(it.file, n["status"]), "status is stable or experimental", item, iw);
        r->severity = n["severity"] ? scalar(it, "severity", item, false) : "info";
        static const std::set<std::string> sev = {"info", "low", "medium", "high", "critical"};
        if (!sev.count(r->severity))
            diag(rule_error_code::bad_value, ctx(it.file, n["severity"]),
                 "severity is one of info, low, medium, high, critical", item, iw);

        // condition and exceptions
        if (!n["condition"]) {
            diag(rule_error_code::missing_field, iw, "missing required field 'condition'", item, iw);
            return;
        }
        parsed_expr cond = compile_condition(it.file, n["condition"], item, iw);
        r->condition_text = n["condition"].as<std::string>("");
        bool cond_ok = cond.ok();
        if (cond_ok) r->condition = std::move(cond.root);
        // A firing's evidence is what its condition read; an exception that did not apply is not evidence. The
        // refraction key reads both (parse_expression lists each expression's facts, sorted and unique).
        r->evidence_facts = cond.facts;
        std::vector<std::string> facts = cond.facts;
        if (cond_ok && n["exceptions"]) {
            if (!n["exceptions"].IsSequence()) {
                diag(rule_error_code::bad_value, ctx(it.file, n["exceptions"]), "exceptions is a list of conditions", item, iw);
                return;
            }
            for (const auto& ex : n["exceptions"]) {
                parsed_expr e = compile_condition(it.file, ex, item + " exception", iw);
                if (!e.ok()) {
                    cond_ok = false;
                    break;
                }
                facts.insert(facts.end(), e.facts.begin(), e.facts.end());
                auto neg = std::make_unique<expr_node>();
                neg->op = expr_op::not_;
                neg->type = expr_type::boolean;
                neg->text = "not (" + e.root->text + ")";
                neg->kids.push_back(std::move(e.root));
                auto both = std::make_unique<expr_node>();
                both->op = expr_op::and_;
                both->type = expr_type::boolean;
                both->text = r->condition->text + " and " + neg->text;
                both->kids.push_back(std::move(r->condition));
                both->kids.push_back(std::move(neg));
                r->condition = std::move(both);
                r->condition_text += " and not (" + ex.as<std::string>("") + ")";
            }
        }
        std::function<void(const expr_node&)> leaves = [&](const expr_node& x) {
            if (x.kids.empty()) ++r->specificity;
            for (const auto& k : x.kids) leaves(*k);
        };
        if (cond_ok) leaves(*r->condition);
        std::sort(facts.begin(), facts.end());
        facts.erase(std::unique(facts.begin(), facts.end()), facts.end());
        r->facts = std::move(facts);

        // asserts
        if (const YAML::Node a = n["asserts"]) {
            if (!a.IsMap()) diag(rule_error_code::bad_value, ctx(it.file, a), "asserts is a map of fact: value", item, iw);
            else
                for (const auto& kv : a) {
                    action_value v;
                    const std::string key = kv.first.as<std::string>();
                    if (!parse_action_value(it.file, kv.second, v, item, iw)) continue;
                    check_fact_value(it.file, kv.first, key, v, item, iw, false);
                    r->asserts.emplace_back(key, std::move(v));
                }
        }
        // finding
        if (const YAML::Node f = n["finding"]) {
            if (f.IsScalar()) {
                r->finding = f.Scalar();
                check_text(it.file, f, item, iw);
            } else if (f.IsMap()) {
                r->finding = f["text"].as<std::string>("");
                if (f["text"]) check_text(it.file, f["text"], item, iw);
                else diag(rule_error_code::missing_field, ctx(it.file, f), "a finding needs text", item, iw);
                r->finding_id = f["id"].as<std::string>("");
                if (f["severity"]) r->severity = f["severity"].as<std::string>("info");
            }
            if (r->finding_id.empty()) r->finding_id = r->id;
        }
        // recommendations
        if (const YAML::Node rec = n["recommend"]) {
            std::vector<YAML::Node> list;
            if (rec.IsSequence()) for (const auto& x : rec) list.push_back(x);
            else list.push_back(rec);
            for (const auto& x : list) {
                recommendation_def d;
                d.where = ctx(it.file, x);
                if (!x.IsMap() || !x["action"]) {
                    diag(rule_error_code::missing_field, d.where, "a recommendation needs an action", item, iw);
                    continue;
                }
                for (const auto& kv : x) {
                    const std::string k = kv.first.as<std::string>();
                    if (k != "action" && k != "priority" && k != "set" && k != "text" && k != "rationale" &&
                        k != "confidence" && k != "confirm" && k != "expect_device_peak" && k != "set_from")
                        diag(rule_error_code::unknown_key, ctx(it.file, kv.first), fmt::format("unknown key '{}'", k), item, iw);
                }
                d.action = x["action"].as<std::string>("");
                auto act = std::find_if(m_actions.begin(), m_actions.end(),
                                        [&](const action_decl& a) { return a.id == d.action; });
                if (act == m_actions.end()) {
                    diag(rule_error_code::unknown_action, ctx(it.file, x["action"]),
                         fmt::format("action '{}' is not in knowledge/actions.yaml", d.action), item, iw);
                    continue;
                }
                d.priority = act->priority;
                if (const YAML::Node pn = x["priority"]) {
                    const std::string raw = pn.IsScalar() ? pn.Scalar() : std::string();
                    if (!raw.empty() && raw[0] == '=') {
                        parse_action_value(it.file, pn, d.priority_expr, item, iw);
                    } else if (int v = 0; pn.IsScalar() && YAML::convert<int>::decode(pn, v) && v >= 0) {
                        d.priority = v;
                    } else {
                        diag(rule_error_code::bad_value, ctx(it.file, pn),
                             "priority is a non-negative integer or an expression giving one", item, iw);
                    }
                }
                if (x["text"]) {
                    d.text = without_final_newline(x["text"].as<std::string>(""));
                    check_text(it.file, x["text"], item, iw);
                }
                if (x["rationale"]) {  // a template too (rev23: offload's bytes per parameter follow the job's sharding)
                    d.rationale = without_final_newline(x["rationale"].as<std::string>(""));
                    check_text(it.file, x["rationale"], item, iw);
                }
                if (x["confirm"]) {
                    d.confirm = without_final_newline(x["confirm"].as<std::string>(""));
                    check_text(it.file, x["confirm"], item, iw);
                }
                if (const YAML::Node c = x["confidence"]) {
                    if (parse_action_value(it.file, c, d.confidence, item, iw) && !d.confidence.expr) {
                        const value& lit = d.confidence.literal;
                        if (!lit.is_string() ||
                            (lit.as_string() != "high" && lit.as_string() != "medium" && lit.as_string() != "low"))
                            diag(rule_error_code::bad_value, ctx(it.file, c),
                                 "confidence is high, medium, low, or an expression giving one of them", item, iw);
                    }
                }
                if (const YAML::Node e = x["expect_device_peak"]) {
                    if (parse_action_value(it.file, e, d.expect_device_peak, item, iw) && !d.expect_device_peak.expr &&
                        !(d.expect_device_peak.literal.is_integer() && d.expect_device_peak.literal.as_integer() > 0))
                        diag(rule_error_code::bad_value, ctx(it.file, e),
                             "expect_device_peak is a positive byte count or an expression giving one", item, iw);
                }
                if (const YAML::Node set = x["set"]) {
                    if (!set.IsMap()) {
                        diag(rule_error_code::bad_value, ctx(it.file, set), "set is a map of canonical key: value", item, iw);
                    } else {
                        for (const auto& kv : set) {
                            action_value v;
                            const std::string key = kv.first.as<std::string>();
                            if (!parse_action_value(it.file, kv.second, v, item, iw)) continue;
                            check_fact_value(it.file, kv.first, key, v, item, iw, true);
                            d.overrides.emplace_back(key, std::move(v));
                        }
                    }
                }
                if (const YAML::Node from = x["set_from"]) {
                    d.set_from = from.as<std::string>("");
                    const fact_decl* fd = m_vocab.find(d.set_from);
                    if (!fd || fd->kind != fact_kind::string)
                        diag(rule_error_code::unknown_fact, ctx(it.file, from),
                             fmt::format("set_from names a declared string fact of key=value pairs, not '{}'", d.set_from), item, iw);
                }
                r->recommendations.push_back(std::move(d));
            }
        }
        // routes
        if (const YAML::Node rt = n["route"]) {
            std::vector<YAML::Node> list;
            if (rt.IsSequence()) for (const auto& x : rt) list.push_back(x);
            else list.push_back(rt);
            for (const auto& x : list) {
                route_def d;
                d.where = ctx(it.file, x);
                if (x.IsScalar()) d.to = x.Scalar();
                else if (x.IsMap()) {
                    d.to = x["to"].as<std::string>("");
                    d.why = x["why"].as<std::string>("");
                    if (x["why"]) check_text(it.file, x["why"], item, iw);
                }
                if (!m_out.rules.step(d.to))
                    diag(rule_error_code::unknown_step, d.where, fmt::format("route to undeclared step '{}'", d.to), item, iw);
                r->routes.push_back(std::move(d));
            }
        }
        for (const char* key : {"next_steps", "uncertain"}) {
            if (const YAML::Node l = n[key]) {
                auto& dst = std::string(key) == "next_steps" ? r->next_steps : r->uncertain;
                if (l.IsScalar()) {
                    dst.push_back(l.Scalar());
                    check_text(it.file, l, item, iw);
                } else {
                    for (const auto& x : l) {
                        dst.push_back(x.as<std::string>(""));
                        check_text(it.file, x, item, iw);
                    }
                }
            }
        }
        if (const YAML::Node t = n["tags"])
            for (const auto& x : t) r->tags.push_back(x.as<std::string>(""));
        if (const YAML::Node c = n["claims"]) {
            std::vector<YAML::Node> list;
            if (c.IsSequence()) for (const auto& x : c) list.push_back(x);
            else list.push_back(c);
            for (const auto& x : list) {
                const std::string claim = x.as<std::string>("");
                if (!m_claims.count(claim))
                    diag(rule_error_code::unknown_macro, ctx(it.file, x),
                         fmt::format("claim '{}' is not declared (- claim: {})", claim, claim), item, iw);
                r->claims.push_back(claim);
            }
        }
        if (!cond_ok) return;
        r->file_order = static_cast<int>(m_out.rules.rules.size());
        m_out.rules.rules.push_back(std::move(r));
    }

    static bool has_translations(const std::vector<std::string>& packs, const std::string& lang) {
        std::error_code ec;
        return std::any_of(packs.begin(), packs.end(),
                           [&](const std::string& f) { return fs::exists(translation_file(f, lang), ec); });
    }

    static void read_translations(const std::vector<std::string>& packs, const std::string& lang,
                                  translation_table& table, std::vector<rule_diagnostic>& diags) {
        for (const auto& f : packs) {
            const std::string tf = translation_file(f, lang);
            std::error_code ec;
            if (fs::exists(tf, ec)) read_rule_translations(tf, lang, table, diags);
        }
    }

public:
    // The lazy form: throws input_error when a translation file has errors.
    static translation_table read_translations(const std::vector<std::string>& packs, const std::string& lang) {
        translation_table table;
        std::vector<rule_diagnostic> diags;
        read_translations(packs, lang, table, diags);
        std::string msg;
        for (const auto& d : diags)
            if (!rule_error_is_warning(d.code)) msg += "\n" + d.render();
        if (!msg.empty()) throw input_error("the " + lang + " rule translations do not load:" + msg);
        return table;
    }

private:
    const vocabulary& m_vocab;
    const std::vector<action_decl>& m_actions;
    translation_loading m_translations;
    std::vector<std::string> m_only_steps;
    load_result m_out;
    std::vector<raw_item> m_items;
    std::map<std::string, macro_state> m_macros;
    std::map<std::string, value::list_t> m_lists;
    std::map<std::string, source_context> m_list_where;
    std::set<std::string> m_lists_used;
    std::map<std::string, std::string> m_rule_ids;
    std::set<std::string> m_claims;
};

}  // namespace

namespace {

void attach_lazy_translations(rule_set& rs, const std::vector<std::string>& files) {
    rs.lazy_i18n = std::make_shared<lazy_translations>();
    rs.lazy_i18n->load = [files](const std::string& lang) { return loader::read_translations(files, lang); };
}

}  // namespace

load_result load_rules(const std::vector<std::string>& paths, const vocabulary& vocab,
                       const std::vector<action_decl>& actions, translation_loading translations,
                       const std::vector<std::string>& only_steps) {
    loader l(vocab, actions, translations, only_steps);
    return l.run(paths);
}

namespace {

std::atomic<const rule_set*> g_shipped_all{nullptr};

// The shipped packs a run of `only_steps` reads: all of them, or for the evidence step all but
// the step packs (stepN_*.yaml), which hold neither evidence rules nor anything they use
// (tests/unit/rules: the evidence set loads alone and equals the full set's evidence rules).
std::vector<std::string> shipped_packs(const std::vector<std::string>& only_steps) {
    const std::string dir = data_path("rules");
    if (only_steps != std::vector<std::string>{"evidence"}) return {dir};
    std::error_code ec;
    std::vector<std::string> packs;
    for (const auto& f : yaml_files_in(dir, ec)) {
        const std::string name = fs::path(f).filename().string();
        const bool step_pack = name.size() > 5 && name.starts_with("step") && std::isdigit(static_cast<unsigned char>(name[4]));
        if (!name.ends_with(".test.yaml") && !step_pack) packs.push_back(f);
    }
    if (ec || packs.empty()) return {dir};
    return packs;
}

}  // namespace

namespace {

// What the compilation of `packs` reads: the loader's own file list, the fact vocabulary, the
// actions; nullopt when a folder cannot be listed.
std::optional<std::vector<std::string>> compiled_rules_files(const std::vector<std::string>& packs) {
    std::error_code ec;
    std::vector<std::string> files;
    for (const auto& p : packs) {
        if (fs::is_directory(p, ec)) {
            const auto found = pack_files_in(p, ec);
            files.insert(files.end(), found.begin(), found.end());
        } else {
            files.push_back(p);
        }
    }
    if (ec) return std::nullopt;
    const auto facts = yaml_files_in(data_path("knowledge/facts"), ec);
    if (ec) return std::nullopt;
    files.insert(files.end(), facts.begin(), facts.end());
    files.push_back(data_path("knowledge/actions.yaml"));
    return files;
}

// The stored set's key: those files by path, size and hash (rule_set_cache.h). The hashes come
// from the entry's stamps where a file's stat vouches for them (file_stamps.h).
std::string compiled_rules_key(const std::vector<file_stamps::stamp>& files, const std::vector<std::string>& only_steps,
                               const std::vector<std::string>& fact_scope) {
    std::string key = fmt::format("oomdx compiled rules 1\n{}\nsteps {}\nfacts {}\n", build_identity(),
                                  fmt::join(only_steps, ","), fmt::join(fact_scope, ","));
    for (const auto& f : files) key += fmt::format("{}\n{}\n{:016x}\n", f.path, f.size, f.hash);
    return key;
}

load_result compile_shipped_rules(const std::vector<std::string>& packs, const std::vector<std::string>& only_steps,
                                  const std::vector<std::string>& fact_scope) {
    load_result lr = load_rules(packs, vocabulary::shipped(), shipped_actions(), translation_loading::lazy, only_steps);
    if (!lr.ok()) {
        std::string msg = "the shipped rules do not load:";
        for (const auto& d : lr.diagnostics)
            if (!rule_error_is_warning(d.code)) msg += "\n" + d.render();
        throw input_error(msg);
    }
    if (!fact_scope.empty()) keep_rules_for_facts(lr.rules, fact_scope);
    return lr;
}

}  // namespace

load_result load_shipped_rules(const std::vector<std::string>& only_steps, const std::vector<std::string>& fact_scope) {
    const std::vector<std::string> packs = shipped_packs(only_steps);
    const std::string cache_dir = yaml_cache_dir();
    if (cache_dir.empty() || build_identity().empty()) return compile_shipped_rules(packs, only_steps, fact_scope);
    const auto files = compiled_rules_files(packs);
    if (!files) return compile_shipped_rules(packs, only_steps, fact_scope);
    const std::string scope = fact_scope.empty() ? "" : fmt::format("\n{}", fmt::join(fact_scope, ","));
    const std::string entry = fmt::format("{}/rules-{:016x}.bin", cache_dir,
                                          text_hash(fmt::format("{}\n{}{}", data_dir(), fmt::join(only_steps, ","), scope)));
    const std::int64_t taken = file_stamps::now_ns();
    const bin::entry_bytes stored_bytes(entry);
    const auto [known, body] = file_stamps::split(stored_bytes.view());
    const auto hashed = file_stamps::hash_files(*files, known, taken);
    if (!hashed) return compile_shipped_rules(packs, only_steps, fact_scope);
    const std::string key = compiled_rules_key(hashed->stamps, only_steps, fact_scope);
    const auto store = [&](std::string_view set_bytes) {
        try {
            std::error_code ec;
            fs::create_directories(cache_dir, ec);
            write_file_atomic(entry, file_stamps::join({hashed->stamps, taken}, set_bytes));
            prune_rule_sets(cache_dir, 32);
        } catch (const std::exception&) {
            // A copy that cannot be written only costs the next run a compilation (or the reads).
        }
    };
    if (auto stored = decode_rule_set(body, key)) {
        if (hashed->refresh) store(body);  // the same set, with stamps that vouch for the files next time
        load_result lr;
        lr.rules = std::move(*stored);
        attach_lazy_translations(lr.rules, lr.rules.files);
        return lr;
    }
    load_result lr = compile_shipped_rules(packs, only_steps, fact_scope);
    if (lr.diagnostics.empty()) store(encode_rule_set(lr.rules, key));  // a set with warnings is compiled each time (they are reported)
    return lr;
}

const rule_set& shipped_rules() {
    // Never destroyed: freeing the compiled rules at exit cost a snapshot run 2% of its instructions.
    static const load_result& r = *new load_result(load_shipped_rules({}));
    g_shipped_all.store(&r.rules);
    return r.rules;
}

const rule_set& shipped_evidence_rules() {
    if (const rule_set* all = g_shipped_all.load()) return *all;
    static const load_result& r = *new load_result(load_shipped_rules({"evidence"}));
    return r.rules;
}

}  // namespace oomdx
