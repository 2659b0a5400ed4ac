// torch FSDP parameter CPU offload on the device (issue 16, est67): what one unit's unshard stages there.
// FSDP2 (CPUOffloadPolicy) keeps the sharded parameters, their gradients and the optimizer step on the host; before
// each all-gather FSDPParam.all_gather_inputs copies the unit's shard to the device in the dtype it is stored in and,
// under mixed precision, casts that copy to the all-gather dtype; both are freed once copied into the all-gather
// input. FSDP1's FlatParamHandle does the same (_use_low_precision_shard: the shard moved to the device, then copied
// into the low-precision _mp_shard). Sources: knowledge/estimator.yaml (est67).
#pragma once

namespace oomdx::est {

// Bytes one unit's offloaded shard occupies on the device while it is staged for the all-gather: `unit_elements`
// parameters split over `shard_n` ranks, stored at `stored_bytes` per element on the host and all-gathered at
// `gather_bytes` (the cast exists only when the two differ).
double fsdp_offload_staging_bytes(double unit_elements, double shard_n, double stored_bytes, double gather_bytes);

}  // namespace oomdx::est
