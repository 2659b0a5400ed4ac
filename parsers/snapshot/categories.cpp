#include "parsers/snapshot/categories.h"

#include <re2/re2.h>
#include "engine/core/yaml_node.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "engine/core/atomic_file.h"
#include "engine/core/binary_io.h"
#include "engine/core/cache_key.h"
#include "engine/core/data_dir.h"
#include "engine/core/errors.h"
#include "engine/core/file_stamps.h"
#include "engine/core/text_file.h"
#include "engine/core/yaml_cache.h"
#include "engine/core/yaml_file.h"
#include "parsers/snapshot/text_pairs.h"

namespace oomdx::snap {

namespace {

const char* const k_builtin_names[] = {"parameter", "gradient", "optimizer_state", "activation",
                                       "communication", "attention", "moe", "loss", "other",
                                       "unknown"};

char lower_ascii(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }

std::string lowered(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = lower_ascii(c);
    return out;
}

// The text of one frame as the rules compare it, prepared once per frame instead of once per
// rule: the filename with a leading '/' (so "/torch/" matches "torch/nn/..."), and the name and
// that filename in lower case (ASCII only) for ignore_case rules, whose needles are lowered when
// loaded. Each of the four texts has its byte pairs (text_pairs), which skip most searches.
struct frame_view {
    const frame_text& f;
    bool python;
    std::string_view fn;  // the filename, with the leading '/'
    std::string slashed, name_lc, fn_lc;
    text_pairs name_p, fn_p, name_lc_p, fn_lc_p;

    explicit frame_view(const frame_text& t) : f(t), python(is_python_frame(t.filename)), fn(t.filename) {
        if (!fn.empty() && fn.front() != '/') {
            slashed.reserve(fn.size() + 1);
            slashed.push_back('/');
            slashed.append(fn);
            fn = slashed;
        }
        name_lc = lowered(t.name);
        fn_lc = lowered(fn);
        name_p = text_pairs(t.name);
        fn_p = text_pairs(fn);
        name_lc_p = text_pairs(name_lc);
        fn_lc_p = text_pairs(fn_lc);
    }
};

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

}  // namespace

struct category_rules::rule {
    int category = cat_other;
    bool icase = false;
    bool cpp = false;
    // With icase, the strings are lowered (ASCII) when the rule is loaded.
    std::vector<std::string> name_contains, name_equals, filename_contains;
    std::shared_ptr<re2::RE2> name_regex, filename_regex, any_regex;

    bool matches(const frame_view& v) const {
        if (!cpp && !v.python) return false;
        auto any_of = [&](const std::vector<std::string>& strs, auto&& pred) {
            if (strs.empty()) return true;
            for (const auto& s : strs)
                if (pred(s)) return true;
            return false;
        };
        const std::string_view name = icase ? std::string_view(v.name_lc) : v.f.name;
        const std::string_view fn = icase ? std::string_view(v.fn_lc) : v.fn;
        const text_pairs& name_p = icase ? v.name_lc_p : v.name_p;
        const text_pairs& fn_p = icase ? v.fn_lc_p : v.fn_p;
        if (!any_of(name_contains, [&](const std::string& s) { return name_p.contains(name, s); })) return false;
        if (!any_of(name_equals, [&](const std::string& s) { return name == s; })) return false;
        if (!any_of(filename_contains, [&](const std::string& s) { return fn_p.contains(fn, s); })) return false;
        auto re_hit = [](const std::shared_ptr<re2::RE2>& re, std::string_view text) {
            return re2::RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re);
        };
        const frame_text& f = v.f;
        if (name_regex && !re_hit(name_regex, f.name)) return false;
        if (filename_regex && !re_hit(filename_regex, f.filename)) return false;
        if (any_regex && !re_hit(any_regex, f.name) && !re_hit(any_regex, f.filename)) return false;
        return true;
    }
};

