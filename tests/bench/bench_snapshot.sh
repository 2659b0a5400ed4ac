#!/usr/bin/env bash
# Snapshot benchmark: `oomdx snapshot FILE --format json` against Python's `pickle.load` on
# snapshots written by Python's own pickle the way torch writes them (gen_snapshot.py).
#
# usage: tests/bench/bench_snapshot.sh [OOMDX_BINARY]          (default: build/oomdx)
#   BENCH_SHAPES="name ..."   only these shapes, by space or comma (default: all, see the table below)
#   BENCH_RUNS=N              runs of each command (default 3)
#   BENCH_KEEP=DIR            keep the generated files in DIR (and reuse them when present)
#   BENCH_BASE=OOMDX          also run this binary (e.g. one built from main) in the same
#                             rounds: a "base" line per shape with its own ratios
#
# Each shape is generated once, then both commands run BENCH_RUNS times each, alternating,
# in the same run of this script. The machine is shared: each side keeps its fastest wall
# time and its smallest peak RSS (best of N on both sides), and the ratios compare those.
# Targets (issue 18): time <= 1/20, peak RSS <= 1/8 of pickle.load (goals 1/40, 1/10).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/build/oomdx}
runs=${BENCH_RUNS:-3}
[ -x /usr/bin/time ] || { echo "bench_snapshot: needs /usr/bin/time" >&2; exit 77; }
command -v python3 >/dev/null || { echo "bench_snapshot: needs python3" >&2; exit 77; }
# The baseline runs the interpreter itself, never a launcher in front of it (a pyenv shim adds
# ~0.3 s to every start, which flattered the small shapes' ratios until 2026-12-04): BENCH_PYTHON,
# else the system's /usr/bin/python3, else the binary `python3` resolves to.
py=${BENCH_PYTHON:-}
[ -n "$py" ] || { [ -x /usr/bin/python3 ] && py=/usr/bin/python3; } || true
[ -n "$py" ] || py=$(python3 -c 'import sys; print(sys.executable)')
[ -x "$bin" ] || { echo "bench_snapshot: no binary $bin" >&2; exit 77; }
gen="$root/tests/bench/gen_snapshot.py"

# name: generator options. Knobs covered: trace length 100k-3M, stack depth 5-80, distinct
# stacks 1-200k, Python-only and C++ frames, with and without compile_context/user_metadata.
# The last shape is the held-out file of issue 18 (2.9 M events, 35 frames, a fresh frames list
# per event; > 400 MB).
shapes=(
    "100k-d20:--events 100000 --depth 20 --stacks 1000"
    "1M-d5-s1:--events 1000000 --depth 5 --stacks 1"
    "1M-d80-s200k:--events 1000000 --depth 80 --stacks 200000"
    "1M-d35-cc:--events 1000000 --depth 35 --stacks 20000 --compile-context"
    "1M-d80-cpp-cc-um:--events 1000000 --depth 80 --stacks 20000 --cpp --compile-context --user-metadata"
    "3M-d40-cc-um:--events 3000000 --depth 40 --stacks 50000 --compile-context --user-metadata --layers 48"
    "2.9M-d35-lpe:--events 2900000 --depth 35 --list-per-event"
)

if [ -n "${BENCH_KEEP:-}" ]; then
    tmp=$BENCH_KEEP
    mkdir -p "$tmp"
else
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/oomdx-bench.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
fi

# measure OUT CMD...: appends "wall rss cpu" of one run to OUT (wall from bash's
# EPOCHREALTIME, in microseconds: /usr/bin/time's %e has 10 ms steps, half of the 100k shape)
measure() {
    local out=$1 t0 t1
    shift
    t0=$EPOCHREALTIME
    /usr/bin/time -f "%e %M %U %S" -o "$tmp/run.time" "$@" >/dev/null
    t1=$EPOCHREALTIME
    awk -v t0="$t0" -v t1="$t1" '{ printf "%.4f %s %.2f\n", t1 - t0, $2, $3 + $4 }' "$tmp/run.time" >>"$out"
}

echo "oomdx: $bin; pickle.load: $py ($("$py" --version)); best of $runs runs on each side (fastest wall, smallest peak RSS)"
printf '%-18s %7s %9s | %8s %8s %7s | %8s %8s %7s | %6s\n' shape MiB events \
    "oomdx s" "pickle s" "time" "oomdx MB" "pickle MB" "RSS" "cpu"
for spec in "${shapes[@]}"; do
    name=${spec%%:*}
    opts=${spec#*:}
    if [ -n "${BENCH_SHAPES:-}" ] && [[ " ${BENCH_SHAPES//,/ } " != *" $name "* ]]; then continue; fi
    f="$tmp/$name.pickle"
    # shellcheck disable=SC2086
    [ -s "$f" ] && [ -s "$f.log" ] || python3 "$gen" "$f" $opts 2>"$f.log"
    events=$(grep -o '[0-9]* events' "$f.log" | cut -d' ' -f1)
    rm -f "$tmp/ours" "$tmp/py" "$tmp/base"
    for _ in $(seq "$runs"); do
        [ -z "${BENCH_BASE:-}" ] || measure "$tmp/base" "$BENCH_BASE" snapshot "$f" --format json
        measure "$tmp/ours" "$bin" snapshot "$f" --format json
        measure "$tmp/py" "$py" -c "import pickle, sys; pickle.load(open(sys.argv[1], 'rb'))" "$f"
    done
    python3 - "$name" "$(stat -c %s "$f")" "${events:-?}" "$tmp/ours" "$tmp/py" "$tmp/base" <<'PY'
import os, sys
name, size, events, ours, py, base = sys.argv[1:]
def best(path):
    rows = [list(map(float, l.split())) for l in open(path) if l.strip()]
    return min(r[0] for r in rows), min(r[1] for r in rows), min(r[2] for r in rows)
pw, prss, pc = best(py)
def line(label, path):
    ow, orss, oc = best(path)
    print(f"{label:<18} {int(size) / 2**20:7.0f} {events:>9} | {ow:8.3f} {pw:8.2f} 1/{pw / max(ow, 1e-9):<5.1f} | "
          f"{orss / 1024:8.0f} {prss / 1024:8.0f} 1/{prss / max(orss, 1):<5.1f} | "
          # /usr/bin/time counts CPU in 10 ms steps: a run under one step has no ratio to print
          + (f"1/{pc / oc:.1f}" if oc > 0 else "<10 ms"))
if os.path.exists(base):
    line("  base", base)
line(name, ours)
PY
    [ -n "${BENCH_KEEP:-}" ] || rm -f "$f" "$f.log"
done
echo "time and RSS columns: pickle.load / oomdx (1/20 means oomdx takes 1/20 of pickle.load); cpu: user+sys"
