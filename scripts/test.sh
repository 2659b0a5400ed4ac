#!/usr/bin/env bash
# Builds and runs the whole test suite (unit, golden, rule packs, bad inputs, corpus when
# ../shared exists), then builds again with AddressSanitizer + UBSan (preset asan) and runs the
# same suite there. OOMDX_SKIP_SANITIZERS=1 runs the first stage only.
set -euo pipefail
cd "$(dirname "$0")/.."
OOMDX_WITH_BROWSER=1 ./scripts/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
if [ "${OOMDX_SKIP_SANITIZERS:-0}" != 1 ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j"$(nproc)"
  ctest --preset asan -j"$(nproc)" --timeout 900
fi
