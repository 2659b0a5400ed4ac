#!/usr/bin/env bash
# Benchmark of `oomdx log` on a generated multi-rank log (default 1 GiB) against
# `grep -c -E` with the alternation of every literal of the shipped log signatures,
# on the same file in the same run. Prints both times, the ratio and peak RSS.
# Usage: tests/bench/bench_log.sh path/to/oomdx [SIZE_MB]
set -euo pipefail
OOMDX=${1:?usage: bench_log.sh path/to/oomdx [SIZE_MB]}
SIZE_MB=${2:-1024}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/oomdx_bench_log.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

echo "generating ${SIZE_MB} MB log in $TMP ..."
python3 "$HERE/gen_log.py" "$TMP/train.log" "$SIZE_MB"
ls -l "$TMP/train.log" | awk '{printf "log: %.1f MB\n", $5 / 1048576}'

# The equivalent alternation: every literal prefilter of the shipped signatures.
python3 - "$ROOT/knowledge/log_signatures" > "$TMP/alt.txt" <<'PY'
import glob, re, sys, yaml
lits = []
for f in sorted(glob.glob(sys.argv[1] + "/*.yaml")):
    for s in yaml.safe_load(open(f)) or []:
        for l in ([s["literal"]] if "literal" in s else []) + s.get("literals", []):
            if l not in lits:
                lits.append(l)
print("|".join(re.sub(r"([.\[\]()*+?{}|^$\\])", r"\\\1", l) for l in lits))
PY
echo "grep alternation: $(tr '|' '\n' < "$TMP/alt.txt" | wc -l) literals"

cat "$TMP/train.log" > /dev/null  # both runs read from the page cache
measure() {  # prints "seconds max_rss_kb"
    /usr/bin/time -f "%e %M" -o "$TMP/time.txt" "$@" > "$TMP/out.txt"
    cat "$TMP/time.txt"
}
read -r G_S G_KB < <(measure env LC_ALL=C grep -c -E -f "$TMP/alt.txt" "$TMP/train.log")
echo "grep -c -E:  ${G_S} s, peak RSS ${G_KB} KB, $(cat "$TMP/out.txt") matching lines"
read -r O_S O_KB < <(measure "$OOMDX" log --format json "$TMP/train.log")
python3 - "$TMP/out.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
o = d["oom"]
print(f"oomdx found: source={o['source']} rank={o['rank']} step={o['step']} last={o['last_logged_step']} "
      f"framework={d['framework']} series={len(d['memory_series'])} points")
PY
echo "oomdx log:   ${O_S} s, peak RSS ${O_KB} KB"
python3 -c "import sys; g, o = float(sys.argv[1]), float(sys.argv[2]); print(f'ratio oomdx/grep: {o / max(g, 1e-3):.2f}x (target <= 2x)')" "$G_S" "$O_S"
