#include "parsers/log/log_signatures.h"

#include "engine/core/yaml_node.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/yaml_cache.h"
#include "engine/core/yaml_file.h"
#include "parsers/log/signature_cache.h"

namespace oomdx {

namespace fs = std::filesystem;

const char* sig_kind_name(sig_kind k) {
    switch (k) {
        case sig_kind::oom: return "oom";
        case sig_kind::not_oom: return "not_oom";
        case sig_kind::crash: return "crash";
        case sig_kind::progress: return "progress";
        case sig_kind::memory: return "memory";
        case sig_kind::context: return "context";
        case sig_kind::refine: return "refine";
        case sig_kind::phase: return "phase";
        case sig_kind::frame: return "frame";
        case sig_kind::framework: return "framework";
        case sig_kind::rank: return "rank";
        case sig_kind::world_size: return "world_size";
        case sig_kind::process_rank: return "process_rank";
        case sig_kind::launch: return "launch";
        case sig_kind::pressure: return "pressure";
        case sig_kind::growth: return "growth";
        case sig_kind::report: return "report";
        case sig_kind::nccl_peer: return "nccl_peer";
        case sig_kind::setting: return "setting";
        case sig_kind::model_config: return "model_config";
    }
    return "?";
}

namespace {

const std::vector<std::string> k_field_names{
    "requested_bytes", "capacity_bytes", "free_bytes", "allocated_bytes", "reserved_bytes",
    "reserved_unallocated_bytes", "process_in_use_bytes", "allowed_bytes", "active_bytes",
    "private_pool_bytes", "device_index", "device_kind", "error_code", "rank", "pid", "step",
    "total", "last_step", "memory", "memory_pct", "world_size", "epoch", "message_form", "message_hint", "value", "path",
    "step_peak_bytes", "print_peak_bytes"};

}  // namespace

bool is_field_name(std::string_view name) {
    return std::find(k_field_names.begin(), k_field_names.end(), name) != k_field_names.end();
}
std::string setting_value(const signature& s, const std::string& raw) {
    if (s.values.empty()) return raw;
    const std::pair<std::string, std::string>* hit = nullptr;
    for (const auto& kv : s.values)
        if (kv.first.size() == raw.size() &&
            std::equal(raw.begin(), raw.end(), kv.first.begin(), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
            }))
            hit = &kv;
    if (!hit)
        for (const auto& kv : s.values)
            if (kv.first == "*") hit = &kv;
    if (!hit) return {};
    std::string out = hit->second;
    if (const auto at = out.find("{value}"); at != std::string::npos) out.replace(at, 7, raw);
    return out;
}

bool is_size_field(std::string_view name) {
    return name == "memory" || (name.size() > 6 && name.substr(name.size() - 6) == "_bytes");
}
bool is_string_field(std::string_view name) {
    return name == "error_code" || name == "device_kind" || name == "message_form" || name == "message_hint" ||
           name == "value" || name == "path";
}

const std::vector<std::string>& oom_sources() {
    static const std::vector<std::string> v{"caching_allocator", "workspace", "hccl", "nccl",
                                            "cublas_cudnn_workspace", "driver_or_kernel",
                                            "host_oom", "unknown_oom"};
    return v;
}

const std::vector<std::string>& phase_names() {
    static const std::vector<std::string> v{"init", "model_load", "forward", "backward", "optimizer_step", "loss",
                                            "eval", "checkpoint_save", "checkpoint_load", "data_loading", "scoring",
                                            "adapter_merge"};
    return v;
}

