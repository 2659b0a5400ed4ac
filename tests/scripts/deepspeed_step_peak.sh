#!/usr/bin/env bash
# rev39: DeepSpeed's see_memory_usage line ("MA 12.51 GB  Max_MA 30.01 GB  CA ...") prints the peak since its previous
# call and resets it: printed once per step, Max_MA is the step's peak (log.memory_last_peak_bytes), and the rules
# compare it with the estimated live peak (consistency_progress_step_peak); printed several times a step (DeepSpeed's
# memory_breakdown: before forward, backward, step), each Max_MA is a part of a step and no step peak is read.
# Logs written for this test in DeepSpeed's print format.
. "$(dirname "$0")/adapter_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" <<'EOF'
import sys
d = sys.argv[1]
oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB "
       "of which 1.10 GiB is free. Including non-PyTorch memory, this process has 78.00 GiB memory in use. Of the allocated "
       "memory 75.00 GiB is allocated by PyTorch, and 1.21 GiB is reserved by PyTorch but unallocated.")
pre = "[2024-01-01 10:00:0%d,000] [INFO] [utils.py:785:see_memory_usage] "
once, many = [], []
for i in range(1, 6):
    once += [pre % i + "step %d" % i, pre % i + "MA 12.5%d GB         Max_MA 30.0%d GB         CA 31.3 GB         Max_CA 32 GB " % (i, i),
             "Epoch [1/1], Step [%d/600], Loss: 0.0131" % i]
    for tag in ("Engine before forward", "Engine before backward", "Engine before step"):
        many += [pre % i + tag, pre % i + "MA 12.5%d GB         Max_MA 2%d.00 GB         CA 31.3 GB         Max_CA 32 GB " % (i, i)]
    many.append("Epoch [1/1], Step [%d/600], Loss: 0.0131" % i)
open(d + "/once.log", "w").write("\n".join(once + [oom]) + "\n")
open(d + "/many.log", "w").write("\n".join(many + [oom]) + "\n")
EOF
facts() { "$oomdx" diagnose --log "$1" --model llama3-8b --device h100 --format json --explain 2>/dev/null; }
facts "$tmp/once.log" | python3 -c '
import json, sys
f = {x["name"]: x["value"] for x in json.load(sys.stdin)["explain"]["facts"]}
bad = []
if f.get("log.memory_last_peak_bytes") != int(30.05 * 2**30): bad.append("step peak %r" % f.get("log.memory_last_peak_bytes"))
if f.get("consistency.progress.source_fact") != "log.memory_last_peak_bytes": bad.append("compared %r" % f.get("consistency.progress.source_fact"))
for b in bad: print("FAIL once per step:", b)
sys.exit(1 if bad else 0)' || fail=1
facts "$tmp/many.log" | python3 -c '
import json, sys
f = {x["name"]: x["value"] for x in json.load(sys.stdin)["explain"]["facts"]}
bad = []
if "log.memory_last_peak_bytes" in f: bad.append("a part of a step read as its peak: %r" % f["log.memory_last_peak_bytes"])
if f.get("consistency.progress.source_fact") == "log.memory_last_peak_bytes": bad.append("compared a part of a step")
for b in bad: print("FAIL several per step:", b)
sys.exit(1 if bad else 0)' || fail=1
[ "$fail" = 0 ] && echo "deepspeed step peak: ok"
exit "$fail"
