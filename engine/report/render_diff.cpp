#include "engine/report/render_diff.h"

#include <fmt/format.h>

#include "engine/core/bytes.h"

namespace oomdx {

namespace {

std::string signed_bytes(std::int64_t v) { return (v >= 0 ? "+" : "-") + format_bytes(v >= 0 ? v : -v); }

std::string shown(const value& v) { return v.is_null() ? "-" : v.is_string() ? v.as_string() : v.to_string(); }

}  // namespace

std::string render_diff_text(const config_diff& d, bool md) {
    std::string s;
    auto heading = [&](const std::string& h) { s += md ? "\n## " + h + "\n\n" : "\n" + h + "\n"; };
    const std::int64_t delta = d.b.device_peak_bytes - d.a.device_peak_bytes;
    s += md ? "# oomdx diff\n\n" : "oomdx diff\n\n";
    s += fmt::format("{}Device peak {} -> {} ({}) from {} changed key{}{}\n", md ? "" : "  ", format_bytes(d.a.device_peak_bytes),
                     format_bytes(d.b.device_peak_bytes), signed_bytes(delta), d.changed.size(), d.changed.size() == 1 ? "" : "s",
                     d.a.capacity_bytes > 0 ? fmt::format("; budget {}: A {}, B {}", format_bytes(d.a.budget_bytes),
                                                          d.a.fits ? "fits" : "does not fit", d.b.fits ? "fits" : "does not fit")
                                            : "");
    heading(md ? "Keys that differ" : "KEYS THAT DIFFER");
    if (d.changed.empty()) s += md ? "None: the two configurations are the same to the estimator.\n" : "  none\n";
    if (md && !d.changed.empty()) s += "| key | A | B | A from | B from |\n|---|---|---|---|---|\n";
    for (const auto& c : d.changed)
        s += md ? fmt::format("| `{}` | {} | {} | {} | {} |\n", c.key, shown(c.a), shown(c.b), c.a_source, c.b_source)
                : fmt::format("  {:<44} {:>14} -> {:<14} ({} / {})\n", c.key, shown(c.a), shown(c.b),
                              c.a_source.empty() ? "-" : c.a_source, c.b_source.empty() ? "-" : c.b_source);
    heading(md ? "Components" : "COMPONENTS (PER DEVICE)");
    if (md) s += "| component | A | B | change |\n|---|---:|---:|---:|\n";
    for (const auto& c : d.components)
        s += md ? fmt::format("| {} | {} | {} | {} |\n", c.label, format_bytes(c.a_bytes), format_bytes(c.b_bytes),
                              signed_bytes(c.b_bytes - c.a_bytes))
                : fmt::format("  {:<28} {:>12} {:>12} {:>13}\n", c.label, format_bytes(c.a_bytes), format_bytes(c.b_bytes),
                              signed_bytes(c.b_bytes - c.a_bytes));
    if (md)
        s += fmt::format("| **device peak** | {} | {} | {} |\n", format_bytes(d.a.device_peak_bytes),
                         format_bytes(d.b.device_peak_bytes), signed_bytes(delta));
    else
        s += fmt::format("  {:<28} {:>12} {:>12} {:>13}\n", "device peak", format_bytes(d.a.device_peak_bytes),
                         format_bytes(d.b.device_peak_bytes), signed_bytes(delta));
    heading(md ? "What moved the peak" : "WHAT MOVED THE PEAK");
    s += md ? "The changes applied to A one at a time, in this order (model, device, framework, parallelism, precision, "
              "batch and sequence, checkpointing, optimizer, the rest); each line is that change given the ones before it.\n\n"
            : "  changes applied to A one at a time (model, device, framework, parallelism, precision, batch and\n"
              "  sequence, checkpointing, optimizer, the rest); each line given the ones before it:\n";
    for (const auto& st : d.attribution) {
        std::string keys, comps;
        for (const auto& k : st.keys) keys += (keys.empty() ? "" : ", ") + k;
        for (const auto& [id, v] : st.deltas) comps += (comps.empty() ? "" : ", ") + id + " " + signed_bytes(v);
        s += md ? fmt::format("- `{}`: {} ({})\n", keys, signed_bytes(st.device_peak_delta), comps.empty() ? "no change" : comps)
                : fmt::format("  {:<44} {:>13}  {}\n", keys, signed_bytes(st.device_peak_delta), comps.empty() ? "no change" : comps);
    }
    return s;
}

}  // namespace oomdx