namespace {

constexpr int k_max_short_line = 64;  // a max_line signature's lines: a plain search in each costs little

const std::map<std::string, sig_kind>& kind_names() {
    static const std::map<std::string, sig_kind> m{
        {"oom", sig_kind::oom},           {"not_oom", sig_kind::not_oom},
        {"crash", sig_kind::crash},       {"progress", sig_kind::progress},
        {"memory", sig_kind::memory},     {"context", sig_kind::context},
        {"refine", sig_kind::refine},     {"phase", sig_kind::phase},
        {"frame", sig_kind::frame},
        {"framework", sig_kind::framework}, {"rank", sig_kind::rank},
        {"world_size", sig_kind::world_size}, {"launch", sig_kind::launch},
        {"process_rank", sig_kind::process_rank},
        {"pressure", sig_kind::pressure}, {"growth", sig_kind::growth},
        {"report", sig_kind::report},
        {"nccl_peer", sig_kind::nccl_peer},
        {"setting", sig_kind::setting},   {"model_config", sig_kind::model_config}};
    return m;
}

const std::vector<std::string> k_stats{"allocated", "reserved", "max_allocated", "max_reserved",
                                       "active"};

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

RE2::Options re_options() {
    RE2::Options o;
    o.set_encoding(RE2::Options::EncodingLatin1);  // bytes in, never invalid UTF-8
    o.set_log_errors(false);
    o.set_max_mem(8 << 20);
    return o;
}

// Thrown inside one signature's parse after its error was recorded: that signature is skipped
// and the loader goes on with the next one, so every error of every file is reported.
struct skip_signature {};

struct loader {
    std::string file;
    std::vector<std::string>& errors;
    bool lazy = false;

    void error(const YAML::Node& n, const std::string& msg) const {
        errors.push_back(file + ":" + std::to_string(n.Mark().line + 1) + ": " + msg);
    }
    [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const {
        error(n, msg);
        throw skip_signature{};
    }

    std::unique_ptr<sig_regex> compile(const YAML::Node& n, int min_groups) const {
        if (!n.IsScalar()) fail(n, "pattern must be a string");
        auto re = std::make_unique<sig_regex>(n.Scalar(), file + ":" + std::to_string(n.Mark().line + 1), min_groups);
        if (lazy) return re;
        if (const std::string err = re->compile(); !err.empty()) fail(n, err);
        return re;
    }

    std::string str(const YAML::Node& m, const char* key) const {
        auto n = m[key];
        if (!n) return {};
        if (!n.IsScalar()) fail(n, std::string("'") + key + "' must be a string");
        return n.as<std::string>();
    }

    bool flag(const YAML::Node& m, const char* key) const {
        auto n = m[key];
        if (!n) return false;
        bool v = false;
        if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v))
            fail(n, std::string("'") + key + "' must be true or false");
        return v;
    }

    int integer(const YAML::Node& m, const char* key, int dflt) const {
        auto n = m[key];
        if (!n) return dflt;
        int v = 0;
        if (!n.IsScalar() || !YAML::convert<int>::decode(n, v)) fail(n, std::string("'") + key + "' must be an integer");
        return v;
    }