std::string normalize_filename(std::string_view filename) {
    std::string s(filename);
    std::replace(s.begin(), s.end(), '\\', '/');
    return s;
}

bool is_python_frame(std::string_view fn) {
    if (fn.empty() || fn == "??") return false;
    if (fn.size() >= 3 && fn.substr(fn.size() - 3) == ".py") return true;
    if (fn.front() == '<' && fn.back() == '>') return true;  // <string>, <frozen ...>
    if (fn.size() >= 4 && fn.substr(fn.size() - 4) == ".pyx") return true;
    return false;
}

const char* builtin_category_name(int c) {
    if (c < 0 || c >= cat_builtin_count) return "other";
    return k_builtin_names[c];
}

category_rules::category_rules() {
    for (const char* n : k_builtin_names) m_names.emplace_back(n);
}
category_rules::~category_rules() = default;
category_rules::category_rules(category_rules&&) noexcept = default;
category_rules& category_rules::operator=(category_rules&&) noexcept = default;

int category_rules::find(std::string_view name) const {
    for (std::size_t i = 0; i < m_names.size(); ++i)
        if (m_names[i] == name) return static_cast<int>(i);
    return -1;
}

int category_rules::intern(const std::string& name) {
    int i = find(name);
    if (i >= 0) return i;
    m_names.push_back(name);
    return static_cast<int>(m_names.size() - 1);
}

std::size_t category_rules::rule_count() const { return m_any.size() + m_frame.size(); }

void category_rules::add_rule(const std::shared_ptr<rule>& r, bool any) {
    (any ? m_any : m_frame).push_back(r);
}

void category_rules::prepend(const category_rules& user) {
    auto remap = [&](const std::vector<std::shared_ptr<rule>>& src) {
        std::vector<std::shared_ptr<rule>> out;
        for (const auto& r : src) {
            auto c = std::make_shared<rule>(*r);
            c->category = intern(user.m_names[r->category]);
            out.push_back(std::move(c));
        }
        return out;
    };
    auto any = remap(user.m_any);
    auto frame = remap(user.m_frame);
    any.insert(any.end(), m_any.begin(), m_any.end());
    frame.insert(frame.end(), m_frame.begin(), m_frame.end());
    m_any = std::move(any);
    m_frame = std::move(frame);
    for (const auto& s : user.m_site_skip) m_site_skip.push_back(s);
}

int category_rules::classify(const frame_text* frames, std::size_t n) const {
    if (n == 0) return cat_unknown;
    std::vector<frame_view> views;
    views.reserve(n);
    for (std::size_t i = 0; i < n; ++i) views.emplace_back(frames[i]);
    for (const auto& r : m_any)
        for (const auto& v : views)
            if (r->matches(v)) return r->category;
    for (const auto& v : views)
        for (const auto& r : m_frame)
            if (r->matches(v)) return r->category;
    return cat_other;
}

namespace {

// The pieces of classes() on a prepared frame.
std::uint64_t any_mask_of(const std::vector<std::shared_ptr<category_rules::rule>>& any, const frame_view& v) {
    std::uint64_t m = 0;
    for (std::size_t i = 0; i < any.size() && i < 64; ++i)
        if (any[i]->matches(v)) m |= std::uint64_t(1) << i;
    return m;
}

int frame_category_of(const std::vector<std::shared_ptr<category_rules::rule>>& frame, const frame_view& v) {
    for (const auto& r : frame)
        if (r->matches(v)) return r->category;
    return -1;
}

// `pairs`, when given, are those of a text that contains `fn` (the view's slashed filename).
bool site_ok(const std::vector<std::string>& skip, std::string_view fn, const text_pairs* pairs) {
    if (!is_python_frame(fn)) return false;
    for (const auto& s : skip)
        if ((pairs ? pairs->contains(fn, s) : contains(fn, s)) ||
            (s.size() > 1 && s.front() == '/' && fn.substr(0, s.size() - 1) == s.substr(1)))
            return false;
    // The standard library (but not site-packages) is not user code either.
    if (fn.find("/lib/python") != std::string_view::npos && fn.find("-packages/") == std::string_view::npos)
        return false;
    if (fn.front() == '<' && fn != "<stdin>" && fn != "<string>") return false;
    return true;
}

}  // namespace

