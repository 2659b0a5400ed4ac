#!/usr/bin/env bash
# Axolotl, added with one adapter file (knowledge/frameworks/axolotl.yaml): its configs are detected
# as axolotl (and HF / LLaMA-Factory look-alikes are not), each key gives its canonical fact with
# provenance, an 8B QLoRA is estimated as QLoRA, and a plan's overrides come out as Axolotl keys.
. "$(dirname "$0")/adapter_lib.sh"

# detection: Axolotl files are axolotl; the look-alikes keep their own adapter
detect_each "axolotl/qlora_8b.yml axolotl" "axolotl/lora_8bit_ds.yml axolotl" "axolotl/fft_fsdp.yml axolotl" \
            "axolotl/minimal.yml axolotl" "llama_factory/llama3_lora_sft.yaml llama_factory" \
            "llama_factory/unsloth_bnb4_lora.yaml llama_factory" "hf_trainer/training_args.yaml hf_trainer" \
            "hf_trainer/accelerate_fsdp.yaml hf_trainer"

check_facts axolotl/qlora_8b.yml '{
 "job.framework": ("axolotl", "", None),
 "job.model_name": ("NousResearch/Meta-Llama-3-8B", "config.axolotl", 2),
 "training.quantization_bit": (4, "config.axolotl", 7),
 "training.finetuning_type": ("qlora", "config.axolotl", 16),
 "training.seq_len": (4096, "config.axolotl", 18),
 "training.packing": (True, "config.axolotl", 19),
 "training.lora_rank": (32, "config.axolotl", 20),
 "training.lora_dropout": (0.05, "config.axolotl", 22),
 "training.lora_target": ("all-linear", "config.axolotl", 23),
 "training.gradient_accumulation_steps": (4, "config.axolotl", 25),
 "training.local_batch_size": (2, "config.axolotl", 26),
 "optimizer.name": ("paged_adamw_8bit", "config.axolotl", 28),
 "training.mixed_precision_param": ("bfloat16", "config.axolotl", 32),
 "activation_checkpoint.mode": ("full", "config.axolotl", 35),
 "model.attn_impl": ("flash", "config.axolotl", 37),
 "training.double_quantization": (True, "config.axolotl.default", None),
 "training.quantization_type": ("nf4", "config.axolotl.default", None),
 "parallelism.zero_stage": (0, "config.axolotl.default", None)}'
check_facts axolotl/lora_8bit_ds.yml '{
 "training.quantization_bit": (8, "config.axolotl", 3),
 "training.finetuning_type": ("lora", "config.axolotl", 4),
 "training.use_dora": (True, "config.axolotl", 8),
 "training.lora_target": ("q_proj,k_proj,v_proj,o_proj", "config.axolotl", 9),
 "optimizer.name": ("adamw_bnb_8bit", "config.axolotl", None),
 "model.attn_impl": ("sdpa", "config.axolotl", None),
 "activation_checkpoint.mode": ("none", "config.axolotl", None),
 "training.chunked_loss": (True, "config.axolotl", None),
 "job.deepspeed_config": ("deepspeed_configs/zero2.json", "config.axolotl", None),
 "parallelism.zero_stage": (2, "shipped_file", None),
 "optimizer.offload": ("cpu", "shipped_file", None)}'
check_facts axolotl/fft_fsdp.yml '{
 "training.finetuning_type": ("full", "config.axolotl.default", None),
 "training.chunked_loss": (True, "config.axolotl", 4),
 "training.mixed_precision_param": ("float16", "config.axolotl", None),
 "model.attn_impl": ("flash", "config.axolotl", None),
 "activation_checkpoint.mode": ("full", "config.axolotl", None),
 "parallelism.zero_stage": (2, "config.axolotl", None),
 "parallelism.offload_params": ("cpu", "config.axolotl", None)}'
check_facts axolotl/minimal.yml '{
 "training.local_batch_size": (2, "config.axolotl", 6),
 "training.gradient_accumulation_steps": (1, "config.axolotl.default", None),
 "training.seq_len": (512, "config.axolotl.default", None),
 "activation_checkpoint.mode": ("none", "config.axolotl.default", None),
 "training.mixed_precision_param": ("bfloat16", "config.axolotl.default", None),
 "optimizer.name": ("adamw_torch_fused", "config.axolotl.default", None),
 "training.finetuning_type": ("full", "config.axolotl.default", None)}'

# an 8B QLoRA is a QLoRA estimate: 4-bit frozen base, optimizer states for the adapters only
est=$("$oomdx" estimate -c "$fx/axolotl/qlora_8b.yml" --model llama3-8b --device rtx4090 --format json 2>&1)
check_estimate "$est" '
p, o = comps["params"]["bytes"], comps["optimizer"]["bytes"]
if not (3.5 * GiB < p < 7.5 * GiB): bad.append("parameters %.2f GiB: not a 4-bit 8B base" % (p / GiB))
if not (o < 1 * GiB): bad.append("optimizer states %.2f GiB: not adapters only" % (o / GiB))
if "qlora" not in txt.lower() and "4-bit" not in txt: bad.append("the estimate does not say QLoRA / 4-bit")
'

# preflight plan: overrides written as Axolotl keys, never as HF or LLaMA-Factory ones
plan=$("$oomdx" preflight -c "$fx/axolotl/qlora_8b.yml" --model llama3-8b --device rtx4090 --plan --format text 2>&1)
printf '%s\n' "$plan" | grep -Eq '^\s*(micro_batch_size|gradient_accumulation_steps|gradient_checkpointing|sequence_len): ' \
  || { echo "FAIL plan: no override rendered as an Axolotl key"; printf '%s\n' "$plan" | tail -40; fail=1; }
if printf '%s\n' "$plan" | grep -Eq 'per_device_train_batch_size|disable_gradient_checkpointing|cutoff_len|has no setting'; then
  echo "FAIL plan: an override rendered in another framework's keys"; printf '%s\n' "$plan" | grep -E 'per_device|disable_grad|cutoff_len|has no setting'; fail=1
fi
# an Axolotl log (it carries HF Trainer lines too) selects the axolotl adapter and its semantics
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/train.log" <<'LOG'
[2026-05-01 10:00:00,000] [INFO] [axolotl.cli.train.do_train:40] [PID:100] [RANK:0] loading model
[INFO|trainer.py:2409] 2026-05-01 10:00:05,000 >> ***** Running training *****
  1%|          | 2/240 [00:10<13:10,  3.44s/it]
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.53 GiB memory in use. Of the allocated memory 19.87 GiB is allocated by PyTorch, and 2.21 GiB is reserved by PyTorch but unallocated.
LOG
"$oomdx" diagnose --log "$tmp/train.log" --format json --explain 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
f = {x["name"]: x["value"] for x in j["explain"]["facts"]}
want = {"log.framework": "axolotl", "job.framework": "axolotl", "framework.estimator": "generic", "framework.hf_model": True}
bad = ["%s = %r, expected %r" % (k, f.get(k), v) for k, v in want.items() if f.get(k) != v]
for b in bad: print("FAIL log:", b)
sys.exit(1 if bad else 0)
' || fail=1
[ "$fail" = 0 ] && echo "ok: Axolotl from one adapter file: detection, facts, QLoRA estimate, plan in Axolotl keys"
exit $fail
