#!/usr/bin/env bash
# Golden test of every example: its text report must equal expected.txt, its exit code
# expected.rc, and its JSON report must parse with the documented schema.
# OOMDX_UPDATE_GOLDEN=1 rewrites the expected files.
set -u
oomdx="$1"
root="$2"
export NO_COLOR=1
root_abs=$(cd "$root" && pwd -P)
fail=0
n=0
for dir in "$root"/examples/*/; do
  [ -f "$dir/cmd" ] || continue
  n=$((n + 1))
  name=$(basename "$dir")
  read -r -a args < "$dir/cmd"
  out=$(cd "$dir" && "$oomdx" "${args[@]}" --format text 2>&1)
  rc=$?
  # Paths of shipped data files depend on where the repository is checked out.
  out=${out//"$root_abs/"/}
  if [ "${OOMDX_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$out" > "$dir/expected.txt"
    echo "$rc" > "$dir/expected.rc"
    (cd "$dir" && "$oomdx" "${args[@]}" --format json > expected.json 2>/dev/null)
    continue
  fi
  if ! diff -u "$dir/expected.txt" <(printf '%s\n' "$out") > /tmp/oomdx_golden_$$.diff; then
    echo "FAIL $name: text report differs from expected.txt"
    head -40 /tmp/oomdx_golden_$$.diff
    fail=$((fail + 1))
  fi
  if [ "$rc" != "$(cat "$dir/expected.rc")" ]; then
    echo "FAIL $name: exit code $rc, expected $(cat "$dir/expected.rc")"
    fail=$((fail + 1))
  fi
  json=$(cd "$dir" && "$oomdx" "${args[@]}" --format json 2>/dev/null)
  if ! printf '%s' "$json" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["schema"] in ("oomdx.diagnosis/1", "oomdx.preflight/1"), j.get("schema")
for k in ("headline", "oom", "estimate", "snapshot", "route", "findings", "recommendations", "next_steps", "uncertain"):
    assert k in j, k
for r in j["recommendations"]:
    for k in ("rank", "action", "overrides", "rendered", "expected_peak_bytes", "rationale"):
        assert k in r, k
for f in j["findings"]:
    for k in ("id", "text", "evidence"):
        assert k in f, k
'; then
    echo "FAIL $name: JSON report does not follow oomdx.diagnosis/1"
    fail=$((fail + 1))
  fi
done
rm -f /tmp/oomdx_golden_$$.diff
[ "${OOMDX_UPDATE_GOLDEN:-0}" = 1 ] && { echo "updated $n examples"; exit 0; }
echo "$((n - fail > 0 ? n : 0)) examples checked, $fail failures"
[ "$n" -ge 10 ] || { echo "FAIL: expected at least 10 examples, found $n"; exit 1; }
[ "$fail" = 0 ]
