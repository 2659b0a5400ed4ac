#!/usr/bin/env bash
# Installs the dependencies, builds with AddressSanitizer + UBSan (preset asan, build-asan/) and
# runs the whole test suite there: unit, golden, rule packs, bad inputs, corpus tests when
# ../shared exists. Any sanitizer report fails its test. OOMDX_TEST_RELEASE=1 also builds the
# release build (build/) and runs the same suite in it first.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${OOMDX_TEST_RELEASE:-0}" = 1 ]; then
  OOMDX_WITH_BROWSER=1 ./scripts/setup.sh
  ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
else
  OOMDX_WITH_BROWSER=1 OOMDX_SETUP_DEPS_ONLY=1 ./scripts/setup.sh
fi
cmake --preset asan >/dev/null
cmake --build --preset asan -j"$(nproc)"
ctest --preset asan -j"$(nproc)" --timeout 900
