// The device catalog (knowledge/devices.yaml): nominal capacity and what torch reports as
// total memory, looked up by the spellings people and logs use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/fact.h"

namespace oomdx {

struct device_info {
    std::string id, name, kind;        // kind: cuda | npu | hip
    std::int64_t capacity_bytes = 0;   // torch-reported total; 0 when unknown
    std::int64_t nominal_bytes = 0;    // marketing capacity (decimal GB)
    std::string confidence;            // observed | inferred | unverified
    std::string source;                // knowledge/devices.yaml:line
    std::optional<bool> bf16;          // rev27: bf16 compute (false before NVIDIA Ampere); unset off the catalog
};

// "h100", "H100-80GB", "NVIDIA H100 80GB HBM3", "910B3", "Ascend910B", "a100 40gb", ...
std::optional<device_info> lookup_device(std::string_view spelling);
std::vector<device_info> all_devices();
// device.* facts; source is catalog | oom_message | snapshot | user.
void emit_facts(const device_info&, fact_sink&, const std::string& source);
// A device seen only through an OOM message's "total capacity": the closest catalog entry
// (within 1.5%) with the observed capacity, or an anonymous one.
device_info device_from_capacity(std::int64_t total_bytes, std::string_view kind = "cuda");

}  // namespace oomdx
