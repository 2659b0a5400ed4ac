#!/usr/bin/env bash
# NVIDIA NeMo 1.x, NeMo 2.0 and Megatron-Bridge, added with adapter files (knowledge/frameworks/nemo.yaml, nemo2.yaml,
# megatron_bridge.yaml): each dialect is detected as its own (Megatron-LM, Megatron-SWIFT and verl look-alikes keep
# theirs), its keys give canonical facts with provenance, and preflight / diagnose write overrides as Hydra
# `key=value` operands in the job's own keys (model.tensor_model_parallel_size=2), never as Megatron-LM flags.
. "$(dirname "$0")/adapter_lib.sh"

detect_each "nemo/llama3_8b_pretrain.yaml nemo" "nemo/llama3_8b_lora.yaml nemo" "nemo/pretrain_llama3_70b.sh nemo" \
            "nemo/nemo2_pretrain_llama3_70b.sh nemo2" "nemo/bridge_llama3_8b_override.yaml megatron_bridge" \
            "nemo/bridge_run_recipe.sh megatron_bridge" "sixth/megatron_gpt_config.yaml nemo"

check_facts nemo/llama3_8b_pretrain.yaml '{
 "job.framework": ("nemo", "", None),
 "job.nproc_per_node": (8, "config.nemo", 7),
 "job.nnodes": (2, "config.nemo", 8),
 "training.mixed_precision_param": ("bfloat16", "config.nemo", 10),
 "model.megatron_legacy": (False, "config.nemo", 17),
 "training.local_batch_size": (4, "config.nemo", 18),
 "training.global_batch_size": (256, "config.nemo", 19),
 "parallelism.tensor_parallel_degree": (1, "config.nemo", 20),
 "parallelism.virtual_pipeline_degree": (None, "", None),
 "training.seq_len": (8192, "config.nemo", 24),
 "model.num_kv_heads": (8, "config.nemo", 30),
 "activation_checkpoint.mode": ("none", "config.nemo", 41),
 "optimizer.name": ("AdamW", "config.nemo", 52),
 "optimizer.distributed": (True, "config.nemo", 52),
 "parallelism.zero_stage": (1, "config.nemo", 52)}'
check_facts nemo/llama3_8b_lora.yaml '{
 "training.mixed_precision_param": ("bfloat16", "config.nemo", 6),
 "parallelism.tensor_parallel_degree": (2, "config.nemo", 10),
 "parallelism.sequence_parallel": (True, "config.nemo", 15),
 "activation_checkpoint.mode": ("full", "config.nemo", 16),
 "activation_checkpoint.recompute_method": ("uniform", "config.nemo", 17),
 "training.finetuning_type": ("lora", "config.nemo", 20),
 "training.lora_rank": (16, "config.nemo", 23),
 "training.seq_len": (4096, "config.nemo", 30),
 "optimizer.distributed": (False, "config.nemo", 32),
 "parallelism.context_parallel_degree": (1, "config.nemo.default", None)}'
check_facts nemo/pretrain_llama3_70b.sh '{
 "job.nproc_per_node": (8, "config.nemo", None),
 "job.nnodes": (8, "config.nemo", None),
 "parallelism.tensor_parallel_degree": (4, "config.nemo", None),
 "parallelism.pipeline_parallel_degree": (4, "config.nemo", None),
 "parallelism.context_parallel_degree": (2, "config.nemo", None),
 "parallelism.sequence_parallel": (True, "config.nemo", None),
 "model.num_layers": (80, "config.nemo", None),
 "optimizer.distributed": (True, "config.nemo", None)}'
check_facts nemo/nemo2_pretrain_llama3_70b.sh '{
 "job.model_name": ("llama3_70b", "config.nemo2", 3),
 "job.nnodes": (4, "config.nemo2", None),
 "parallelism.tensor_parallel_degree": (4, "config.nemo2", None),
 "parallelism.context_parallel_degree": (2, "config.nemo2", None),
 "parallelism.sequence_parallel": (True, "config.nemo2", None),
 "training.local_batch_size": (1, "config.nemo2", None),
 "training.seq_len": (8192, "config.nemo2", None),
 "activation_checkpoint.mode": ("selective", "config.nemo2", None),
 "optimizer.distributed": (None, "", None)}'
