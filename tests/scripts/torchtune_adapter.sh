#!/usr/bin/env bash
# torchtune, added with one adapter file (knowledge/frameworks/torchtune.yaml) and the adapter
# language's `match` / `join`: its recipe configs are detected as torchtune (and HF / Axolotl /
# LLaMA-Factory files are not), the model builder gives the model preset and LoRA / QLoRA / full,
# each key gives its canonical fact with provenance, an 8B QLoRA is estimated as a 4-bit QLoRA with
# the chunked loss, and a plan's overrides come out as torchtune keys.
. "$(dirname "$0")/adapter_lib.sh"

# detection: torchtune files are torchtune; the look-alikes keep their own adapter
detect_each "torchtune/qlora_8b_single.yaml torchtune" "torchtune/lora_70b_dist.yaml torchtune" \
            "torchtune/full_3b_low_memory.yaml torchtune" "torchtune/qdora_qwen_offload.yaml torchtune" \
            "torchtune/minimal.yaml torchtune" "axolotl/qlora_8b.yml axolotl" "axolotl/minimal.yml axolotl" \
            "llama_factory/llama3_lora_sft.yaml llama_factory" "hf_trainer/training_args.yaml hf_trainer"

check_facts torchtune/qlora_8b_single.yaml '{
 "job.framework": ("torchtune", "", None),
 "job.model_name": ("llama3_1_8b", "config.torchtune", 5),
 "model.hidden_size": (4096, "", None),
 "training.finetuning_type": ("qlora", "config.torchtune", 5),
 "training.quantization_bit": (4, "config.torchtune", 5),
 "training.lora_target": ("q_proj,v_proj,k_proj,output_proj,w1,w2,w3", "config.torchtune", 6),
 "training.lora_rank": (8, "config.torchtune", 9),
 "training.lora_dropout": (0.0, "config.torchtune", 11),
 "training.seq_len": (2048, "config.torchtune", 15),
 "training.packing": (True, "config.torchtune", None),
 "training.local_batch_size": (2, "config.torchtune", None),
 "optimizer.name": ("AdamW", "config.torchtune", None),
 "training.chunked_loss": (True, "config.torchtune", None),
 "training.gradient_accumulation_steps": (1, "config.torchtune", None),
 "compile.enable": (True, "config.torchtune", None),
 "training.mixed_precision_param": ("bfloat16", "config.torchtune", None),
 "training.pure_bf16": (True, "config.torchtune", None),
 "activation_checkpoint.mode": ("full", "config.torchtune", None),
 "activation_checkpoint.offload": (False, "config.torchtune", None),
 "training.quantization_method": ("torchao", "config.torchtune.default", None),
 "parallelism.zero_stage": (3, "config.torchtune.default", None)}'
check_facts torchtune/lora_70b_dist.yaml '{
 "job.model_name": ("llama3_3_70b", "config.torchtune", None),
 "model.num_layers": (80, "", None),
 "training.finetuning_type": ("lora", "config.torchtune", None),
 "training.quantization_bit": (None, "", None),
 "training.lora_target": ("w1,w2,w3,q_proj,k_proj,v_proj,output_proj", "config.torchtune", 6),
 "training.lora_rank": (16, "config.torchtune", None),
 "training.lora_dropout": (0.05, "config.torchtune", None),
 "training.seq_len": (4096, "config.torchtune", None),
 "training.packing": (False, "config.torchtune", None),
 "training.local_batch_size": (4, "config.torchtune", None),
 "training.gradient_accumulation_steps": (2, "config.torchtune", None),
 "training.chunked_loss": (True, "config.torchtune", None),
 "compile.enable": (False, "config.torchtune", None),
 "parallelism.offload_params": ("none", "config.torchtune", None),
 "parallelism.zero_stage": (2, "config.torchtune", None)}'
check_facts torchtune/full_3b_low_memory.yaml '{
 "job.model_name": ("llama3_2_3b", "config.torchtune", None),
 "model.tie_word_embeddings": (True, "", None),
 "training.finetuning_type": ("full", "config.torchtune", None),
 "training.seq_len": (None, "", None),
 "optimizer.name": ("PagedAdamW8bit", "config.torchtune", None),
 "optimizer.in_backward": (True, "config.torchtune", None),
 "compile.enable": (True, "config.torchtune", None),
 "compile.loss": (False, "config.torchtune", None),
 "activation_checkpoint.mode": ("full", "config.torchtune", None),
 "activation_checkpoint.offload": (True, "config.torchtune", None),
 "training.pure_bf16": (True, "config.torchtune", None)}'
check_facts torchtune/qdora_qwen_offload.yaml '{
 "job.model_name": ("qwen2_5_7b", "config.torchtune", None),
 "model.vocab_size": (152064, "", None),
 "training.finetuning_type": ("lora", "config.torchtune", None),
 "training.use_dora": (True, "config.torchtune", None),
 "training.quantization_bit": (4, "config.torchtune", None),
 "training.lora_target": ("q_proj,v_proj", "config.torchtune", None),
 "optimizer.name": (None, "", None),
 "optimizer.offload": ("cpu", "config.torchtune", None),
 "training.chunked_loss": (False, "config.torchtune", None),
 "activation_checkpoint.mode": ("none", "config.torchtune", None)}'
