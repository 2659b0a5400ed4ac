#!/usr/bin/env bash
# Snapshot benchmark: oomdx vs `pickle.load` on a generated training-shaped snapshot.
#
# usage: tests/bench/bench_snapshot.sh [OOMDX_BINARY] [SIZE_MB]    (defaults: build/oomdx, 400)
#
# Writes a >= SIZE_MB snapshot with tests/bench/snapshot/gen_big_snapshot.cpp (shared key
# strings, shared frame dicts, a fresh frames list per trace event, as the producer does) to a
# temporary directory, then measures wall time and peak RSS (/usr/bin/time) of
#   oomdx snapshot FILE --format json          (the full analysis; when the binary has no
#                                              `snapshot` command yet: the loader driver)
#   python3 -c "import pickle; pickle.load(open(F,'rb'))"
# BENCH_RUNS times each (default 3; the fastest run counts), prints both and the ratios
# (targets: time <= 1/20, RSS <= 1/4), and deletes the file.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/build/oomdx}
mb=${2:-400}
[ -x /usr/bin/time ] || { echo "bench_snapshot: needs /usr/bin/time" >&2; exit 77; }
command -v python3 >/dev/null || { echo "bench_snapshot: needs python3" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oomdx-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

c++ -O2 -std=c++20 "$root/tests/bench/snapshot/gen_big_snapshot.cpp" -o "$tmp/gen"
"$tmp/gen" "$tmp/big.pickle" "$mb"
bytes=$(stat -c %s "$tmp/big.pickle")

if [ -x "$bin" ] && "$bin" snapshot --help >/dev/null 2>&1; then
    what="oomdx snapshot --format json"
    cmd=("$bin" snapshot "$tmp/big.pickle" --format json)
else
    libdir=$(dirname "$bin")
    what="loader driver (no 'oomdx snapshot' command in $bin)"
    c++ -O2 -std=c++20 -I"$root" "$root/tests/bench/snapshot/snapshot_load_main.cpp" \
        "$libdir/liboomdx_snapshot.a" "$libdir/liboomdx_core.a" -lfmt -lyaml-cpp -lz -o "$tmp/load"
    cmd=("$tmp/load" "$tmp/big.pickle")
fi

# The fastest of BENCH_RUNS runs of each (default 3): this machine's speed drifts between runs.
runs=${BENCH_RUNS:-3}
best_of() {  # best_of OUT_FILE CMD...: keeps the line "wall rss user sys" of the fastest run
    local out=$1
    shift
    rm -f "$out"
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%e %M %U %S" -o "$tmp/run.time" "$@" >"$tmp/run.out"
        if [ ! -s "$out" ] || awk -v a="$(cut -d' ' -f1 "$tmp/run.time")" -v b="$(cut -d' ' -f1 "$out")" \
            'BEGIN { exit !(a < b) }'; then
            cp "$tmp/run.time" "$out"
        fi
    done
}
best_of "$tmp/ours.time" "${cmd[@]}"
best_of "$tmp/py.time" python3 -c "import pickle, sys; pickle.load(open(sys.argv[1], 'rb'))" "$tmp/big.pickle"

read -r ow orss ou os <"$tmp/ours.time"
read -r pw prss pu ps <"$tmp/py.time"
echo "fastest of $runs runs each"
python3 - "$bytes" "$what" "$ow" "$orss" "$ou" "$os" "$pw" "$prss" "$pu" "$ps" <<'PY'
import sys
b, what = int(sys.argv[1]), sys.argv[2]
ow, orss, ou, os_, pw, prss, pu, ps = map(float, sys.argv[3:])
print(f"snapshot: {b / 2**20:.0f} MiB")
print(f"oomdx   ({what}): {ow:.2f} s wall, {ou + os_:.2f} s cpu, peak RSS {orss / 1024:.0f} MiB")
print(f"python3 pickle.load: {pw:.2f} s wall, {pu + ps:.2f} s cpu, peak RSS {prss / 1024:.0f} MiB")
tr = ow / pw if pw else float('nan')
rr = orss / prss if prss else float('nan')
print(f"time ratio {tr:.3f} (1/{1 / tr:.1f}; target <= 1/20), cpu ratio 1/{(pu + ps) / max(ou + os_, 1e-9):.1f}, "
      f"RSS ratio {rr:.3f} (1/{1 / rr:.1f}; target <= 1/4)")
PY