std::uint64_t category_rules::any_mask(const frame_text& f) const {
    if (m_any.empty()) return 0;
    return any_mask_of(m_any, frame_view(f));
}

int category_rules::any_category(int bit) const { return m_any[bit]->category; }

int category_rules::frame_category(const frame_text& f) const {
    if (m_frame.empty()) return -1;
    return frame_category_of(m_frame, frame_view(f));
}

bool category_rules::site_candidate(const frame_text& f) const { return site_ok(m_site_skip, f.filename, nullptr); }

category_rules::frame_classes category_rules::classes(const frame_text& f) const {
    const frame_view v(f);
    frame_classes c;
    if (!m_any.empty()) c.any_mask = any_mask_of(m_any, v);
    if (!m_frame.empty()) c.category = frame_category_of(m_frame, v);
    c.site = site_ok(m_site_skip, f.filename, &v.fn_p);
    return c;
}

int category_rules::site_frame(const frame_text* frames, std::size_t n) const {
    int first_python = -1;
    for (std::size_t i = 0; i < n; ++i) {
        if (!is_python_frame(frames[i].filename)) continue;
        if (first_python < 0) first_python = static_cast<int>(i);
        if (site_candidate(frames[i])) return static_cast<int>(i);
    }
    if (first_python >= 0) return first_python;
    return n > 0 ? 0 : -1;
}

// ---- loading ---------------------------------------------------------------------------------

struct category_loader {
    const std::string& path;
    category_rules& out;

    [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) {
        throw input_error::at_line(path, n.Mark().line + 1, msg);
    }

    std::vector<std::string> strings(const YAML::Node& n) {
        std::vector<std::string> v;
        if (n.IsScalar()) {
            v.push_back(n.as<std::string>());
        } else if (n.IsSequence()) {
            for (const auto& e : n) {
                if (!e.IsScalar()) fail(e, "expected a string");
                v.push_back(e.as<std::string>());
            }
        } else {
            fail(n, "expected a string or a list of strings");
        }
        return v;
    }

    std::shared_ptr<re2::RE2> regex(const YAML::Node& n, bool icase) {
        if (!n.IsScalar()) fail(n, "expected a regular expression");
        re2::RE2::Options o;
        o.set_log_errors(false);
        o.set_case_sensitive(!icase);
        auto re = std::make_shared<re2::RE2>(n.as<std::string>(), o);
        if (!re->ok()) fail(n, "invalid regular expression: " + re->error());
        return re;
    }

    void rule(const YAML::Node& n, bool any) {
        if (!n.IsMap()) fail(n, "a rule must be a map");
        auto r = std::make_shared<category_rules::rule>();
        if (!n["category"] || !n["category"].IsScalar()) fail(n, "rule without 'category'");
        std::string cat = n["category"].as<std::string>();
        if (cat.empty()) fail(n, "empty category name");
        r->category = out.intern(cat);
        if (n["ignore_case"]) r->icase = n["ignore_case"].as<bool>(false);
        if (n["cpp"]) r->cpp = n["cpp"].as<bool>(false);
        bool has_matcher = false;
        for (const auto& kv : n) {
            std::string key = kv.first.as<std::string>();
            const YAML::Node& v = kv.second;
            if (key == "category" || key == "ignore_case" || key == "cpp" || key == "source" ||
                key == "desc")
                continue;
            has_matcher = true;
            if (key == "name_contains") r->name_contains = strings(v);
            else if (key == "name_equals") r->name_equals = strings(v);
            else if (key == "filename_contains") {
                r->filename_contains = strings(v);
                for (auto& s : r->filename_contains) s = normalize_filename(s);
            } else if (key == "name_regex") r->name_regex = regex(v, r->icase);
            else if (key == "filename_regex") r->filename_regex = regex(v, r->icase);
            else if (key == "regex") r->any_regex = regex(v, r->icase);
            else fail(kv.first, "unknown rule field '" + key + "'");
        }
        if (!has_matcher) fail(n, "rule for '" + cat + "' has no matcher");
        if (r->icase)
            for (auto* v : {&r->name_contains, &r->name_equals, &r->filename_contains})
                for (auto& x : *v) x = lowered(x);
        out.add_rule(r, any);
    }

