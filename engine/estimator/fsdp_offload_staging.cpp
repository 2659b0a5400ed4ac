#include "engine/estimator/fsdp_offload_staging.h"

#include <algorithm>

namespace oomdx::est {

double fsdp_offload_staging_bytes(double unit_elements, double shard_n, double stored_bytes, double gather_bytes) {
    const double shard = unit_elements / std::max(1.0, shard_n);
    return shard * (stored_bytes + (stored_bytes != gather_bytes ? gather_bytes : 0.0));
}

}  // namespace oomdx::est
