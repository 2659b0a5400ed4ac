#!/usr/bin/env bash
# Issue 20, "same result": the real snapshots of ../shared/corpus/snapshots placed as rank files
# (symlinks rank0.pickle, rank1.pickle, ... in a temporary folder), analyzed twice: once as a
# directory (`oomdx snapshot DIR/`), once per file (`oomdx snapshot FILE --output`) and merged
# (`oomdx snapshot merge`). The two `ranks` sections must be identical. Also records the size of
# the per-file summaries (the largest must stay in tens of KB).
# $1 = oomdx binary, $2 = repo root. Exit 77 without the corpus or python3.
set -u
oomdx=$(realpath "$1")
root="$2"
corpus="${OOMDX_CORPUS:-$root/../shared/corpus}/snapshots"
[ -d "$corpus" ] || { echo "skipped: no snapshot corpus at $corpus"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skipped: python3 is not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ranks" "$work/summaries"
n=0
for f in "$corpus"/*.pickle "$corpus"/*.pkl; do
  [ -e "$f" ] || continue
  ln -s "$f" "$work/ranks/rank$n.pickle"
  n=$((n + 1))
done
[ "$n" -gt 1 ] || { echo "skipped: fewer than 2 snapshots in $corpus"; exit 77; }
fail=0

"$oomdx" snapshot "$work/ranks/" --format json > "$work/dir.json" || { echo "FAIL snapshot DIR/ exited $?"; fail=1; }
for f in "$work"/ranks/*.pickle; do
  "$oomdx" snapshot "$f" --format json --output "$work/summaries/$(basename "$f").json" ||
    { echo "FAIL no summary of $f"; fail=1; }
done
"$oomdx" snapshot merge "$work/summaries" --world-size "$n" --format json --output "$work/merged.json" ||
  { echo "FAIL snapshot merge exited $?"; fail=1; }

python3 - "$work/dir.json" "$work/merged.json" "$n" "$work/summaries" <<'PY' || fail=1
import json, os, sys
d = json.load(open(sys.argv[1]))["ranks"]
m_doc = json.load(open(sys.argv[2]))
m = m_doc["ranks"]
n = int(sys.argv[3])
bad = 0
def check(ok, msg):
    global bad
    print(("ok   " if ok else "FAIL ") + msg)
    bad += not ok
check(m_doc["merge"]["bad"] == [] and m_doc["merge"]["merged"] == n,
      f"all {n} summaries merged, none bad: {m_doc['merge']}")
check([r["rank"] for r in m["rows"]] == list(range(n)), "merged rows are ranks 0..n-1, ordered")
check([r["rank"] for r in d["rows"]] == [r["rank"] for r in m["rows"]], "same ranks in both views")
for a, b in zip(d["rows"], m["rows"]):
    for k in ("peak_bytes", "allocated_bytes", "reserved_bytes"):
        if a[k] != b[k]:
            check(False, f"rank {a['rank']} {k}: directory {a[k]} != merge {b[k]}")
check(d["outlier_rank"] == m["outlier_rank"], f"outlier_rank: {d['outlier_rank']} / {m['outlier_rank']}")
for k in sorted(set(d) | set(m)):
    if d.get(k) != m.get(k):
        check(False, f"ranks.{k}: {str(d.get(k))[:200]} != {str(m.get(k))[:200]}")
check(d == m, "the whole ranks section is identical")
sizes = sorted(os.path.getsize(os.path.join(sys.argv[4], f)) for f in os.listdir(sys.argv[4]))
print(f"     summaries: {len(sizes)}, largest {sizes[-1] / 1024:.1f} KB, median {sizes[len(sizes) // 2] / 1024:.1f} KB")
check(sizes[-1] < 200 * 1024, "every summary stays under 200 KB")
sys.exit(1 if bad else 0)
PY

[ "$fail" -eq 0 ] && echo "scale corpus: all checks passed"
exit "$fail"
