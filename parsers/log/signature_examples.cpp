#include "parsers/log/signature_examples.h"

#include <fmt/format.h>

#include "engine/core/vocabulary.h"

#include "engine/core/yaml_node.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "engine/core/bytes.h"
#include "engine/core/errors.h"
#include "engine/core/yaml_file.h"
#include "parsers/log/log_scanner.h"

namespace oomdx {

namespace fs = std::filesystem;
using log_detail::extract_fields;
using log_detail::field_list;
using log_detail::find_field;
using log_detail::plain_text;
using log_detail::verify_sig;

namespace {

// A declared log.* fact of text (rev38): what a report line names beside its verdict (a library).
bool log_text_fact(const std::string& name) {
    if (name.rfind("log.", 0) != 0) return false;
    const fact_decl* d = vocabulary::shipped().find(name);
    return d && d->kind == fact_kind::string;
}

std::string where(const std::string& file, int line) { return file + ":" + std::to_string(line); }

const signature* find_sig(const signature_set& sigs, const std::string& id) {
    for (const auto& s : sigs.all())
        if (s.id == id) return &s;
    return nullptr;
}

// The expected value of a field as the analyzer stores it: bytes, an integer, hundredths of a
// percent, or the string itself.
bool expected_number(const std::string& name, const std::string& text, std::int64_t& out) {
    if (is_size_field(name)) {
        auto v = parse_size(text);
        if (!v) return false;
        out = *v;
        return true;
    }
    try {
        size_t used = 0;
        if (name == "memory_pct") {
            const double d = std::stod(text, &used);
            out = std::llround(d * 100);
        } else {
            out = std::stoll(text, &used);
        }
        return used == text.size();
    } catch (...) {
        return false;
    }
}

std::string shown(const log_detail::field_val& v) { return v.is_str ? v.str : std::to_string(v.num); }

// A setting whose value is a parameter count (field unit billions).
bool counts_parameters(const signature& s) {
    return std::any_of(s.fields.begin(), s.fields.end(), [](const field_rule& r) { return r.billions; });
}

// A parameter count as the parser read it, for an example's `count:` ("6,738,415,616"; "20,430,400,000 rounded, 7
// digits"); empty for none.
std::string shown_count(const log_detail::field_val* v) {
    if (!v || v->rounded_digits < 0) return {};
    std::string n = std::to_string(v->num);
    for (int i = static_cast<int>(n.size()) - 3; i > 0; i -= 3) n.insert(static_cast<size_t>(i), ",");
    return v->rounded_digits == 0 ? n : fmt::format("{} rounded, {} digits", n, v->rounded_digits);
}

// The failure the scanner would record for this line: the best verified OOM signature
// (a fallback loses to a named look-alike), else the best verified not_oom, else a crash.
const signature* line_failure(const signature_set& sigs, const std::vector<int>& hits, std::string_view text) {
    const signature *oom = nullptr, *other = nullptr, *crash = nullptr;
    for (int h : hits) {
        const signature& s = sigs.all()[static_cast<size_t>(h)];
        if (s.kind == sig_kind::oom && (!oom || s.priority > oom->priority) && verify_sig(s, text)) oom = &s;
        if (s.kind == sig_kind::not_oom && (!other || s.priority > other->priority) && verify_sig(s, text)) other = &s;
        if (s.kind == sig_kind::crash && !crash && verify_sig(s, text)) crash = &s;
    }
    if (oom && oom->fallback && other) oom = nullptr;
    return oom ? oom : other ? other : crash;
}

}  // namespace

std::vector<signature_example> load_signature_examples(const std::vector<std::string>& dirs,
                                                       const signature_set& sigs) {
    std::vector<signature_example> out;
    std::vector<std::string> errors;
    static const std::set<std::string> keys{"sig", "line", "match", "wins", "fields", "from", "note", "sets", "count"};
    for (const auto& dir : dirs) {
        std::error_code ec;
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(dir, ec)) {
            const auto name = e.path().filename().string();
            if (e.is_regular_file() && (name.ends_with(".test.yaml") || name.ends_with(".test.yml")))
                files.push_back(e.path());
        }
        std::sort(files.begin(), files.end());
        for (const auto& p : files) {
            const std::string file = p.string();
            YAML::Node root;
            try {
                root = load_yaml_file(file);
            } catch (const input_error& e) {
                errors.push_back(e.what());
                continue;
            }
            if (!root || root.IsNull()) continue;
            if (!root.IsSequence()) {
                errors.push_back(file + ": expected a list of examples");
                continue;
            }
            for (const auto& n : root) {
                const int line = n.Mark().line + 1;
                auto err = [&](const YAML::Node& at, const std::string& msg) {
                    errors.push_back(where(file, at.Mark().line + 1) + ": " + msg);
                };
                if (!n.IsMap()) {
                    err(n, "each example must be a mapping");
                    continue;
                }
                bool bad = false;
                for (auto it = n.begin(); it != n.end(); ++it)
                    if (!keys.count(it->first.Scalar())) {
                        err(it->first, "unknown key '" + it->first.Scalar() + "'");
                        bad = true;
                    }
                signature_example ex;
                ex.file = file;
                ex.line = line;
                try {
                    if (!n["sig"] || !n["sig"].IsScalar() || !n["line"] || !n["line"].IsScalar()) {
                        err(n, "an example needs 'sig' and 'line'");
                        continue;
                    }
                    ex.sig = n["sig"].Scalar();
                    ex.text = n["line"].Scalar();
                    if (n["match"]) ex.match = n["match"].as<bool>();
                    if (n["wins"]) ex.wins = n["wins"].as<bool>();
                    if (n["from"]) ex.from = n["from"].Scalar();
                    if (n["sets"]) ex.sets = n["sets"].Scalar();
                    if (n["count"]) ex.count = n["count"].Scalar();
                } catch (const YAML::Exception& e) {
                    err(n, "bad value: " + yaml_error_text(e));
                    continue;
                }
                const signature* s = find_sig(sigs, ex.sig);
                if (!s) {
                    err(n["sig"], "unknown signature '" + ex.sig + "'");
                    bad = true;
                }
                if (s && n["count"] && !counts_parameters(*s)) {
                    err(n["count"], "'count' is for a parameter count's setting (field unit billions)");
                    bad = true;
                }
                if (auto f = n["fields"]) {
                    if (!f.IsMap()) {
                        err(f, "'fields' must be a mapping of field name to expected value");
                        continue;
                    }
                    for (auto it = f.begin(); it != f.end(); ++it) {
                        const std::string name = it->first.Scalar();
                        if (!is_field_name(name)) {
                            err(it->first, "unknown field name '" + name + "'");
                            bad = true;
                            continue;
                        }
                        if (s && !(s->prefix_rank && name == "rank") &&  // a prefix_rank line's rank
                            std::none_of(s->fields.begin(), s->fields.end(),
                                         [&](const field_rule& r) { return r.name == name; })) {
                            err(it->first, "signature '" + ex.sig + "' has no field '" + name + "'");
                            bad = true;
                            continue;
                        }
                        std::int64_t num = 0;
                        const std::string v = it->second.Scalar();
                        if (!is_string_field(name) && !expected_number(name, v, num)) {
                            err(it->second, "field '" + name + "': '" + v + "' is not a " +
                                                (is_size_field(name) ? "size" : "number"));
                            bad = true;
                            continue;
                        }
                        ex.fields[name] = v;
                    }
                    if (!ex.match && !ex.fields.empty()) {
                        err(f, "a look-alike (match: false) yields no fields");
                        bad = true;
                    }
                }
                if (!bad) out.push_back(std::move(ex));
            }
        }
    }
    if (!errors.empty()) {
        std::string msg;
        for (size_t i = 0; i < errors.size(); ++i) msg += (i ? "\n" : "") + errors[i];
        if (errors.size() > 1) msg += "\n(" + std::to_string(errors.size()) + " errors in the signature examples)";
        throw input_error(msg);
    }
    return out;
}

