#!/usr/bin/env bash
# OpenRLHF, added with two adapter files (knowledge/frameworks/openrlhf.yaml, the flat flags up to v0.10.1;
# openrlhf_dotted.yaml, v0.10.2+) and a log signature: its launch scripts are its own (not LLaMA-Factory's,
# which also signs --flash_attn), a log with its launch line and an OOM gets overrides in its flags, and a
# traceback through openrlhf/ names the framework.
. "$(dirname "$0")/adapter_lib.sh"

detect_each "openrlhf/sft_llama3_8b.sh openrlhf" "openrlhf/ppo_colocate_qwen7b.sh openrlhf" \
            "openrlhf/grpo_dotted_qwen3_8b.sh openrlhf_dotted" "llama_factory/llama3_lora_sft.yaml llama_factory" "llama_factory/train_cli.sh llama_factory" \
            "hf_trainer/run_clm.sh hf_trainer"

check_facts openrlhf/ppo_colocate_qwen7b.sh '{
 "job.framework": ("openrlhf", "", None),
 "training.local_batch_size": (2, "config.openrlhf", 19),
 "training.seq_len": (4096, "config.openrlhf", None),
 "training.scoring_batch_size": (8, "config.openrlhf", 21),
 "parallelism.zero_stage": (3, "config.openrlhf", 27),
 "activation_checkpoint.mode": ("full", "config.openrlhf", 36),
 "training.rollout_colocated": (True, "config.openrlhf", 13),
 "optimizer.offload": ("none", "config.openrlhf.default", None)}'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# an SFT launch without checkpointing and its OOM (written for this test; the message in PyTorch's format)
printf '%s\n' 'deepspeed --module openrlhf.cli.train_sft \' '   --max_len 8192 \' '   --train_batch_size 64 \' \
  '   --micro_train_batch_size 4 \' '   --pretrain meta-llama/Meta-Llama-3-8B \' '   --zero_stage 2 \' '   --bf16 \' \
  '   --flash_attn' \
  '[rank0]:   File "/usr/local/lib/python3.10/dist-packages/openrlhf/trainer/sft_trainer.py", line 150, in fit' \
  '[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB. GPU 0 has a total capacity of 79.15 GiB of which 3.12 GiB is free. Including non-PyTorch memory, this process has 76.02 GiB memory in use. Of the allocated memory 71.40 GiB is allocated by PyTorch, and 3.91 GiB is reserved by PyTorch but unallocated.' \
  > "$tmp/train.log"
"$oomdx" diagnose --log "$tmp/train.log" --world-size 8 --format json --explain 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
f = {x["name"]: x["value"] for x in j["explain"]["facts"]}
want = {"job.framework": "openrlhf", "log.framework": "openrlhf", "training.seq_len": 8192, "training.local_batch_size": 4}
bad = ["%s = %r, expected %r" % (k, f.get(k), v) for k, v in want.items() if f.get(k) != v]
recs = {r["action"]: r for r in j["recommendations"]}
ac = recs.get("enable_full_ac")
if not ac or ac["rendered"] != ["--gradient_checkpointing"]: bad.append("checkpointing %r" % (ac and ac["rendered"]))
mb = recs.get("reduce_micro_batch")
if not mb or mb["rendered"] != ["--micro_train_batch_size 2"]: bad.append("micro-batch %r" % (mb and mb["rendered"]))
if any("has no setting" in line for r in j["recommendations"] for line in r["rendered"]): bad.append("an override it cannot take")
for b in bad: print("FAIL openrlhf launch line:", b)
sys.exit(1 if bad else 0)
' || fail=1

# a colocated PPO run without --vllm_enable_sleep: the 48 GiB "other processes" hold are its own vLLM engine (0.6 of
# the device, a Ray actor of its own); not "stop the other processes" but the engine's sleep or share
sed -n '4,36p' "$fx/openrlhf/ppo_colocate_qwen7b.sh" | grep -v -e '--vllm_enable_sleep' -e '--deepspeed_enable_sleep' > "$tmp/ppo.log"
printf '%s\n' '(PolicyModelActor pid=81234)   File "/usr/local/lib/python3.10/dist-packages/openrlhf/trainer/ppo_trainer.py", line 412, in training_step' \
  '(PolicyModelActor pid=81234) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.32 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.05 GiB is free. Including non-PyTorch memory, this process has 30.10 GiB memory in use. Of the allocated memory 26.20 GiB is allocated by PyTorch, and 2.41 GiB is reserved by PyTorch but unallocated.' \
  >> "$tmp/ppo.log"
"$oomdx" diagnose --log "$tmp/ppo.log" --device a100-80gb --format json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
recs = j["recommendations"]
bad = []
if not recs or recs[0]["action"] != "memory_fraction_watermark" or recs[0]["rendered"] != ["--vllm_enable_sleep"]:
    bad.append("first recommendation %r" % [(r["action"], r["rendered"]) for r in recs[:2]])
if any(r["action"] == "stop_other_processes" for r in recs): bad.append("told to stop its own engine")
for b in bad: print("FAIL openrlhf colocated engine:", b)
sys.exit(1 if bad else 0)
' || fail=1

[ "$fail" = 0 ] && echo "openrlhf adapters: ok"
exit "$fail"