    // Every key is checked (all unknown keys of one signature are reported), then the values.
    signature parse(const YAML::Node& m) const {
        if (!m.IsMap()) fail(m, "each signature must be a mapping");
        static const std::vector<std::string> known{
            "id", "kind", "literal", "literals", "regex", "unless", "source", "device_kind", "framework",
            "phase", "statistic", "applies_to", "weak", "fallback", "per_step", "at_start", "multiples", "by_total", "unit_advance",
            "eval_counter", "run_start", "at_failure", "exclusive", "prefix_rank", "priority", "weight", "window", "fields", "note", "fact",
            "values", "needs_report", "elision", "max_line"};
        bool bad_key = false;
        for (auto it = m.begin(); it != m.end(); ++it) {
            auto k = it->first.Scalar();
            if (!contains(known, k)) {
                error(it->first, "unknown key '" + k + "'" +
                                     (k == "example" || k == "examples"
                                          ? " (example lines go in the .test.yaml file beside the signatures)"
                                          : ""));
                bad_key = true;
            }
        }
        signature s;
        s.file = file;
        s.line = m.Mark().line + 1;
        s.id = str(m, "id");
        if (s.id.empty()) fail(m, "signature without 'id'");
        if (bad_key) throw skip_signature{};
        auto kn = str(m, "kind");
        auto kit = kind_names().find(kn);
        if (kit == kind_names().end()) fail(m, "signature '" + s.id + "': unknown kind '" + kn + "'");
        s.kind = kit->second;
        s.max_line = integer(m, "max_line", 0);
        if (s.max_line < 0 || s.max_line > k_max_short_line)
            fail(m["max_line"], "signature '" + s.id + "': max_line must be 1 to " + std::to_string(k_max_short_line));
        auto add_lit = [&](const YAML::Node& n) {
            if (!n.IsScalar()) fail(n, "literal must be a string");
            auto t = n.as<std::string>();
            if (t.empty() || (t.size() < 4 && !s.max_line))
                fail(n, "literal '" + t + "' is shorter than 4 bytes (only a max_line signature's may be)");
            if (s.max_line && t.size() > static_cast<size_t>(s.max_line))
                fail(n, "literal '" + t + "' is longer than its max_line");
            s.literals.push_back(t);
        };
        if (m["literal"]) add_lit(m["literal"]);
        if (auto l = m["literals"]) {
            if (!l.IsSequence()) fail(l, "'literals' must be a list");
            for (const auto& x : l) add_lit(x);
        }
        if (s.literals.empty()) fail(m, "signature '" + s.id + "' needs a literal prefilter");
        if (m["regex"]) s.regex = compile(m["regex"], 0);
        if (m["unless"]) s.unless = compile(m["unless"], 0);
        s.source = str(m, "source");
        s.device_kind = str(m, "device_kind");
        s.framework = str(m, "framework");
        s.phase = str(m, "phase");
        s.statistic = str(m, "statistic");
        if ((s.kind == sig_kind::oom || s.kind == sig_kind::refine) && !contains(oom_sources(), s.source))
            fail(m, "signature '" + s.id + "': source '" + s.source + "' is not in the vocabulary");
        if (s.kind == sig_kind::phase && !contains(phase_names(), s.phase))
            fail(m, "signature '" + s.id + "': phase '" + s.phase + "' is not in the vocabulary");
        if (!s.statistic.empty() && !contains(k_stats, s.statistic))
            fail(m, "signature '" + s.id + "': unknown statistic '" + s.statistic + "'");
        if (s.kind == sig_kind::framework && s.framework.empty())
            fail(m, "signature '" + s.id + "': framework marker without 'framework'");
        if (auto a = m["applies_to"]) {
            if (!a.IsSequence()) fail(a, "'applies_to' must be a list");
            for (const auto& x : a) {
                if (!x.IsScalar() || !contains(oom_sources(), x.Scalar()))
                    fail(x, "signature '" + s.id + "': applies_to '" + x.Scalar() + "' is not a source");
                s.applies_to.push_back(x.Scalar());
            }
        }
        s.weak = flag(m, "weak");
        s.fallback = flag(m, "fallback");
        s.per_step = flag(m, "per_step");
        s.at_start = flag(m, "at_start");
        s.multiples = flag(m, "multiples");
        s.by_total = flag(m, "by_total");
        s.unit_advance = flag(m, "unit_advance");
        s.eval_counter = flag(m, "eval_counter");
        s.run_start = flag(m, "run_start");
        s.elision = flag(m, "elision");
        s.at_failure = flag(m, "at_failure");
        s.exclusive = flag(m, "exclusive");
        s.prefix_rank = flag(m, "prefix_rank");
        s.priority = integer(m, "priority", 0);
        s.weight = integer(m, "weight", 1);
        s.window = std::clamp(integer(m, "window", 30), 1, 1000);
        if (s.exclusive && s.kind != sig_kind::progress && s.kind != sig_kind::memory)
            fail(m, "signature '" + s.id + "': only progress and memory lines can be exclusive");
        if (s.prefix_rank && s.kind != sig_kind::context)
            fail(m, "signature '" + s.id + "': only context lines can give their prefix's rank");
        if ((s.weak || s.fallback) && s.kind != sig_kind::oom)
            fail(m, "signature '" + s.id + "': only oom signatures can be weak or a fallback");
        if ((s.per_step || s.at_start || s.multiples || s.by_total || s.unit_advance || s.eval_counter || s.run_start ||
             s.at_failure || s.elision) &&
            s.kind != sig_kind::progress)
            fail(m, "signature '" + s.id +
                        "': per_step, at_start, multiples, by_total, unit_advance, eval_counter, run_start, at_failure "
                        "and elision are for progress lines");
        if (s.elision && (s.run_start || s.per_step || s.at_start || s.by_total))
            fail(m, "signature '" + s.id + "': an elision line is no counter");
        if (auto f = m["fields"]) {
            if (!f.IsMap()) fail(f, "'fields' must be a mapping of name to pattern(s)");
            for (auto it = f.begin(); it != f.end(); ++it) {
                field_rule r;
                r.name = it->first.Scalar();
                if (!is_field_name(r.name))
                    fail(it->first, "signature '" + s.id + "': unknown field name '" + r.name + "'");
                const YAML::Node v = it->second;  // a copy: `it->` yields a temporary
                YAML::Node pats;
                pats.reset(v);
                if (v.IsMap()) {
                    for (auto k = v.begin(); k != v.end(); ++k)
                        if (k->first.Scalar() != "regex" && k->first.Scalar() != "unit")
                            fail(k->first, "field '" + r.name + "': unknown key '" + k->first.Scalar() + "'");
                    if (!v["regex"]) fail(v, "field '" + r.name + "' needs 'regex'");
                    pats.reset(v["regex"]);
                    if (v["unit"]) {
                        auto u = v["unit"].Scalar();
                        if (u == "B") r.unit = 1;
                        else if (u == "KiB") r.unit = 1024.0;
                        else if (u == "MiB") r.unit = 1024.0 * 1024;
                        else if (u == "GiB") r.unit = 1024.0 * 1024 * 1024;
                        else if (u == "k") r.unit = 1000.0;  // a count written in thousands ("13k-token")
                        else if (u == "count") r.unit = 1.0;  // a count with thousands separators ("1,024")
                        else if (u == "billions") r.billions = true;  // a parameter count, the fact in billions
                        else fail(v["unit"], "unit must be B, KiB, MiB, GiB, k, count or billions");
                        if (r.billions && r.name != "value")
                            fail(v["unit"], "field '" + r.name + "': billions is for a setting's value");
                        else if (!r.billions && is_size_field(r.name) == (u == "k" || u == "count"))
                            fail(v["unit"], "field '" + r.name + "': " + (u == "k" || u == "count" ? u + " is for counts, not sizes" : "not a size: no byte unit"));
                    }
                }
                if (pats.IsSequence()) {
                    for (const auto& p : pats) r.patterns.push_back(compile(p, 1));
                } else {
                    r.patterns.push_back(compile(pats, 1));
                }
                s.fields.push_back(std::move(r));
            }
        }
        s.fact = str(m, "fact");
        s.needs_report = str(m, "needs_report");
        if (!s.needs_report.empty() && (s.kind != sig_kind::setting || s.needs_report.rfind("log.", 0) != 0))
            fail(m, "signature '" + s.id + "': needs_report is for settings and names a log.* report fact");
        if (s.kind == sig_kind::report && s.fact.rfind("log.", 0) != 0)
            fail(m, "signature '" + s.id + "': a report needs 'fact' naming a log.* fact");
        if (auto v = m["values"]) {
            if (!v.IsMap()) fail(v, "'values' must be a mapping of printed text to canonical value");
            for (auto it = v.begin(); it != v.end(); ++it) {
                if (!it->second.IsScalar()) fail(it->second, "a value must be a string or a number");
                s.values.emplace_back(it->first.Scalar(), it->second.Scalar());
            }
        }
        if (s.kind == sig_kind::setting) {
            if (s.fact.empty()) fail(m, "signature '" + s.id + "': a setting needs 'fact' (the canonical key it states)");
            if (std::none_of(s.fields.begin(), s.fields.end(), [](auto& f) { return f.name == "value"; }) && s.values.empty())
                fail(m, "signature '" + s.id + "': a setting needs a 'value' field or a 'values' map");
        } else if (s.kind == sig_kind::report) {
            if (!s.values.empty()) fail(m, "signature '" + s.id + "': 'values' are for settings");
        } else if (!s.fact.empty() || !s.values.empty()) {
            fail(m, "signature '" + s.id + "': 'fact' and 'values' are for settings (and 'fact' for reports)");
        }
        if (s.by_total && std::none_of(s.fields.begin(), s.fields.end(), [](auto& f) { return f.name == "total"; }))
            fail(m, "signature '" + s.id + "': by_total needs a 'total' field");
        return s;
    }
};

}  // namespace

