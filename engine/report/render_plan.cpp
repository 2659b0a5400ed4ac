#include "engine/report/render_plan.h"

#include <fmt/format.h>

#include "engine/core/bytes.h"
#include "engine/estimator/plan_search.h"
#include "engine/report/report_phrases.h"

namespace oomdx {

namespace {

// The phrase key of a tier (report.plan.tier.*; JSON keeps plan_tier_name, a stable key: the tier
// of AC changes also holds the chunked loss, so its text names both).
// rev31: a plan on more devices with no other change is not "no change" beside "# run on 24 devices".
const char* tier_key(int tier, bool more_devices) {
    if (tier == tier_none && more_devices) return "report.plan.tier.devices_only";
    switch (tier) {
        case tier_ac: return "report.plan.tier.ac";
        case tier_optimizer: return "report.plan.tier.optimizer";
        case tier_parallelism: return "report.plan.tier.parallelism";
        case tier_batch: return "report.plan.tier.batch";
        case tier_global_batch: return "report.plan.tier.global_batch";
        default: return "report.plan.tier.none";
    }
}

std::string cost(double fraction) { return fmt::format("{:+.0f}%", 100.0 * fraction); }

std::string layout(const std::string& lang, const estimate_input& in) {
    std::string extra;
    if (in.swap_optimizer) extra += phrase(lang, "report.plan.layout.swap_optimizer");
    if (in.optimizer_offload) extra += phrase(lang, "report.plan.layout.optimizer_offload");
    if (in.params_offload) extra += phrase(lang, "report.plan.layout.param_offload");
    if (in.chunked_loss) extra += phrase(lang, "report.plan.layout.chunked_loss");
    return phrase(lang, "report.plan.layout",
                  {{"tp", std::to_string(in.tp)},
                   {"pp", std::to_string(in.pp)},
                   {"cp", std::to_string(in.cp)},
                   {"ep", std::to_string(in.ep)},
                   {"dp_replicate", std::to_string(in.dp_replicate)},
                   {"dp_shard", std::to_string(in.dp_shard)},
                   {"micro_batch", std::to_string(in.micro_batch)},
                   {"ac", ac_name(in.ac)},
                   {"zero", std::to_string(in.zero_stage)},
                   {"extra", extra}});
}

// A line of overrides in the job's syntax: its comment lines ("# run on 16 devices ...", the
// adapter's "# ... has no setting for ...") in the report's language.
std::string override_line(const std::string& lang, const std::string& line) {
    const auto at = line.find_first_not_of(' ');
    if (at == std::string::npos || line[at] != '#') return line;
    const std::string t = translated(lang, "plan.line.", line);
    return t != line ? t : translated(lang, "adapter.", line);
}

std::string set_args(const std::vector<estimate_override>& ovs) {
    std::string s;
    for (const auto& o : ovs) s += fmt::format(" --set {}={}", o.key, value_key(o.val));
    return s;
}

}  // namespace

std::string render_plan_text(const plan_answer& p, std::size_t max_candidates, const std::string& lang) {
    auto t = [&](const char* key, const message_args& args = {}) { return phrase(lang, key, args); };
    std::string s;
    if (p.base_fits) {
        s += t("report.plan.fits_as_configured",
               {{"device", format_bytes(std::max(p.base_high_bytes, p.base_device_peak_bytes))},  // the verdict's figure
                {"budget", format_bytes(p.budget_bytes)}}) + "\n";
    } else if (!p.fits) {
        s += t("report.plan.nothing_fits",
               {{"from", std::to_string(p.base_world_size)},
                {"to", std::to_string(p.worlds_searched.empty() ? p.base_world_size : p.worlds_searched.back())}}) + "\n";
    } else {
        s += t(p.world_size == 1 ? "report.plan.head_one" : "report.plan.head", {{"world", std::to_string(p.world_size)},
                                    {"device", format_bytes(p.expected_device_peak_bytes)},
                                    {"budget", format_bytes(p.budget_bytes)},
                                    {"tier", t(tier_key(p.tier, p.world_size != p.base_world_size))},
                                    {"cost", cost(p.cost)}}) + "\n";
        for (const auto& l : p.rendered) s += "    " + override_line(lang, l) + "\n";
        for (const auto& term : p.terms)
            s += "    " + t("report.plan.term", {{"cost", cost(term.fraction)},
                                                 {"name", value_phrase(lang, "cost_term", term.name)},
                                                 {"why", translated(lang, "plan.term.", term.why)}}) + "\n";
        s += "    " + t("report.plan.check", {{"world", std::to_string(p.world_size)}, {"sets", set_args(p.overrides)}}) + "\n";
    }
    for (const auto& n : p.notes) s += "  " + translated(lang, "plan.note.", n) + "\n";
    if (p.at_current_size.searched) {
        const plan_alternative& a = p.at_current_size;
        if (a.overrides.empty()) {
            // verl's offload exists but loads the states back for the update: not "no setting"
            s += "  " + t(a.between_phases ? "report.plan.phase_offload" : "report.plan.no_offload",
                          {{"world", std::to_string(p.base_world_size)}}) + "\n";
        } else {
            // the closest offload may fit the devices and still be left out for the host's RAM
            const bool device_only = !a.fits && a.host_limited && a.expected_device_peak_bytes <= p.budget_bytes;
            s += "  " + t("report.plan.offload", {{"world", std::to_string(p.base_world_size)},
                                                  {"verdict", t(a.fits ? "report.rec.fits"
                                                                : device_only ? "report.plan.fits_device_not_host"
                                                                              : "report.plan.still_not_fit")},
                                                  {"device", format_bytes(a.expected_device_peak_bytes)},
                                                  {"cost", cost(a.cost)}}) + "\n";
            for (const auto& l : a.rendered) s += "    " + override_line(lang, l) + "\n";
            if (a.host_bytes > 0)
                s += "    " + t("report.plan.offload_host", {{"host", format_bytes(a.host_bytes)},
                                                             {"sizing", value_phrase(lang, "host_sizing", a.host_sizing)}}) + "\n";
        }
        if (a.host_limited && p.host_memory_bytes > 0)
            s += "  " + t("report.plan.offload_host_limited", {{"host", format_bytes(p.host_memory_bytes)},
                                                               {"budget", format_bytes(p.host_budget_bytes)}}) + "\n";
    }
    if (p.quantized_base.searched && !p.quantized_base.overrides.empty()) {
        const plan_alternative& a = p.quantized_base;
        s += "  " + t("report.plan.quantized_base", {{"world", std::to_string(p.base_world_size)},
                                                       {"verdict", t(a.fits ? "report.rec.fits" : "report.plan.still_not_fit")},
                                                       {"device", format_bytes(a.expected_device_peak_bytes)}}) + "\n";
        for (const auto& l : a.rendered) s += "    " + override_line(lang, l) + "\n";
    }
    if (p.adapters.searched && !p.adapters.overrides.empty()) {
        const plan_alternative& a = p.adapters;
        s += "  " + t(p.adapters_quantized ? "report.plan.adapters_quantized" : "report.plan.adapters",
                      {{"world", std::to_string(p.base_world_size)},
                       {"verdict", t(a.fits ? "report.rec.fits" : "report.plan.still_not_fit")},
                       {"device", format_bytes(a.expected_device_peak_bytes)}}) + "\n";
        for (const auto& l : a.rendered) s += "    " + override_line(lang, l) + "\n";
    }
    std::size_t shown = 0;
    for (std::size_t i = p.base_fits ? 0 : 1; i < p.candidates.size() && shown < max_candidates; ++i, ++shown) {
        if (shown == 0) s += "  " + t("report.plan.next") + "\n";
        const plan_candidate& c = p.candidates[i].candidate;
        s += "   " + t("report.plan.candidate", {{"n", std::to_string(shown + 1)},
                                                  {"layout", layout(lang, c.input)},
                                                  {"device", format_bytes(c.device_peak_bytes)},
                                                  {"tier", t(tier_key(c.tier, p.world_size != p.base_world_size))},
                                                  {"cost", cost(c.cost)}}) + "\n";
    }
    return s;
}

}  // namespace oomdx
