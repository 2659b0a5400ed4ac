#include "engine/rules/rule_tests.h"

#include "engine/core/yaml_node.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/core/text_file.h"
#include "engine/core/yaml_file.h"
#include "engine/core/fact_store.h"
#include "engine/core/translations.h"
#include "engine/rules/inference.h"
#include "engine/core/yaml_guard.h"

namespace oomdx {

namespace fs = std::filesystem;

namespace {

// The keys a case may hold (docs/rules.md, "Rule tests").
bool known_case_key(const std::string& key) {
    static const std::set<std::string> keys = {"name", "todo", "facts", "expect_fired", "expect_not_fired",
                                               "expect_finding", "expect_overrides", "expect_route", "expect_facts",
                                               "expect_actions", "expect_not_actions", "expect_confidence",
                                               "expect_recommendation", "expect_device_peak", "expect_route_why",
                                               "expect_rationale", "expect_uncertain"};
    if (keys.count(key)) return true;
    for (const auto& lang : report_languages())
        if (key == "expect_finding_" + lang || key == "expect_route_why_" + lang) return true;
    return false;
}

value node_value(const std::string& name, const YAML::Node& n, const vocabulary& vocab) {
    if (n.IsSequence()) {
        value::list_t l;
        for (const auto& x : n) l.push_back(x.IsScalar() ? value(x.Scalar()) : value());
        return value(std::move(l));
    }
    if (!n.IsScalar()) return value();
    return fact_value_from_text(name, n.Scalar(), vocab, n.Tag() == "!");
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return "[" + s + "]";
}

}  // namespace

namespace {

// The rule test files under `dir` (or `dir` itself, one test file), sorted.
std::vector<std::string> test_files(const std::string& dir) {
    std::vector<std::string> tests;
    std::error_code ec;
    if (fs::is_directory(dir, ec)) {
        for (const auto& e : fs::recursive_directory_iterator(dir, ec))
            if (e.is_regular_file() && e.path().string().ends_with(".test.yaml")) tests.push_back(e.path().string());
    } else if (dir.ends_with(".test.yaml")) {
        tests.push_back(dir);
    }
    std::sort(tests.begin(), tests.end());
    return tests;
}

}  // namespace

std::vector<std::string> rules_named_in_tests(const std::string& dir) {
    std::vector<std::string> ids;
    for (const auto& tf : test_files(dir)) {
        try {
            const YAML::Node doc = load_yaml_text(read_text_file(tf, "rule tests (YAML)", /*allow_empty=*/true), tf);
            if (!doc["cases"] || !doc["cases"].IsSequence()) continue;
            for (const auto& c : doc["cases"])
                if (c.IsMap() && c["expect_fired"] && c["expect_fired"].IsSequence())
                    for (const auto& x : c["expect_fired"])
                        if (x.IsScalar()) ids.push_back(x.Scalar());
        } catch (const std::exception&) {
            // an unreadable test file names nothing; `rules test` reports it
        }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

rule_test_report run_rule_tests(const std::string& dir, const vocabulary& vocab,
                                const std::vector<action_decl>& actions) {
    rule_test_report rep;
    const std::vector<std::string> tests = test_files(dir);
    std::error_code ec;
    std::map<std::string, load_result> cache;
    auto rules_for = [&](const std::vector<std::string>& files) -> const load_result& {
        std::string key;
        for (const auto& f : files) key += f + ";";
        auto it = cache.find(key);
        if (it == cache.end()) it = cache.emplace(key, load_rules(files, vocab, actions)).first;
        return it->second;
    };
    const std::string root = fs::is_directory(dir, ec) ? dir : fs::path(dir).parent_path().string();
    for (const auto& tf : tests) {
        ++rep.files;
        YAML::Node doc;
        try {
            doc = load_yaml_text(read_text_file(tf, "rule tests (YAML)", /*allow_empty=*/true), tf);
        } catch (const YAML::Exception& e) {
            rep.errors.push_back(fmt::format("{}:{}:{}: {}", tf, e.mark.line + 1, e.mark.column + 1, yaml_error_text(e)));
            continue;
        } catch (const input_error& e) {
            rep.errors.push_back(e.what());
            continue;
        }
        std::vector<std::string> files;
        if (doc["rule_files"])
            for (const auto& f : doc["rule_files"])
                files.push_back((fs::path(tf).parent_path() / f.as<std::string>()).string());
        else
            files.push_back(root);
        const load_result& lr = rules_for(files);
        if (!lr.ok()) {
            for (const auto& d : lr.diagnostics)
                if (!rule_error_is_warning(d.code)) rep.errors.push_back(d.render());
            continue;
        }
        if (!doc["cases"] || !doc["cases"].IsSequence()) {
            rep.errors.push_back(fmt::format("{}: a rule test file needs 'cases: [...]'", tf));
            continue;
        }
        for (const auto& c : doc["cases"]) {
            ++rep.cases;
            const std::string name = c["name"].as<std::string>("(unnamed)");
            const int line = c.Mark().line + 1;
            const bool todo = c["todo"] && c["todo"].as<bool>(false);
            std::vector<rule_test_failure> fails;
            auto fail = [&](const std::string& what, const std::string& exp, const std::string& got) {
                fails.push_back({tf, line, name, what, exp, got});
            };
            // A key nothing reads would make its expectation a test that cannot fail.
            bool setup_ok = true;
            for (const auto& kv : c) {
                const std::string key = kv.first.as<std::string>();
                if (!known_case_key(key)) {
                    rep.errors.push_back(fmt::format("{}:{}: case '{}': unknown key '{}'", tf, kv.first.Mark().line + 1, name, key));
                    setup_ok = false;
                }
            }
            fact_store facts(&vocab);
            if (c["facts"]) {
                for (const auto& kv : c["facts"]) {
                    const std::string fname = kv.first.as<std::string>();
                    provenance p;
                    p.producer = "test";
                    p.file = tf;
                    p.line = kv.first.Mark().line + 1;
                    p.excerpt = kv.second.IsScalar() ? kv.second.Scalar() : "";
                    try {
                        facts.emit(fname, node_value(fname, kv.second, vocab), p);
                    } catch (const std::exception& e) {
                        rep.errors.push_back(fmt::format("{}:{}: case '{}': {}", tf, p.line, name, e.what()));
                        setup_ok = false;
                    }
                }
            }
            if (!setup_ok) continue;
            std::vector<fact> initial;  // the case's facts, for a second run in another language
            for (const fact* f : facts.current()) initial.push_back(*f);
            inference_result res;
            inference_options quiet;
            quiet.explain_misses = false;
            try {
                res = run_inference(lr.rules, facts, quiet);
            } catch (const std::exception& e) {
                fail("run", "a fixpoint", e.what());
            }
            // The case run again from its facts, with other options (a language, the WHY NOT).
            auto rerun = [&](const inference_options& o) {
                fact_store again(&vocab);
                for (const fact& f : initial) again.emit(f);
                return run_inference(lr.rules, again, o);
            };
            // The WHY NOT of a rule expected to fire, asked only when it did not.
            auto why_not = [&](const std::string& id) {
                try {
                    for (const auto& nm : rerun({}).near_misses)
                        if (nm.rule_id == id) return nm.reason;
                } catch (const std::exception&) {
                }
                return std::string();
            };
            std::vector<std::string> fired;
            for (const auto& f : res.firings) fired.push_back(f.rule_id);
            for (const auto& x : c["expect_fired"]) {
                const std::string id = x.as<std::string>();
                if (!lr.rules.rule(id)) fail("expect_fired", id, "no such rule");
                else if (!res.fired(id)) {
                    fail("expect_fired", id, fmt::format("not fired: {}; fired: {}", why_not(id), join(fired)));
                }
            }
            for (const auto& x : c["expect_not_fired"]) {
                const std::string id = x.as<std::string>();
                if (!lr.rules.rule(id)) fail("expect_not_fired", id, "no such rule");
                else if (res.fired(id)) fail("expect_not_fired", "not " + id, "fired");
            }
            // expect_finding (English) and expect_finding_<lang> (the same case run in that language).
            auto check_findings = [&](const YAML::Node& expect, const inference_result& got_res, const std::string& what) {
                for (const auto& kv : expect) {
                    const std::string id = kv.first.as<std::string>();
                    std::string got = "(no finding)";
                    for (const auto& f : got_res.findings)
                        if (f.rule_id == id || f.id == id) got = f.text;
                    if (kv.second.IsMap() && kv.second["contains"]) {
                        const std::string want = kv.second["contains"].as<std::string>();
                        if (got.find(want) == std::string::npos) fail(what + " " + id, "contains: " + want, got);
                    } else {
                        const std::string want = kv.second.as<std::string>();
                        if (got != want) fail(what + " " + id, want, got);
                    }
                }
            };
            // expect_route_why: the why of the route entries a rule added ({rule_id: text} or {contains: ...}).
            auto check_route_why = [&](const YAML::Node& expect, const inference_result& got_res, const std::string& what) {
                for (const auto& kv : expect) {
                    const std::string id = kv.first.as<std::string>();
                    std::string got = "(no route entry)";
                    for (const auto& r : got_res.route)
                        if (r.from_rule == id) got = r.why;
                    const bool contains = kv.second.IsMap() && kv.second["contains"];
                    const std::string want = contains ? kv.second["contains"].as<std::string>() : kv.second.as<std::string>();
                    if (contains ? got.find(want) == std::string::npos : got != want)
                        fail(what + " " + id, (contains ? "contains: " : "") + want, got);
                }
            };
            check_findings(c["expect_finding"], res, "expect_finding");
            check_route_why(c["expect_route_why"], res, "expect_route_why");
            // expect_rationale: {rule: {contains: ...}} on the rationale of the rule's finding; expect_uncertain:
            // {rule: {contains: ...}}, a line among the report's uncertain lines (they carry no rule id).
            for (const auto& kv : c["expect_rationale"]) {
                const std::string id = kv.first.as<std::string>();
                const std::string want = kv.second["contains"].as<std::string>();
                std::string got = "(no finding)";
                for (const auto& f : res.findings)
                    if (f.rule_id == id || f.id == id) got = f.rationale;
                if (got.find(want) == std::string::npos) fail("expect_rationale " + id, "contains: " + want, got);
            }
            for (const auto& kv : c["expect_uncertain"]) {
                const std::string want = kv.second["contains"].as<std::string>();
                bool seen = false;
                for (const auto& u : res.uncertain) seen = seen || u.find(want) != std::string::npos;
                if (!seen) fail("expect_uncertain " + kv.first.as<std::string>(), "contains: " + want, join(res.uncertain));
            }
            for (const auto& lang : report_languages()) {
                const YAML::Node expect = c["expect_finding_" + lang];
                const YAML::Node expect_why = c["expect_route_why_" + lang];
                if (!expect && !expect_why) continue;
                inference_options io;
                io.lang = lang;
                io.explain_misses = false;
                inference_result res_lang;
                try {
                    res_lang = rerun(io);
                } catch (const std::exception& e) {
                    fail("run", "a fixpoint", e.what());
                }
                check_findings(expect, res_lang, "expect_finding_" + lang);
                check_route_why(expect_why, res_lang, "expect_route_why_" + lang);
            }
            for (const auto& kv : c["expect_overrides"]) {
                const std::string id = kv.first.as<std::string>();
                std::map<std::string, value> got;
                for (const auto& r : res.recommendations)
                    if (r.rule_id == id)
                        for (const auto& o : r.overrides) got[o.key] = o.val;
                for (const auto& ov : kv.second) {
                    const std::string key = ov.first.as<std::string>();
                    const value want = node_value(key, ov.second, vocab);
                    auto it = got.find(key);
                    if (it == got.end()) fail("expect_overrides " + id, key + " = " + want.to_string(), "not set");
                    else if (!(it->second == want))
                        fail("expect_overrides " + id, key + " = " + want.to_string(), key + " = " + it->second.to_string());
                }
            }
            if (c["expect_route"]) {
                std::vector<std::string> want, got;
                for (const auto& x : c["expect_route"]) want.push_back(x.as<std::string>());
                for (const auto& r : res.route)
                    if (std::find(got.begin(), got.end(), r.to) == got.end()) got.push_back(r.to);
                if (want != got) fail("expect_route", join(want), join(got));
            }
            for (const auto& kv : c["expect_facts"]) {
                const std::string fname = kv.first.as<std::string>();
                const value want = node_value(fname, kv.second, vocab);
                const fact* f = facts.get(fname);
                if (want.is_null()) {  // `name: null`: the fact is absent
                    if (f) fail("expect_facts", fname + " absent", f->val.to_string());
                } else if (!f) fail("expect_facts", fname + " = " + want.to_string(), "missing");
                else if (!(f->val == want)) fail("expect_facts", fname + " = " + want.to_string(), f->val.to_string());
            }
            if (c["expect_actions"]) {
                std::vector<std::string> want, got;
                for (const auto& x : c["expect_actions"]) want.push_back(x.as<std::string>());
                for (const auto& r : res.ranked())
                    if (std::find(got.begin(), got.end(), r.action) == got.end()) got.push_back(r.action);
                std::vector<std::string> prefix(got.begin(), got.begin() + std::min(got.size(), want.size()));
                if (want != prefix) fail("expect_actions", join(want), join(got));
            }
            // {rule: {action: {contains: text}}}: the text of that rule's recommendation of that action
            // ({rationale_contains: text}: its rationale, the report's "why").
            for (const auto& kv : c["expect_recommendation"]) {
                const std::string id = kv.first.as<std::string>();
                for (const auto& a : kv.second) {
                    const std::string action = a.first.as<std::string>();
                    const bool of_rationale = static_cast<bool>(a.second["rationale_contains"]);
                    const std::string want = a.second[of_rationale ? "rationale_contains" : "contains"].as<std::string>("");
                    std::string got = "(no recommendation)";
                    for (const auto& r : res.recommendations)
                        if (r.rule_id == id && r.action == action) {
                            got = of_rationale ? r.rationale : r.text;
                            break;
                        }
                    if (want.empty() || got.find(want) == std::string::npos)
                        fail("expect_recommendation " + id + " " + action, "contains: " + want, got);
                }
            }
            // {rule: level} (its first recommendation) or {rule: {action: level, ...}}.
            for (const auto& kv : c["expect_confidence"]) {
                const std::string id = kv.first.as<std::string>();
                std::vector<std::pair<std::string, std::string>> wants;
                if (kv.second.IsMap())
                    for (const auto& a : kv.second) wants.push_back({a.first.as<std::string>(), a.second.as<std::string>()});
                else
                    wants.push_back({"", kv.second.as<std::string>()});
                for (const auto& [action, want] : wants) {
                    std::string got = "(no recommendation)";
                    for (const auto& r : res.recommendations)
                        if (r.rule_id == id && (action.empty() || r.action == action)) {
                            got = r.confidence;
                            break;
                        }
                    if (got != want) fail("expect_confidence " + id + (action.empty() ? "" : " " + action), want, got);
                }
            }
            // {rule: size}: the device peak its first recommendation names (expect_device_peak).
            for (const auto& kv : c["expect_device_peak"]) {
                const std::string id = kv.first.as<std::string>();
                const std::optional<std::int64_t> want = parse_size(kv.second.as<std::string>(""));
                std::string got = "(no recommendation)";
                for (const auto& r : res.recommendations)
                    if (r.rule_id == id) {
                        got = r.expected_device_peak ? format_bytes(*r.expected_device_peak) : "(none)";
                        break;
                    }
                const std::string w = want ? format_bytes(*want) : "(a size)";
                if (got != w) fail("expect_device_peak " + id, w, got);
            }
            for (const auto& x : c["expect_not_actions"]) {
                const std::string a = x.as<std::string>();
                for (const auto& r : res.recommendations)
                    if (r.action == a) fail("expect_not_actions", "no " + a, "recommended by " + r.rule_id);
            }
            // Every case: the findings that fired together never contradict each other.
            for (const auto& [a, b] : res.contradictions)
                fail("consistency", "no contradicting findings", fmt::format("{} contradicts {}", a, b));
            if (todo) {
                ++rep.todo;
            } else if (fails.empty()) {
                ++rep.passed;
            } else {
                rep.failures.insert(rep.failures.end(), fails.begin(), fails.end());
            }
        }
    }
    return rep;
}

}  // namespace oomdx
