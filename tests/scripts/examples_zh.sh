#!/usr/bin/env bash
# Every shipped example rendered with --lang zh in text, markdown and HTML has no English prose
# outside quoted evidence, code and config blocks, identifiers and file names: no run of 4 or more
# English words (tests/scripts/examples_zh.py says what counts). The JSON report says "lang": "zh".
# $1 = oomdx binary, $2 = repo root. Exit 77 when python3 is missing.
set -u
oomdx="$1"
root="$2"
export NO_COLOR=1
command -v python3 >/dev/null 2>&1 || { echo "skipped: python3 is not installed"; exit 77; }
detector="$root/tests/scripts/examples_zh.py"
fail=0
n=0
verbs=" "
for dir in "$root"/examples/*/; do
  [ -f "$dir/cmd" ] || continue
  name=$(basename "$dir")
  read -r -a args < "$dir/cmd"
  for format in text markdown html; do
    n=$((n + 1))
    out=$(cd "$dir" && "$oomdx" "${args[@]}" --lang zh --format "$format" 2>&1)
    rc=$?
    if [ "$rc" -gt 1 ]; then
      echo "FAIL $name ($format): oomdx exited $rc: ${out:0:300}"
      fail=$((fail + 1))
      continue
    fi
    if ! hits=$(printf '%s' "$out" | python3 "$detector" "$format"); then
      echo "FAIL $name ($format): English prose in the Chinese report"
      printf '%s\n' "$hits" | head -20
      fail=$((fail + 1))
    fi
    if [ "$format" = html ] && ! printf '%s' "$out" | grep -q '<html lang="zh-CN">'; then
      echo "FAIL $name (html): no <html lang=\"zh-CN\">"
      fail=$((fail + 1))
    fi
  done
  # The JSON's "lang" is set by the verb's renderer: checked once per verb (diagnose, preflight, ...).
  case "$verbs" in *" ${args[0]} "*) continue ;; esac
  verbs="$verbs${args[0]} "
  lang=$(cd "$dir" && "$oomdx" "${args[@]}" --lang zh --format json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin).get("lang"))')
  if [ "$lang" != zh ]; then
    echo "FAIL $name (json): \"lang\" is '$lang', expected zh"
    fail=$((fail + 1))
  fi
done
echo "$n reports checked, $fail failures"
[ "$n" -ge 30 ] || { echo "FAIL: expected at least 10 examples in three formats"; exit 1; }
[ "$fail" = 0 ]