void sig_regex::ensure() const {
    std::call_once(m_once, [this] {
        // The empty group in front keeps RE2 (2022-06-01, Debian 12) from taking a literal prefix that its
        // alternation factoring made ("(?:进程|进行)被" -> "进" ...) for a search accelerator: that node loses the
        // Latin-1 flag, the prefix is searched for in UTF-8 and the pattern never matches. Same language.
        auto re = std::make_unique<RE2>("(?:)" + m_pattern, re_options());
        if (!re->ok()) m_error = "bad RE2 pattern: " + re->error();
        else if (re->NumberOfCapturingGroups() < m_min_groups) m_error = "pattern needs a capturing group: " + m_pattern;
        else m_re = std::move(re);
    });
}

std::string sig_regex::compile() const {
    ensure();
    return m_error;
}

const RE2& sig_regex::re() const {
    ensure();  // per matched line: no copy of the error text
    if (!m_re) throw input_error(m_where + ": " + m_error);
    return *m_re;
}

std::vector<std::string> signature_files(const std::string& dir, std::error_code& ec) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const auto name = e.path().filename().string();
        auto ext = e.path().extension().string();
        if (!e.is_regular_file() || (ext != ".yaml" && ext != ".yml")) continue;
        if (name.find(".test.") != std::string::npos) continue;  // example lines, see signature_examples.h
        files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    return std::vector<std::string>(files.begin(), files.end());
}

