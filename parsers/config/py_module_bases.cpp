// mmengine `_base_` inheritance, read as data (mmengine/config/config.py: _file2dict reads each base, refuses a
// top-level key two bases share, and _merge_a_into_b merges the child's dicts into the bases' ones).
#include "parsers/config/py_module_bases.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace oomdx {

namespace {

namespace fs = std::filesystem;

std::string canonical_path(const std::string& file) {
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(fs::absolute(file, ec), ec);
    return ec ? file : p.string();
}

std::string top_name(const std::string& key) { return key.substr(0, key.find('.')); }

bool is_delete_flag(const raw_entry& e) { return e.key == "_delete_" || e.key.ends_with("._delete_"); }

// The child's entries over the bases': a key the child writes replaces the base's value there; under a child
// value that is not a dict (a number, a list), or a dict with `_delete_=True`, nothing of the base's is kept.
std::vector<raw_entry> merge_over(std::vector<raw_entry> base, const std::vector<raw_entry>& child) {
    std::set<std::string> written, replaced;
    for (const auto& e : child) {
        if (is_delete_flag(e)) {
            if (e.val.is_bool() && e.val.as_bool()) replaced.insert(e.key.substr(0, e.key.size() - std::string("._delete_").size()));
            continue;
        }
        written.insert(e.key);
        if (!e.container) replaced.insert(e.key);
    }
    std::erase_if(base, [&](const raw_entry& e) {
        if (written.count(e.key)) return true;
        for (std::size_t dot = e.key.find('.'); dot != std::string::npos; dot = e.key.find('.', dot + 1))
            if (replaced.count(e.key.substr(0, dot))) return true;
        return false;
    });
    for (const auto& e : child)
        if (!is_delete_flag(e)) base.push_back(e);
    return base;
}

class base_reader {
public:
    py_module read(const py_source& src, std::vector<std::string>& chain) {
        py_module m = read_py_module(src);
        for (auto& e : m.entries)
            if (e.file.empty()) e.file = src.file();
        const raw_entry* decl = nullptr;
        for (const auto& e : m.entries)
            if (e.key == "_base_") decl = &e;
        if (!decl) return m;
        const raw_entry d = *decl;
        std::vector<std::string> names;
        if (d.literal && d.val.is_string()) names.push_back(d.val.as_string());
        else if (d.literal && d.val.is_list())
            for (const auto& x : d.val.as_list()) {
                if (!x.is_string()) fail(src, d, "is not a list of file names");
                names.push_back(x.as_string());
            }
        else fail(src, d, "is not a file name or a list of file names");
        if (chain.size() >= std::size_t(k_max_base_depth))
            fail(src, d, fmt::format("nests deeper than {} files ({})", k_max_base_depth, chain_text(chain)));
        std::vector<raw_entry> bases;
        std::vector<std::string> skipped;
        std::map<std::string, std::string> owner;  // top-level key -> the base file that set it
        for (const auto& name : names) {
            const std::string file = resolve(src, d, name, chain);
            const std::string text = read_config_file(file);
            const py_source sub(text, file);
            chain.push_back(canonical_path(file));
            py_module b = read(sub, chain);
            chain.pop_back();
            std::set<std::string> tops;
            for (const auto& e : b.entries)
                if (e.key != "_base_" && e.key.rfind("_base_.", 0) != 0) tops.insert(top_name(e.key));
            for (const auto& t : tops) {
                if (auto it = owner.find(t); it != owner.end())
                    fail(src, d, fmt::format("bases {} and {} both set '{}' (mmengine refuses a key two bases share)",
                                             it->second, file, t));
                owner[t] = file;
            }
            for (auto& e : b.entries)
                if (e.key != "_base_" && e.key.rfind("_base_.", 0) != 0) bases.push_back(std::move(e));
            for (auto& s : b.skipped) skipped.push_back(std::move(s));
        }
        m.entries = merge_over(std::move(bases), m.entries);
        for (auto& s : m.skipped) skipped.push_back(std::move(s));
        m.skipped = std::move(skipped);
        return m;
    }

private:
    int files = 1;

    [[noreturn]] static void fail(const py_source& src, const raw_entry& d, const std::string& why) {
        throw input_error::at_line(src.file(), d.line, "_base_ " + why);
    }
    static std::string chain_text(const std::vector<std::string>& chain) {
        std::string s;
        for (const auto& c : chain) s += (s.empty() ? "" : " -> ") + fs::path(c).filename().string();
        return s;
    }
    std::string resolve(const py_source& src, const raw_entry& d, const std::string& name, const std::vector<std::string>& chain) {
        if (name.find("::") != std::string::npos)
            fail(src, d, fmt::format("names '{}', a config of the installed package '{}', which is not read here", name,
                                     name.substr(0, name.find("::"))));
        if (name.empty() || name.size() > 4096) fail(src, d, "names an empty or overlong file name");
        const fs::path p = (fs::path(name).is_absolute() ? fs::path(name) : fs::path(src.file()).parent_path() / name).lexically_normal();
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) fail(src, d, fmt::format("names '{}': not found (looked for {})", name, p.string()));
        if (p.extension() != ".py")
            fail(src, d, fmt::format("names '{}': only Python (.py) bases are read", name));
        const std::string c = canonical_path(p.string());
        if (std::find(chain.begin(), chain.end(), c) != chain.end())
            fail(src, d, fmt::format("names '{}', which is already being read: a cycle ({} -> {})", name, chain_text(chain),
                                     p.filename().string()));
        if (++files > k_max_base_files) fail(src, d, fmt::format("chain reads more than {} files", k_max_base_files));
        return p.string();
    }
};

}  // namespace

py_module read_py_module_with_bases(const py_source& src) {
    std::vector<std::string> chain{canonical_path(src.file())};
    return base_reader().read(src, chain);
}

}  // namespace oomdx
