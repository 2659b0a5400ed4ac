// Translations of the English texts into another report language, each kept beside the English
// source it translates:
//   rules/i18n/<lang>/<pack>.yaml    rule and step texts (read with the rule packs, engine/rules)
//   knowledge/i18n/<lang>/*.yaml     vocabulary phrases, actions, the renderers' fixed phrases,
//                                    estimate labels, the sentences of the log and snapshot analyses
// A translation whose English copy differs from the current English text (whitespace aside) is
// stale: the English text is used and `oomdx i18n lint` reports it. English is the source
// language and has no table.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oomdx {

// The languages a report can be rendered in besides English (`--lang`).
const std::vector<std::string>& report_languages();

struct translation {
    std::string en;    // the English text it translates, as the translator saw it
    std::string text;  // the translation; empty when not written yet
    std::string file;
    int line = 0;
};

// Equal texts apart from runs of white space and the ends (YAML folds long texts).
bool same_text(std::string_view a, std::string_view b);

class translation_table {
public:
    // Later entries of the same key replace earlier ones (a site pack's rule replaces a shipped one).
    void add(const std::string& key, translation t);
    const translation* find(const std::string& key) const;
    // The translation under `key` when it exists and translates `en` as it is now, else `en`.
    std::string pick(const std::string& key, const std::string& en) const;
    // A text a producer wrote in English from one of the templates under `prefix` (knowledge
    // files, in file order): the first whose English form matches the whole text, with the same
    // arguments; an argument that is a known term (`term.*` entries) or itself such a sentence is
    // translated too. When none matches, the fragment templates `<prefix>part.*` (each starting
    // with a literal) replace the parts of the text they match, in order, for texts built from
    // optional pieces; nothing when no template or fragment applies.
    std::optional<std::string> translate_produced(const std::string& prefix, std::string_view english) const;
    // translate_produced, or the English text when no template matches.
    std::string produced(const std::string& prefix, std::string_view english) const;
    // Entries in the order they were added.
    const std::vector<std::string>& keys() const { return m_order; }
    bool empty() const { return m_map.empty(); }

    // Every *.yaml in dir: a map `key: {en: "...", <lang>: "...", note: "..."}`. Throws input_error
    // naming file:line on a malformed file or a key given twice.
    static translation_table load_dir(const std::string& dir, const std::string& lang);
    // The shipped knowledge translations (knowledge/i18n/<lang>), loaded once; empty for "en".
    static const translation_table& shipped(const std::string& lang);

private:
    std::optional<std::string> translate_produced(const std::string& prefix, std::string_view english, int depth) const;

    std::map<std::string, translation> m_map;
    std::vector<std::string> m_order;
    std::map<std::string, std::string> m_terms;  // English term -> translation
};

}  // namespace oomdx
