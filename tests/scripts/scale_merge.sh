#!/usr/bin/env bash
# Stands in for a cluster (docs/scale.md): per-rank snapshots on several "nodes", the recipes of
# docs/scale.md run several at once, each writing summaries into one shared folder, then one
# merge. Checks: the merge's `ranks` section equals `oomdx snapshot DIR...` on the snapshots;
# the torchrun OOM hook printed by `oomdx capture --on-oom` summarizes each rank (with a
# stand-in torch module); a cut and a missing summary are reported by rank, never dropped; a
# merge running while summaries are rewritten, or while several processes write new ones, never
# reads half a file. Run under the asan preset (ctest) and a ThreadSanitizer build (docs/scale.md).
# $1 = oomdx binary, $2 = repo root. Exit 77 without python3.
set -u
oomdx=$(realpath "$1")
root="$2"
command -v python3 >/dev/null 2>&1 || { echo "skipped: python3 is not installed"; exit 77; }
fx="$root/tests/fixtures/snapshots"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OOMDX="$oomdx"
fail=0
check() {  # check MESSAGE COMMAND...
  local msg="$1"
  shift
  if "$@"; then echo "ok   $msg"; else echo "FAIL $msg"; fail=1; fi
}

# The recipe named $1 from docs/scale.md, as a script file.
recipe() {
  awk -v name="$1" '
    /^```bash/ { inb = 1; body = ""; next }
    /^```/ { if (inb && found) { printf "%s", body; exit } inb = 0; found = 0; next }
    inb { if ($0 == "# recipe: " name) found = 1; body = body $0 "\n" }
  ' "$root/docs/scale.md" > "$work/$1.sh"
  [ -s "$work/$1.sh" ] || { echo "FAIL docs/scale.md has no recipe $1"; exit 1; }
  echo "$work/$1.sh"
}

# Eight ranks on four nodes, two per node; the snapshots differ (fixtures of several eras).
snaps=(v2_7_oom_expandable v2_6_annotations v2_9_user_metadata_p5 v2_5_allocator_settings
       v2_1_no_time v2_7_oom_expandable state_only v2_6_annotations)
for r in 0 1 2 3 4 5 6 7; do
  node=$((r / 2))
  mkdir -p "$work/node$node"
  cp "$fx/${snaps[$r]}.pickle" "$work/node$node/oom_snapshot_rank$r.pickle"
done

# Slurm: one task per node, all at once, into one shared folder; then the merge.
slurm=$(recipe slurm-summarize)
merge=$(recipe merge)
shared="$work/summaries"
pids=()
for node in 0 1 2 3; do
  OOMDX_SUMMARY_DIR="$shared" OOMDX_SNAPSHOT_GLOB="$work/node$node/*.pickle" bash "$slurm" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "FAIL a summarize task exited $?"; fail=1; }; done
check "8 summaries written by 4 concurrent node tasks" test "$(ls "$shared"/*.json | wc -l)" -eq 8
check "no temporary file left behind" test -z "$(ls -A "$shared" | grep -v '\.json$')"
(cd "$work" && OOMDX_SUMMARY_DIR="$shared" OOMDX_MERGED="$work/merged.json" WORLD_SIZE=8 bash "$merge") > "$work/merge.txt" 2>&1
check "the merge recipe runs" test -s "$work/merged.json"
"$oomdx" snapshot "$work"/node0 "$work"/node1 "$work"/node2 "$work"/node3 --format json > "$work/dir.json" 2>/dev/null
same_ranks() {
  python3 - "$1" "$2" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["ranks"]
b = json.load(open(sys.argv[2]))["ranks"]
if a != b:
    for k in a:
        if a.get(k) != b.get(k): print(f"  {k}: {str(a.get(k))[:200]} != {str(b.get(k))[:200]}")
    sys.exit(1)
PY
}
check "merge of the summaries = the directory analysis (ranks section)" same_ranks "$work/dir.json" "$work/merged.json"
check "text report names the ranks and the first to fail" grep -q "first to fail" "$work/merge.txt"

