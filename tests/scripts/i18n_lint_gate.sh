#!/usr/bin/env bash
# The translation gate of `oomdx rules lint --strict` (run in CI as rules.lint): a copy of the
# shipped packs passes; adding an English-only finding fails it (W206 missing-translation);
# translating it passes again; a changed English text makes its translation stale (W207); a
# translation that uses another fact fails even without --strict (E115).
# $1 = oomdx binary, $2 = repo root.
set -u
oomdx="$1"
root="$2"
tmp=$(mktemp -d /tmp/oomdx_i18n_gate.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/rules" "$tmp/rules"
fail=0
expect() {  # expect RC CODE DESCRIPTION: lint exits RC and (when CODE is set) reports CODE
  local rc_want="$1" code="$2" what="$3" strict="${4:---strict}"
  out=$("$oomdx" rules lint $strict "$tmp/rules" 2>&1)
  rc=$?
  if [ "$rc" != "$rc_want" ] || { [ -n "$code" ] && ! grep -q "$code" <<< "$out"; }; then
    echo "FAIL $what: exit $rc (expected $rc_want)${code:+, expected $code}"
    grep -E "error|warning" <<< "$out" | head -5
    fail=1
  else
    echo "ok   $what"
  fi
}
# (The shipped packs themselves pass: rules.lint. The copy passes again below, with a translated addition.)

cat >> "$tmp/rules/step1_budget.yaml" <<'YAML'

- rule: gate_english_only
  desc: "A rule added without its translation."
  step: step1
  condition: estimate.capacity_bytes > 1000 TiB
  finding: "The device is larger than any known device ({estimate.capacity_bytes|bytes})."
YAML
cat >> "$tmp/rules/step1_budget.test.yaml" <<'YAML'
  - name: gate rule
    facts: {job.mode: preflight, estimate.capacity_bytes: 2000 TiB}
    expect_fired: [gate_english_only]
YAML
expect 2 "W206 missing-translation" "an English-only finding fails the strict lint"

cat >> "$tmp/rules/i18n/zh/step1_budget.yaml" <<'YAML'

- rule: gate_english_only
  finding:
    en: "The device is larger than any known device ({estimate.capacity_bytes|bytes})."
    zh: "设备比任何已知设备都大（{estimate.capacity_bytes|bytes}）。"
YAML
expect 0 "" "the same finding with its translation passes"

sed -i 's/larger than any known device (/larger than any device we know (/' "$tmp/rules/step1_budget.yaml"
expect 2 "W207 stale-translation" "a changed English text makes its translation stale"

sed -i 's/larger than any device we know (/larger than any known device (/; ' "$tmp/rules/step1_budget.yaml"
sed -i 's/zh: "设备比任何已知设备都大（{estimate.capacity_bytes|bytes}）。"/zh: "设备比任何已知设备都大（{estimate.budget_bytes|bytes}）。"/' "$tmp/rules/i18n/zh/step1_budget.yaml"
expect 2 "E115 translation-mismatch" "a translation with another fact is an error" ""

exit $fail
