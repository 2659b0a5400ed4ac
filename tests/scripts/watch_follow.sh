#!/usr/bin/env bash
# `oomdx watch` keeps up with 8 rank logs written at 10,000 lines/s in all, with bounded memory,
# and alerts once: each rank prints a torchtitan memory line per step (growing 0.1 GiB/step
# toward the 80 GiB the percentages imply) plus 24 other lines. The trend reaches the 0.95
# budget (76 GiB) at step 360; with --warn-steps 100 the alert is due at step 260. Checked:
# exit code 3, exactly one alert, raised at step 255-300 (still 60 steps before the budget: the
# upper end leaves room for a loaded machine, the keep-up bound is the lag), at most 2 s after the
# writer wrote step 260, and a peak RSS under 64 MB (release build). Then an OOM appended to a followed file: exit 4.
set -eu
oomdx="$1"
command -v python3 > /dev/null || exit 77
# A sanitizer build's shadow memory makes the RSS bound meaningless: checked in release builds.
rss_limit_kb=$((64 * 1024))
libs=$(ldd "$oomdx" 2> /dev/null || true)
if grep -q 'libasan\|libclang_rt.asan' <<< "$libs"; then rss_limit_kb=$((1024 * 1024)); fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oomdx_watch.XXXXXX")
writer=""
trap '[ -n "$writer" ] && kill "$writer" 2> /dev/null; rm -rf "$tmp"' EXIT
for r in 0 1 2 3 4 5 6 7; do : > "$tmp/rank$r.log"; done

python3 - "$tmp" > "$tmp/writer.txt" <<'PY' &
import sys, time
tmp = sys.argv[1]
files = [open("%s/rank%d.log" % (tmp, r), "a", buffering=1 << 16) for r in range(8)]
rate, per_step = 10000.0, 8 * 25   # lines per second; lines per step over the 8 ranks
t0 = time.time()
for step in range(1, 600):
    for r, f in enumerate(files):
        gib = 40.0 + 0.1 * step + 0.01 * r
        ts = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t0 + step * 0.02))
        f.write("[rank%d]:[titan] %s,000 - root - INFO - step: %d  loss:  2.1000  memory: %.2fGiB(%.2f%%)  tps: 9,000\n"
                % (r, ts, step, gib, gib / 80.0 * 100))
        for k in range(24):
            f.write("[rank%d]: dataloader: fetched batch %d.%d from shard /data/shard-%04d.bin in 3 ms\n" % (r, step, k, step % 999))
        f.flush()
    if step == 260:
        print("step260 %.3f" % time.time(), flush=True)
        print("rate %.0f" % (260 * per_step / (time.time() - t0)), flush=True)
    wait = t0 + step * per_step / rate - time.time()
    if wait > 0:
        time.sleep(wait)
print("done %.3f lines %d" % (time.time(), 599 * per_step), flush=True)
PY
writer=$!

set +e
/usr/bin/time -f "%M" -o "$tmp/rss.txt" "$oomdx" watch --interval 0.1 --warn-steps 100 --duration 30 --format jsonl \
    "$tmp"/rank*.log > "$tmp/watch.jsonl"
rc=$?
set -e
kill "$writer" 2> /dev/null || true
wait "$writer" 2> /dev/null || true
writer=""
python3 - "$tmp" "$rc" "$rss_limit_kb" <<'PY'
import json, sys
tmp, rc, rss_limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
events = [json.loads(l) for l in open(tmp + "/watch.jsonl")]
alerts = [e for e in events if e["event"] in ("alert", "oom")]
writer = dict(l.split()[:2] for l in open(tmp + "/writer.txt") if l.strip())
rss_kb = int(open(tmp + "/rss.txt").read().split()[-1])
fails = []
if rc != 3: fails.append("exit code %d, want 3" % rc)
if len(alerts) != 1: fails.append("%d alerts, want 1" % len(alerts))
a = alerts[0] if alerts else None
if a:
    step = a["forecast"]["basis"]["to_step"]
    lag = a["time"] - float(writer.get("step260", 0))
    rate = float(writer.get("rate", 0))
    print("8 ranks written at %.0f lines/s; alert at step %d (budget_step %d, steps_to_budget %d), %.2f s after the "
          "writer wrote step 260; %d updates; peak RSS %d KB"
          % (rate, step, a["alert"]["budget_step"], a["alert"]["steps_to_budget"], lag, len(events), rss_kb))
    if rate < 9000: fails.append("the writer reached only %.0f lines/s (machine too slow for the test)" % rate)
    if not 255 <= step <= 300: fails.append("alert at step %d, want 255-300" % step)
    if lag > 2.0: fails.append("alert %.2f s after step 260 was written: not keeping up" % lag)
    if not all(e["schema"] == "oomdx.watch/1" for e in events): fails.append("schema")
if rss_kb > rss_limit: fails.append("peak RSS %d KB > %d KB" % (rss_kb, rss_limit))
for f in fails: print("FAIL", f)
sys.exit(1 if fails else 0)
PY

# an OOM appearing in a followed file ends the watch with exit code 4 and the diagnosis
: > "$tmp/oom.log"
( sleep 0.5; echo "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity of 79.10 GiB of which 1.00 GiB is free." >> "$tmp/oom.log" ) &
set +e
out=$("$oomdx" watch --interval 0.1 --duration 10 "$tmp/oom.log")
rc=$?
set -e
wait
echo "$out" | grep -q "ALERT: out-of-memory error (caching_allocator)" || { echo "FAIL no OOM alert: $out"; exit 1; }
echo "$out" | grep -q "Log analysis (Step 0)" || { echo "FAIL no diagnosis after the OOM alert"; exit 1; }
[ "$rc" = 4 ] || { echo "FAIL OOM exit code $rc, want 4"; exit 1; }
echo "OOM alert: exit 4 with the diagnosis"
