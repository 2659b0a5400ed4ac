#!/usr/bin/env bash
# `oomdx diagnose --snapshot FILE` with nothing else (issue 14): snapshots written by Python's own
# pickle (tests/fixtures/snapshots/gen_snapshots.py) from the descriptions below.
#   activations: an OOM with live activations filling the device, expandable segments already on
#                -> an activation lever first, never an allocator setting first
#   cache_held:  reserved far above live, no OOM          -> empty_cache or expandable segments in the top 3
#   fragmented:  an OOM whose request exceeds the largest cached block while the cache holds more
#                than the request                          -> expandable segments or max_split_size in the top 3
set -euo pipefail
OOMDX=$1; ROOT=$2
command -v python3 >/dev/null || exit 77
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
python3 - "$ROOT" "$T" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "fixtures", "snapshots"))
import gen_snapshots
GiB, MiB = 1 << 30, 1 << 20
stacks = {
    "act": [["forward", "/workspace/model/llama.py", 212],
            ["_call_impl", "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", 1750],
            ["train_step", "/workspace/train.py", 140]],
    "param": [["__init__", "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", 106],
              ["build_model", "/workspace/train.py", 61]],
}
def seg(addr, blocks, expandable=False):
    return {"device": 0, "address": addr, "expandable": expandable, "blocks": blocks}
def allocs(segs):  # the weights first (built before training), then the step's tensors
    out = []
    for s in segs:
        a = s["address"]
        for b in s["blocks"]:
            if b.get("state", "active_allocated") == "active_allocated":
                out.append(["alloc", a, b["size"], b["stack"]])
            a += b["size"]
    return sorted(out, key=lambda e: e[3] != "param")
base = 0x7f0000000000
cases = {}
# Activations fill the device: 8 GiB of weights, 70 GiB of forward activations, expandable on.
segs = [seg(base, [{"size": 8 * GiB, "requested": 8 * GiB, "stack": "param"}] +
                  [{"size": 7 * GiB, "requested": 7 * GiB, "stack": "act"} for _ in range(10)] +
                  [{"size": 128 * MiB, "state": "inactive"}], expandable=True)]
cases["activations"] = {"era": "2.7", "stacks": stacks, "segments": segs,
    "traces": {"0": allocs(segs) + [["oom", 0, int(4.94 * GiB), "act", {"device_free": 300 * MiB}]]},
    "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "expandable_segments": True}}
# The cache holds far more than the tensors: 20 GiB live in segments of 60 GiB.
segs = [seg(base + i * 8 * GiB, [{"size": 2 * GiB, "requested": 2 * GiB, "stack": "act" if i % 2 else "param"},
                                 {"size": 6 * GiB, "state": "inactive"}]) for i in range(10)]
cases["cache_held"] = {"era": "2.5", "stacks": stacks, "segments": segs, "traces": {"0": allocs(segs)}}
# Fragmentation: 12 GiB cached in 1 GiB holes between live blocks, a 2 GiB request fails.
segs = [seg(base + i * 4 * GiB, [{"size": 3 * GiB, "requested": 3 * GiB, "stack": "act" if i % 3 else "param"},
                                 {"size": 1 * GiB, "state": "inactive"}]) for i in range(12)]
trace = [["alloc", s["address"], 3 * GiB, "param"] for s in segs if s["blocks"][0]["stack"] == "param"]
for s in segs:  # each segment held 4 GiB once; the last GiB was freed
    if s["blocks"][0]["stack"] == "act":
        trace.append(["alloc", s["address"], 3 * GiB, "act"])
    trace += [["alloc", s["address"] + 3 * GiB, 1 * GiB, "act"],
              ["free_requested", s["address"] + 3 * GiB, 1 * GiB, "act"],
              ["free_completed", s["address"] + 3 * GiB, 1 * GiB, "act"]]
trace.append(["oom", 0, 2 * GiB, "act", {"device_free": 200 * MiB}])
cases["fragmented"] = {"era": "2.5", "stacks": stacks, "segments": segs, "traces": {"0": trace}}
for name, d in cases.items():
    for fname, data in gen_snapshots.render(name, d).items():
        if fname.endswith(".pickle"):
            open(os.path.join(sys.argv[2], fname), "wb").write(data)
PY
fail=0
top() {  # the ranked actions of diagnose --snapshot FILE, one per line
    "$OOMDX" diagnose --snapshot "$T/$1.pickle" --format json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["recommendations"]: print(r["action"])'
}
check() {  # name, description, python condition on `acts` (ranked list)
    local acts; acts=$(top "$1" | paste -sd, -)
    if python3 -c "import sys; acts=sys.argv[1].split(','); sys.exit(0 if ($3) else 1)" "$acts"; then
        echo "ok   $1: $2 ($acts)"
    else
        echo "FAIL $1: $2 ($acts)"; fail=1
    fi
}
ALLOC="{'expandable_segments','max_split_size','empty_cache','memory_fraction_watermark'}"
LEVERS="{'enable_full_ac','enable_selective_ac','reduce_micro_batch','reduce_seq_len','mixed_precision','chunked_loss','increase_cp','increase_tp'}"
check activations "an activation lever first, no allocator setting before it" \
    "acts and acts[0] in $LEVERS"
check cache_held "empty_cache or expandable segments in the top 3" \
    "bool({'empty_cache','expandable_segments'} & set(acts[:3]))"
check fragmented "expandable segments or max_split_size in the top 3" \
    "bool({'expandable_segments','max_split_size'} & set(acts[:3]))"
exit $fail
