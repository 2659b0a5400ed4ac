#!/usr/bin/env bash
# Plan-search throughput: candidate configurations evaluated per second on one core.
# Usage: tests/bench/bench_plan.sh [path/to/oomdx] [repo root]
# Prints one line per case and the aggregate; the acceptance line is >= 10000 candidates/s.
set -u
bin=${1:-build/oomdx}
root=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
cases="$root/tests/bench/plan/cases.txt"
[ -x "$bin" ] || { echo "bench_plan: oomdx binary not found at $bin" >&2; exit 77; }
pin=()
command -v taskset >/dev/null 2>&1 && pin=(taskset -c 0)
total_n=0
total_s=0
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  # shellcheck disable=SC2086
  out=$("${pin[@]}" "$bin" preflight $line --plan --top 3 --format json 2>/dev/null)
  rc=$?
  if [ $rc -gt 1 ]; then echo "bench_plan: case failed (exit $rc): $line" >&2; continue; fi
  read -r n s fit < <(printf '%s' "$out" | python3 -c 'import json,sys; p=json.load(sys.stdin)["plan"]; print(p["evaluated"], p["seconds"], p["fitting"])')
  rate=$(python3 -c "print(f'{$n/max($s,1e-9):.0f}')")
  printf '%-60.60s evaluated %7d  fit %6d  %8.4f s  %10s candidates/s\n' "$line" "$n" "$fit" "$s" "$rate"
  total_n=$((total_n + n))
  total_s=$(python3 -c "print($total_s + $s)")
done < "$cases"
python3 -c "
n=$total_n; s=$total_s
r = n / s if s > 0 else 0
print(f'plan search: {n} candidates in {s:.4f} s on one core = {r:.0f} candidates/s (target >= 10000)')
"
