#include "engine/rules/rule_set_cache.h"

#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

#include <re2/re2.h>

#include <fmt/format.h>

#include "engine/core/binary_io.h"

namespace oomdx {
namespace {

using bin::get64;
using bin::put32;
using bin::put64;
using bin::put_text;
using bin::put_texts;

constexpr char k_magic[8] = {'o', 'o', 'm', 'd', 'x', 'r', 's', '4'};
// Deeper trees than any condition has; bounds the decoder's recursion on a damaged copy.
constexpr int k_max_depth = 512;

// ---- writing ----

void put_int(std::string& out, std::int64_t v) { put64(out, static_cast<std::uint64_t>(v)); }

void put_value(std::string& out, const value& v) {
    put32(out, static_cast<std::uint32_t>(v.type()));
    switch (v.type()) {
    case value_type::null: break;
    case value_type::integer: put_int(out, v.as_integer()); break;
    case value_type::number: {
        const double d = v.as_number();
        std::uint64_t bits;
        std::memcpy(&bits, &d, 8);
        put64(out, bits);
        break;
    }
    case value_type::boolean: put32(out, v.as_bool() ? 1 : 0); break;
    case value_type::string: put_text(out, v.as_string()); break;
    case value_type::list:
        put32(out, static_cast<std::uint32_t>(v.as_list().size()));
        for (const auto& x : v.as_list()) put_value(out, x);
        break;
    }
}

void put_ctx(std::string& out, const source_context& c) {
    put_text(out, c.file);
    put_int(out, c.line);
    put_int(out, c.column);
}

void put_expr(std::string& out, const expr_node* n) {
    put32(out, n ? 1 : 0);
    if (!n) return;
    put32(out, static_cast<std::uint32_t>(n->op));
    put_int(out, n->offset);
    put_value(out, n->lit);
    put_text(out, n->name);
    put32(out, static_cast<std::uint32_t>(n->type));
    put32(out, n->regex ? 1 : 0);  // rebuilt from `lit`, the pattern
    put_text(out, n->text);
    put32(out, static_cast<std::uint32_t>(n->kids.size()));
    for (const auto& k : n->kids) put_expr(out, k.get());
}

void put_action(std::string& out, const action_value& a) {
    put_value(out, a.literal);
    put_expr(out, a.expr.get());
    put_text(out, a.text);
}

void put_settings(std::string& out, const std::vector<std::pair<std::string, action_value>>& v) {
    put32(out, static_cast<std::uint32_t>(v.size()));
    for (const auto& [k, a] : v) {
        put_text(out, k);
        put_action(out, a);
    }
}

void put_rule(std::string& out, const rule_def& r) {
    put_text(out, r.id);
    put_text(out, r.desc);
    put_text(out, r.step);
    put_int(out, r.salience);
    put_text(out, r.exclusive_group);
    put_text(out, r.condition_text);
    put_expr(out, r.condition.get());
    put_int(out, r.specificity);
    put_texts(out, r.facts);
    put_texts(out, r.evidence_facts);
    put_settings(out, r.asserts);
    put_text(out, r.finding);
    put_text(out, r.finding_id);
    put_text(out, r.severity);
    put_text(out, r.rationale);
    put32(out, static_cast<std::uint32_t>(r.recommendations.size()));
    for (const auto& d : r.recommendations) {
        put_text(out, d.action);
        put_int(out, d.priority);
        put_action(out, d.priority_expr);
        put_settings(out, d.overrides);
        put_text(out, d.text);
        put_text(out, d.rationale);
        put_action(out, d.confidence);
        put_text(out, d.confirm);
        put_action(out, d.expect_device_peak);
        put_text(out, d.set_from);
        put_ctx(out, d.where);
    }
    put32(out, static_cast<std::uint32_t>(r.routes.size()));
    for (const auto& d : r.routes) {
        put_text(out, d.to);
        put_text(out, d.why);
        put_ctx(out, d.where);
    }
    put_texts(out, r.next_steps);
    put_texts(out, r.uncertain);
    put_texts(out, r.tags);
    put_texts(out, r.claims);
    put_text(out, r.status);
    put32(out, r.enabled ? 1 : 0);
    put_int(out, r.file_order);
    put_ctx(out, r.where);
}

// ---- reading: every read checks its bounds; any failure makes the whole copy unusable ----

class reader : public bin::reader {
public:
    using bin::reader::reader;
    bool val(value& v, int depth = 0) {
        std::uint32_t t = 0;
        if (depth > k_max_depth || !u32(t)) return false;
        switch (static_cast<value_type>(t)) {
        case value_type::null: v = value(); return true;
        case value_type::integer: {
            std::int64_t i = 0;
            if (!i64(i)) return false;
            v = value(static_cast<long long>(i));
            return true;
        }
        case value_type::number: {
            std::uint64_t bits = 0;
            if (!u64(bits)) return false;
            double d;
            std::memcpy(&d, &bits, 8);
            v = value(d);
            return true;
        }
        case value_type::boolean: {
            bool b = false;
            if (!flag(b)) return false;
            v = value(b);
            return true;
        }
        case value_type::string: {
            std::string s;
            if (!text(s)) return false;
            v = value(std::move(s));
            return true;
        }
        case value_type::list: {
            std::uint32_t n = 0;
            if (!count(n)) return false;
            value::list_t l(n);
            for (auto& x : l)
                if (!val(x, depth + 1)) return false;
            v = value(std::move(l));
            return true;
        }
        }
        return false;
    }
    bool ctx(source_context& c) { return text(c.file) && small(c.line) && small(c.column); }
    bool expr(std::unique_ptr<expr_node>& out, int depth = 0) {
        bool present = false;
        if (depth > k_max_depth || !flag(present)) return false;
        if (!present) return true;
        auto n = std::make_unique<expr_node>();
        std::uint32_t op = 0, type = 0, kids = 0;
        bool regex = false;
        if (!u32(op) || op > static_cast<std::uint32_t>(expr_op::not_) || !small(n->offset) || !val(n->lit) ||
            !text(n->name) || !u32(type) || type > static_cast<std::uint32_t>(expr_type::null) || !flag(regex) ||
            !text(n->text) || !count(kids))
            return false;
        n->op = static_cast<expr_op>(op);
        n->type = static_cast<expr_type>(type);
        if (regex) {
            if (!n->lit.is_string()) return false;
            n->regex = std::make_shared<re2::RE2>(n->lit.as_string(), re2::RE2::Quiet);
            if (!n->regex->ok()) return false;
        }
        n->kids.resize(kids);
        for (auto& k : n->kids)
            if (!expr(k, depth + 1) || !k) return false;
        out = std::move(n);
        return true;
    }
    bool action(action_value& a) { return val(a.literal) && expr(a.expr) && text(a.text); }
    bool settings(std::vector<std::pair<std::string, action_value>>& v) {
        std::uint32_t n = 0;
        if (!count(n)) return false;
        v.resize(n);
        for (auto& [k, a] : v)
            if (!text(k) || !action(a)) return false;
        return true;
    }
    bool rule(rule_def& r) {
        if (!text(r.id) || !text(r.desc) || !text(r.step) || !small(r.salience) || !text(r.exclusive_group) ||
            !text(r.condition_text) || !expr(r.condition) || !r.condition || !small(r.specificity) ||
            !texts(r.facts) || !texts(r.evidence_facts) || !settings(r.asserts) || !text(r.finding) || !text(r.finding_id) ||
            !text(r.severity) || !text(r.rationale))
            return false;
        std::uint32_t n = 0;
        if (!count(n)) return false;
        r.recommendations.resize(n);
        for (auto& d : r.recommendations)
            if (!text(d.action) || !small(d.priority) || !action(d.priority_expr) || !settings(d.overrides) || !text(d.text) ||
                !text(d.rationale) || !action(d.confidence) || !text(d.confirm) || !action(d.expect_device_peak) ||
                !text(d.set_from) || !ctx(d.where))
                return false;
        if (!count(n)) return false;
        r.routes.resize(n);
        for (auto& d : r.routes)
            if (!text(d.to) || !text(d.why) || !ctx(d.where)) return false;
        return texts(r.next_steps) && texts(r.uncertain) && texts(r.tags) && texts(r.claims) && text(r.status) &&
               flag(r.enabled) && small(r.file_order) && ctx(r.where);
    }
};

}  // namespace

std::string encode_rule_set(const rule_set& rs, std::string_view key) {
    std::string p;
    put32(p, static_cast<std::uint32_t>(rs.steps.size()));
    for (const auto& s : rs.steps) {
        put_text(p, s.id);
        put_text(p, s.title);
        put_text(p, s.goal);
        put_int(p, s.order);
        put32(p, s.always ? 1 : 0);
        put32(p, s.listed ? 1 : 0);
        put_ctx(p, s.where);
    }
    put32(p, static_cast<std::uint32_t>(rs.rules.size()));
    for (const auto& r : rs.rules) put_rule(p, *r);
    put32(p, static_cast<std::uint32_t>(rs.macro_text.size()));
    for (const auto& [k, v] : rs.macro_text) {
        put_text(p, k);
        put_text(p, v);
    }
    put32(p, static_cast<std::uint32_t>(rs.lists.size()));
    for (const auto& [k, v] : rs.lists) {
        put_text(p, k);
        put_value(p, value(v));
    }
    put32(p, static_cast<std::uint32_t>(rs.contradicts.size()));
    for (const auto& [k, v] : rs.contradicts) {
        put_text(p, k);
        put_texts(p, v);
    }
    put_texts(p, rs.files);
    return bin::seal(k_magic, key, p, cache_hash);
}

std::optional<rule_set> decode_rule_set(std::string_view stored, std::string_view key) {
    const auto payload = bin::unseal(stored, k_magic, key, cache_hash);
    if (!payload) return std::nullopt;
    reader r(*payload);
    rule_set rs;
    std::uint32_t n = 0;
    if (!r.count(n)) return std::nullopt;
    rs.steps.resize(n);
    for (auto& s : rs.steps)
        if (!r.text(s.id) || !r.text(s.title) || !r.text(s.goal) || !r.small(s.order) || !r.flag(s.always) ||
            !r.flag(s.listed) || !r.ctx(s.where))
            return std::nullopt;
    if (!r.count(n)) return std::nullopt;
    rs.rules.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        auto rule = std::make_unique<rule_def>();
        if (!r.rule(*rule)) return std::nullopt;
        rs.rules.push_back(std::move(rule));
    }
    if (!r.count(n)) return std::nullopt;
    for (std::uint32_t i = 0; i < n; ++i) {
        std::string k, v;
        if (!r.text(k) || !r.text(v)) return std::nullopt;
        rs.macro_text.emplace(std::move(k), std::move(v));
    }
    if (!r.count(n)) return std::nullopt;
    for (std::uint32_t i = 0; i < n; ++i) {
        std::string k;
        value v;
        if (!r.text(k) || !r.val(v) || !v.is_list()) return std::nullopt;
        rs.lists.emplace(std::move(k), v.as_list());
    }
    if (!r.count(n)) return std::nullopt;
    for (std::uint32_t i = 0; i < n; ++i) {
        std::string k;
        std::vector<std::string> v;
        if (!r.text(k) || !r.texts(v)) return std::nullopt;
        rs.contradicts.emplace(std::move(k), std::move(v));
    }
    if (!r.texts(rs.files) || !r.at_end()) return std::nullopt;
    return rs;
}

void prune_rule_sets(const std::string& dir, std::size_t keep) { bin::prune_entries(dir, "rules-", keep); }

}  // namespace oomdx
