#!/usr/bin/env bash
# ms-swift, added with one adapter file (knowledge/frameworks/ms_swift.yaml): its command lines and
# YAML / JSON configs are detected as ms_swift (HF / LLaMA-Factory / Axolotl files are not), each
# argument gives its canonical fact with provenance, its own defaults fill the rest, `--deepspeed
# zero3` (a preset name, not a file) is DeepSpeed ZeRO-3, a QLoRA is estimated as QLoRA, and a plan's
# overrides come out as ms-swift flags.
. "$(dirname "$0")/adapter_lib.sh"

detect_each "ms_swift/qlora_qwen25_7b.yaml ms_swift" "ms_swift/full_zero3.json ms_swift" "ms_swift/lora_cli.sh ms_swift" \
            "ms_swift/minimal.sh ms_swift" "llama_factory/llama3_lora_sft.yaml llama_factory" \
            "llama_factory/train_cli.sh llama_factory" "hf_trainer/training_args.yaml hf_trainer" \
            "hf_trainer/accelerate_fsdp.yaml hf_trainer" "axolotl/qlora_8b.yml axolotl" "torchtune/qlora_8b_single.yaml torchtune" \
            "ms_swift/megatron_lora_moe.sh ms_swift_megatron" "megatron/pretrain_llama3_8b.sh megatron"

# Megatron-SWIFT (knowledge/frameworks/ms_swift_megatron.yaml, added alone): underscore Megatron arguments, its own
# defaults (distributed optimizer, expert TP 1, padding-free), estimated with Megatron's conventions
check_facts ms_swift/megatron_lora_moe.sh '{
 "job.framework": ("ms_swift_megatron", "", None),
 "training.finetuning_type": ("lora", "config.ms_swift_megatron", 8),
 "training.local_batch_size": (8, "config.ms_swift_megatron", 13),
 "parallelism.expert_parallel_degree": (2, "config.ms_swift_megatron", 11),
 "parallelism.expert_tensor_parallel_degree": (1, "config.ms_swift_megatron.default", None),
 "activation_checkpoint.mode": ("full", "config.ms_swift_megatron", 15),
 "optimizer.distributed": (True, "config.ms_swift_megatron.default", None),
 "training.seq_len": (2048, "config.ms_swift_megatron", 19),
 "job.world_size": (2, "config.derived", 4)}'

check_facts ms_swift/qlora_qwen25_7b.yaml '{
 "job.framework": ("ms_swift", "", None),
 "job.model_name": ("Qwen/Qwen2.5-7B-Instruct", "config.ms_swift", 2),
 "training.finetuning_type": ("lora", "config.ms_swift", 3),
 "training.load_dtype": ("bfloat16", "config.ms_swift", 7),
 "training.mixed_precision_param": ("bfloat16", "config.ms_swift", 7),
 "training.quantization_method": ("bitsandbytes", "config.ms_swift", 8),
 "training.quantization_bit": (4, "config.ms_swift", 9),
 "training.local_batch_size": (2, "config.ms_swift", 12),
 "training.gradient_accumulation_steps": (8, "config.ms_swift", 13),
 "training.lora_rank": (16, "config.ms_swift", 15),
 "training.lora_target": ("q_proj,k_proj,v_proj,o_proj", "config.ms_swift", 17),
 "training.seq_len": (4096, "config.ms_swift", 18),
 "activation_checkpoint.mode": ("full", "config.ms_swift", 19),
 "model.attn_impl": ("flash", "config.ms_swift", 20),
 "training.quantization_type": ("nf4", "config.ms_swift.default", None),
 "training.double_quantization": (True, "config.ms_swift.default", None),
 "training.lora_dropout": (0.05, "config.ms_swift.default", None),
 "parallelism.zero_stage": (0, "config.ms_swift.default", None)}'
check_facts ms_swift/full_zero3.json '{
 "training.finetuning_type": ("full", "config.ms_swift", None),
 "training.packing": (True, "config.ms_swift", None),
 "training.chunked_loss": (True, "config.ms_swift", None),
 "parallelism.zero_stage": (3, "config.ms_swift", None),
 "optimizer.offload": ("cpu", "config.ms_swift", None),
 "parallelism.offload_params": ("cpu", "config.ms_swift", None),
 "job.deepspeed_preset": ("zero3_offload", "config.ms_swift", None),
 "job.deepspeed_config": (None, "", None),
 "parallelism.context_parallel_degree": (2, "config.ms_swift", None)}'
# list arguments of several words (--dataset a b c) do not leak into operands; 3.x train_type
check_facts ms_swift/lora_cli.sh '{
 "training.finetuning_type": ("lora", "config.ms_swift", 5),
 "training.local_batch_size": (1, "config.ms_swift", 11),
 "training.lora_target": ("all-linear", "config.ms_swift", 16),
 "training.seq_len": (2048, "config.ms_swift", 22),
 "training.gradient_accumulation_steps": (16, "config.ms_swift", 17)}'
# the launcher's environment: NPROC_PER_NODE x NNODES is the world size
check_facts ms_swift/nproc_env.sh '{
 "job.nproc_per_node": (2, "config.ms_swift", 6),
 "job.nnodes": (2, "config.ms_swift", 7),
 "job.world_size": (4, "config.derived", 6),
 "parallelism.zero_stage": (3, "config.ms_swift", 13)}'
