// `oomdx diff`: two job configurations through the estimator. The keys that differ (effective
// values, defaults applied), the estimate of each side, the per-component deltas (they add up
// exactly to the difference of the device peaks), and which changed key moved which component:
// the changes applied one at a time, in a documented order, each step re-estimated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/fact_store.h"
#include "engine/estimator/estimate.h"

namespace oomdx {

struct diff_change {
    std::string key;
    value a, b;                 // null: not set on that side
    std::string a_source, b_source;
};

struct diff_component {
    std::string id, label;
    std::int64_t a_bytes = 0, b_bytes = 0;
};

// One change applied on top of the previous ones: how much each component moved.
struct diff_step {
    std::vector<std::string> keys;  // usually one key; the residual step lists what else differs
    std::vector<std::pair<std::string, std::int64_t>> deltas;  // component id -> bytes
    std::int64_t device_peak_delta = 0;
    std::int64_t device_peak_after = 0;
};

struct config_diff {
    std::vector<diff_change> changed;
    estimate_result a, b;
    std::vector<diff_component> components;  // deltas add up to b.device_peak - a.device_peak
    std::vector<diff_step> attribution;      // in application order; deltas add up the same way
};

// Canonical facts that describe a configuration for the diff (config keys, model, device, world).
bool is_config_fact(const std::string& name);
// Order in which changes are applied: model and device first, then world size and parallelism,
// precision, batch and sequence, checkpointing, optimizer, the rest; alphabetical within each.
int change_order(const std::string& key);
config_diff diff_configs(const fact_store& a, const fact_store& b);

nlohmann::json to_json(const config_diff& d);  // "schema": "oomdx.diff/1"

}  // namespace oomdx