check_facts torchtune/minimal.yaml '{
 "job.model_name": ("qwen3_8b", "config.torchtune", 3),
 "model.num_layers": (36, "", None),
 "training.local_batch_size": (2, "config.torchtune", 7),
 "training.finetuning_type": ("full", "config.torchtune", 3),
 "training.gradient_accumulation_steps": (1, "config.torchtune.default", None),
 "training.mixed_precision_param": ("float32", "config.torchtune.default", None),
 "activation_checkpoint.mode": ("none", "config.torchtune.default", None),
 "compile.enable": (False, "config.torchtune.default", None),
 "optimizer.in_backward": (False, "config.torchtune.default", None)}'

# a builder of an unknown module path is reported, not guessed
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf 'model:\n  _component_: my_models.build(size=8)\ntokenizer:\n  _component_: torchtune.models.llama3.llama3_tokenizer\nbatch_size: 1\nenable_activation_checkpointing: true\n' > "$tmp/custom.yaml"
facts "$tmp/custom.yaml" | python3 -c '
import json, sys
j = json.load(sys.stdin)
u = " ".join(j.get("unknown_keys", []))
if "model._component_" not in u: print("FAIL custom builder not reported:", j.get("unknown_keys")); sys.exit(1)
' || fail=1

# the 8B QLoRA: a 4-bit base, optimizer states for bf16 adapters only, chunked loss, AC, and the
# torchtune estimator (model from the builder name, no --model)
est=$("$oomdx" estimate -c "$fx/torchtune/qlora_8b_single.yaml" --device rtx4090 --format json 2>&1)
check_estimate "$est" '
p, o = comps["params"]["bytes"], comps["optimizer"]["bytes"]
if not (4.0 * GiB < p < 7.0 * GiB): bad.append("parameters %.2f GiB: not a 4-bit 8B base" % (p / GiB))
if not (o < 0.5 * GiB): bad.append("optimizer states %.2f GiB: not adapters only" % (o / GiB))
if "NF4" not in comps["params"]["formula"]: bad.append("the parameters are not NF4: %s" % comps["params"]["formula"])
if "AC full" not in comps["activations"]["formula"]: bad.append("AC not full: %s" % comps["activations"]["formula"])
peak = e.get("peak_bytes") or e.get("device_peak_bytes")
if peak is not None and not (6.0 * GiB < peak < 10.0 * GiB): bad.append("peak %.2f GiB far from the published 7.4 GiB" % (peak / GiB))
'

# preflight plan: overrides written as torchtune keys, never as HF / Axolotl ones
plan=$("$oomdx" preflight -c "$fx/torchtune/full_3b_low_memory.yaml" --device 8GiB --set training.seq_len=4096 --plan --format text 2>&1)
printf '%s\n' "$plan" | grep -Eq '^\s*(batch_size|tokenizer|max_seq_len|enable_activation_checkpointing|enable_activation_offloading|loss|dtype|gradient_accumulation_steps|fsdp_cpu_offload):' \
  || { echo "FAIL plan: no override rendered as a torchtune key"; printf '%s\n' "$plan" | tail -40; fail=1; }
if printf '%s\n' "$plan" | grep -Eq 'per_device_train_batch_size|micro_batch_size|gradient_checkpointing|cutoff_len'; then
  echo "FAIL plan: an override rendered in another framework's keys"; printf '%s\n' "$plan" | grep -E 'per_device|micro_batch|gradient_checkpointing|cutoff_len'; fail=1
fi
# torchtune has no global batch setting: a smaller batch_size keeps the global batch through
# gradient_accumulation_steps (8 x 2 -> 2 x 8: rev36, 4 is still over the budget and 3 divides no step), never through
# training.global_batch_size
plan=$("$oomdx" preflight -c "$root/examples/torchtune_qlora/8B_qlora_single_device.yaml" --device rtx4090 --plan --format text 2>&1)
printf '%s\n' "$plan" | grep -q '^ *batch_size: 2$' && printf '%s\n' "$plan" | grep -q '^ *gradient_accumulation_steps: 8$' \
  || { echo "FAIL plan: batch_size 2 with gradient_accumulation_steps 8 not planned"; printf '%s\n' "$plan" | tail -30; fail=1; }
if printf '%s\n' "$plan" | grep -q 'global_batch_size'; then
  echo "FAIL plan: the global batch kept through a key torchtune does not have"; printf '%s\n' "$plan" | grep global_batch_size; fail=1
fi
[ "$fail" = 0 ] && echo "ok: torchtune from one adapter file: detection, builder -> model and method, facts, QLoRA estimate, plan in torchtune keys"
exit $fail
