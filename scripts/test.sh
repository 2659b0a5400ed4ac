#!/usr/bin/env bash
# Builds and runs the whole test suite (unit, golden, rule packs, corpus when ../shared exists).
set -euo pipefail
cd "$(dirname "$0")/.."
OOMDX_WITH_BROWSER=1 ./scripts/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