# Kubernetes indexed Job: one pod per rank, all at once.
k8s=$(recipe k8s-summarize)
mkdir -p "$work/snaps"
for r in 0 1 2 3 4 5 6 7; do cp "$work/node$((r / 2))/oom_snapshot_rank$r.pickle" "$work/snaps/rank${r}_oom.pickle"; done
pids=()
for r in 0 1 2 3 4 5 6 7; do
  JOB_COMPLETION_INDEX=$r OOMDX_SNAPSHOT_DIR="$work/snaps" OOMDX_SUMMARY_DIR="$work/k8s" bash "$k8s" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "FAIL a pod exited $?"; fail=1; }; done
"$oomdx" snapshot merge "$work/k8s" --world-size 8 --format json > "$work/k8s.json" 2>/dev/null
check "k8s: 8 ranks merged, rank numbers from JOB_COMPLETION_INDEX" python3 -c "
import json; r = json.load(open('$work/k8s.json'))['ranks']
assert [x['rank'] for x in r['rows']] == list(range(8)), r['rows']
assert r['missing_ranks'] == [] and r['failed_ranks'] == [0, 5], r['failed_ranks']"

# torchrun OOM hook: the code `oomdx capture --on-oom` prints, run by 4 ranks with a stand-in torch
# whose OOM observer fires at once; each rank dumps and summarizes its own snapshot.
"$oomdx" capture --device cuda --on-oom > "$work/hook.py"
mkdir -p "$work/fake/torch"
cat > "$work/fake/torch/__init__.py" <<'PY'
import os, shutil
class _Memory:
    @staticmethod
    def _record_memory_history(*a, **k): pass
    @staticmethod
    def _dump_snapshot(path): shutil.copy(os.environ["FAKE_SNAPSHOT"], path)
class cuda:
    memory = _Memory
class _C:
    @staticmethod
    def _cuda_attach_out_of_memory_observer(fn): fn(0, 1 << 30, 0, 0)  # the OOM, right away
PY
pids=()
for r in 0 1 2 3; do
  PYTHONPATH="$work/fake" RANK=$r FAKE_SNAPSHOT="$work/snaps/rank${r}_oom.pickle" \
    OOMDX_SNAPSHOT_DIR="$work/local$r" OOMDX_SUMMARY_DIR="$work/hook" python3 "$work/hook.py" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "FAIL a rank's hook exited $?"; fail=1; }; done
"$oomdx" snapshot merge "$work/hook" --format json > "$work/hook.json" 2>/dev/null
check "torchrun hook: each of 4 ranks summarized its own snapshot" python3 -c "
import json; r = json.load(open('$work/hook.json'))['ranks']
assert [x['rank'] for x in r['rows']] == [0, 1, 2, 3], r['rows']"

# A cut summary and a missing rank are reported by rank, not dropped.
cp -r "$shared" "$work/damaged"
head -c 300 "$work/damaged/oom_snapshot_rank3.pickle.json" > "$work/damaged/cut" && mv "$work/damaged/cut" "$work/damaged/oom_snapshot_rank3.pickle.json"
rm "$work/damaged/oom_snapshot_rank6.pickle.json"
"$oomdx" snapshot merge "$work/damaged" --world-size 8 --format json > "$work/damaged.json" 2> "$work/damaged.err"
check "a cut summary and a missing one: reported by rank" python3 -c "
import json; d = json.load(open('$work/damaged.json'))
bad = d['merge']['bad']; r = d['ranks']
assert [b['rank'] for b in bad] == [3] and 'byte' in bad[0]['error'], bad
assert r['missing_ranks'] == [3, 6], r['missing_ranks']
assert len(r['rows']) == 6"
check "the cut summary is named on stderr" grep -q "rank 3:" "$work/damaged.err"
"$oomdx" snapshot merge "$work/damaged" --world-size 8 --strict > /dev/null 2>&1
check "--strict exits 2 when a summary is bad or missing" test $? -eq 2
"$oomdx" snapshot merge "@$work/none.txt" > /dev/null 2>&1
check "an unreadable @list is an error (exit 2)" test $? -eq 2

