#!/usr/bin/env bash
# A sixth framework with YAML only: a data directory holding the shipped rules and knowledge plus
# one adapter file (tests/fixtures/configs/sixth/adapters/nemo.yaml, with its semantics), and
# `oomdx diagnose` end to end on a NeMo config and log: the config is read through the adapter,
# the estimate uses the conventions its semantics name, and the overrides come out in NeMo's keys.
set -u
oomdx="$1"
root="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/rules" "$root/knowledge" "$tmp/"
cp "$root/tests/fixtures/configs/sixth/adapters/nemo.yaml" "$tmp/knowledge/frameworks/"
cat > "$tmp/train.log" <<'LOG'
[NeMo I 2026-05-01 10:00:00 exp_manager:396] Experiments will be logged at /results
Epoch 0: :   0%|          | 0/100000 [00:00<?, ?it/s]
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 77.99 GiB memory in use. Of the allocated memory 75.20 GiB is allocated by PyTorch, and 1.30 GiB is reserved by PyTorch but unallocated.
LOG
fail=0
out=$(OOMDX_DATA_DIR="$tmp" "$oomdx" diagnose --log "$tmp/train.log" --config "$root/tests/fixtures/configs/sixth/megatron_gpt_config.yaml" \
      --framework nemo --model llama3-8b --device h100-80gb --world-size 16 --set activation_checkpoint.mode=none \
      --format json --explain 2>&1)
rc=$?
if [ "$rc" != 0 ]; then echo "FAIL: diagnose exited $rc: $out"; exit 1; fi
printf '%s' "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
bad = []
if j["framework"] != "nemo": bad.append("framework is %r" % j["framework"])
facts = {f["name"]: f["value"] for f in j["explain"]["facts"]}
if facts.get("framework.estimator") != "megatron": bad.append("semantics not read: framework.estimator = %r" % facts.get("framework.estimator"))
if not j["estimate"]: bad.append("no estimate")
elif "main-grad" not in json.dumps(j["estimate"]): bad.append("the estimate does not use the megatron conventions (no main-grad buffer)")
recs = j["recommendations"]
if not recs: bad.append("no recommendation")
rendered = [l for r in recs for l in r["rendered"]]
if not any("activations_checkpoint_granularity: full" in l for l in rendered):
    bad.append("no override rendered in NeMo keys: %r" % rendered[:6])
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
' || fail=1
[ "$fail" = 0 ] && echo "ok: a sixth framework from YAML alone, diagnosed end to end"
exit $fail
