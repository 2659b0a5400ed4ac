#!/usr/bin/env bash
# Golden test of `oomdx snapshot` text in English and Chinese (--lang, rev37): one file with an OOM (text and
# markdown), the two ranks of examples/ranks_one_failed (the cross-rank table), a diff and a trend, each equal to
# tests/fixtures/snapshot_text/<name>.txt.
# The Chinese reports must not fall back to English in their fixed texts (section titles, keys, table heads).
# OOMDX_UPDATE_GOLDEN=1 rewrites the expected files.
set -u
oomdx="$1"
root="$2"
export NO_COLOR=1
ex="$root/examples"
gold="$root/tests/fixtures/snapshot_text"
fail=0
run() {  # name, then the arguments
  local name=$1
  shift
  local out
  out=$(cd "$ex" && "$oomdx" snapshot "$@" 2>&1)
  if [ "${OOMDX_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$out" > "$gold/$name.txt"
    return
  fi
  if ! diff -u "$gold/$name.txt" <(printf '%s\n' "$out") > /tmp/oomdx_snaptext_$$.diff; then
    echo "FAIL $name: differs from tests/fixtures/snapshot_text/$name.txt"
    head -30 /tmp/oomdx_snaptext_$$.diff
    fail=$((fail + 1))
  fi
  if [[ $name == *_zh ]] && printf '%s\n' "$out" | grep -E -q '^(Snapshot |Device [0-9]|  (reserved|live allocated|fragmentation|frees|verdict) )|: (live memory by category|trace|diagnosis)$|^Main finding'; then
    echo "FAIL $name: English fixed text in the Chinese report"
    printf '%s\n' "$out" | grep -E '^(Snapshot |Device [0-9]|  (reserved|live allocated|fragmentation|frees|verdict) )|: (live memory by category|trace|diagnosis)$|^Main finding' | head -5
    fail=$((fail + 1))
  fi
}
for lang in en zh; do
  run "oom_$lang" fragmentation_snapshot/oom.pickle --lang "$lang"
  run "ranks_$lang" ranks_one_failed/rank0.pickle ranks_one_failed/rank1.pickle --lang "$lang"
  run "diff_$lang" diff leak_three_snapshots/step5.pickle leak_three_snapshots/step10.pickle --lang "$lang"
  run "oom_md_$lang" fragmentation_snapshot/oom.pickle --format markdown --lang "$lang"
  run "trend_$lang" trend leak_three_snapshots/step5.pickle leak_three_snapshots/step10.pickle \
    leak_three_snapshots/step20.pickle --lang "$lang"
done
rm -f /tmp/oomdx_snaptext_$$.diff
[ "$fail" = 0 ] && echo "ok: snapshot text goldens (en, zh)"
exit "$fail"
