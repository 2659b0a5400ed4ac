#!/usr/bin/env bash
# Issue 20: `diagnose` accepts summaries wherever it accepts snapshots or logs.
# - --snapshot SUMMARY.json gives the report of --snapshot FILE (one file, two files);
# - --snapshot MERGED.json (oomdx snapshot merge) gives the cross-rank view of its rows and the
#   per-snapshot section of its peak rank's summary; unreadable peak summary: exit 2;
# - --log SUMMARY.json (oomdx log --format json) gives the report of --log FILE;
# - several per-rank log summaries, or their merge (oomdx log merge), give the first rank to fail
#   with the failed ranks of all; a cut summary and a summary among logs: exit 2.
# $1 = oomdx binary, $2 = repo root. Exit 77 without python3.
set -u
oomdx=$(realpath "$1")
root="$2"
command -v python3 >/dev/null 2>&1 || { echo "skipped: python3 is not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
check() {  # check MESSAGE COMMAND...
  local msg="$1"
  shift
  if "$@"; then echo "ok   $msg"; else echo "FAIL $msg"; fail=1; fi
}
same() { cmp -s "$1" "$2"; }
diagnose() {  # diagnose OUT ARGS...: JSON report; exit status kept
  local out="$1"
  shift
  "$oomdx" diagnose "$@" --format json > "$out" 2> "$out.err"
}

# ---- snapshots -------------------------------------------------------------------------------
fx="$root/tests/fixtures/snapshots"
mkdir -p "$work/snaps" "$work/sums"
snaps=(v2_7_oom_expandable v2_6_annotations v2_9_user_metadata_p5 v2_5_allocator_settings)
for r in 0 1 2 3; do
  cp "$fx/${snaps[$r]}.pickle" "$work/snaps/rank$r.pickle"
  "$oomdx" snapshot "$work/snaps/rank$r.pickle" --format json --output "$work/sums/rank$r.json"
done
diagnose "$work/p1.json" --snapshot "$work/snaps/rank0.pickle"
diagnose "$work/s1.json" --snapshot "$work/sums/rank0.json"
check "diagnose --snapshot SUMMARY = --snapshot FILE" same "$work/p1.json" "$work/s1.json"
diagnose "$work/p2.json" --snapshot "$work/snaps/rank0.pickle" --snapshot "$work/snaps/rank1.pickle"
diagnose "$work/s2.json" --snapshot "$work/sums/rank0.json" --snapshot "$work/sums/rank1.json"
check "diagnose with two summaries = with the two snapshots" same "$work/p2.json" "$work/s2.json"
"$oomdx" snapshot merge "$work/sums" --format json --output "$work/merged.json" 2>/dev/null
diagnose "$work/m.json" --snapshot "$work/merged.json"
check "diagnose --snapshot MERGED exits 0" test $? -eq 0
"$oomdx" snapshot "$work/snaps/" --format json > "$work/dir.json"
check "merged: the cross-rank view of the rows, per-snapshot section of the peak rank" python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
m = json.load(open(f"{w}/m.json"))["snapshot"]
d = json.load(open(f"{w}/dir.json"))["ranks"]
merged = json.load(open(f"{w}/merged.json"))
assert [r["rank"] for r in m["ranks"]["rows"]] == [0, 1, 2, 3], m["ranks"]["rows"]
assert m["ranks"] == d, "the diagnosis' ranks differ from `oomdx snapshot DIR/`"
peak = merged["merge"]["peak_summary"]
best = max(d["rows"], key=lambda r: (r["peak_bytes"], -r["rank"]))
assert peak.endswith(f"rank{best['rank']}.json"), (peak, best)
assert len(m["files"]) == 1 and m["files"][0]["rank"] == best["rank"], m["files"][0].get("rank")
PY
rm "$work/sums/rank$(python3 -c "import json; print(json.load(open('$work/merged.json'))['merge']['peak_summary'].split('rank')[-1].split('.')[0])").json"
diagnose "$work/m2.json" --snapshot "$work/merged.json"
check "merged whose peak summary is gone: exit 2, one line naming the file" \
  bash -c "[ $? -eq 2 ] && [ \$(wc -l < '$work/m2.json.err') -eq 1 ] && grep -q 'merged.json' '$work/m2.json.err'"
cp "$work/merged.json" "$work/other.json"
python3 -c "
import json; d = json.load(open('$work/other.json')); d['kind'] = 'trend'; json.dump(d, open('$work/other.json', 'w'))"
diagnose "$work/o.json" --snapshot "$work/other.json"
check "another oomdx.snapshot/1 report as a snapshot: exit 2" test $? -eq 2

# ---- logs ------------------------------------------------------------------------------------
lf="$root/tests/fixtures/logs"
for f in "$lf"/*.log; do
  b=$(basename "$f" .log)
  "$oomdx" log "$f" --format json > "$work/$b.json"
  diagnose "$work/lr.json" --log "$f"
  diagnose "$work/ls.json" --log "$work/$b.json"
  check "diagnose --log SUMMARY = --log FILE ($b)" same "$work/lr.json" "$work/ls.json"
done
mkdir -p "$work/logs" "$work/logsum"
cp "$lf/torchtitan_leak.log" "$work/logs/rank0.log"
cp "$lf/megatron_old_format.log" "$work/logs/rank1.log"
cp "$lf/deepspeed_npu_crlf.log" "$work/logs/rank2.log"
cp "$lf/torchtitan_leak.log" "$work/logs/rank3.log"
for r in 0 1 2 3; do "$oomdx" log "$work/logs/rank$r.log" --format json > "$work/logsum/rank$r.json"; done
"$oomdx" log merge "$work/logsum" --format json > "$work/lmerged.json" 2>/dev/null
diagnose "$work/lm1.json" --log "$work/logsum/rank0.json" --log "$work/logsum/rank1.json" \
  --log "$work/logsum/rank2.json" --log "$work/logsum/rank3.json"
diagnose "$work/lm2.json" --log "$work/lmerged.json"
check "per-rank log summaries and their merge: the first rank to fail, the failed ranks of all" python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
m = json.load(open(f"{w}/lmerged.json"))["ranks"]
first = m["first_failed_rank"]
for f in ("lm1", "lm2"):
    o = json.load(open(f"{w}/{f}.json"))["oom"]
    assert o["rank"] == first, (f, o["rank"], first)
    assert sorted(o["ranks_failed"]) == m["failed_ranks"] and o["ranks_failed"][0] == first, (f, o["ranks_failed"])
    assert o["all_ranks_failed"] is True, (f, o["all_ranks_failed"])
alone = json.load(open(f"{w}/lm1.json"))
assert json.load(open(f"{w}/lm2.json"))["findings"] == alone["findings"]
PY
head -c 400 "$work/logsum/rank1.json" > "$work/cut.json"
diagnose "$work/c.json" --log "$work/cut.json"
check "a cut log summary: exit 2 with the byte offset" bash -c "[ $? -eq 2 ] && grep -q 'cut.json: byte' '$work/c.json.err'"
diagnose "$work/x.json" --log "$work/logs/rank0.log" --log "$work/logsum/rank1.json"
check "a log summary among training logs: exit 2" test $? -eq 2
rm "$work/logsum/rank$(python3 -c "import json; print(json.load(open('$work/lmerged.json'))['ranks']['first_failed_rank'])").json"
diagnose "$work/g.json" --log "$work/lmerged.json"
check "merged log summary whose first failed rank's summary is gone: exit 2" test $? -eq 2

[ "$fail" -eq 0 ] && echo "diagnose summaries: all checks passed"
exit "$fail"
