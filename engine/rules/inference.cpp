#include "engine/rules/inference.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/core/translations.h"
#include "engine/core/utf8.h"
#include "engine/core/vocabulary.h"
#include "engine/rules/text_template.h"

namespace oomdx {

bool inference_result::fired(const std::string& rule_id) const {
    return std::any_of(firings.begin(), firings.end(), [&](const firing& f) { return f.rule_id == rule_id; });
}

std::vector<recommendation> inference_result::ranked() const {
    std::vector<recommendation> out = recommendations;
    auto tier = [](const std::string& c) { return c == "high" ? 0 : c == "low" ? 2 : 1; };
    std::stable_sort(out.begin(), out.end(), [&](const recommendation& a, const recommendation& b) {
        if (tier(a.confidence) != tier(b.confidence)) return tier(a.confidence) < tier(b.confidence);
        return a.priority < b.priority;
    });
    std::vector<recommendation> unique;
    std::set<std::string> seen;
    for (auto& r : out) {
        std::string key = r.action;
        for (const auto& o : r.overrides) key += "|" + o.key + "=" + o.val.to_string();
        if (seen.insert(key).second) unique.push_back(std::move(r));
    }
    return unique;
}

namespace {

std::string refraction_key(const rule_def& r, const fact_store& facts, std::vector<int>& ids) {
    ids.clear();
    std::string key = r.id;
    for (const auto& name : r.facts) {
        const fact* f = facts.get(name);
        ids.push_back(f ? f->id : -1);
        key += ':';
        key += std::to_string(f ? f->id : -1);
    }
    return key;
}

// "key=value, key=value" (the planner's canonical overrides) as typed overrides; pairs that name no declared
// override key are left out.
std::vector<override_value> listed_overrides(const std::string& listed, const vocabulary& vocab) {
    std::vector<override_value> out;
    std::size_t at = 0;
    while (at < listed.size()) {
        std::size_t end = listed.find(", ", at);
        if (end == std::string::npos) end = listed.size();
        const std::string pair = listed.substr(at, end - at);
        at = end + 2;
        const auto eq = pair.find('=');
        if (eq == std::string::npos || eq == 0) continue;
        const std::string key = pair.substr(0, eq);
        const fact_decl* d = vocab.find(key);
        if (!d || !d->is_override) continue;
        out.push_back({key, fact_value_from_text(key, pair.substr(eq + 1), vocab, false)});
    }
    return out;
}

value eval_action(const action_value& v, const fact_store& facts) {
    if (v.expr) return evaluate(*v.expr, facts).val;
    return v.literal;
}

// Coerce a literal to the declared kind (sizes written as "2 GiB" for bytes facts).
value coerce(const std::string& name, value v, const fact_store& facts) {
    const vocabulary* vocab = facts.vocab();
    const fact_decl* d = vocab ? vocab->find(name) : nullptr;
    if (!d) return v;
    if ((d->kind == fact_kind::bytes || d->kind == fact_kind::integer) && v.is_number())
        return value(static_cast<std::int64_t>(v.as_number()));
    if (d->kind == fact_kind::bytes && v.is_string())
        if (auto b = parse_size(v.as_string())) return value(*b);
    return v;
}

bool step_less(const rule_set& rs, const rule_def& a, const rule_def& b) {
    const step_def* sa = rs.step(a.step);
    const step_def* sb = rs.step(b.step);
    const int oa = sa ? sa->order : 1 << 20, ob = sb ? sb->order : 1 << 20;
    if (oa != ob) return oa < ob;
    if (a.salience != b.salience) return a.salience > b.salience;
    if (a.specificity != b.specificity) return a.specificity > b.specificity;
    if (a.file_order != b.file_order) return a.file_order < b.file_order;
    return a.id < b.id;
}

// Macros and lists of the rule set, for the templates rendered when a rule fires.
class template_names {
public:
    template_names(const rule_set& rs, const vocabulary* vocab) : m_rs(rs) {
        m_names.vocab = vocab;
        m_names.macro = [this](const std::string& name) -> const expr_node* {
            auto hit = m_macros.find(name);
            if (hit != m_macros.end()) return hit->second.get();
            auto text = m_rs.macro_text.find(name);
            if (text == m_rs.macro_text.end() || m_busy.count(name)) return nullptr;
            m_busy.insert(name);
            parsed_expr e = parse_expression(text->second, m_names);
            m_busy.erase(name);
            return (m_macros[name] = e.ok() ? std::move(e.root) : nullptr).get();
        };
        m_names.list = [this](const std::string& name) -> const std::vector<value>* {
            auto it = m_rs.lists.find(name);
            return it == m_rs.lists.end() ? nullptr : &it->second;
        };
    }
    const name_resolver& get() const { return m_names; }

private:
    const rule_set& m_rs;
    name_resolver m_names;
    std::map<std::string, std::unique_ptr<expr_node>> m_macros;
    std::set<std::string> m_busy;
};

}  // namespace

truth evaluate_macro(const rule_set& rs, const std::string& name, const fact_store& facts) {
    template_names names(rs, facts.vocab());
    const expr_node* root = names.get().macro(name);
    return root ? evaluate_condition(*root, facts) : truth::unknown;
}

inference_result run_inference(const rule_set& rs, fact_store& facts, const inference_options& opts) {
    inference_result res;
    template_names names(rs, facts.vocab());
    const translation_table* know = opts.lang == "en" ? nullptr : &translation_table::shipped(opts.lang);
    auto render = [&](const std::string& t) { return render_template(t, facts, &names.get(), know); };
    // A rule text in the report's language: the translation when current, else the English.
    auto text = [&](const std::string& key, const std::string& en) { return rs.text(opts.lang, key, en); };
    auto trimmed = [](std::string s) {  // folded YAML ends translations with a newline
        while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
        return s;
    };
    std::set<std::string> active;
    const std::set<std::string> only(opts.only_steps.begin(), opts.only_steps.end());
    auto allowed = [&](const std::string& step) { return only.empty() || only.count(step) > 0; };
    for (const auto& s : rs.steps)
        if (s.always && allowed(s.id)) {
            active.insert(s.id);
            if (s.listed)
                res.route.push_back({s.id, "", s.goal.empty() ? "always runs" : text("step." + s.id + ".goal", s.goal), -1});
        }
    std::set<std::string> fired_keys;
    std::map<std::string, std::string> group_winner;
    std::vector<int> ids;
    int cycles = 0;
    for (;;) {
        const rule_def* best = nullptr;
        std::string best_key;
        for (const auto& rp : rs.rules) {
            const rule_def& r = *rp;
            if (!r.enabled || !r.condition || !active.count(r.step)) continue;
            if (!r.exclusive_group.empty() && group_winner.count(r.exclusive_group)) continue;
            if (best && !step_less(rs, r, *best)) continue;  // (cheaper than the key: same outcome)
            std::string key = refraction_key(r, facts, ids);
            if (fired_keys.count(key)) continue;
            if (evaluate_condition(*r.condition, facts) != truth::true_) continue;
            best = &r;
            best_key = key;
        }
        if (!best) break;
        if (++cycles > opts.max_cycles) {
            std::string last;
            for (size_t i = res.firings.size() > 5 ? res.firings.size() - 5 : 0; i < res.firings.size(); ++i)
                last += (last.empty() ? "" : ", ") + res.firings[i].rule_id;
            throw inference_error(fmt::format(
                "rule engine stopped after {} firings without reaching a fixpoint (cycle limit); "
                "last rules fired: {}", opts.max_cycles, last));
        }
        const rule_def& r = *best;
        fired_keys.insert(best_key);
        if (!r.exclusive_group.empty()) group_winner[r.exclusive_group] = r.id;
        firing fi;
        fi.seq = static_cast<int>(res.firings.size());
        fi.rule_id = r.id;
        fi.step = r.step;
        std::vector<std::string> used_names;
        for (const auto& n : r.evidence_facts)
            if (const fact* f = facts.get(n)) {
                used_names.push_back(n);
                fi.fact_ids.push_back(f->id);
            }
        res.firings.push_back(fi);
        auto derived = [&](std::string excerpt) {
            provenance p;
            p.producer = "rule";
            p.rule_id = r.id;
            p.derived_from = used_names;
            p.derived_ids = fi.fact_ids;
            p.excerpt = std::move(excerpt);
            return p;
        };
        for (const auto& [name, av] : r.asserts) {
            if (!av.expr && av.literal.is_null()) {  // `name: null` withdraws the fact
                facts.retract(name);
                continue;
            }
            value v = coerce(name, eval_action(av, facts), facts);
            const fact* cur = facts.get(name);
            if (cur && cur->val == v && cur->val.type() == v.type()) continue;  // unchanged: no new version
            facts.emit(name, v, derived(r.condition_text));
        }
        auto evidence_of = [&](const std::string& tmpl) {
            std::vector<int> ev = fi.fact_ids;
            std::vector<template_error> errs;
            for (const auto& n : check_template(tmpl, names.get(), errs))
                if (const fact* f = facts.get(n)) ev.push_back(f->id);
            std::sort(ev.begin(), ev.end());
            ev.erase(std::unique(ev.begin(), ev.end()), ev.end());
            return ev;
        };
        if (!r.finding.empty()) {
            finding f;
            f.id = r.finding_id;
            f.rule_id = r.id;
            f.step = r.step;
            f.severity = r.severity;
            const std::string base = "rule." + r.id + ".";
            f.text = render(text(base + "finding", r.finding));
            // rev29: a rationale may depend on the facts ({= if(inference_process, ...)}), like the finding
            f.rationale = render(opts.lang == "en" ? r.rationale : trimmed(text(base + "rationale", r.rationale)));
            f.evidence = evidence_of(r.finding);
            f.firing = fi.seq;
            res.findings.push_back(std::move(f));
        }
        for (size_t di = 0; di < r.recommendations.size(); ++di) {
            const recommendation_def& d = r.recommendations[di];
            const std::string tkey = fmt::format("rule.{}.recommend.{}.", r.id, di);
            // A confidence expression that gives "none": the evidence does not support this one here.
            std::string confidence = "medium";
            if (d.confidence.expr || d.confidence.literal.is_string()) {
                const value c = eval_action(d.confidence, facts);
                if (c.is_string() && (c.as_string() == "high" || c.as_string() == "medium" || c.as_string() == "low" ||
                                      c.as_string() == "none"))
                    confidence = c.as_string();
            }
            if (confidence == "none") continue;
            recommendation rec;
            rec.confidence = confidence;
            rec.rule_id = r.id;
            rec.action = d.action;
            rec.priority = d.priority;
            if (d.priority_expr.expr)
                if (const value pv = eval_action(d.priority_expr, facts); pv.is_numeric() && pv.as_number() >= 0)
                    rec.priority = static_cast<int>(pv.as_number());
            for (const auto& [key, av] : d.overrides) rec.overrides.push_back({key, coerce(key, eval_action(av, facts), facts)});
            if (!d.set_from.empty())
                if (const auto listed = facts.string(d.set_from); listed && facts.vocab())
                    for (auto& o : listed_overrides(*listed, *facts.vocab())) rec.overrides.push_back(std::move(o));
            rec.text = render(text(tkey + "text", d.text));
            rec.rationale = d.rationale.empty() ? render(text("rule." + r.id + ".rationale", r.rationale))
                                                : render(text(tkey + "rationale", d.rationale));
            if (opts.lang != "en") rec.rationale = trimmed(rec.rationale);
            rec.confirm = render(text(tkey + "confirm", d.confirm));
            if (d.expect_device_peak.expr || !d.expect_device_peak.literal.is_null())
                if (const value e = eval_action(d.expect_device_peak, facts); e.is_integer() && e.as_integer() > 0)
                    rec.expected_device_peak = e.as_integer();
            for (size_t oi = 0; oi < d.overrides.size(); ++oi) {
                const auto& [okey, av] = d.overrides[oi];
                if (okey.rfind("code.", 0) != 0 || rec.overrides[oi].val.is_null()) continue;
                const value& v = rec.overrides[oi].val;
                std::string shown = v.is_string() ? v.as_string() : v.to_string();
                if (opts.lang != "en") {
                    const std::string en = av.expr ? av.text : shown;
                    const std::string t = text(tkey + "set." + okey, en);
                    if (t != en) shown = av.expr ? render(t) : t;
                }
                rec.code_texts.push_back({okey, shown});
            }
            rec.evidence = evidence_of(d.text);
            rec.firing = fi.seq;
            res.recommendations.push_back(std::move(rec));
        }
        for (const auto& rt : r.routes) {
            if (!allowed(rt.to)) continue;
            const size_t ri = static_cast<size_t>(&rt - r.routes.data());
            res.route.push_back({rt.to, r.id, render(text(fmt::format("rule.{}.route.{}.why", r.id, ri),
                                                          rt.why.empty() ? r.desc : rt.why)),
                                 fi.seq});
            active.insert(rt.to);
        }
        for (size_t i = 0; i < r.next_steps.size(); ++i)
            res.next_steps.push_back(render(text(fmt::format("rule.{}.next_steps.{}", r.id, i), r.next_steps[i])));
        for (size_t i = 0; i < r.uncertain.size(); ++i)
            res.uncertain.push_back(render(text(fmt::format("rule.{}.uncertain.{}", r.id, i), r.uncertain[i])));
    }
    for (const auto& s : rs.steps)
        if (active.count(s.id)) res.steps_run.push_back(s.id);
    // Contradictions among the claims of the rules that fired (each pair once).
    std::vector<const rule_def*> fired_rules;
    for (const auto& f : res.firings)
        if (const rule_def* r = rs.rule(f.rule_id); r && !r->claims.empty() &&
            std::find(fired_rules.begin(), fired_rules.end(), r) == fired_rules.end())
            fired_rules.push_back(r);
    for (size_t i = 0; i < fired_rules.size(); ++i)
        for (size_t j = i + 1; j < fired_rules.size(); ++j) {
            bool clash = false;
            for (const auto& a : fired_rules[i]->claims) {
                auto it = rs.contradicts.find(a);
                if (it == rs.contradicts.end()) continue;
                for (const auto& b : fired_rules[j]->claims)
                    clash = clash || std::find(it->second.begin(), it->second.end(), b) != it->second.end();
            }
            if (clash) res.contradictions.push_back({fired_rules[i]->id, fired_rules[j]->id});
        }
    // WHY NOT for every enabled rule that did not fire.
    for (const auto& rp : rs.rules) {
        if (!opts.explain_misses) break;
        const rule_def& r = *rp;
        if (!r.enabled || !r.condition || res.fired(r.id)) continue;
        if (!allowed(r.step)) continue;
        near_miss nm{r.id, r.step, ""};
        if (!active.count(r.step)) {
            nm.reason = fmt::format("step '{}' was not reached (no rule routed to it)", r.step);
        } else if (!r.exclusive_group.empty() && group_winner.count(r.exclusive_group)) {
            nm.reason = fmt::format("exclusive group '{}' was already decided by rule '{}'", r.exclusive_group,
                                    group_winner[r.exclusive_group]);
        } else {
            nm.reason = explain_failure(*r.condition, facts);
        }
        res.near_misses.push_back(std::move(nm));
    }
    return res;
}

std::vector<std::string> explain_fact(const fact_store& facts, int fact_id, int depth) {
    std::vector<std::string> out;
    const fact* f = facts.by_id(fact_id);
    if (!f || depth > 12) return out;
    const vocabulary* vocab = facts.vocab();
    const fact_decl* d = vocab ? vocab->find(f->name) : nullptr;
    const std::string indent(static_cast<size_t>(depth) * 2, ' ');
    const std::string shown = f->val.is_string() ? f->val.as_string() : render_value(f->val, d);
    if (!f->prov.rule_id.empty()) {
        out.push_back(fmt::format("{}{} = {}  <- rule {}", indent, f->name, shown, f->prov.rule_id));
        for (int id : f->prov.derived_ids) {
            auto sub = explain_fact(facts, id, depth + 1);
            out.insert(out.end(), sub.begin(), sub.end());
        }
    } else {
        std::string where = f->prov.location();
        std::string ex = f->prov.excerpt;
        if (ex.size() > 160) ex = std::string(utf8_prefix(ex, 157)) + "...";
        out.push_back(fmt::format("{}{} = {}  <- {}{}", indent, f->name, shown, where.empty() ? f->prov.producer : where,
                                  ex.empty() ? "" : fmt::format(": \"{}\"", ex)));
        for (int id : f->prov.derived_ids) {
            auto sub = explain_fact(facts, id, depth + 1);
            out.insert(out.end(), sub.begin(), sub.end());
        }
    }
    return out;
}

}  // namespace oomdx
