#!/usr/bin/env bash
# The bad-input suite (tests/bad_inputs/run.py): every input kind broken every way -> exit 2
# with one clear located error, or a clear result where the input is tolerable.
set -euo pipefail
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
exec python3 "$2/tests/bad_inputs/run.py" "$1"
