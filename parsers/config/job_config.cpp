// Job configs: format detection, flattening, framework detection, canonical mapping.
#include "parsers/config/job_config.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <re2/re2.h>

#include "engine/core/dynamic_batch.h"
#include "engine/core/errors.h"
#include "engine/core/vocabulary.h"
#include "parsers/config/framework_adapter.h"
#include "parsers/config/py_expr.h"
#include "parsers/config/py_module.h"
#include "parsers/config/py_module_bases.h"
#include "parsers/config/hydra_args.h"
#include "parsers/config/shell_args.h"
#include "parsers/config/tokenizer_vocab.h"

namespace oomdx {

const fact* job_config::find(const std::string& name) const {
    for (auto it = facts.rbegin(); it != facts.rend(); ++it)
        if (it->name == name) return &*it;
    return nullptr;
}

namespace {

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The Python script a launch line runs (`torchrun ... pretrain_gpt.py`, `python tools/x.py`,
// `torchrun -m examples.inference.offline_inference`): the first literal word ending in .py, or
// the module after -m / --module that is not a launcher (`deepspeed --module openrlhf.cli.train_dpo`),
// as job.entry_script (basename; a module's last part + ".py"). A framework's console script whose
// subcommand names the script it runs (an adapter's `console_script`: `trl dpo` -> dpo.py,
// `swift infer` -> infer.py) gives that script.
std::string console_script(const std::string& word, const std::string& sub) {
    const std::string command = command_name(word);
    for (const auto& a : framework_adapter::shipped())
        if (std::string s = a.console_script_for(command, sub); !s.empty()) return s;
    return "";
}

void add_entry_script(std::vector<raw_entry>& entries, const shell_command& cmd, std::string_view text) {
    static const std::set<std::string> launchers = {"torch.distributed.run", "torch.distributed.launch",
                                                    "deepspeed.launcher.runner", "accelerate.commands.launch"};
    const auto& W = cmd.words;
    for (std::size_t i = 0; i < W.size(); ++i) {
        const shell_word& w = W[i];
        if (!w.literal) continue;
        std::string script;
        if (i + 1 < W.size() && W[i + 1].literal && !(script = console_script(w.text, W[i + 1].text)).empty()) {
            ++i;
        } else if ((w.text == "-m" || w.text == "--module") && i + 1 < W.size() && W[i + 1].literal) {
            const std::string& module = W[++i].text;
            if (launchers.count(module)) continue;
            script = module.substr(module.rfind('.') == std::string::npos ? 0 : module.rfind('.') + 1) + ".py";
        } else if (w.text.size() >= 4 && w.text.ends_with(".py") && w.text.rfind("-", 0) != 0) {
            script = std::filesystem::path(w.text).filename().string();
        } else {
            continue;
        }
        raw_entry e;
        e.key = "job.entry_script";
        e.val = value(script);
        e.text = W[i].text;
        e.line = W[i].line;
        e.excerpt = line_excerpt(text, W[i].line);
        entries.push_back(std::move(e));
        return;
    }
}

// A registry function whose model is `model_registry("8B")` of its own package
// (torchtitan/models/llama3/config_registry.py does `from . import model_registry`) names the
// flavor only; the package directory is the model's module (`llama3`), as `[model] name` was in
// TOML. Added as model.name unless the function names the model itself, and only when the file
// imports model_registry from its own package (a copy elsewhere names no module).
void name_registry_model(std::vector<raw_entry>& entries, const std::string& path, std::string_view text) {
    bool own = false;
    for (std::size_t at = text.find("from . import"); at != std::string_view::npos && !own; at = text.find("from . import", at + 1)) {
        const std::size_t eol = text.find('\n', at);
        own = text.substr(at, eol == std::string_view::npos ? std::string_view::npos : eol - at).find("model_registry") !=
              std::string_view::npos;
    }
    if (!own) return;
    const raw_entry* spec = nullptr;
    for (const auto& e : entries) {
        if (e.key == "model.name" || e.key == "model_spec.name") return;
        if (e.key == "model_spec" && e.container && e.val.is_string() && e.val.as_string() == "model_registry") spec = &e;
    }
    const std::string module = std::filesystem::absolute(std::filesystem::path(path)).parent_path().filename().string();
    if (!spec || module.empty()) return;
    raw_entry n;
    n.key = "model.name";
    n.val = value(module);
    n.text = module;
    n.line = spec->line;
    n.excerpt = spec->excerpt + "  (model_registry of the package " + module + ")";
    entries.push_back(std::move(n));
}

std::string detect_format(const std::string& file, std::string_view text) {
    const std::string ext = lower(std::filesystem::path(file).extension().string());
    if (ext == ".toml") return "toml";
    if (ext == ".json") return "json";
    if (ext == ".yaml" || ext == ".yml") return "yaml";
    if (ext == ".py") return "registry";
    if (ext == ".sh" || ext == ".bash" || ext == ".zsh") return "shell";
    std::size_t p = text.find_first_not_of(" \t\r\n");
    if (p != std::string_view::npos && text[p] == '{') return "json";
    int toml_sections = 0, yaml_keys = 0, lines = 0;
    std::size_t s = 0;
    while (s < text.size() && lines < 2000) {
        std::size_t e = text.find('\n', s);
        if (e == std::string_view::npos) e = text.size();
        std::string_view l = text.substr(s, e - s);
        while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
        while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.remove_suffix(1);
        if (l.size() > 2 && l.front() == '[' && l.back() == ']' && l.find(' ') == std::string_view::npos) ++toml_sections;
        if (!l.empty() && l.front() != '#' && l.find(": ") != std::string_view::npos && l.find("--") == std::string_view::npos &&
            l.find('=') == std::string_view::npos)
            ++yaml_keys;
        ++lines;
        s = e + 1;
    }
    if (toml_sections > 0) return "toml";
    if (yaml_keys > 2) return "yaml";
    return "shell";
}

std::string fallback_framework(const std::string& format) {
    if (format == "toml" || format == "registry") return "torchtitan";
    if (format == "module") return "mmengine";  // cfg67: an OpenMMLab config that signs no adapter is not XTuner
    if (format == "json") return "deepspeed";
    if (format == "yaml") return "llama_factory";
    return "megatron";
}

const framework_adapter& choose_adapter(const std::vector<raw_entry>& entries, const std::string& format,
                                        const std::string& hint, bool* guessed = nullptr,
                                        const std::vector<std::string>& launch = {}) {
    if (!hint.empty()) return framework_adapter::named(hint);
    const auto& all = framework_adapter::shipped();
    const framework_adapter* best = nullptr;
    int best_score = 0;
    for (const auto& a : all) {
        const int s = a.detect_score(entries, format, launch);
        if (s > best_score) {
            best = &a;
            best_score = s;
        }
    }
    if (best) return *best;
    // rev36: a launched script whose own flags name a batch, length or accumulation (own_script's keys) is read in
    // those flags, so the overrides speak them; its adapter signs nothing by detection
    if (format == "shell" || format == "cli") {
        const framework_adapter& own = framework_adapter::get("own_script");
        const bool script = std::any_of(launch.begin(), launch.end(), [](const std::string& w) {
            return w.size() > 3 && w.ends_with(".py") && w.rfind("-", 0) != 0;
        });
        const bool own_flags = std::any_of(entries.begin(), entries.end(), [&](const raw_entry& e) {
            // (read before any adapter, a flag keeps its dashes: `--batch_size`; the launcher's own are not among these)
            const std::size_t at = std::min(e.key.find_first_not_of('-'), e.key.size());
            if (e.key.rfind("job.", 0) == 0) return false;
            for (const auto* m : own.find(e.key.substr(at)))
                if (m->canonical.rfind("training.", 0) == 0) return true;
            return false;
        });
        if (script && own_flags) return own;
    }
    if (guessed) *guessed = true;
    return framework_adapter::get(fallback_framework(format));
}

struct translated {
    enum { ok, skip, bad } status = ok;
    value val;
};

translated coerce(value v, const std::string& canonical, const std::string& type) {
    const fact_decl* d = vocabulary::shipped().find(canonical);
    fact_kind k = d ? d->kind : fact_kind::any;
    if (type == "integer") k = fact_kind::integer;
    else if (type == "number") k = fact_kind::number;
    else if (type == "bool") k = fact_kind::boolean;
    else if (type == "string") k = fact_kind::string;
    translated t;
    switch (k) {
        case fact_kind::integer:
        case fact_kind::bytes: {
            std::int64_t whole = 0;
            if (v.is_integer()) t.val = v;
            else if (v.is_number() && whole_number(v.as_number(), whole))
                t.val = value(whole);
            else if (v.is_string()) {
                value w = typed_word(v.as_string());
                if (w.is_integer()) t.val = w;
                else t.status = translated::bad;
            } else t.status = translated::bad;
            break;
        }
        case fact_kind::number:
            if (v.is_numeric()) t.val = value(v.as_number());
            else if (v.is_string() && typed_word(v.as_string()).is_numeric()) t.val = value(typed_word(v.as_string()).as_number());
            else t.status = translated::bad;
            break;
        case fact_kind::boolean:
            if (v.is_bool()) t.val = v;
            else if (v.is_integer() && (v.as_integer() == 0 || v.as_integer() == 1)) t.val = value(v.as_integer() == 1);
            else if (v.is_string() && (lower(v.as_string()) == "true" || lower(v.as_string()) == "false"))
                t.val = value(lower(v.as_string()) == "true");
            else t.status = translated::bad;
            break;
        case fact_kind::string:
            if (v.is_string()) t.val = v;
            else if (v.is_null()) t.status = translated::skip;
            else t.val = value(value_key(v));
            break;
        case fact_kind::list:
            t.val = v.is_list() ? v : value(value::list_t{v});
            break;
        case fact_kind::any:
            t.val = v;
            break;
    }
    if (t.status == translated::ok && d) {
        try {
            vocabulary::shipped().check(canonical, t.val);
        } catch (const std::exception&) {
            t.status = translated::bad;
        }
    }
    return t;
}

// `rename`: the words of a list or comma-separated value, each renamed (or kept), joined with ','.
value renamed_words(const value& v, const std::map<std::string, std::string>& rename) {
    std::vector<std::string> words;
    auto split = [&](const std::string& s) {
        std::string cur;
        for (char c : s + ",") {
            if (c == ',' || c == ' ' || c == '\t' || c == '[' || c == ']' || c == '\'' || c == '"') {
                if (!cur.empty()) words.push_back(cur);
                cur.clear();
            } else cur += c;
        }
    };
    if (v.is_list())
        for (const auto& x : v.as_list()) split(value_key(x));
    else split(value_key(v));
    std::string out;
    for (const auto& w : words) {
        const auto it = rename.find(w);
        const std::string& r = it == rename.end() ? w : it->second;
        if (r.empty() || ("," + out + ",").find("," + r + ",") != std::string::npos) continue;
        out += (out.empty() ? "" : ",") + r;
    }
    return value(out);
}

translated translate(const raw_entry& e, const key_mapping& m) {
    if (!m.rename.empty() && !e.container) {
        raw_entry r = e;
        r.val = renamed_words(e.val, m.rename);
        key_mapping plain = m;
        plain.rename.clear();
        return translate(r, plain);
    }
    const value& v = e.val;
    // A table / object only means something to a flag mapping ("section present = on").
    if (e.container && !v.is_string() && !m.flag) return {translated::skip, {}};
    if (m.flag) {
        if (e.container && !v.is_string()) return coerce(*m.flag, m.canonical, m.type);
        if (v.is_bool() && e.text.empty()) return coerce(*m.flag, m.canonical, m.type);  // bare CLI flag
        if (v.is_bool() && m.values.empty()) {
            if (v.as_bool()) return coerce(*m.flag, m.canonical, m.type);
            if (m.flag->is_bool()) return coerce(value(!m.flag->as_bool()), m.canonical, m.type);
            return {translated::skip, {}};
        }
    }
    if (!m.match.empty() && !e.container) {
        const std::string text = value_key(v);
        for (const auto& pt : m.match) {
            std::string g[9];
            RE2::Arg args[9];
            const RE2::Arg* argp[9];
            const int n = pt.re->NumberOfCapturingGroups();
            for (int i = 0; i < n; ++i) {
                args[i] = &g[i];
                argp[i] = &args[i];
            }
            if (!RE2::FullMatchN(text, *pt.re, argp, n)) continue;
            if (pt.out.is_null()) return {translated::skip, {}};
            if (!pt.out.is_string()) return coerce(pt.out, m.canonical, m.type);
            // {1}..{9}: the groups; {value}: the whole value
            const std::string& tpl = pt.out.as_string();
            if (tpl == "{value}") return coerce(v, m.canonical, m.type);
            std::string out;
            for (std::size_t i = 0; i < tpl.size(); ++i) {
                if (tpl[i] == '{' && i + 2 < tpl.size() && tpl[i + 1] >= '1' && tpl[i + 1] <= '9' && tpl[i + 2] == '}' &&
                    tpl[i + 1] - '0' <= n) {
                    out += g[tpl[i + 1] - '1'];
                    i += 2;
                } else {
                    out += tpl[i];
                }
            }
            return coerce(typed_word(out), m.canonical, m.type);
        }
        if (m.values.empty()) return {translated::bad, {}};
    }
    if (!m.values.empty()) {
        std::string k = value_key(v);
        auto it = m.values.find(k);
        if (it == m.values.end()) it = m.values.find(lower(k));
        if (it == m.values.end()) it = m.values.find("*");
        if (it == m.values.end()) return {translated::bad, {}};
        if (it->second.is_null()) return {translated::skip, {}};
        if (it->second.is_string() && it->second.as_string() == "{value}") return coerce(v, m.canonical, m.type);
        return coerce(it->second, m.canonical, m.type);
    }
    if (!m.tokens.empty()) {
        std::vector<std::string> toks;
        auto split = [&](const std::string& s) {
            std::string cur;
            for (char c : s) {
                if (c == ' ' || c == ',' || c == '\t') {
                    if (!cur.empty()) toks.push_back(lower(cur));
                    cur.clear();
                } else cur += c;
            }
            if (!cur.empty()) toks.push_back(lower(cur));
        };
        if (v.is_list())
            for (const auto& x : v.as_list()) split(value_key(x));
        else split(value_key(v));
        for (const auto& [tok, canon] : m.tokens)
            if (std::find(toks.begin(), toks.end(), lower(tok)) != toks.end()) return coerce(canon, m.canonical, m.type);
        if (m.otherwise) {
            if (m.otherwise->is_null()) return {translated::skip, {}};
            return coerce(*m.otherwise, m.canonical, m.type);
        }
        return {translated::skip, {}};
    }
    if (e.container) return {translated::skip, {}};
    if (m.scale > 0 && v.is_numeric()) {
        const double d = v.as_number() * m.scale;
        std::int64_t whole = 0;
        return coerce(whole_number(d, whole) ? value(whole) : value(d), m.canonical, m.type);
    }
    return coerce(v, m.canonical, m.type);
}

// `section.no_field` (a bare flag) -> `section.field` = false.
std::optional<raw_entry> negated_flag(const raw_entry& e) {
    if (!e.val.is_bool() || !e.val.as_bool() || !e.text.empty()) return std::nullopt;
    const auto dot = e.key.rfind('.');
    if (dot == std::string::npos || e.key.size() < dot + 5) return std::nullopt;
    const std::string field = e.key.substr(dot + 1);
    if (field.rfind("no_", 0) != 0 && field.rfind("no-", 0) != 0) return std::nullopt;
    raw_entry neg = e;
    neg.key = e.key.substr(0, dot + 1) + field.substr(3);
    neg.val = value(false);
    neg.text = "false";
    return neg;
}

// How far an unread key is searched for a known one it may misspell: the most edits rule step1_config_key_misspelt
// can take (it decides by the key's length).
constexpr std::size_t k_near_key_search = 2;

std::string where(const std::string& file, std::int64_t line) { return fmt::format("{}:{}", file, line); }
// Where an entry was written: its own file (a `_base_` config, cfg67) or the job's.
std::string where(const job_config& job, const raw_entry& e) { return where(e.file.empty() ? job.file : e.file, e.line); }

// Dynamic batching (verl use_dynamic_bsz): the micro-batch is a token budget per device, so the
// sample micro-batch the config may also state is replaced by the sequences that budget holds
// (x the Ulysses degree before the split).
void derive_dynamic_batch(job_config& job) {
    const fact* dyn = job.find("training.dynamic_batch");
    const fact* tok = job.find("training.max_tokens_per_device");
    const fact* ctx = job.find("training.seq_len");
    if (!dyn || !dyn->val.is_bool() || !dyn->val.as_bool() || !tok || !ctx || !tok->val.is_integer() ||
        !ctx->val.is_integer() || ctx->val.as_integer() <= 0 || tok->val.as_integer() <= 0)
        return;
    const fact* sp = job.find("parallelism.context_parallel_degree");
    const std::int64_t cp = sp && sp->val.is_integer() && sp->val.as_integer() > 0 ? sp->val.as_integer() : 1;
    const std::int64_t tokens = tok->val.as_integer(), seq = ctx->val.as_integer();
    const std::int64_t n = dynamic_batch_sequences(tokens, cp, seq);
    provenance p;
    p.producer = "config.derived";
    p.file = job.file;
    p.line = tok->prov.line ? tok->prov.line : dyn->prov.line;
    p.excerpt = cp > 1 ? fmt::format("dynamic batch: {} tokens per device x {} sequence-parallel ranks / {} tokens per sequence",
                                     tokens, cp, seq)
                       : fmt::format("dynamic batch: {} tokens per device / {} tokens per sequence", tokens, seq);
    p.derived_from = {"training.dynamic_batch", "training.max_tokens_per_device", "training.seq_len"};
    std::erase_if(job.facts, [](const fact& f) { return f.name == "training.local_batch_size"; });
    job.facts.push_back(fact{"training.local_batch_size", value(n), std::move(p)});
}

void map_entries(job_config& job, const framework_adapter& a, const std::string& producer_file) {
    provenance base;
    base.producer = "config." + a.name();
    base.file = job.file;
    std::set<std::string> touched;  // canonical names set or non-literal
    // The newest `since` of the keys the config uses: the build is at least that new.
    const key_mapping* newest = nullptr;
    const raw_entry* newest_entry = nullptr;
    auto add = [&](const std::string& name, value v, const raw_entry& e, const std::string& join = {}) {
        if (!join.empty() && touched.count(name)) {
            // another part of the same list: appended to what this config already set
            for (auto it = job.facts.rbegin(); it != job.facts.rend(); ++it) {
                if (it->name != name || it->prov.producer != base.producer) continue;
                const std::string before = value_key(it->val), part = value_key(v);
                if (join == "+" && it->val.is_integer() && v.is_integer())  // parts of one number: added
                    it->val = value(it->val.as_integer() + v.as_integer());
                else
                    it->val = value(before.empty() ? part : part.empty() ? before : before + join + part);
                const std::string more = e.excerpt.empty() ? e.key + " " + e.text : e.excerpt;
                it->prov.excerpt = (it->prov.excerpt + " + " + more).substr(0, 400);
                return;
            }
        }
        provenance p = base;
        p.line = e.line;
        if (!e.file.empty()) p.file = e.file;
        p.excerpt = e.excerpt.empty() ? e.key + " " + e.text : e.excerpt;
        job.facts.push_back(fact{name, std::move(v), std::move(p)});
        touched.insert(name);
    };
    // rev36: an adapter may read the config's own file name (torchtune's *_single_device.yaml are the single-device
    // recipes' configs); a key the file sets wins over it
    if (!job.file.empty())
        for (const auto* m : a.find("job.config_file_name")) {
            raw_entry e;
            e.key = "job.config_file_name";
            e.text = std::filesystem::path(job.file).filename().string();
            e.val = value(e.text);
            e.excerpt = "config file name " + e.text;
            translated t = translate(e, *m);
            if (t.status == translated::ok && !t.val.is_null()) add(m->canonical, std::move(t.val), e);
        }
    const raw_entry* unread_near = nullptr;  // the unread key nearest a known one (rev43), with its measurements
    std::string unread_near_key;
    std::size_t unread_near_edits = 0;
    for (const auto& e : job.entries) {
        if (e.key == "job.entry_script") {  // any framework's launch line
            add(e.key, e.val, e);
            // est45: an adapter may read the script's name (OpenRLHF's train_dpo.py, TRL's dpo.py: training.stage)
            for (const auto* m : a.find(e.key)) {
                translated t = translate(e, *m);
                if (t.status == translated::ok) add(m->canonical, std::move(t.val), e, m->join);
            }
            continue;
        }
        // An environment variable the adapter maps (ms-swift's NPROC_PER_NODE) goes through its
        // key table like a flag; the others are env.* facts when declared.
        if (e.key.rfind("env.", 0) == 0 && a.find(e.key).empty()) {
            if (!vocabulary::shipped().find(e.key)) continue;  // other environment variables
            if (!e.literal) {
                job.non_literal.push_back(fmt::format("{} = {} ({})", e.key, e.text, where(job, e)));
                touched.insert(e.key);
                continue;
            }
            translated t = coerce(e.val, e.key, "");
            if (t.status == translated::ok) add(e.key, t.val, e);
            continue;
        }
        auto ms = a.find(e.key);
        if (ms.empty()) {
            // tyro's negative boolean flag: `--section.no_field` sets section.field to false.
            if (auto neg = negated_flag(e); neg && !a.find(neg->key).empty()) {
                for (const auto* m : a.find(neg->key)) {
                    translated t = translate(*neg, *m);
                    if (t.status == translated::ok) add(m->canonical, std::move(t.val), e);
                }
                continue;
            }
        }
        if (!e.literal && !e.container && ms.empty() && a.is_known(e.key)) {
            // Not mapped, but a value the user may expect us to have read: say so.
            job.non_literal.push_back(fmt::format("{} = {} ({})", e.key, e.text, where(job, e)));
            continue;
        }
        if (ms.empty()) {
            if (e.container || a.is_known(e.key)) continue;
            job.unknown_keys.push_back(fmt::format("{} ({})", e.key, where(job, e)));
            // rev43: the unread key nearest a known one (edits within k_near_key_search, the fewest relative to its
            // length, first on ties) is measured: the key, its nearest and the edits; rule step1_config_key_misspelt
            // decides whether it is a typo (enable_liger_kernl)
            std::size_t edits = 0;
            if (const std::string near = a.nearest_key(e.key, k_near_key_search, &edits); !near.empty() &&
                (!unread_near || edits * unread_near->key.size() < unread_near_edits * e.key.size())) {
                unread_near = &e;
                unread_near_key = near;
                unread_near_edits = edits;
            }
            continue;
        }
        for (const auto* m : ms)
            if (!m->since.empty() && (!newest || m->since > newest->since)) {
                newest = m;
                newest_entry = &e;
            }
        // "auto" (DeepSpeed under HF / LLaMA-Factory) is filled in at run time: not a literal.
        bool is_auto = e.val.is_string() && lower(e.val.as_string()) == "auto";
        for (const auto* m : ms)
            if (m->values.count("auto")) is_auto = false;
        if (!e.literal || is_auto) {
            job.non_literal.push_back(fmt::format("{} = {} ({})", e.key, e.text.empty() ? value_key(e.val) : e.text,
                                                  where(job, e)));
            for (const auto* m : ms) touched.insert(m->canonical);
            continue;
        }
        for (const auto* m : ms) {
            translated t = translate(e, *m);
            if (t.status == translated::ok) add(m->canonical, std::move(t.val), e, m->join);
            else if (t.status == translated::bad)
                job.unknown_keys.push_back(fmt::format("{} = {} ({}; value not understood for {})", e.key,
                                                       e.text.empty() ? value_key(e.val) : e.text,
                                                       where(job, e), m->canonical));
        }
    }
    if (unread_near && !job.find("config.unread_key")) {
        add("config.unread_key", value(unread_near->key), *unread_near);
        add("config.unread_key_nearest", value(unread_near_key), *unread_near);
        add("config.unread_key_edits", value(static_cast<std::int64_t>(unread_near_edits)), *unread_near);
    }
    if (newest && !job.find("job.framework_date")) {
        provenance p = base;
        p.line = newest_entry->line;
        p.excerpt = fmt::format("{} is read by {} builds since {}", newest->key, a.name(), newest->since);
        job.facts.push_back(fact{"job.framework_date_min", value(newest->since), std::move(p)});
    }
    // Derived: world size from the launcher.
    const fact* npn = job.find("job.nproc_per_node");
    const fact* nn = job.find("job.nnodes");
    if (npn && npn->val.is_integer() && !job.find("job.world_size")) {
        const std::int64_t nodes = nn && nn->val.is_integer() ? nn->val.as_integer() : 1;
        provenance p;
        p.producer = "config.derived";
        p.file = job.file;
        p.line = npn->prov.line;
        p.excerpt = fmt::format("nproc_per_node {} x nnodes {}", npn->val.as_integer(), nodes);
        p.derived_from = {"job.nproc_per_node", "job.nnodes"};
        job.facts.push_back(fact{"job.world_size", value(npn->val.as_integer() * nodes), p});
        touched.insert("job.world_size");
    }
    // torchtitan 2026-08+: the micro-batch is given in tokens; in sequences it is tokens / context.
    const fact* tok = job.find("training.tokens_per_microbatch");
    const fact* ctx = job.find("training.seq_len");
    if (tok && ctx && tok->val.is_integer() && ctx->val.is_integer() && ctx->val.as_integer() > 0 &&
        !touched.count("training.local_batch_size")) {
        provenance p;
        p.producer = "config.derived";
        p.file = job.file;
        p.line = tok->prov.line;
        p.excerpt = fmt::format("{} tokens per micro-batch / {} tokens per sequence", tok->val.as_integer(),
                                ctx->val.as_integer());
        p.derived_from = {"training.tokens_per_microbatch", "training.seq_len"};
        job.facts.push_back(fact{"training.local_batch_size",
                                 value(std::max<std::int64_t>(1, tok->val.as_integer() / ctx->val.as_integer())), p});
        touched.insert("training.local_batch_size");
    }
    // est69: a default of older builds, "canonical@key|key" in the adapter's defaults, applies when the config wrote
    // one of those keys (ms-swift 1.x / 2.x spellings: LoRA on the model's q/k/v, not 3.x's all-linear); it comes
    // before the plain default, which then gives way
    for (const auto& [name, v] : a.defaults()) {
        const auto at = name.find('@');
        if (at == std::string::npos || touched.count(name.substr(0, at))) continue;
        const std::string keys = "|" + name.substr(at + 1) + "|";
        const auto used = std::find_if(job.entries.begin(), job.entries.end(), [&](const raw_entry& e) {
            const std::string k = e.key.substr(std::min(e.key.find_first_not_of('-'), e.key.size()));
            return !k.empty() && keys.find("|" + k + "|") != std::string::npos;
        });
        if (used == job.entries.end()) continue;
        provenance p;
        p.producer = "config." + a.name() + ".spelling_default";
        p.file = a.file();
        p.excerpt = fmt::format("{} default of the builds that read {} (the config writes it: {})", a.name(),
                                name.substr(at + 1), used->excerpt.empty() ? used->key : used->excerpt);
        job.facts.push_back(fact{name.substr(0, at), v, p});
        touched.insert(name.substr(0, at));
    }
    // Framework defaults for what the config leaves unset.
    for (const auto& [name, v] : a.defaults()) {
        if (touched.count(name) || name.find('@') != std::string::npos) continue;
        provenance p;
        p.producer = "config." + a.name() + ".default";
        p.file = a.file();
        p.excerpt = fmt::format("{} default when the config does not set it", a.name());
        job.facts.push_back(fact{name, v, p});
    }
    derive_dynamic_batch(job);
    derive_tokenizer_vocab(job);  // est63
    (void)producer_file;
}

void finish(job_config& job, const framework_adapter& a) {
    job.framework = a.name();
    map_entries(job, a, job.file);
    provenance p;
    p.producer = "config." + a.name();
    p.file = job.file;
    p.excerpt = "format " + job.format;
    std::vector<fact> head;
    head.push_back(fact{"job.framework", value(a.name()), p});
    head.push_back(fact{"job.config_file", value(job.file), p});
    value::list_t unknown, nonlit;
    for (const auto& u : job.unknown_keys) unknown.push_back(value(u));
    for (const auto& n : job.non_literal) nonlit.push_back(value(n));
    head.push_back(fact{"job.unknown_keys", value(std::move(unknown)), p});
    head.push_back(fact{"job.non_literal_keys", value(std::move(nonlit)), p});
    job.facts.insert(job.facts.begin(), head.begin(), head.end());
}

// Operands such as LLaMA-Factory's `key=value` overrides, and Hydra's `+key=value` / `++key=value` (set, as a
// plain key is) and `~key` (deleted: the key goes to `removed`, and the base config's value with it; cfg67).
void add_dotlist(std::vector<raw_entry>& entries, const std::vector<shell_word>& operands, std::string_view text,
                 std::vector<std::string>* removed = nullptr) {
    for (const auto& w : operands) {
        if (w.text.rfind("-", 0) == 0) continue;
        std::string k, v;
        bool removes = false;
        if (!hydra_override(w.text, k, v, removes)) continue;
        if (k.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != std::string::npos)
            continue;
        if (removes) {
            if (removed) removed->push_back(k);
            std::erase_if(entries, [&](const raw_entry& e) { return e.key == k || e.key.rfind(k + ".", 0) == 0; });
            continue;
        }
        raw_entry e;
        e.key = k;
        e.text = v;
        e.literal = w.literal;
        e.val = w.literal ? typed_word(e.text) : value();
        e.line = w.line;
        e.excerpt = line_excerpt(text, w.line);
        entries.push_back(std::move(e));
    }
}

std::vector<raw_entry> split_args(const std::vector<shell_word>& words, std::string_view text,
                                  const framework_adapter* a, std::vector<shell_word>* operands) {
    return args_to_entries(words, text, [a](const std::string& f) { return a ? a->takes_value(f) : -1; }, operands);
}

}  // namespace

namespace {

job_config parse_job_config_depth(const std::string& path_spec, const std::string& framework_hint, int depth,
                                  const framework_adapter* forced = nullptr);

// A file named inside a config: as written (relative to the working directory) or relative
// to the config's own directory.
// A file a config names: as given, beside the config, or (a relative path, as the launch
// directory saw it) under one of the config's parent directories: LLaMA-Factory's
// examples/train_full/x.yaml names examples/deepspeed/ds_z3_config.json from the repository root.
std::optional<std::string> resolve_reference(const std::string& ref, const std::string& from) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (ref.empty() || ref.size() > 4096) return std::nullopt;
    if (fs::is_regular_file(ref, ec)) return ref;
    const fs::path beside = fs::path(from).parent_path() / ref;
    if (fs::is_regular_file(beside, ec)) return beside.string();
    if (fs::path(ref).is_absolute()) return std::nullopt;
    std::error_code abs_ec;
    fs::path dir = fs::absolute(from, abs_ec).parent_path();
    for (int up = 0; up < 6 && !abs_ec && dir.has_relative_path(); ++up) {
        dir = dir.parent_path();
        if (const fs::path p = dir / ref; fs::is_regular_file(p, ec)) return p.string();  // (ec: not found)
    }
    return std::nullopt;
}

// A file the config names was not found: added to job.missing_files (one list, in the order met).
void add_missing_file(job_config& job, const std::string& name, const provenance& p) {
    for (auto& f : job.facts)
        if (f.name == "job.missing_files" && f.val.is_list()) {
            value::list_t l = f.val.as_list();
            l.push_back(value(name));
            f.val = value(l);
            return;
        }
    job.facts.push_back(fact{"job.missing_files", value(value::list_t{value(name)}), p});
}

// The DeepSpeed JSON a trainer config names could not be read: the settings of the framework's
// own file of that name when it ships one, otherwise a note that the file is missing.
// A file the job names is not here: the settings of the file the framework ships under that name, if any, below
// what the job itself sets (its adapter's defaults give way).
void apply_shipped_file(job_config& job, const framework_adapter& a, const std::string& named, provenance p) {
    const std::string name = std::filesystem::path(named).filename().string();
    if (const auto* shipped = a.shipped_file(name)) {
        p.producer = "config." + a.name() + ".shipped_file";
        p.excerpt = fmt::format("{} not found here: the settings of the file {} ships under that name", named, a.name());
        for (const auto& [key, v] : *shipped) {
            std::erase_if(job.facts, [&](const fact& f) { return f.name == key && f.prov.from_default(); });
            if (!job.find(key)) job.facts.push_back(fact{key, v, p});
        }
    }
}

void note_missing_deepspeed(job_config& job, const framework_adapter& a, const fact& ds) {
    provenance p = ds.prov;
    p.derived_from = {"job.deepspeed_config"};
    apply_shipped_file(job, a, ds.val.as_string(), p);
    p.producer = "config." + a.name();
    p.excerpt = ds.prov.excerpt;
    add_missing_file(job, ds.val.as_string(), p);
}

// Hydra `~key` on the line: the base config's value is deleted, and the framework's default (if any) stands.
void remove_base_keys(job_config& base, const std::vector<std::string>& keys) {
    if (keys.empty()) return;
    const auto before = base.entries.size();
    std::erase_if(base.entries, [&](const raw_entry& e) {
        for (const auto& k : keys)
            if (e.key == k || e.key.rfind(k + ".", 0) == 0) return true;
        return false;
    });
    if (base.entries.size() == before) return;
    base.facts.clear();
    base.unknown_keys.clear();
    base.non_literal.clear();
    finish(base, framework_adapter::get(base.framework));
}

job_config with_base_job(job_config base, const job_config& over) {
    remove_base_keys(base, over.removed_keys);
    // A launch line no adapter knows, naming a config file that one does: the file tells the framework,
    // and the fallback's defaults are not the line's settings.
    if (over.framework_guessed) {
        job_config said = over;
        std::erase_if(said.facts, [](const fact& f) { return f.prov.from_default(); });
        merge_job_config(base, said);
        for (auto& f : base.facts)
            if (f.name == "job.config_file") f = *over.find("job.config_file");
        base.file = over.file;
        return base;
    }
    merge_job_config(base, over);
    base.framework = over.framework;
    base.file = over.file;
    base.format = over.format;
    for (auto& f : base.facts) {
        if (f.name == "job.framework") f = *over.find("job.framework");
        if (f.name == "job.config_file") f = *over.find("job.config_file");
    }
    return base;
}

}  // namespace

job_config parse_job_config(const std::string& path_spec, const std::string& framework_hint) {
    return parse_job_config_depth(path_spec, framework_hint, 0);
}

job_config parse_job_config(const std::string& path, const framework_adapter& adapter) {
    return parse_job_config_depth(path, "", 0, &adapter);
}

namespace {

job_config parse_job_config_depth(const std::string& path_spec, const std::string& framework_hint, int depth,
                                  const framework_adapter* forced) {
    namespace fs = std::filesystem;
    job_config job;
    // A file no adapter recognizes is read by its format's fallback, marked as a guess.
    auto choose = [&](const std::vector<raw_entry>& entries, const std::string& format,
                      const std::vector<std::string>& launch = {}) -> const framework_adapter& {
        return forced ? *forced : choose_adapter(entries, format, framework_hint, &job.framework_guessed, launch);
    };
    auto with_base = [&](const std::string& ref, const job_config& over, const std::string& fw) -> job_config {
        if (depth > 0) return over;
        return with_base_job(parse_job_config_depth(ref, over.framework_guessed ? "" : fw, depth + 1), over);
    };
    // rev39: a config file named on a launch line, under the line's settings. The launcher's config is read in the line's
    // adapter; a recipe the script reads (TRL's --config) by its own keys, and its framework names the job where the
    // line's is only the trainer's (hf_trainer: a GRPO recipe is trl's).
    auto with_recipe_base = [&](const std::pair<std::string, bool>& ref, const job_config& over,
                                const framework_adapter& line) -> job_config {
        if (!ref.second) return with_base_job(parse_job_config_depth(ref.first, over.framework_guessed ? "" : line.name(), depth + 1), over);
        job_config recipe = parse_job_config_depth(ref.first, "", depth + 1);
        const bool own = !recipe.framework_guessed && recipe.framework != over.framework && over.framework == "hf_trainer";
        job_config out = with_base_job(recipe, over);
        if (own) {
            out.framework = recipe.framework;
            for (auto& f : out.facts)
                if (f.name == "job.framework") f.val = value(recipe.framework);
        }
        return out;
    };
    // HF / LLaMA-Factory pointing at a DeepSpeed JSON (in the config, or as --deepspeed on a launch line): read it
    // too; the trainer's values win.
    auto with_deepspeed = [&](job_config& j, const framework_adapter& a, const std::string& from) -> job_config {
        if (const fact* ds = j.find("job.deepspeed_config"); ds && ds->val.is_string() && j.framework != "deepspeed") {
            if (auto ref = resolve_reference(ds->val.as_string(), from)) {
                if (depth > 0) return j;
                return with_base_job(parse_job_config_depth(*ref, "deepspeed", depth + 1), j);
            }
            const fact copy = *ds;
            note_missing_deepspeed(j, a, copy);
        }
        return j;
    };
    std::error_code ec;
    std::string path = path_spec, function;
    if (!fs::exists(path, ec)) {
        for (char sep : {'#', ':'}) {
            const auto p = path_spec.rfind(sep);
            if (p != std::string::npos && p > 0 && fs::exists(path_spec.substr(0, p), ec)) {
                path = path_spec.substr(0, p);
                function = path_spec.substr(p + 1);
                break;
            }
        }
    }
    if (fs::is_directory(path, ec)) throw input_error::in_file(path, "is a directory, expected a config file");
    job.file = path;
    const std::string text = read_config_file(path);
    job.format = detect_format(path, text);
    if (job.format == "toml") job.entries = flatten_toml(text, path);
    else if (job.format == "json") job.entries = flatten_json(text, path);
    else if (job.format == "yaml") job.entries = flatten_yaml(text, path);
    else if (job.format == "registry") {
        py_source src(text, path);
        if (function.empty()) {
            auto fns = src.functions();
            std::vector<std::string> candidates;
            for (const auto& f : fns)
                if (f.rfind("_", 0) != 0) candidates.push_back(f);
            if (candidates.size() != 1 && looks_like_py_module(src, !candidates.empty())) {
                // mmcfg: an mmengine-style module (XTuner, MMDetection): its top-level assignments, read as data
                py_module m = read_py_module_with_bases(src);
                job.format = "module";
                job.entries = std::move(m.entries);
                const framework_adapter& adapter = choose(job.entries, job.format);
                finish(job, adapter);
                for (auto& s : m.skipped)
                    if (std::find(job.non_literal.begin(), job.non_literal.end(), s) == job.non_literal.end())
                        job.non_literal.push_back(std::move(s));
                for (auto& f : job.facts)
                    if (f.name == "job.non_literal_keys") {
                        value::list_t nonlit;
                        for (const auto& n : job.non_literal) nonlit.push_back(value(n));
                        f.val = value(std::move(nonlit));
                    }
                return job;
            }
            if (candidates.size() != 1) {
                std::string names;
                for (const auto& f : candidates) names += (names.empty() ? "" : ", ") + f;
                throw input_error::in_file(path, fmt::format("name the config function as {}:NAME (functions: {})", path,
                                                             names.empty() ? "none" : names));
            }
            function = candidates[0];
        }
        job.entries = src.function_result(function);
        job.function = function;
        name_registry_model(job.entries, path, text);
    } else {
        shell_script sh = parse_shell(text, path);
        const shell_command* cmd = launch_command(sh);
        std::vector<shell_word> operands;
        if (cmd) job.entries = split_args(cmd->words, text, nullptr, &operands);
        add_dotlist(job.entries, operands, text);
        std::vector<std::string> launch;
        if (cmd)
            for (const auto& w : cmd->words) launch.push_back(w.text);
        const framework_adapter& a0 = choose(job.entries, "shell", launch);
        job.entries.clear();
        operands.clear();
        if (cmd) job.entries = split_args(cmd->words, text, &a0, &operands);
        add_dotlist(job.entries, operands, text, &job.removed_keys);
        if (cmd) add_entry_script(job.entries, *cmd, text);
        for (const auto& e : sh.env) job.entries.push_back(e);
        if (cmd)  // a prefix of another command (`NPROC_PER_NODE=1 swift export`) is not the job's
            for (const auto& e : cmd->env) job.entries.push_back(e);
        finish(job, a0);
        // A config file named on the launch line is the base; the line's flags override it.
        for (const auto& w : operands) {
            const std::string ext = lower(fs::path(w.text).extension().string());
            // cfg67: a framework whose configs are Python modules (`xtuner train cfg.py`) names its config as a .py
            const bool module = ext == ".py" && a0.reads("module") && !a0.formats().empty();
            if (!w.literal || (ext != ".yaml" && ext != ".yml" && ext != ".json" && ext != ".toml" && !module)) continue;
            if (auto ref = resolve_reference(w.text, path)) {
                if (!module) return with_base(*ref, job, a0.name());
                job_config out = with_base(*ref, job, a0.name());
                return with_deepspeed(out, a0, path);  // `--deepspeed ds.json` beside it
            }
        }
        // cfg67: ... and so is the primary config Hydra's --config-path / --config-name name (NeMo 1.x, verl); one that
        // is not here is listed in job.missing_files, the line's operands standing alone
        bool hydra = false;
        const hydra_config_ref href = cmd ? hydra_config_of(cmd->words, hydra) : hydra_config_ref{};
        if (hydra) {
            std::string script;  // the script declaring @hydra.main: a relative --config-path is read from its directory
            for (const auto& w : cmd->words)
                if (w.literal && w.text.ends_with(".py") && w.text.rfind("-", 0) != 0) {
                    script = w.text;
                    break;
                }
            for (const auto& c : hydra_config_candidates(href, script))
                if (auto ref = resolve_reference(c, path)) return with_base(*ref, job, a0.name());
            if (depth == 0) {
                provenance p;
                p.producer = "config." + a0.name();
                p.file = path;
                p.line = href.line;
                p.excerpt = href.excerpt;
                apply_shipped_file(job, a0, href.name, p);
                add_missing_file(job, hydra_config_candidates(href, script).front(), p);
            }
        }
        // ... and so is one a launcher flag names (`--job.config_file`, accelerate's `--config_file`)
        auto names_config = [&](const raw_entry& e) {
            if (e.key == "job.config_file") return true;
            for (const key_mapping* m : a0.find(e.key))
                if (m->canonical == "job.config_file") return true;
            return false;
        };
        // rev39: the launcher's config (accelerate's --config_file) and the script's own (TRL's --config recipe) are read
        // both: the recipe over the launcher's, the line's flags over both
        std::vector<std::pair<std::string, bool>> refs;  // (file, the script's own recipe)
        for (const auto& e : job.entries)
            if (e.literal && e.val.is_string() && names_config(e))
                if (auto ref = resolve_reference(e.val.as_string(), path)) refs.emplace_back(*ref, e.key == "config" || e.key == "--config");
        if (refs.size() == 1 && !refs[0].second) return with_base(refs[0].first, job, a0.name());
        if (!refs.empty() && depth == 0) {
            job_config out = job;
            for (auto it = refs.rbegin(); it != refs.rend(); ++it) out = with_recipe_base(*it, out, a0);
            return out;
        }
        // cases69: a config the launcher names that is not here (accelerate's --config_file=zero3.yaml): its settings
        // (ZeRO stage, offload, FSDP) were not read, and the report says so instead of planning from the defaults.
        if (depth == 0)
            if (const fact* cf = job.find("job.config_file"))
                for (const auto& e : job.entries)
                    if (e.literal && e.val.is_string() && names_config(e) && cf->val == e.val) {
                        add_missing_file(job, e.val.as_string(), cf->prov);
                        break;
                    }
        return with_deepspeed(job, a0, path);
    }
    const framework_adapter& adapter = choose(job.entries, job.format);
    finish(job, adapter);
    return with_deepspeed(job, adapter, path);
}

}  // namespace

std::vector<std::string> split_command_line(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    bool have = false;
    char quote = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quote) {
            if (c == quote) quote = 0;
            else if (c == '\\' && quote == '"' && i + 1 < line.size()) cur += line[++i];
            else cur += c;
            continue;
        }
        if (c == '\'' || c == '"') { quote = c; have = true; continue; }
        if (c == '\\' && i + 1 < line.size()) { cur += line[++i]; have = true; continue; }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            if (have) out.push_back(cur);
            cur.clear();
            have = false;
            continue;
        }
        cur += c;
        have = true;
    }
    if (have) out.push_back(cur);
    return out;
}

