// The caching allocator's settings as the job sets them: PYTORCH_CUDA_ALLOC_CONF,
// PYTORCH_NPU_ALLOC_CONF or PYTORCH_ALLOC_CONF ("key:value,key:value"), read into
// allocator.* facts that the estimator and the rules share.
#pragma once

#include <optional>
#include <string>

namespace oomdx {

class fact_store;

struct alloc_conf {
    std::optional<bool> expandable_segments;
    std::optional<long long> max_split_size_mb;
};

// Parses one setting string; unknown keys and unreadable values are left out (PyTorch refuses them at start-up).
alloc_conf parse_alloc_conf(const std::string& text);

// Emits allocator.expandable_segments / allocator.max_split_size_mb from the env.* setting the
// job's device reads (the device's own name first, then PYTORCH_ALLOC_CONF).
void derive_allocator_facts(fact_store& facts);

}  // namespace oomdx
