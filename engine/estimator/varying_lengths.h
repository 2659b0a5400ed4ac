// Steps of varying length (fine-tuning without packing: each batch padded to its longest sample):
// replays the large activation and loss buffers of each step through the caching-allocator model
// (allocator_sim.h) and reports how far the reserved high-water mark grows above fixed-length steps.
// docs/estimator.md "Interval", round est25.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/estimator/estimate.h"

namespace oomdx::est {

struct length_replay {
    bool applied = false;
    std::vector<std::int64_t> lengths;       // step lengths replayed (tokens per sample)
    std::int64_t fixed_reserved = 0;         // simulated reserved high water, every step at full length
    std::int64_t varying_reserved = 0;       // the same with the varying lengths (under the device limit, when given)
    std::int64_t growth = 0;                 // varying - fixed: segments of earlier sizes kept in the cache
    // rev25: the replay under the device limit (device_peak given) and what it changed
    bool capped = false;                     // the unlimited high water passed the limit: replayed under it
    bool completes = true;                   // the varying steps complete under that limit
    std::int64_t limit = 0;                  // the limit the rest of the job leaves (0: none applied)
    std::int64_t unlimited_growth = 0;       // growth with no device limit (= growth when not capped)
    std::int64_t fixed_need = 0;             // smallest allocator limit each sequence completes under
    std::int64_t varying_need = 0;           //   (the OOM retry releases cached whole segments first)
};

// Whether the job's step lengths vary: HF-style collators without packing, no fixed-length data, no
// expandable segments, no pipeline (estimate_input.lengths_vary, from_facts).
bool lengths_vary(const estimate_input& in);

// Steps assumed for the number of new maxima when the run length is not known.
inline constexpr std::int64_t k_assumed_steps = 1000;

// The stated assumption (docs/estimator.md): the step lengths set new maxima at s/2, 3s/4, 7s/8, ...
// (each new maximum of lengths met in random order lies, on average, halfway between the last one
// and the longest) for as many maxima as `steps` random draws are expected to set (harmonic number),
// stopping where the largest loss buffer would grow by less than the allocator's 2 MiB segment
// rounding; then the full length.
std::vector<std::int64_t> record_lengths(std::int64_t seq_len, double largest_buffer_per_token, std::int64_t steps);

// Replays `lengths` then the full length; `need` (the bisection on the allocator limit) only when
// `with_need`. `device_peak` > 0 with a known capacity: the job's device peak at fixed length, whose part
// outside these buffers (device_peak - fixed_reserved) the allocator cannot reserve; the varying replay's
// reserved high water is then taken under the limit left (over it the allocator releases its cache and
// retries), so the growth is one a device of that capacity can show (rev24).
length_replay replay_lengths(const estimate_input& in, const std::vector<std::int64_t>& lengths, bool with_need = true,
                             std::int64_t device_peak = 0);

// The job's replay under the stated assumption (record_lengths with k_assumed_steps); `applied` false
// when its lengths do not vary. `logits_bpe`: the estimate's loss bytes per token x vocab element.
length_replay replay_job(const estimate_input& in, double logits_bpe, std::int64_t device_peak = 0);

}  // namespace oomdx::est
