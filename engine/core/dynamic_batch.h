// Dynamic batching (verl use_dynamic_bsz): a micro-batch is whole sequences up to a token budget per
// device, the budget counted after the sequence-parallel split. The two directions are inverses:
// dynamic_batch_sequences(dynamic_batch_tokens(m, cp, seq), cp, seq) == m whenever cp < seq.
#pragma once

#include <algorithm>
#include <cstdint>

namespace oomdx {

// Sequences of `seq_len` tokens that a budget of `tokens_per_device` holds (at least one, rounded down).
inline std::int64_t dynamic_batch_sequences(std::int64_t tokens_per_device, std::int64_t cp, std::int64_t seq_len) {
    return std::max<std::int64_t>(1, tokens_per_device * std::max<std::int64_t>(1, cp) / std::max<std::int64_t>(1, seq_len));
}

// The budget per device that holds `sequences` sequences of `seq_len` tokens (rounded up).
inline std::int64_t dynamic_batch_tokens(std::int64_t sequences, std::int64_t cp, std::int64_t seq_len) {
    const std::int64_t c = std::max<std::int64_t>(1, cp);
    return (sequences * seq_len + c - 1) / c;
}

}  // namespace oomdx