# Rewrites while merging: summaries are replaced (atomically) again and again while merges run;
# every merge sees 8 whole summaries.
(for i in 1 2 3 4 5; do
   for r in 0 1 2 3 4 5 6 7; do
     "$oomdx" snapshot "$work/snaps/rank${r}_oom.pickle" --format json --rank "$r" --output "$shared/oom_snapshot_rank$r.pickle.json" &
   done
   wait
 done) &
writer=$!
torn=0
for i in 1 2 3 4 5 6 7 8 9 10; do
  "$oomdx" snapshot merge "$shared" --format json > "$work/live.json" 2>/dev/null
  python3 -c "
import json; d = json.load(open('$work/live.json'))
assert not d['merge']['bad'] and len(d['ranks']['rows']) == 8, d['merge']" || torn=1
done
wait "$writer"
check "merges during concurrent rewrites never read half a summary" test "$torn" -eq 0

# New summaries appearing while merges run: 4 writer processes at once, each writing its ranks
# (--output: temp file + rename); every merge sees each summary whole or not at all.
fresh="$work/fresh"
mkdir -p "$fresh"
(for w in 0 1 2 3; do
   (for r in $(seq "$w" 4 31); do
      "$oomdx" snapshot "$work/snaps/rank$((r % 8))_oom.pickle" --format json --rank "$r" --output "$fresh/rank$r.json" || exit 1
    done) &
 done
 wait) &
writer=$!
torn=0
merges=0
while kill -0 "$writer" 2>/dev/null || [ "$merges" -lt 3 ]; do
  "$oomdx" snapshot merge "$fresh" --format json > "$work/fresh.json" 2> "$work/fresh.err"
  rc=$?
  merges=$((merges + 1))
  [ "$rc" -eq 2 ] && grep -q "no \*.json\|no summary matches" "$work/fresh.err" && continue  # none written yet
  python3 -c "
import json; d = json.load(open('$work/fresh.json'))
assert not d['merge']['bad'], d['merge']['bad']" || torn=1
done
wait "$writer"
check "merges while 4 processes write new summaries ($merges merges) never read half a summary" test "$torn" -eq 0
"$oomdx" snapshot merge "$fresh" --world-size 32 --format json > "$work/fresh.json" 2>/dev/null
check "then all 32 summaries merge, none missing" python3 -c "
import json; r = json.load(open('$work/fresh.json'))['ranks']
assert [x['rank'] for x in r['rows']] == list(range(32)) and r['missing_ranks'] == [], r['missing_ranks']"

# Logs: four per-rank logs summarized by two "nodes" at once, then merged.
mkdir -p "$work/logs0" "$work/logs1"
lf="$root/tests/fixtures/logs"
cp "$lf/torchtitan_leak.log" "$work/logs0/rank0.log"
cp "$lf/megatron_old_format.log" "$work/logs0/rank1.log"
cp "$lf/deepspeed_npu_crlf.log" "$work/logs1/rank2.log"
cp "$lf/torchtitan_leak.log" "$work/logs1/rank3.log"
logr=$(recipe log-summarize)
for node in 0 1; do
  OOMDX_SUMMARY_DIR="$work/logsum" OOMDX_LOG_GLOB="$work/logs$node/*.log" bash "$logr" > /dev/null &
done
wait
"$oomdx" log merge "$work/logsum" --world-size 5 --format json > "$work/logs.json" 2>/dev/null
check "log merge: 4 ranks, failures and the missing rank 4" python3 -c "
import json; d = json.load(open('$work/logs.json')); r = d['ranks']
assert [x['rank'] for x in r['rows']] == [0, 1, 2, 3], r['rows']
assert r['failed_ranks'] and r['first_failed_rank'] is not None, r
assert r['missing_ranks'] == [4], r['missing_ranks']"

[ "$fail" -eq 0 ] && echo "scale: all checks passed"
exit "$fail"
