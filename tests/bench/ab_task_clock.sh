#!/usr/bin/env bash
# Interleaved A/B of two oomdx binaries (or one binary under two environments) on the same
# command: task-clock and page faults from `perf stat` (one run a side per round, the binary run
# directly), optionally peak RSS from /usr/bin/time. The method of docs/snapshot.md since snap33:
# on a shared machine only interleaved rounds compare, and instruction counts (callgrind) come first.
#
# usage: tests/bench/ab_task_clock.sh ROUNDS BIN_A BIN_B ARGS...
#   AB_ENV_A="K=V ..."  AB_ENV_B="K=V ..."   environment of each side (e.g. two OOMDX_CACHE_DIRs:
#                        a stored rule set written by the other binary is rebuilt, +4.6 MB of RSS)
#   AB_RSS=1                                 a second set of ROUNDS alternating runs for peak RSS
# Both sides always run through `env`, so that its exec is on both.
# Prints, per side: min / Q1 / median task-clock (ms), median page faults, [min / median RSS KB].
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
rounds=$1 a=$2 b=$3
shift 3
command -v perf >/dev/null || { echo "ab_task_clock: needs perf" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oomdx-ab.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

run_side() {  # run_side SIDE: one perf stat run, appends "task_clock_ms faults"
    local side=$1 bin envs
    shift
    if [ "$side" = A ]; then bin=$a envs=${AB_ENV_A:-}; else bin=$b envs=${AB_ENV_B:-}; fi
    # shellcheck disable=SC2086
    perf stat -x, -e task-clock,page-faults -o "$tmp/one" env $envs "$bin" "$@" >/dev/null 2>&1 || true
    awk -F, '/task-clock/ {t=$1} /page-faults/ {f=$1} END {print t, f}' "$tmp/one" >>"$tmp/$side"
}
rss_side() {
    local side=$1 bin envs
    shift
    if [ "$side" = A ]; then bin=$a envs=${AB_ENV_A:-}; else bin=$b envs=${AB_ENV_B:-}; fi
    # shellcheck disable=SC2086
    /usr/bin/time -f "%M" -o "$tmp/rss1" env $envs "$bin" "$@" >/dev/null 2>&1 || true
    tail -n 1 "$tmp/rss1" >>"$tmp/rss.$side"
}
: >"$tmp/A"; : >"$tmp/B"; : >"$tmp/rss.A"; : >"$tmp/rss.B"
for ((i = 0; i < rounds; ++i)); do
    run_side A "$@"
    run_side B "$@"
done
if [ "${AB_RSS:-0}" = 1 ]; then
    for ((i = 0; i < rounds; ++i)); do
        rss_side A "$@"
        rss_side B "$@"
    done
fi
echo "load $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds"
for s in A B; do
    sort -n "$tmp/$s" | awk -v s="$s" '{t[NR]=$1} END {
        printf "%s: task-clock min %.2f / Q1 %.2f / median %.2f ms", s, t[1], t[int(NR/4)+1], t[int(NR/2)+1] }'
    sort -n -k2 "$tmp/$s" | awk '{f[NR]=$2} END {printf ", faults median %s", f[int(NR/2)+1]}'
    if [ -s "$tmp/rss.$s" ]; then
        sort -n "$tmp/rss.$s" | awk '{r[NR]=$1} END {printf ", peak RSS min %d / median %d KB", r[1], r[int(NR/2)+1]}'
    fi
    echo
done
