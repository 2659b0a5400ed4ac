#!/usr/bin/env bash
# diffusers example scripts, added with one adapter file (knowledge/frameworks/diffusers.yaml) and
# a log signature: their launch scripts are detected as diffusers (HF / Megatron launch scripts
# keep their own adapter), each flag gives its canonical fact, the scripts' defaults (no gradient
# checkpointing, torch AdamW) stand where a flag is absent, a DreamBooth OOM gets gradient
# checkpointing first and written as the script's flag, and the report states that no estimate is
# made for a UNet instead of asking for --model.
. "$(dirname "$0")/adapter_lib.sh"

detect_each "diffusers/dreambooth.sh diffusers" "diffusers/lora_sdxl.sh diffusers" \
            "hf_trainer/run_clm.sh hf_trainer" "megatron/pretrain_llama3_8b.sh megatron" "axolotl/minimal.yml axolotl"

check_facts diffusers/dreambooth.sh '{
 "job.framework": ("diffusers", "", None),
 "training.local_batch_size": (2, "config.diffusers", 17),
 "training.image_resolution": (512, "config.diffusers", 16),
 "training.gradient_accumulation_steps": (1, "config.diffusers", 18),
 "activation_checkpoint.mode": ("none", "config.diffusers.default", None),
 "optimizer.name": ("AdamW", "config.diffusers.default", None),
 "training.finetuning_type": (None, "", None),
 "training.mixed_precision_param": (None, "", None)}'
check_facts diffusers/lora_sdxl.sh '{
 "training.local_batch_size": (1, "config.diffusers", 12),
 "training.image_resolution": (1024, "config.diffusers", 11),
 "activation_checkpoint.mode": ("full", "config.diffusers", 14),
 "optimizer.name": ("AdamW8bit", "config.diffusers", 15),
 "training.mixed_precision_param": ("float16", "config.diffusers", 9),
 "model.attn_impl": ("flash", "config.diffusers", 18),
 "training.finetuning_type": ("lora", "config.diffusers", 17),
 "training.lora_rank": (16, "config.diffusers", 17)}'

# a DreamBooth OOM (message written for this test in PyTorch's format): checkpointing is off by the
# script's default, so it comes first at high confidence, as the script's own flag
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' 'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 0; 23.69 GiB total capacity; 20.10 GiB already allocated; 1.02 GiB free; 21.80 GiB reserved in total by PyTorch)' > "$tmp/train.log"
out=$("$oomdx" diagnose -c "$fx/diffusers/dreambooth.sh" --log "$tmp/train.log" --device rtx3090 --format json 2>&1)
printf '%s' "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
recs = j["recommendations"]
bad = []
if not recs or recs[0]["action"] != "enable_full_ac" or recs[0]["confidence"] != "high":
    bad.append("first recommendation %r, expected enable_full_ac at high" % [(r["action"], r["confidence"]) for r in recs[:3]])
elif recs[0]["rendered"] != ["--gradient_checkpointing"]:
    bad.append("checkpointing rendered as %r" % recs[0]["rendered"])
text = json.dumps(j)
if "give --model" in text: bad.append("the report asks for --model, which cannot describe a UNet")
if "does not model this framework" not in text: bad.append("no statement that the estimator does not model the network")
for b in bad: print("FAIL diagnose:", b)
sys.exit(1 if bad else 0)
' || { fail=1; printf '%s\n' "$out" | head -c 3000; }

# the launch line in a log selects the adapter as a config would
printf '%s\n' 'accelerate launch train_dreambooth.py --pretrained_model_name_or_path=CompVis/stable-diffusion-v1-4 --instance_data_dir=dog --instance_prompt="a photo of sks dog" --resolution=768 --train_batch_size=1 --use_8bit_adam' \
  'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 0; 23.69 GiB total capacity; 20.10 GiB already allocated; 1.02 GiB free; 21.80 GiB reserved in total by PyTorch)' > "$tmp/launch.log"
"$oomdx" diagnose --log "$tmp/launch.log" --format json --explain 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
f = {x["name"]: x["value"] for x in j["explain"]["facts"]}
want = {"job.framework": "diffusers", "training.image_resolution": 768, "training.local_batch_size": 1, "optimizer.name": "AdamW8bit",
        "activation_checkpoint.mode": "none"}
bad = ["%s = %r, expected %r" % (k, f.get(k), v) for k, v in want.items() if f.get(k) != v]
rendered = {r["action"]: r["rendered"] for r in j["recommendations"]}
if rendered.get("enable_full_ac") != ["--gradient_checkpointing"]: bad.append("checkpointing rendered as %r" % rendered.get("enable_full_ac"))
if rendered.get("reduce_seq_len") != ["--resolution 576"]: bad.append("smaller images rendered as %r" % rendered.get("reduce_seq_len"))
for b in bad: print("FAIL launch line:", b)
sys.exit(1 if bad else 0)
' || fail=1

[ "$fail" = 0 ] && echo "diffusers adapter: ok"
exit "$fail"