job_config parse_cli_args(const std::vector<std::string>& args, const std::string& framework_hint,
                          const std::string& origin_file, std::int64_t origin_line, const std::string& entry_script) {
    job_config job;
    job.file = origin_file;
    job.format = "cli";
    std::string text;
    for (const auto& a : args) text += (text.empty() ? "" : " ") + a;
    if (text.size() > 4000) text.resize(4000);
    // Excerpts come from a one-line text at line 1; provenance keeps the origin line.
    std::vector<shell_word> words;
    for (const auto& a : args) words.push_back(shell_word{a, true, 1});
    std::vector<shell_word> operands;
    job.entries = split_args(words, text, nullptr, &operands);
    add_dotlist(job.entries, operands, text);
    const framework_adapter& a = choose_adapter(job.entries, "cli", framework_hint, &job.framework_guessed, args);
    operands.clear();
    job.entries = split_args(words, text, &a, &operands);
    add_dotlist(job.entries, operands, text, &job.removed_keys);
    for (auto& e : job.entries) {
        e.line = origin_line;
        e.excerpt = "--" + e.key + (e.text.empty() ? "" : " " + e.text);
    }
    if (!entry_script.empty()) {
        raw_entry e;
        e.key = "job.entry_script";
        e.val = value(entry_script);
        e.text = entry_script;
        e.line = origin_line;
        e.excerpt = entry_script;
        job.entries.push_back(std::move(e));
    }
    finish(job, a);
    // rev39: a logged line that names its config files (accelerate's --config_file, TRL's --config recipe), which the
    // log does not hold: the settings are in them, so the adapter's defaults are not the job's, and the report says
    // which files were not read (as for a launch script whose files are not here, cases69).
    if (job.framework_guessed) return job;
    std::vector<const raw_entry*> named;
    for (const auto& e : job.entries)
        for (const key_mapping* m : a.find(e.key))
            if (m->canonical == "job.config_file" && e.literal && e.val.is_string()) named.push_back(&e);
    if (named.empty()) return job;
    std::erase_if(job.facts, [](const fact& f) { return f.prov.from_default() && f.name != "job.framework"; });
    for (const raw_entry* e : named) {
        provenance p;
        p.producer = "config." + a.name();
        p.file = job.file;
        p.line = e->line;
        p.excerpt = e->excerpt;
        add_missing_file(job, e->val.as_string(), p);
    }
    return job;
}