# ms-swift's own defaults: LoRA, micro-batch 1, gradient checkpointing on, rank 8 on all linears
check_facts ms_swift/minimal.sh '{
 "training.finetuning_type": ("lora", "config.ms_swift.default", None),
 "training.local_batch_size": (1, "config.ms_swift.default", None),
 "activation_checkpoint.mode": ("full", "config.ms_swift.default", None),
 "training.lora_rank": (8, "config.ms_swift.default", None),
 "training.lora_target": ("all-linear", "config.ms_swift.default", None),
 "training.seq_len": (None, "", None),
 "training.gradient_accumulation_steps": (None, "", None)}'

# 4.x `swift sft cfg.yaml --flags`: the YAML is the base, the flags win (the line alone has no
# ms-swift-only flag, so it is named with --framework)
"$oomdx" facts -c "$fx/ms_swift/config_launch.sh" --framework ms_swift --format json 2>&1 | python3 -c '
import json, sys
j = json.load(sys.stdin)
f = {x["name"]: (x["value"], x["file"].split("/")[-1]) for x in j["facts"]}
want = {"training.local_batch_size": (4, "config_launch.sh"), "training.seq_len": (8192, "config_launch.sh"),
        "training.quantization_bit": (4, "qlora_qwen25_7b.yaml"), "training.lora_rank": (16, "qlora_qwen25_7b.yaml")}
bad = ["%s = %r, expected %r" % (k, f.get(k), v) for k, v in want.items() if f.get(k) != v]
if j["unknown_keys"]: bad.append("unknown keys %r" % j["unknown_keys"])
for b in bad: print("FAIL config_launch.sh:", b)
sys.exit(1 if bad else 0)
' || fail=1

# a 7B QLoRA is a QLoRA estimate: 4-bit frozen base, optimizer states for the adapters only
est=$("$oomdx" estimate -c "$fx/ms_swift/qlora_qwen25_7b.yaml" --device rtx4090 --format json 2>&1)
check_estimate "$est" '
p, o = comps["params"]["bytes"], comps["optimizer"]["bytes"]
if not (3.5 * GiB < p < 7.0 * GiB): bad.append("parameters %.2f GiB: not a 4-bit 7B base" % (p / GiB))
if not (o < 1 * GiB): bad.append("optimizer states %.2f GiB: not adapters only" % (o / GiB))
'
# `--deepspeed zero3` names a preset: the DeepSpeed engine (fp32 master partitions), as a JSON path would
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf 'model: Qwen/Qwen3-8B\ntrain_type: full\ndeepspeed: zero3\nmax_length: 2048\n' > "$tmp/preset.yaml"
printf 'model: Qwen/Qwen3-8B\ntrain_type: full\ndeepspeed: swift/llm/ds_config/zero3.json\nmax_length: 2048\n' > "$tmp/path.yaml"
a=$("$oomdx" estimate -c "$tmp/preset.yaml" --device h20 --format json 2>&1 | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("estimate", j)["peak_bytes"])')
b=$("$oomdx" estimate -c "$tmp/path.yaml" --device h20 --format json 2>&1 | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("estimate", j)["peak_bytes"])')
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: --deepspeed zero3 estimates $a bytes, the shipped zero3.json $b"; fail=1; }

# preflight plan: overrides written as ms-swift flags, never as other frameworks' keys
plan=$("$oomdx" preflight -c "$fx/ms_swift/lora_cli.sh" --device rtx3090 --set training.seq_len=16384 --plan --format text 2>&1)
printf '%s\n' "$plan" | grep -Eq '^\s*--(per_device_train_batch_size|gradient_accumulation_steps|max_length|use_liger_kernel|quant_method|quant_bits|deepspeed) ' \
  || { echo "FAIL plan: no override rendered as an ms-swift flag"; printf '%s\n' "$plan" | tail -40; fail=1; }
if printf '%s\n' "$plan" | grep -Eq 'disable_gradient_checkpointing|cutoff_len|micro_batch_size:|sequence_len|has no setting|JSON merge patch'; then
  echo "FAIL plan: an override rendered in another framework's keys"; fail=1
fi
# full fine-tuning that does not fit on one card: ZeRO-3 offload as the ms-swift preset name
plan=$("$oomdx" preflight -c "$root/examples/ms_swift_full_pt/train.sh" --device h20 --plan --format text 2>&1)
printf '%s\n' "$plan" | grep -Eq '^\s*--deepspeed zero3_offload$' \
  || { echo "FAIL plan: ZeRO-3 offload not rendered as --deepspeed zero3_offload"; printf '%s\n' "$plan" | grep -n -- '--' | head; fail=1; }
# a misspelt argument: ms-swift refuses arguments it does not read (remaining_argv), so the report says the config does not start
printf 'model: Qwen/Qwen2.5-7B-Instruct\ntrain_type: lora\nlora_rnak: 8\nmax_length: 4096\n' > "$tmp/typo.yaml"
"$oomdx" preflight -c "$tmp/typo.yaml" --device rtx4090 2>&1 | grep -q 'lora_rnak is not one ms_swift reads.*refuses keys it does not read' \
  || { echo "FAIL: a misspelt ms-swift argument is not reported as refused at start-up"; fail=1; }
[ "$fail" = 0 ] && echo "ok: ms-swift from one adapter file: detection, facts, defaults, DeepSpeed presets, QLoRA estimate, plan in ms-swift flags"
exit $fail
