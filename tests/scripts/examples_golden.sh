#!/usr/bin/env bash
# Golden test of every example: its text report must equal expected.txt, its exit code
# expected.rc, its JSON report must equal expected.json (keys sorted; the version, timings and
# the checkout path masked) and follow the documented schema; no two findings may contradict each
# other, and no sentence may show a template slip ("{...}", " ? ", "unknown" figures in a template).
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
  # The text run also writes the plain JSON through --output: it must equal expected.json too.
  rm -f /tmp/oomdx_golden_$$.json
  out=$(cd "$dir" && "$oomdx" "${args[@]}" --format text -o json=/tmp/oomdx_golden_$$.json 2>&1)
  rc=$?
  # Paths of shipped data files depend on where the repository is checked out.
  out=${out//"$root_abs/"/}
  if [ "${OOMDX_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$out" > "$dir/expected.txt"
    echo "$rc" > "$dir/expected.rc"
    (cd "$dir" && "$oomdx" "${args[@]}" --format json 2>/dev/null) | python3 "$root/tests/scripts/normalize_json.py" "$root_abs" > "$dir/expected.json"
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
  # One run with --explain serves both checks: without its additions (the top-level "explain" and
  # each finding's "how") it is the plain JSON report (the same bytes; checked when this changed).
  explained=$(cd "$dir" && "$oomdx" "${args[@]}" --format json --explain 2>/dev/null)
  json=$(printf '%s' "$explained" | python3 -c '
import json, sys
j = json.load(sys.stdin)
j.pop("explain", None)
for f in j.get("findings", []):
    f.pop("how", None)
print(json.dumps(j, ensure_ascii=False))
')
  if ! diff -u "$dir/expected.json" <(printf '%s' "$json" | python3 "$root/tests/scripts/normalize_json.py" "$root_abs") > /tmp/oomdx_golden_$$.diff; then
    echo "FAIL $name: JSON report differs from expected.json"
    head -40 /tmp/oomdx_golden_$$.diff
    fail=$((fail + 1))
  fi
  if ! diff -u "$dir/expected.json" <(python3 "$root/tests/scripts/normalize_json.py" "$root_abs" < /tmp/oomdx_golden_$$.json) > /tmp/oomdx_golden_$$.diff; then
    echo "FAIL $name: the JSON written by --output differs from expected.json"
    head -20 /tmp/oomdx_golden_$$.diff
    fail=$((fail + 1))
  fi
  if ! printf '%s' "$explained" | python3 -c '
import json, re, sys
j = json.load(sys.stdin)
bad = ["contradiction: %s vs %s" % tuple(c) for c in j["explain"].get("contradictions", [])]
texts = [j["headline"]] + [f["text"] for f in j["findings"]] + [r["text"] for r in j["recommendations"]] \
        + [r.get("confirm", "") for r in j["recommendations"]] + j["next_steps"] + j["uncertain"] + [s["why"] for s in j["route"]]
for t in texts:
    if re.search(r"[{}]| \? |\(\?\)|happened (init|early|late|mid) in", t): bad.append("template slip: " + t[:160])
for b in bad: print(b)
sys.exit(1 if bad else 0)
'; then
    echo "FAIL $name: contradictions or template slips (above)"
    fail=$((fail + 1))
  fi
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
rm -f /tmp/oomdx_golden_$$.diff /tmp/oomdx_golden_$$.json
[ "${OOMDX_UPDATE_GOLDEN:-0}" = 1 ] && { echo "updated $n examples"; exit 0; }
echo "$((n - fail > 0 ? n : 0)) examples checked, $fail failures"
[ "$n" -ge 16 ] || { echo "FAIL: expected at least 16 examples, found $n"; exit 1; }
[ "$fail" = 0 ]
