// Megatron's vocabulary padding (megatron/training/tokenizer/tokenizer.py _vocab_size_with_padding): the
// tokenizer's size rounded up to a multiple of make_vocab_size_divisible_by x tensor-parallel size.
#pragma once

#include <algorithm>
#include <cstdint>

namespace oomdx {

inline std::int64_t megatron_padding_multiple(std::int64_t divisible_by, std::int64_t tp) {
    return std::max<std::int64_t>(1, divisible_by) * std::max<std::int64_t>(1, tp);
}

inline std::int64_t megatron_padded_vocab(std::int64_t vocab, std::int64_t divisible_by, std::int64_t tp) {
    const std::int64_t multiple = megatron_padding_multiple(divisible_by, tp);
    return (vocab + multiple - 1) / multiple * multiple;
}

}  // namespace oomdx
