#include "parsers/config/alloc_conf.h"

#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "engine/core/fact_store.h"

namespace oomdx {

namespace {

std::string alloc_conf_trim_lower(std::string s) {
    std::string out;
    for (char c : s)
        if (!std::isspace(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

alloc_conf parse_alloc_conf(const std::string& text) {
    alloc_conf out;
    const std::string s = alloc_conf_trim_lower(text);
    std::size_t at = 0;
    while (at <= s.size()) {
        const std::size_t end = std::min(s.find(',', at), s.size());
        const std::string item = s.substr(at, end - at);
        const std::size_t colon = item.find(':');
        if (colon != std::string::npos) {
            const std::string key = item.substr(0, colon), val = item.substr(colon + 1);
            if (key == "expandable_segments" && (val == "true" || val == "false")) out.expandable_segments = val == "true";
            if (key == "max_split_size_mb") {
                char* stop = nullptr;
                const long long mb = std::strtoll(val.c_str(), &stop, 10);
                if (!val.empty() && stop && *stop == 0 && mb > 0) out.max_split_size_mb = mb;
            }
        }
        at = end + 1;
    }
    return out;
}

void derive_allocator_facts(fact_store& facts) {
    const std::string kind = facts.string("device.kind").value_or(facts.string("job.device_kind").value_or("cuda"));
    const char* const names[] = {kind == "npu" ? "env.PYTORCH_NPU_ALLOC_CONF" : "env.PYTORCH_CUDA_ALLOC_CONF",
                                 "env.PYTORCH_ALLOC_CONF"};
    bool have_expandable = false, have_split = false;
    // Emits a derived fact when the settings give another value than the store holds (a what-if re-derives).
    auto put = [&](const char* fact_name, value v, const char* env, const fact& from) {
        if (const fact* cur = facts.get(fact_name); cur && cur->val == v) return;
        provenance p = from.prov;
        p.producer = "config.derived";
        p.derived_from = {env};
        p.excerpt = fmt::format("{}={}", env + 4, from.val.as_string());
        facts.emit(fact_name, std::move(v), p);
    };
    for (const char* name : names) {
        const fact* f = facts.get(name);
        if (!f || !f->val.is_string()) continue;
        const alloc_conf c = parse_alloc_conf(f->val.as_string());
        if (c.expandable_segments && !have_expandable) {
            have_expandable = true;
            put("allocator.expandable_segments", value(*c.expandable_segments), name, *f);
        }
        if (c.max_split_size_mb && !have_split) {
            have_split = true;
            put("allocator.max_split_size_mb", value(static_cast<std::int64_t>(*c.max_split_size_mb)), name, *f);
        }
    }
}

}  // namespace oomdx