void merge_job_config(job_config& base, const job_config& ov) {
    for (const auto& f : ov.facts) {
        if (f.name == "job.framework" || f.name == "job.config_file") continue;
        if (f.prov.from_default() && base.find(f.name)) continue;
        if (f.name == "job.unknown_keys" || f.name == "job.non_literal_keys") continue;
        base.facts.push_back(f);
    }
    for (const auto& u : ov.unknown_keys) base.unknown_keys.push_back(u);
    for (const auto& n : ov.non_literal) base.non_literal.push_back(n);
    value::list_t unknown, nonlit;
    for (const auto& u : base.unknown_keys) unknown.push_back(value(u));
    for (const auto& n : base.non_literal) nonlit.push_back(value(n));
    for (auto& f : base.facts) {
        if (f.name == "job.unknown_keys") f.val = value(unknown);
        if (f.name == "job.non_literal_keys") f.val = value(nonlit);
    }
    for (const auto& e : ov.entries) base.entries.push_back(e);
}

void emit_facts(const job_config& job, fact_sink& sink) {
    // Later facts of the same name win: emit only the last one of each name, in first order.
    std::map<std::string, std::size_t> last;
    for (std::size_t i = 0; i < job.facts.size(); ++i) last[job.facts[i].name] = i;
    for (std::size_t i = 0; i < job.facts.size(); ++i)
        if (last[job.facts[i].name] == i) sink.emit(job.facts[i]);
}

