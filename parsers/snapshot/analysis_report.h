// Shared pieces of the snapshot renderers: the JSON body of one analysis and a small
// text/markdown writer (sections, key-value lines, aligned tables).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/translations.h"
#include "parsers/snapshot/snapshot_analysis.h"

namespace oomdx::snap {

// The per-file object of oomdx.snapshot/1 without "schema"/"kind".
nlohmann::json to_json_body(const snapshot_analysis& a, int top);
// emit_facts() with snapshot.count set to `count`.
void emit_analysis_facts(const snapshot_analysis& a, fact_sink& sink, std::int64_t count);

class report_writer {
public:
    report_writer(bool markdown, bool color) : m_md(markdown), m_color(color) {}
    // Another report language (`--lang`): each text written is rewritten by the templates of
    // knowledge/i18n/<lang>/snapshot*.yaml under "snapshot." (English when none matches).
    void set_lang(const std::string& lang);

    void title(const std::string& t);
    void section(const std::string& t);
    void line(const std::string& t);
    void kv(const std::string& k, const std::string& v);
    // Columns after the first are right-aligned when `numeric` says so.
    void table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
               const std::vector<bool>& numeric = {});
    void bullet(const std::string& t);
    void blank();
    std::string str() const { return m_out; }
    // A text in the report language (itself when English).
    std::string tr(const std::string& s) const { return m_tr ? m_tr->produced("snapshot.", s) : s; }

private:
    bool m_md, m_color;
    std::string m_out;
    const translation_table* m_tr = nullptr;
    std::string bold(const std::string& s) const;
    void write_table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
                     const std::vector<bool>& numeric);

};

// "…/pkg/module.py:12:fn" for long paths.
std::string short_site(const std::string& site, std::size_t max = 72);
std::string percent(double f);

}  // namespace oomdx::snap