signature_set signature_set::load(const std::vector<std::string>& dirs, patterns when) {
    signature_set set;
    std::map<std::string, std::string> ids;
    std::vector<std::string> errors;
    for (const auto& dir : dirs) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) {
            errors.push_back(dir + ": signature directory not found");
            continue;
        }
        for (const fs::path p : signature_files(dir, ec)) {
            loader ld{p.string(), errors, when == patterns::lazy};
            YAML::Node root;
            try {
                root = load_yaml_file(p.string());
            } catch (const input_error& e) {
                errors.push_back(e.what());
                continue;
            }
            if (!root || root.IsNull()) continue;
            YAML::Node list = root.IsMap() ? root["signatures"] : root;
            if (!list || !list.IsSequence()) {
                errors.push_back(p.string() + ": expected a list of signatures");
                continue;
            }
            for (const auto& n : list) {
                try {
                    signature s = ld.parse(n);
                    auto [it, fresh] = ids.emplace(s.id, p.string());
                    if (!fresh) {
                        errors.push_back(p.string() + ":" + std::to_string(s.line) + ": duplicate signature id '" +
                                         s.id + "' (first in " + it->second + ")");
                        continue;
                    }
                    set.add(std::move(s));
                } catch (const skip_signature&) {
                } catch (const YAML::Exception& e) {
                    errors.push_back(p.string() + ":" + std::to_string(e.mark.line + 1) + ": " + yaml_error_text(e));
                }
            }
        }
    }
    if (!errors.empty()) {
        std::string msg;
        for (size_t i = 0; i < errors.size(); ++i) msg += (i ? "\n" : "") + errors[i];
        if (errors.size() > 1) msg += "\n(" + std::to_string(errors.size()) + " errors in the log signatures)";
        throw input_error(msg);
    }
    set.finish();
    return set;
}

