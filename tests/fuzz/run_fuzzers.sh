#!/usr/bin/env bash
# Runs each libFuzzer target for a given time with seeds from the project's fixtures.
#   tests/fuzz/run_fuzzers.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s, every target)
# Env: FUZZ_BUILD (build dir, default build-fuzz), FUZZ_JOBS (targets at once, default 1).
# Builds the fuzz preset when needed. Working corpora and crash artifacts go under
# $FUZZ_BUILD/{corpus,artifacts}/<target>; a summary line per target (seconds it ran, executions,
# coverage, corpus, findings) ends the output. libFuzzer stops a target at its first finding.
# Exit status 1 when any target found a crash, leak, timeout or out-of-memory input.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
build=${FUZZ_BUILD:-build-fuzz}
jobs=${FUZZ_JOBS:-1}
all=(fuzz_pickle fuzz_snapshot_json fuzz_log fuzz_config_toml fuzz_config_py fuzz_config_sh fuzz_config_json
     fuzz_config_yaml fuzz_config_args fuzz_model fuzz_rules fuzz_expression)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

if [ ! -f "$build/CMakeCache.txt" ]; then cmake --preset fuzz -B "$build" >/dev/null; fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >/dev/null

# seed TARGET FILE...: copies existing files into the target's seed directory.
seed() {
    local dir="$build/seeds/$1"; shift
    mkdir -p "$dir"
    for f in "$@"; do [ -f "$f" ] && cp "$f" "$dir/$(echo "$f" | tr '/' '_')"; done
    return 0
}
make_seeds() {
    shopt -s nullglob globstar
    rm -rf "$build/seeds"
    seed fuzz_log tests/fixtures/logs/*.log examples/*/*.log
    mkdir -p "$build/seeds/fuzz_log"
    gzip -c tests/fixtures/logs/multi_rank.log > "$build/seeds/fuzz_log/multi_rank.log.gz"
    seed fuzz_pickle tests/fixtures/snapshots/*.pickle examples/*/*.pickle
    seed fuzz_snapshot_json tests/fixtures/snapshots/json_shape.json examples/*/*.snapshot.json
    seed fuzz_config_toml tests/fixtures/configs/**/*.toml examples/**/*.toml
    seed fuzz_config_py tests/fixtures/configs/**/*.py tests/fixtures/models/*.py
    seed fuzz_config_sh tests/fixtures/configs/**/*.sh examples/**/*.sh
    seed fuzz_config_json tests/fixtures/configs/**/*.json examples/**/ds*.json
    seed fuzz_config_yaml tests/fixtures/configs/**/*.yaml tests/fixtures/configs/**/*.yml
    seed fuzz_config_args tests/fixtures/configs/**/*.sh
    seed fuzz_model tests/fixtures/models/*.json
    seed fuzz_rules rules/*.yaml
    mkdir -p "$build/seeds/fuzz_expression"
    local n=0
    grep -h -o 'condition: .*' rules/*.yaml | sed 's/^condition: //' | while IFS= read -r c; do
        n=$((n + 1)); printf '%s' "$c" > "$build/seeds/fuzz_expression/c$n"
    done
}
make_seeds

status=0
summary=()
run_one() {
    local t=$1 corpus="$build/corpus/$1" art="$build/artifacts/$1" log="$build/logs/$1.log"
    mkdir -p "$corpus" "$art" "$build/logs"
    local start=$SECONDS
    "$build/tests/fuzz/$t" -max_total_time="$seconds" -max_len=65536 -timeout=20 -rss_limit_mb=2560 \
        -print_final_stats=1 -artifact_prefix="$art/" "$corpus" "$build/seeds/$t" >"$log" 2>&1 || true
    local took=$((SECONDS - start))
    local execs cov crashes
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
    crashes=$(find "$art" -type f | wc -l)
    printf '%-20s %6ss  execs %10s  cov %6s  corpus %6s  findings %s\n' "$t" "$took" "${execs:-0}" "${cov:-0}" \
        "$(find "$corpus" -type f | wc -l)" "$crashes"
}
export -f run_one
export build seconds
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}' | tee "$build/summary.txt"
if grep -q 'findings [1-9]' "$build/summary.txt"; then status=1; fi
exit $status