    void rules(const YAML::Node& list, bool any) {
        if (!list) return;
        if (!list.IsSequence()) fail(list, "expected a list of rules");
        for (const auto& r : list) rule(r, any);
    }

    void load(const YAML::Node& root) {
        if (!root.IsMap()) fail(root, "expected a map (rules file or {category: regex} profile)");
        bool ours = root["frame"] || root["any_frame"] || root["categories"] || root["site_skip"];
        if (!ours) {
            // Mosaic custom profile: {category: regex}, regex searched in any frame's name or file.
            for (const auto& kv : root) {
                if (!kv.second.IsScalar()) fail(kv.second, "expected {category: regex}");
                auto r = std::make_shared<category_rules::rule>();
                r->category = out.intern(kv.first.as<std::string>());
                r->cpp = true;
                r->any_regex = regex(kv.second, false);
                out.add_rule(r, true);
            }
            return;
        }
        if (auto c = root["categories"]) {
            if (!c.IsSequence()) fail(c, "'categories' must be a list");
            for (const auto& e : c) {
                if (e.IsMap() && e["name"]) out.intern(e["name"].as<std::string>());
                else if (e.IsScalar()) out.intern(e.as<std::string>());
                else fail(e, "a category needs a name");
            }
        }
        rules(root["any_frame"], true);
        rules(root["frame"], false);
        if (auto s = root["site_skip"])
            for (auto& x : strings(s)) out.m_site_skip.push_back(normalize_filename(x));
    }
};

category_rules category_rules::parse(const std::string& text, const std::string& path) {
    category_rules out;
    YAML::Node root;
    try {
        root = load_yaml_cached(path, text);
    } catch (const YAML::Exception& e) {
        throw input_error::at_line(path, e.mark.line + 1, yaml_error_text(e));
    }
    category_loader{path, out}.load(root);
    return out;
}

category_rules category_rules::load(const std::string& path) {
    return parse(read_text_file(path, "category rules (YAML)"), path);
}

// ---- the stored copy of the shipped rules --------------------------------------------------------

namespace {

constexpr char k_stored_magic[8] = {'o', 'o', 'm', 'd', 'x', 'c', 'r', '1'};

void put_regex(std::string& out, const std::shared_ptr<re2::RE2>& re) {
    bin::put32(out, re ? 1 : 0);
    if (re) bin::put_text(out, re->pattern());
}

bool get_regex(bin::reader& in, bool icase, std::shared_ptr<re2::RE2>& re) {
    bool has = false;
    if (!in.flag(has)) return false;
    if (!has) return true;
    std::string pattern;
    if (!in.text(pattern)) return false;
    re2::RE2::Options o;
    o.set_log_errors(false);
    o.set_case_sensitive(!icase);  // as category_loader::regex
    re = std::make_shared<re2::RE2>(pattern, o);
    return re->ok();
}

}  // namespace