check_facts nemo/bridge_llama3_8b_override.yaml '{
 "parallelism.tensor_parallel_degree": (2, "config.megatron_bridge", 4),
 "parallelism.sequence_parallel": (True, "config.megatron_bridge", 7),
 "activation_checkpoint.mode": ("full", "config.megatron_bridge", 9),
 "training.local_batch_size": (2, "config.megatron_bridge", 15),
 "optimizer.distributed": (True, "config.megatron_bridge", 17),
 "training.seq_len": (8192, "config.megatron_bridge", None),
 "training.mixed_precision_param": ("bfloat16", "config.megatron_bridge", 21),
 "quantize.linear.float8": (False, "config.megatron_bridge", 21)}'
check_facts nemo/bridge_run_recipe.sh '{
 "job.model_name": ("llama3_8b", "config.megatron_bridge", None),
 "job.nproc_per_node": (8, "config.megatron_bridge", None),
 "training.local_batch_size": (4, "config.megatron_bridge", None),
 "parallelism.context_parallel_degree": (2, "config.megatron_bridge", None),
 "training.seq_len": (8192, "config.megatron_bridge", None)}'

# preflight and diagnose: overrides as Hydra key=value operands in each dialect's own keys
plan_has() {  # file, extra args, then a regex the plan must match
  local out
  out=$("$oomdx" preflight -c "$fx/$1" $2 --plan --format text 2>&1)
  if ! printf '%s\n' "$out" | grep -Eq "$3"; then echo "FAIL plan $1: no line matching '$3'"; printf '%s\n' "$out" | tail -30; fail=1; fi
  if printf '%s\n' "$out" | grep -Eq -- '--tensor-model-parallel-size|--recompute-granularity|--micro-batch-size|has no setting for (parallelism|activation_checkpoint|training\.local)'; then
    echo "FAIL plan $1: an override in Megatron-LM flags or not expressed"; printf '%s\n' "$out" | grep -E -- '--tensor|--recompute|--micro|has no setting'; fail=1
  fi
}
plan_has nemo/llama3_8b_pretrain.yaml "--model llama3-8b --device h100-80gb" \
  '^\s*model\.(tensor_model_parallel_size|activations_checkpoint_granularity|micro_batch_size|context_parallel_size)=[A-Za-z0-9]+$'
plan_has nemo/bridge_llama3_8b_override.yaml "--model llama3-8b --device a100-40gb --world-size 8" \
  '^\s*(model\.(tensor_model_parallel_size|recompute_granularity|context_parallel_size)|train\.micro_batch_size|dataset\.seq_length)=[A-Za-z0-9]+$'
plan_has nemo/nemo2_pretrain_llama3_70b.sh "--model llama3-70b --device a100-40gb" \
  '^\s*(trainer\.strategy\.[a-z_]+|data\.micro_batch_size|model\.config\.recompute_granularity)=[A-Za-z0-9]+$'

# a NeMo log (it carries Lightning's and Megatron's lines too) names the nemo adapter and Megatron's estimator
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/train.log" <<'LOG'
[NeMo I 2026-11-20 09:14:02 megatron_init:314] Rank 0 has data parallel group : [0, 1, 2, 3, 4, 5, 6, 7]
Epoch 0: :   0%|          | 0/50000 [00:00<?, ?it/s]
[rank0]:   File "/opt/NeMo/nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py", line 702, in training_step
[rank0]:   File "/usr/local/lib/python3.10/dist-packages/megatron/core/transformer/transformer_layer.py", line 303, in forward
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.19 GiB is free. Including non-PyTorch memory, this process has 77.90 GiB memory in use. Of the allocated memory 74.12 GiB is allocated by PyTorch, and 2.31 GiB is reserved by PyTorch but unallocated.
LOG
"$oomdx" diagnose --log "$tmp/train.log" --config "$fx/nemo/llama3_8b_pretrain.yaml" --model llama3-8b --format json --explain 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
f = {x["name"]: x["value"] for x in j["explain"]["facts"]}
want = {"log.framework": "nemo", "job.framework": "nemo", "framework.estimator": "megatron"}
bad = ["%s = %r, expected %r" % (k, f.get(k), v) for k, v in want.items() if f.get(k) != v]
txt = json.dumps(j)
if "model.activations_checkpoint_granularity=" not in txt and "model.micro_batch_size=" not in txt:
    bad.append("no recommendation written as a NeMo Hydra override")
if "--recompute-granularity" in txt or "--micro-batch-size" in txt: bad.append("a recommendation in Megatron-LM flags")
for b in bad: print("FAIL log:", b)
sys.exit(1 if bad else 0)
' || fail=1
[ "$fail" = 0 ] && echo "ok: NeMo 1.x / NeMo 2.0 / Megatron-Bridge from adapter files: detection, facts, Hydra overrides"
exit $fail
