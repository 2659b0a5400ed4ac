#!/usr/bin/env bash
# Every shipped example rendered with --lang zh in text, markdown and HTML has no English prose
# outside quoted evidence, code and config blocks, identifiers and file names: no run of 4 or more
# English words (tests/scripts/examples_zh.py says what counts). The JSON report says "lang": "zh".
# Each example runs once: text on stdout, markdown, HTML and JSON through --output. An example with
# an expected_zh.txt must render exactly that text (OOMDX_UPDATE_GOLDEN=1 rewrites it).
# $1 = oomdx binary, $2 = repo root. Exit 77 when python3 is missing.
set -u
oomdx="$1"
root="$2"
root_abs=$(cd "$root" && pwd -P)
export NO_COLOR=1
command -v python3 >/dev/null 2>&1 || { echo "skipped: python3 is not installed"; exit 77; }
detector="$root/tests/scripts/examples_zh.py"
fail=0
n=0
verbs=" "
tmp=$(mktemp -d /tmp/oomdx_zh.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for dir in "$root"/examples/*/; do
  [ -f "$dir/cmd" ] || continue
  name=$(basename "$dir")
  read -r -a args < "$dir/cmd"
  # One analysis per example: text on stdout, the other formats through --output.
  rm -f "$tmp"/report.*
  text=$(cd "$dir" && "$oomdx" "${args[@]}" --lang zh --format text -o markdown="$tmp/report.markdown" \
         -o html="$tmp/report.html" -o json="$tmp/report.json" 2>&1)
  rc=$?
  if [ "$rc" -gt 1 ]; then
    echo "FAIL $name: oomdx exited $rc: ${text:0:300}"
    fail=$((fail + 1))
    continue
  fi
  printf '%s' "$text" > "$tmp/report.text"
  # A few examples pin their whole Chinese text report (expected_zh.txt; the review of docs/i18n.md):
  # OOMDX_UPDATE_GOLDEN=1 rewrites those that exist.
  if [ -f "$dir/expected_zh.txt" ]; then
    shown=${text//"$root_abs/"/}
    if [ "${OOMDX_UPDATE_GOLDEN:-0}" = 1 ]; then
      printf '%s\n' "$shown" > "$dir/expected_zh.txt"
    elif ! diff -u "$dir/expected_zh.txt" <(printf '%s\n' "$shown") > "$tmp/zh.diff"; then
      echo "FAIL $name: Chinese text report differs from expected_zh.txt"
      head -40 "$tmp/zh.diff"
      fail=$((fail + 1))
    fi
  fi
  for format in text markdown html; do
    n=$((n + 1))
    if [ ! -s "$tmp/report.$format" ]; then
      echo "FAIL $name ($format): no report written"
      fail=$((fail + 1))
      continue
    fi
    if ! hits=$(python3 "$detector" "$format" < "$tmp/report.$format"); then
      echo "FAIL $name ($format): English prose in the Chinese report"
      printf '%s\n' "$hits" | head -20
      fail=$((fail + 1))
    fi
    if [ "$format" = html ] && ! grep -q '<html lang="zh-CN">' "$tmp/report.html"; then
      echo "FAIL $name (html): no <html lang=\"zh-CN\">"
      fail=$((fail + 1))
    fi
  done
  lang=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("lang"))' "$tmp/report.json")
  if [ "$lang" != zh ]; then
    echo "FAIL $name (json): \"lang\" is '$lang', expected zh"
    fail=$((fail + 1))
  fi
done
echo "$n reports checked, $fail failures"
[ "$n" -ge 30 ] || { echo "FAIL: expected at least 10 examples in three formats"; exit 1; }
[ "$fail" = 0 ]
