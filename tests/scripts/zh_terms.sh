#!/usr/bin/env bash
# The Chinese translations use the glossary's terms and Chinese typography (tests/scripts/zh_terms.py
# says which variants it refuses). $1 = oomdx binary (unused), $2 = repo root. Exit 77 without
# python3 or PyYAML.
set -u
root="$2"
command -v python3 >/dev/null 2>&1 || { echo "skipped: python3 is not installed"; exit 77; }
python3 -c 'import yaml' 2>/dev/null || { echo "skipped: PyYAML is not installed"; exit 77; }
python3 "$root/tests/scripts/zh_terms.py" "$root"