std::vector<canonical_override> read_back(const framework_adapter& a, const std::vector<render_item>& items) {
    std::vector<canonical_override> out;
    for (const auto& it : items) {
        if (it.remove || it.key.empty() || it.key[0] == '#' || it.key.rfind("env.", 0) == 0 || it.key.rfind("code.", 0) == 0 ||
            it.key.rfind("note.", 0) == 0)
            continue;
        raw_entry e;
        e.key = it.key.rfind("--", 0) == 0 ? cli_key(it.key) : it.key;
        e.val = it.val;
        const auto ms = a.find(it.key);
        bool bare = false;
        for (const auto* m : ms)
            if (m->flag && it.val.is_bool() && it.val.as_bool()) bare = true;
        e.text = bare ? std::string() : value_key(it.val);
        for (const auto* m : ms) {
            translated t = translate(e, *m);
            if (t.status != translated::ok) continue;
            bool replaced = false;
            for (auto& o : out)
                if (o.key == m->canonical) { o.val = t.val; replaced = true; }
            // A DeepSpeed file the framework ships runs with that file's settings (ds_z3_offload_config.json:
            // ZeRO-3 with the optimizer and the parameters offloaded), which win over the requested values.
            if (m->canonical == "job.deepspeed_config" && t.val.is_string())
                if (const auto* shipped = a.shipped_file(std::filesystem::path(t.val.as_string()).filename().string()))
                    for (const auto& [key, v] : *shipped) {
                        std::erase_if(out, [&](const canonical_override& o) { return o.key == key; });
                        out.push_back({key, v});
                    }
            if (!replaced) out.push_back({m->canonical, std::move(t.val)});
        }
    }
    return out;
}

}  // namespace oomdx
