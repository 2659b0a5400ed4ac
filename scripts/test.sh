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
# LeakSanitizer needs ptrace; where a container forbids it, run without leak checks (and say so).
probe=$(ASAN_OPTIONS=detect_leaks=1 build-asan/oomdx --version 2>&1 || true)
if grep -q "LeakSanitizer has encountered a fatal error" <<<"$probe"; then
  echo "test.sh: LeakSanitizer cannot run here; leak checks off (ASan and UBSan still on)" >&2
  export ASAN_OPTIONS=detect_leaks=0
fi
ctest --preset asan -j"$(nproc)" --timeout 900
