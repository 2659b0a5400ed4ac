#include "engine/estimator/config_diff.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace oomdx {

namespace {

const char* const config_prefixes[] = {"training.", "parallelism.", "activation_checkpoint.", "optimizer.", "compile.",
                                       "quantize.", "model.", "device.", "framework.", "env."};

value current(const fact_store& s, const std::string& name) {
    const fact* f = s.get(name);
    return f ? f->val : value();
}

std::string source(const fact_store& s, const std::string& name) {
    const fact* f = s.get(name);
    if (!f) return "";
    const std::string loc = f->prov.location();
    return loc.empty() ? f->prov.producer : loc;
}

// A store holding every fact of `base`, with `overlay`'s values for the given keys.
fact_store apply(const fact_store& base, const fact_store& overlay, const std::set<std::string>& keys) {
    fact_store out(base.vocab());
    for (const fact* f : base.current())
        if (!keys.count(f->name)) out.emit(f->name, f->val, f->prov);
    for (const auto& k : keys)
        if (const fact* f = overlay.get(k)) out.emit(f->name, f->val, f->prov);
    return out;
}

std::map<std::string, std::int64_t> by_component(const estimate_result& e) {
    std::map<std::string, std::int64_t> m;
    for (const auto& c : e.components) m[c.id] += c.bytes;
    return m;
}

// Components summed to the device peak: what the breakdown does not list is "unlisted".
std::map<std::string, std::int64_t> with_rest(const estimate_result& e) {
    auto m = by_component(e);
    std::int64_t sum = 0;
    for (const auto& [id, b] : m) sum += b;
    if (sum != e.device_peak_bytes) m["unlisted"] += e.device_peak_bytes - sum;
    return m;
}

}  // namespace

bool is_config_fact(const std::string& name) {
    if (name == "job.world_size" || name == "job.framework") return true;
    for (const char* p : config_prefixes)
        if (name.rfind(p, 0) == 0) return true;
    return false;
}

int change_order(const std::string& k) {
    if (k.rfind("model.", 0) == 0) return 0;
    if (k.rfind("device.", 0) == 0) return 1;
    if (k == "job.framework" || k.rfind("framework.", 0) == 0) return 2;
    if (k == "job.world_size" || k.rfind("parallelism.", 0) == 0) return 3;
    if (k.rfind("training.mixed_precision", 0) == 0 || k.rfind("quantize.", 0) == 0 || k.rfind("compile.", 0) == 0) return 4;
    if (k.rfind("training.", 0) == 0) return 5;
    if (k.rfind("activation_checkpoint.", 0) == 0) return 6;
    if (k.rfind("optimizer.", 0) == 0) return 7;
    return 8;
}

config_diff diff_configs(const fact_store& a, const fact_store& b) {
    config_diff d;
    d.a = estimate(from_facts(a));
    d.b = estimate(from_facts(b));

    std::set<std::string> names;
    for (const fact* f : a.current()) if (is_config_fact(f->name)) names.insert(f->name);
    for (const fact* f : b.current()) if (is_config_fact(f->name)) names.insert(f->name);
    for (const auto& n : names) {
        const value va = current(a, n), vb = current(b, n);
        if (va == vb && va.type() == vb.type()) continue;
        d.changed.push_back({n, va, vb, source(a, n), source(b, n)});
    }
    std::stable_sort(d.changed.begin(), d.changed.end(), [](const diff_change& x, const diff_change& y) {
        if (change_order(x.key) != change_order(y.key)) return change_order(x.key) < change_order(y.key);
        return x.key < y.key;
    });

    const auto ca = with_rest(d.a), cb = with_rest(d.b);
    std::map<std::string, std::string> labels;
    for (const auto& c : d.a.components) labels[c.id] = c.label;
    for (const auto& c : d.b.components) labels[c.id] = c.label;
    labels["unlisted"] = "not in the breakdown";
    std::vector<std::string> order;
    for (const auto& c : d.a.components) if (std::find(order.begin(), order.end(), c.id) == order.end()) order.push_back(c.id);
    for (const auto& c : d.b.components) if (std::find(order.begin(), order.end(), c.id) == order.end()) order.push_back(c.id);
    if (ca.count("unlisted") || cb.count("unlisted")) order.push_back("unlisted");
    for (const auto& id : order) {
        auto ia = ca.find(id), ib = cb.find(id);
        d.components.push_back({id, labels[id], ia == ca.end() ? 0 : ia->second, ib == cb.end() ? 0 : ib->second});
    }

    // Attribution: apply the changes one at a time; a last step takes whatever else differs, so the
    // steps add up to exactly b - a.
    std::set<std::string> applied;
    std::map<std::string, std::int64_t> prev = ca;
    std::int64_t prev_peak = d.a.device_peak_bytes;
    auto step_to = [&](std::vector<std::string> keys, const std::map<std::string, std::int64_t>& now, std::int64_t peak) {
        diff_step s;
        s.keys = std::move(keys);
        std::set<std::string> ids;
        for (const auto& [id, v] : prev) ids.insert(id);
        for (const auto& [id, v] : now) ids.insert(id);
        for (const auto& id : ids) {
            const std::int64_t before = prev.count(id) ? prev.at(id) : 0, after = now.count(id) ? now.at(id) : 0;
            if (after != before) s.deltas.push_back({id, after - before});
        }
        s.device_peak_delta = peak - prev_peak;
        s.device_peak_after = peak;
        prev = now;
        prev_peak = peak;
        d.attribution.push_back(std::move(s));
    };
    for (const auto& c : d.changed) {
        applied.insert(c.key);
        const estimate_result e = estimate(from_facts(apply(a, b, applied)));
        step_to({c.key}, with_rest(e), e.device_peak_bytes);
    }
    if (prev_peak != d.b.device_peak_bytes || prev != cb) step_to({"(other differences)"}, cb, d.b.device_peak_bytes);
    return d;
}

nlohmann::json to_json(const config_diff& d) {
    using nlohmann::json;
    auto val = [](const value& v) -> json {
        if (v.is_null()) return nullptr;
        if (v.is_integer()) return v.as_integer();
        if (v.is_number()) return v.as_number();
        if (v.is_bool()) return v.as_bool();
        if (v.is_string()) return v.as_string();
        return v.to_string();
    };
    json j;
    j["schema"] = "oomdx.diff/1";
    j["changed"] = json::array();
    for (const auto& c : d.changed)
        j["changed"].push_back({{"key", c.key}, {"a", val(c.a)}, {"b", val(c.b)}, {"a_source", c.a_source}, {"b_source", c.b_source}});
    j["a"] = to_json(d.a);
    j["b"] = to_json(d.b);
    j["device_peak_delta_bytes"] = d.b.device_peak_bytes - d.a.device_peak_bytes;
    j["components"] = json::array();
    for (const auto& c : d.components)
        j["components"].push_back({{"name", c.id}, {"label", c.label}, {"a_bytes", c.a_bytes}, {"b_bytes", c.b_bytes},
                                   {"delta_bytes", c.b_bytes - c.a_bytes}});
    j["attribution"] = json::array();
    for (const auto& s : d.attribution) {
        json deltas = json::array();
        for (const auto& [id, v] : s.deltas) deltas.push_back({{"component", id}, {"delta_bytes", v}});
        j["attribution"].push_back({{"keys", s.keys}, {"components", deltas}, {"device_peak_delta_bytes", s.device_peak_delta},
                                    {"device_peak_after_bytes", s.device_peak_after}});
    }
    return j;
}

}  // namespace oomdx