std::string category_rules::encode() const {
    std::string out;
    bin::put_texts(out, m_names);
    bin::put_texts(out, m_site_skip);
    for (const auto* list : {&m_any, &m_frame}) {
        bin::put32(out, static_cast<std::uint32_t>(list->size()));
        for (const auto& r : *list) {
            bin::put_int(out, r->category);
            bin::put32(out, r->icase ? 1 : 0);
            bin::put32(out, r->cpp ? 1 : 0);
            bin::put_texts(out, r->name_contains);
            bin::put_texts(out, r->name_equals);
            bin::put_texts(out, r->filename_contains);
            put_regex(out, r->name_regex);
            put_regex(out, r->filename_regex);
            put_regex(out, r->any_regex);
        }
    }
    return out;
}

std::optional<category_rules> category_rules::decode(std::string_view payload) {
    category_rules out;
    bin::reader in(payload);
    if (!in.texts(out.m_names) || !in.texts(out.m_site_skip)) return std::nullopt;
    for (auto* list : {&out.m_any, &out.m_frame}) {
        std::uint32_t n = 0;
        if (!in.count(n)) return std::nullopt;
        for (std::uint32_t i = 0; i < n; ++i) {
            auto r = std::make_shared<rule>();
            if (!in.small(r->category) || r->category < 0 || r->category >= static_cast<int>(out.m_names.size()) ||
                !in.flag(r->icase) || !in.flag(r->cpp) || !in.texts(r->name_contains) || !in.texts(r->name_equals) ||
                !in.texts(r->filename_contains) || !get_regex(in, r->icase, r->name_regex) ||
                !get_regex(in, r->icase, r->filename_regex) || !get_regex(in, r->icase, r->any_regex))
                return std::nullopt;
            list->push_back(std::move(r));
        }
    }
    if (!in.at_end()) return std::nullopt;
    return out;
}

// The shipped rules come from the cache directory when this build stored them for this text,
// else from the YAML (then stored). Decoding the stored rules takes no YAML tree: 1.87 M
// instructions on the rule packs' thread before (docs/snapshot.md, snap34).
category_rules category_rules::shipped() {
    namespace fs = std::filesystem;
    static const std::string path = data_path("knowledge/snapshot_categories.yaml");
    const std::string dir = yaml_cache_dir();
    if (dir.empty() || build_identity().empty()) return parse(read_text_file(path, "category rules (YAML)"), path);
    const auto key_of = [&](const file_stamps::stamp& f) {
        return fmt::format("oomdx category rules 1\n{}\n{}\n{}\n{:016x}\n", build_identity(), path, f.size, f.hash);
    };
    const std::string entry = fmt::format("{}/categories-{:016x}.bin", dir, cache_hash(path));
    // The file is read only when its stamp does not vouch for it (file_stamps.h).
    const std::int64_t taken = file_stamps::now_ns();
    const bin::entry_bytes stored_bytes(entry);
    const auto [known, body] = file_stamps::split(stored_bytes.view());
    auto hashed = file_stamps::hash_files({path}, known, taken);
    const auto store = [&](const file_stamps::stamp& f, std::string_view payload) {
        try {
            std::error_code ec;
            fs::create_directories(dir, ec);
            write_file_atomic(entry, file_stamps::join({{f}, taken}, bin::seal(k_stored_magic, key_of(f), payload, cache_hash)));
            bin::prune_entries(dir, "categories-", 16);  // one per data directory (worktrees share a cache)
        } catch (const std::exception&) {
            // A copy that cannot be written only costs the next run a parse.
        }
    };
    if (hashed)
        if (const auto payload = bin::unseal(body, k_stored_magic, key_of(hashed->stamps[0]), cache_hash))
            if (auto stored = decode(*payload)) {
                if (hashed->refresh) store(hashed->stamps[0], *payload);
                return std::move(*stored);
            }
    const std::string text = read_text_file(path, "category rules (YAML)");
    category_rules out = parse(text, path);
    if (hashed) {  // the stat taken before the read, the bytes parsed
        file_stamps::stamp f = hashed->stamps[0];
        f.size = text.size();
        f.hash = cache_hash(text);
        store(f, out.encode());
    }
    return out;
}

}  // namespace oomdx::snap