const signature_set& signature_set::shipped() {
    static std::once_flag once;
    static std::unique_ptr<signature_set> set;
    std::call_once(once, [] {
        set = std::make_unique<signature_set>(
            load_signatures_cached({data_path("knowledge/log_signatures")}, yaml_cache_dir()));
    });
    return *set;
}

void signature_set::add(signature s) { m_sigs.push_back(std::move(s)); }

void signature_set::finish() {
    m_lits.clear();
    m_short.clear();
    m_short_max = 0;
    m_min_len = 255;
    for (const auto& sg : m_sigs)
        if (!sg.max_line)
            for (const auto& t : sg.literals) m_min_len = std::min(m_min_len, t.size());
    if (m_min_len == 255 || m_min_len < 4) m_min_len = 4;  // the loader refuses shorter literals
    const size_t m = m_min_len;
    m_shift.assign(65536, static_cast<std::uint8_t>(m - 1));
    m_next_shift.assign(65536, static_cast<std::uint8_t>(m - 1));
    m_head_filter.assign(1024, 0);
    std::vector<std::vector<int>> bucket_of(65536);
    for (size_t i = 0; i < m_sigs.size(); ++i) {
        if (const size_t ml = static_cast<size_t>(m_sigs[i].max_line)) {  // not in the multi-literal search
            for (const auto& t : m_sigs[i].literals) m_short.push_back({t, static_cast<int>(i), ml});
            m_short_max = std::max(m_short_max, ml);
            continue;
        }
        for (const auto& t : m_sigs[i].literals) {
            const auto* u = reinterpret_cast<const unsigned char*>(t.data());
            for (size_t q = 0; q + 1 < m; ++q) {
                const unsigned key = bigram(u + q);
                m_shift[key] = std::min<std::uint8_t>(m_shift[key], static_cast<std::uint8_t>(m - 2 - q));
                if (q + 2 < m)
                    m_next_shift[key] = std::min<std::uint8_t>(m_next_shift[key], static_cast<std::uint8_t>(m - 2 - q));
            }
            std::uint32_t head = 0;
            std::memcpy(&head, t.data(), 4);
            const unsigned h = head_hash(head);
            m_head_filter[h >> 6] |= std::uint64_t{1} << (h & 63);
            bucket_of[h].push_back(static_cast<int>(m_lits.size()));
            lit_ref lr{t, static_cast<int>(i), m_sigs[i].exclusive, head};
            const size_t tail_len = std::min<size_t>(t.size() - 4, 8);
            std::memcpy(&lr.tail, t.data() + 4, tail_len);
            lr.tail_mask = tail_len == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * tail_len)) - 1;
            m_lits.push_back(std::move(lr));
        }
    }
    m_bucket_begin.assign(65537, 0);
    m_bucket.clear();
    for (unsigned key = 0; key < 65536; ++key) {
        m_bucket_begin[key] = static_cast<std::uint32_t>(m_bucket.size());
        // the literals that do not end the scan first: one that starts at the same byte as an exclusive
        // literal is not after it ("step:  36%|" of a bar described "step" beside torchtitan's "step: ")
        for (const bool stop : {false, true})
            for (int li : bucket_of[key]) {
                const lit_ref& l = m_lits[static_cast<size_t>(li)];
                if (l.stop == stop) m_bucket.push_back({l.head, li});
            }
    }
    m_bucket_begin[65536] = static_cast<std::uint32_t>(m_bucket.size());
}

