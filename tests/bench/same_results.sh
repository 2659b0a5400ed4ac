#!/usr/bin/env bash
# Checks that an optimization kept the results: runs two oomdx binaries (a baseline built from
# main and the candidate) over the shared corpus and compares their JSON byte for byte:
# `oomdx snapshot FILE --format json` on every file of corpus/snapshots and
# `oomdx log FILE --format json` on every excerpt of corpus/oom-logs/dev.yaml.
#
# usage: tests/bench/same_results.sh BASE_OOMDX NEW_OOMDX [CORPUS_DIR]   (default ../shared/corpus)
# Exit 0 when every output (and exit status) is identical, 1 otherwise, 77 without the corpus.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
base=$1
new=$2
corpus=${3:-$root/../shared/corpus}
[ -d "$corpus" ] || { echo "same_results: no corpus at $corpus" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oomdx-same.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Log excerpts are YAML entries; write each one's log to a file of its own.
mkdir -p "$tmp/logs"
if [ -f "$corpus/oom-logs/dev.yaml" ]; then
    python3 - "$corpus/oom-logs/dev.yaml" "$tmp/logs" <<'PY' || exit 77
import sys, yaml
for e in yaml.safe_load(open(sys.argv[1])):
    with open(f"{sys.argv[2]}/{e['id']}.log", "w") as f:
        f.write(e["log"])
PY
fi

checked=0
differ=0
compare() { # compare NAME ARGS...: runs both binaries with ARGS
    local name=$1
    shift
    "$base" "$@" >"$tmp/a" 2>"$tmp/a.err"
    local ra=$?
    "$new" "$@" >"$tmp/b" 2>"$tmp/b.err"
    local rb=$?
    checked=$((checked + 1))
    if [ $ra != $rb ] || ! cmp -s "$tmp/a" "$tmp/b" || ! cmp -s "$tmp/a.err" "$tmp/b.err"; then
        differ=$((differ + 1))
        echo "DIFFERS: $name (exit $ra vs $rb)"
        diff <(head -c 200000 "$tmp/a") <(head -c 200000 "$tmp/b") | head -5
    fi
}
for f in "$corpus"/snapshots/*.pickle "$corpus"/snapshots/*.json; do
    [ -f "$f" ] && compare "snapshot $(basename "$f")" snapshot "$f" --format json
done
for f in "$tmp"/logs/*.log; do
    [ -f "$f" ] && compare "log $(basename "$f")" log "$f" --format json
done
echo "same_results: $checked outputs compared, $differ differ"
[ $differ = 0 ]
