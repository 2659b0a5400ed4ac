#!/usr/bin/env bash
# Merge benchmark (issue 20): `oomdx snapshot merge` and `oomdx log merge` of N per-rank summaries
# (default 1,000 and 10,000) against `cat` of the same files (the cost of reading them once),
# in the same run. The summaries are copies of real ones (the fixture snapshots and logs,
# and the corpus snapshots when present, summarized by this oomdx) with their rank rewritten, so each has the size of a real summary.
#
# usage: tests/bench/bench_merge.sh [OOMDX_BINARY] [N...]     (default: build/oomdx 1000 10000)
#   BENCH_RUNS=N   runs of each command (default 3; the fastest wall time and smallest RSS kept)
# Target: 1,000 snapshot summaries merge in under 5 s on the 2-core development machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(realpath "${1:-$root/build/oomdx}")
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1000 10000)
runs=${BENCH_RUNS:-3}
[ -x /usr/bin/time ] || { echo "bench_merge: needs /usr/bin/time" >&2; exit 77; }
command -v python3 >/dev/null || { echo "bench_merge: needs python3" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oomdx-bench-merge.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Templates: one summary per fixture snapshot (and per corpus snapshot when ../shared/corpus is
# there: larger, real summaries) and per fixture log.
mkdir -p "$tmp/tpl/snap" "$tmp/tpl/log"
for f in "$root"/tests/fixtures/snapshots/*.pickle "$root"/../shared/corpus/snapshots/*.pickle; do
    [ -e "$f" ] || continue
    "$bin" snapshot "$f" --format json --rank 0 --output "$tmp/tpl/snap/$(basename "$f").json" 2>/dev/null || true
done
for f in "$root"/tests/fixtures/logs/*.log; do
    "$bin" log "$f" --format json > "$tmp/tpl/log/$(basename "$f").json" 2>/dev/null || true
done

# make N KIND: N summaries rank0.json ... rank{N-1}.json in $tmp/KIND-N, templates round robin.
make_set() {
    python3 - "$tmp/tpl/$2" "$tmp/$2-$1" "$1" "$2" <<'PY'
import json, os, sys
src, dst, n, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
tpl = [json.load(open(os.path.join(src, f))) for f in sorted(os.listdir(src))]
os.makedirs(dst, exist_ok=True)
for r in range(n):
    d = tpl[r % len(tpl)]
    if kind == "snap":
        d["rank"] = r
        d["cross_rank"]["rank"] = r
        d["cross_rank"]["file"] = d["file"] = f"/node{r // 8}/rank{r}.pickle"
    else:
        d["files"][0]["path"] = f"/node{r // 8}/rank{r}.log"
    with open(os.path.join(dst, f"rank{r}.json"), "w") as out:
        json.dump(d, out, indent=2, sort_keys=True)
PY
}

# best CMD...: "wall rss" of the fastest of $runs runs
best() {
    local w="" m=""
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%e %M" -o "$tmp/run.time" "$@" >/dev/null 2>&1
        read -r tw tm < "$tmp/run.time"
        if [ -z "$w" ] || python3 -c "import sys; sys.exit(float(sys.argv[1]) >= float(sys.argv[2]))" "$tw" "$w"; then w=$tw; fi
        if [ -z "$m" ] || [ "$tm" -lt "$m" ]; then m=$tm; fi
    done
    echo "$w $m"
}

echo "oomdx: $bin; best of $runs runs; baseline: cat of the same summaries"
for n in "${counts[@]}"; do
    for kind in snap log; do
        make_set "$n" "$kind"
        dir="$tmp/$kind-$n"
        size=$(du -sk "$dir" | cut -f1)
        cat "$dir"/*.json > /dev/null  # page cache warm for both sides
        read -r cw _ < <(best find "$dir" -name '*.json' -exec cat {} +)
        if [ "$kind" = snap ]; then
            read -r mw mm < <(best "$bin" snapshot merge "$dir" --format json)
        else
            read -r mw mm < <(best "$bin" log merge "$dir" --format json)
        fi
        python3 -c "
import sys
n, kind, size, cw, mw, mm = sys.argv[1:]
print(f'{kind:4} merge of {int(n):6} summaries ({int(size) / 1024:.0f} MB, {int(size) / int(n):.0f} KB each): '
      f'{float(mw):.2f} s, peak RSS {int(mm) / 1024:.0f} MB; cat {float(cw):.2f} s; ratio {float(mw) / max(float(cw), 0.01):.1f}x')
" "$n" "$kind" "$size" "$cw" "$mw" "$mm"
        rm -rf "$dir"
    done
done