// The window slide, with the window length a constant where it is a common one (M > 0): the step,
// the offsets and the table pointers then stay in registers. A window whose bucket must be read
// goes to check_bucket (out of line, so its registers do not crowd the slide).
template <size_t M>
void signature_set::slide(const unsigned char* p, size_t n, std::vector<int>& hits, std::vector<char>& mark) const {
    const size_t m = M ? M : m_min_len;
    const std::uint8_t* shift = m_shift.data();
    const std::uint64_t* heads = m_head_filter.data();
    const std::uint8_t* next = m_next_shift.data();
    size_t pos = m - 2;  // start of the last bigram of the current window
    while (pos + 1 < n) {
        const unsigned key = bigram(p + pos);
        const unsigned step = shift[key];
        // the common case, a bigram of no literal window: a branch on the loaded step and a
        // constant step, which the processor takes ahead of the load (a step added from the table
        // waits for it); one byte load instead of two bit tests
        if (step == m - 1) {
            pos += m - 1;
            continue;
        }
        if (step != 0) {
            pos += step;
            continue;
        }
        const size_t start = pos - (m - 2);
        std::uint32_t head;
        std::memcpy(&head, p + start, 4);  // start + m <= n and m >= 4
        if (const unsigned h = head_hash(head); (heads[h >> 6] & (std::uint64_t{1} << (h & 63))) &&
                                                check_bucket(h, head, p + start, n - start, hits, mark.data()))
            return;  // a progress/memory line's literal: nothing more is looked for
        pos += next[key];
    }
}

// The literals that start at q (its first 4 bytes are `head`, hashed to `key`; `avail` bytes from
// q to the end of the text), the non-exclusive ones first, each group in literal order; true when one
// of them ends the scan (stop).
bool signature_set::check_bucket(unsigned key, std::uint32_t head, const unsigned char* q, size_t avail,
                                 std::vector<int>& hits, char* mark) const {
    const bucket_entry* bucket = m_bucket.data();
    const lit_ref* lits = m_lits.data();
    for (std::uint32_t b = m_bucket_begin[key], e = m_bucket_begin[key + 1]; b < e; ++b) {
        if (bucket[b].head != head) continue;
        const lit_ref& l = lits[bucket[b].lit];
        const size_t len = l.text.size();
        if (len > avail || mark[l.sig]) continue;
        if (avail >= 12) {  // bytes 4..11 in one load, the rest (if any) by memcmp
            std::uint64_t w;
            std::memcpy(&w, q + 4, 8);
            if ((w & l.tail_mask) != l.tail || (len > 12 && std::memcmp(q + 12, l.text.data() + 12, len - 12) != 0))
                continue;
        } else if (std::memcmp(q + 4, l.text.data() + 4, len - 4) != 0) {
            continue;
        }
        mark[l.sig] = 1;
        hits.push_back(l.sig);
        if (l.stop) return true;
    }
    return false;
}

void signature_set::candidates(std::string_view text, std::vector<int>& hits,
                               std::vector<char>& mark) const {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    const size_t first = hits.size();
    if (n <= m_short_max) {  // a short line: the whole-line markers, by a plain search
        for (const auto& l : m_short)
            if (n <= l.max_line && !mark[static_cast<size_t>(l.sig)] && text.find(l.text) != std::string_view::npos) {
                mark[static_cast<size_t>(l.sig)] = 1;
                hits.push_back(l.sig);
            }
    }
    if (n < m_min_len) {
        for (size_t i = first; i < hits.size(); ++i) mark[static_cast<size_t>(hits[i])] = 0;
        return;
    }
    switch (m_min_len) {
        case 4: slide<4>(p, n, hits, mark); break;
        case 5: slide<5>(p, n, hits, mark); break;
        case 6: slide<6>(p, n, hits, mark); break;
        case 7: slide<7>(p, n, hits, mark); break;
        case 8: slide<8>(p, n, hits, mark); break;
        default: slide<0>(p, n, hits, mark); break;
    }
    for (size_t i = first; i < hits.size(); ++i) mark[static_cast<size_t>(hits[i])] = 0;
}

}  // namespace oomdx