example_report run_signature_examples(const signature_set& sigs, const std::vector<signature_example>& examples) {
    example_report r;
    r.signatures = static_cast<int>(sigs.size());
    std::set<std::string> positive, negative;  // signatures with such an example
    std::vector<int> hits;
    std::vector<char> mark(sigs.size(), 0);
    std::string buf;
    for (const auto& ex : examples) {
        ++r.examples;
        const signature* s = find_sig(sigs, ex.sig);
        if (!s) continue;  // refused by the loader
        const std::string at = where(ex.file, ex.line) + ": " + ex.sig + ": ";
        hits.clear();
        sigs.candidates(ex.text, hits, mark);
        const int index = static_cast<int>(s - sigs.all().data());
        const bool literal = std::find(hits.begin(), hits.end(), index) != hits.end();
        const std::string_view text = plain_text(ex.text, buf);
        const bool matched = literal && verify_sig(*s, text);
        size_t before = r.failures.size();
        if (!ex.match) {
            if (matched) r.failures.push_back(at + "matches a line it must refuse");
            else if (std::any_of(s->literals.begin(), s->literals.end(),
                                 [&](const std::string& l) { return ex.text.find(l) != std::string::npos; }))
                negative.insert(ex.sig);
        } else if (!literal) {
            // an exclusive literal earlier in the line ends the scan before this signature's
            r.failures.push_back(at + "none of its literals is found in the line");
        } else if (!matched) {
            r.failures.push_back(at + "the literal is found but the pattern does not match");
        } else {
            const field_list got = extract_fields(*s, text);
            for (const auto& [name, want] : ex.fields) {
                const auto* g = find_field(got, name);
                if (!g) {
                    r.failures.push_back(at + "field " + name + ": expected " + want + ", got nothing");
                    continue;
                }
                std::int64_t num = 0;
                const bool same = g->is_str ? g->str == want : expected_number(name, want, num) && num == g->num;
                if (!same) r.failures.push_back(at + "field " + name + ": expected " + want + ", got " + shown(*g));
            }
            if (s->kind == sig_kind::setting) {
                const auto* v = find_field(got, "value");
                const std::string got_value = setting_value(*s, v ? (v->is_str ? v->str : std::to_string(v->num)) : "");
                if (got_value != ex.sets)
                    r.failures.push_back(at + "sets " + (got_value.empty() ? std::string("nothing") : s->fact + " = " + got_value) +
                                         ", expected " + (ex.sets.empty() ? std::string("nothing") : ex.sets) + " (sets:)");
                // a parameter count: the integer the line printed, and whether every digit (each such example says)
                if (counts_parameters(*s)) {
                    const std::string got_count = got_value.empty() ? std::string() : shown_count(v);
                    if (got_count != ex.count)
                        r.failures.push_back(at + "counts " + (got_count.empty() ? std::string("nothing") : got_count) +
                                             ", expected " + (ex.count.empty() ? std::string("nothing") : ex.count) +
                                             " (count:)");
                }
            }
            const bool failure_kind =
                s->kind == sig_kind::oom || s->kind == sig_kind::not_oom || s->kind == sig_kind::crash;
            if (failure_kind && ex.wins) {
                const signature* w = line_failure(sigs, hits, text);
                if (w != s)
                    r.failures.push_back(at + "the line is classified as " + (w ? w->id : std::string("nothing")) +
                                         " (a higher priority wins; or set wins: false)");
            }
            positive.insert(ex.sig);
        }
        if (r.failures.size() == before) ++r.passed;
    }
    // Cost gate: progress lines are most of a training log, so a pattern whose literals sit on
    // them runs on nearly every line (a step word as the literal of a failure report once cost the
    // whole scan 12 %). Counted on the progress signatures' own example lines.
    std::vector<std::string_view> progress_lines;
    for (const auto& ex : examples) {
        const signature* s = find_sig(sigs, ex.sig);
        if (s && ex.match && s->kind == sig_kind::progress) progress_lines.push_back(ex.text);
    }
    for (const auto& s : sigs.all()) {
        if (!s.regex || reads_raw_line(s) || progress_lines.size() < 20) continue;
        std::vector<std::size_t> per_literal(s.literals.size(), 0);
        std::size_t on = 0;  // progress lines holding any of its literals
        for (auto line : progress_lines) {
            bool any = false;
            for (std::size_t i = 0; i < s.literals.size(); ++i)
                if (line.find(s.literals[i]) != std::string_view::npos) {
                    ++per_literal[i];
                    any = true;
                }
            on += any;
        }
        if (on * 4 <= progress_lines.size()) continue;
        const auto worst = std::max_element(per_literal.begin(), per_literal.end()) - per_literal.begin();
        r.failures.push_back(fmt::format("{}: {}: its literals are on {} of {} progress example lines ('{}' on {}): "
                                         "its pattern would run on most lines of a log; take literals from the "
                                         "rarer part of the pattern",
                                         where(s.file, s.line), s.id, on, progress_lines.size(), s.literals[worst],
                                         per_literal[worst]));
    }
    for (const auto& s : sigs.all()) {
        const std::string at = where(s.file, s.line) + ": " + s.id + ": ";
        // a setting states a canonical config key, a model dimension the job printed (Megatron's arguments block), or a
        // declared log.* text fact (rev38: the library a release-regression report names)
        if (s.kind == sig_kind::setting && !vocabulary::shipped().is_override_key(s.fact) &&
            !(s.fact.rfind("model.", 0) == 0 && vocabulary::shipped().find(s.fact)) && !log_text_fact(s.fact))
            r.failures.push_back(at + "fact '" + s.fact + "' is neither a canonical config key (knowledge/facts, override: true), a declared model.* fact nor a declared log.* string fact");
        if (s.kind == sig_kind::report) {
            const fact_decl* d = vocabulary::shipped().find(s.fact);
            if (!d || d->kind != fact_kind::boolean)
                r.failures.push_back(at + "fact '" + s.fact + "' is not a declared bool fact (knowledge/facts)");
        }
        // a framework marker's name is a value log.framework allows, or every log it matches fails to diagnose
        if (!s.framework.empty())
            if (const fact_decl* d = vocabulary::shipped().find("log.framework");
                d && !d->values.empty() && std::find(d->values.begin(), d->values.end(), s.framework) == d->values.end())
                r.failures.push_back(at + "framework '" + s.framework + "' is not a value of log.framework (knowledge/facts)");
        if (!positive.count(s.id)) r.uncovered.push_back(at + "no example line that it matches");
        if ((s.regex || s.unless) && !negative.count(s.id))
            r.uncovered.push_back(at + "has a pattern but no look-alike example (match: false) holding one of its literals");
    }
    return r;
}

}  // namespace oomdx
