#!/usr/bin/env bash
# `oomdx log` keeps a flat resident size on a big multi-rank log that was just written (its page
# cache may hold large folios: touching one line maps a whole folio back). 160 MB, 8 ranks, from
# the bench generator; peak RSS under 96 MB with and without the prefilter threads (release
# builds; a sanitizer's shadow memory makes the bound meaningless).
set -eu
oomdx=$1
root=$2
command -v python3 > /dev/null || exit 77
[ -x /usr/bin/time ] || exit 77
libs=$(ldd "$oomdx" 2> /dev/null || true)
if grep -q 'libasan\|libclang_rt.asan' <<< "$libs"; then echo "sanitizer build: skipped"; exit 77; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oomdx_logmem.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
python3 "$root/tests/bench/gen_log.py" "$tmp/train.log" 160 8 > /dev/null
limit_kb=$((96 * 1024))
fail=0
for jobs in 0 1; do
    /usr/bin/time -f "%M" -o "$tmp/rss.txt" "$oomdx" log --jobs "$jobs" --format json "$tmp/train.log" > "$tmp/out.json"
    rss=$(tail -1 "$tmp/rss.txt")
    echo "--jobs $jobs: peak RSS $rss KB"
    [ "$rss" -le "$limit_kb" ] || { echo "FAIL --jobs $jobs: peak RSS $rss KB > $limit_kb KB"; fail=1; }
done
exit $fail
