// Memory categories of snapshot allocations: frame rules from knowledge/snapshot_categories.yaml
// (Mosaic-compatible), user rules (same YAML, or a Mosaic custom profile {category: regex}),
// and the allocation-site rule (first frame of the user's own code).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace oomdx::snap {

// The fixed categories of the method; user rules may add more after these.
enum builtin_category : int {
    cat_parameter,
    cat_gradient,
    cat_optimizer_state,
    cat_activation,
    cat_communication,
    cat_attention,
    cat_moe,
    cat_loss,
    cat_other,
    cat_unknown,
    cat_builtin_count
};

// One stack frame as the rules see it; filename already normalised (see normalize_filename).
struct frame_text {
    std::string_view name;
    std::string_view filename;
    std::int64_t line = 0;
};

// Backslashes to '/', so Windows paths match the same rules.
std::string normalize_filename(std::string_view filename);
// False for C++ frames: filename '??', '' or not a Python source.
bool is_python_frame(std::string_view filename);

class category_rules {
public:
    category_rules();
    ~category_rules();
    category_rules(category_rules&&) noexcept;
    category_rules& operator=(category_rules&&) noexcept;

    // knowledge/snapshot_categories.yaml from the data dir; throws input_error.
    static category_rules shipped();
    // Rules from a YAML/JSON file (our format or a Mosaic custom profile).
    static category_rules load(const std::string& path);
    static category_rules parse(const std::string& text, const std::string& path);

    // The rules in the form the cache stores them (names, site_skip, both lists, regular
    // expressions as their text); decode gives nullopt for a damaged or foreign payload.
    std::string encode() const;
    static std::optional<category_rules> decode(std::string_view payload);

    // Puts the rules of `user` before ours (user categories are appended to the name list).
    void prepend(const category_rules& user);

    // Category index for a stack, frames innermost first (normalised filenames).
    int classify(const frame_text* frames, std::size_t n) const;
    // Index of the site frame in `frames` (first frame not skipped), -1 when there is none.
    int site_frame(const frame_text* frames, std::size_t n) const;

    // Per-frame pieces of classify()/site_frame(), for callers that cache them per frame:
    // bit i set when any_frame rule i matches (only the first 64 rules), the category of the
    // first frame rule matching the frame (-1: none), and whether the frame can be a site.
    std::uint64_t any_mask(const frame_text& f) const;
    int any_category(int bit) const;
    std::size_t any_rule_count() const { return m_any.size(); }
    int frame_category(const frame_text& f) const;
    bool site_candidate(const frame_text& f) const;
    // The three above for one frame, its text prepared once.
    struct frame_classes {
        std::uint64_t any_mask = 0;
        int category = -1;
        bool site = false;
    };
    frame_classes classes(const frame_text& f) const;

    const std::vector<std::string>& names() const { return m_names; }
    int find(std::string_view name) const;
    std::size_t rule_count() const;

    struct rule;

private:
    std::vector<std::string> m_names;
    std::vector<std::shared_ptr<rule>> m_any;    // any frame matches
    std::vector<std::shared_ptr<rule>> m_frame;  // innermost matching frame decides
    std::vector<std::string> m_site_skip;
    int intern(const std::string& name);
    void add_rule(const std::shared_ptr<rule>& r, bool any);
    friend struct category_loader;
};

const char* builtin_category_name(int c);

}  // namespace oomdx::snap
