// The JSON snapshot loader and the full snapshot analysis on arbitrary bytes.
#include "tests/fuzz/fuzz_snapshot_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return oomdx::fuzz::run_snapshot(data, size, /*want_pickle=*/false);
}
