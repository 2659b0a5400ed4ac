#!/usr/bin/env bash
# kohya-ss sd-scripts, added with one adapter file (knowledge/frameworks/kohya_sd_scripts.yaml) and
# a log signature: its launch scripts and --config_file TOML are detected as kohya_sd_scripts
# (diffusers / HF / torchtitan inputs keep their own adapter), "512,512" gives the side, and an
# OOM of a full fine-tune without checkpointing gets `--gradient_checkpointing` first.
. "$(dirname "$0")/adapter_lib.sh"

detect_each "kohya_sd_scripts/lora_sd15.sh kohya_sd_scripts" "kohya_sd_scripts/sdxl_db.toml kohya_sd_scripts" \
            "diffusers/dreambooth.sh diffusers" "hf_trainer/run_clm.sh hf_trainer" "torchtitan/llama3_8b_2024.toml torchtitan"

check_facts kohya_sd_scripts/lora_sd15.sh '{
 "job.framework": ("kohya_sd_scripts", "", None),
 "training.local_batch_size": (2, "config.kohya_sd_scripts", 7),
 "training.image_resolution": (512, "config.kohya_sd_scripts", 7),
 "training.finetuning_type": ("lora", "config.kohya_sd_scripts", 8),
 "training.lora_rank": (32, "config.kohya_sd_scripts", 8),
 "optimizer.name": ("AdamW8bit", "config.kohya_sd_scripts", 9),
 "training.mixed_precision_param": ("float16", "config.kohya_sd_scripts", 10),
 "model.attn_impl": ("flash", "config.kohya_sd_scripts", 11),
 "activation_checkpoint.mode": ("none", "config.kohya_sd_scripts.default", None)}'
check_facts kohya_sd_scripts/sdxl_db.toml '{
 "training.image_resolution": (1024, "config.kohya_sd_scripts", 5),
 "training.local_batch_size": (1, "config.kohya_sd_scripts", 6),
 "activation_checkpoint.mode": ("full", "config.kohya_sd_scripts", 7),
 "training.pure_bf16": (True, "config.kohya_sd_scripts", 8),
 "training.mixed_precision_param": ("bfloat16", "config.kohya_sd_scripts", 9),
 "model.attn_impl": ("sdpa", "config.kohya_sd_scripts", 10),
 "optimizer.name": ("AdamW", "config.kohya_sd_scripts.default", None),
 "training.finetuning_type": (None, "", None)}'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a launch line and an OOM (written for this test; the message in PyTorch's format)
printf '%s\n' 'accelerate launch --num_cpu_threads_per_process 1 train_db.py --pretrained_model_name_or_path=model.safetensors --train_data_dir=img --resolution=768,768 --train_batch_size=1 --optimizer_type=AdamW8bit --xformers --mixed_precision=fp16' \
  'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 58.00 MiB (GPU 0; 8.00 GiB total capacity; 6.74 GiB already allocated; 0 bytes free; 6.93 GiB reserved in total by PyTorch)' > "$tmp/train.log"
"$oomdx" diagnose --log "$tmp/train.log" --format json --explain 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
f = {x["name"]: x["value"] for x in j["explain"]["facts"]}
want = {"job.framework": "kohya_sd_scripts", "training.image_resolution": 768, "activation_checkpoint.mode": "none"}
bad = ["%s = %r, expected %r" % (k, f.get(k), v) for k, v in want.items() if f.get(k) != v]
recs = j["recommendations"]
if not recs or recs[0]["action"] != "enable_full_ac" or recs[0]["rendered"] != ["--gradient_checkpointing"]:
    bad.append("first recommendation %r" % [(r["action"], r["confidence"], r["rendered"]) for r in recs[:2]])
if "give --model" in json.dumps(j): bad.append("the report asks for --model")
for b in bad: print("FAIL kohya launch line:", b)
sys.exit(1 if bad else 0)
' || fail=1

[ "$fail" = 0 ] && echo "kohya adapter: ok"
exit "$fail"
