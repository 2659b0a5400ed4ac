#!/usr/bin/env bash
# rev39: the job's settings where users leave them. (1) A LLaMA-Factory YAML pasted into a log (LlamaFactory#5977):
# its `deepspeed: examples/deepspeed/ds_z3_config.json` is the file LLaMA-Factory ships (ZeRO-3), so no FSDP key is
# advised and ZeRO changes go to that file; "ds z3 cpu offload" in words (open-r1#47) gives the offload too. (2) An
# accelerate launch of a TRL recipe (open-r1's `accelerate launch --config_file zero3.yaml grpo.py --config
# grpo.yaml`): both files are read, the recipe as TRL's; a logged line names the recipe as not read instead of taking
# HF's defaults. (3) A report without an estimate names the framework defaults its advice rests on. Inputs written for
# this test in the formats of those threads and of open-r1's recipes.
. "$(dirname "$0")/adapter_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
oom='torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 3 has a total capacity of 23.69 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.58 GiB memory in use. Of the allocated memory 20.85 GiB is allocated by PyTorch, and 1.21 GiB is reserved by PyTorch but unallocated.'

# check JSON PYTHON: runs PYTHON with j (the report), f (explain facts by name: value), src (their sources), recs
# (recommendations by action), bad (append failures)
check() {
  printf '%s' "$1" | python3 -c '
import json, sys
j = json.load(sys.stdin)
f = {x["name"]: x["value"] for x in j.get("explain", {}).get("facts", [])}
src = {x["name"]: x.get("source", "") for x in j.get("explain", {}).get("facts", [])}
recs = {r["action"]: r for r in j["recommendations"]}
bad = []
exec(sys.argv[1])
for b in bad: print("FAIL %s: %s" % (sys.argv[2], b))
sys.exit(1 if bad else 0)
' "$2" "$3" || fail=1
}

# (1) the pasted LLaMA-Factory YAML
printf '%s\n' '### method' 'stage: sft' 'do_train: true' 'finetuning_type: full' \
  'deepspeed: examples/deepspeed/ds_z3_config.json' '### dataset' 'cutoff_len: 1024' '### train' \
  'per_device_train_batch_size: 1' 'gradient_accumulation_steps: 2' 'fp16: true' '' "$oom" > "$tmp/lf.log"
out=$("$oomdx" diagnose --log "$tmp/lf.log" --model llama3-8b --world-size 8 --format json --explain 2>/dev/null)
check "$out" '
want = {"job.framework": "llama_factory", "parallelism.zero_stage": 3, "training.finetuning_type": "full",
        "training.seq_len": 1024, "training.local_batch_size": 1, "training.mixed_precision_param": "float16",
        "job.deepspeed_config": "examples/deepspeed/ds_z3_config.json"}
for k, v in want.items():
    if f.get(k) != v: bad.append("%s = %r, expected %r" % (k, f.get(k), v))
if not src.get("parallelism.zero_stage", "").endswith(":5"): bad.append("zero_stage source %r" % src.get("parallelism.zero_stage"))
if "shard_optimizer_fsdp_zero" in recs: bad.append("sharding advised to a ZeRO-3 job")
if "fsdp" in json.dumps([r.get("rendered") for r in j["recommendations"]]): bad.append("an FSDP key advised beside a DeepSpeed config")
off = recs.get("offload_or_swap_optimizer")
if not off or "ds_z3_config.json" not in json.dumps(off.get("rendered")): bad.append("offload not written to the shipped file")
' lf_pasted
# a DeepSpeed file of the user's own is named but not mapped (no stage from it, still DeepSpeed's engine)
sed 's#examples/deepspeed/ds_z3_config.json#configs/my_zero.json#' "$tmp/lf.log" > "$tmp/own.log"
out=$("$oomdx" diagnose --log "$tmp/own.log" --framework llama_factory --model llama3-8b --world-size 8 --format json --explain 2>/dev/null)
check "$out" '
if f.get("parallelism.zero_stage") == 3: bad.append("a stage from a file not known")
if "fsdp" in json.dumps([r.get("rendered") for r in j["recommendations"]]): bad.append("an FSDP key advised beside a DeepSpeed config")
' lf_own_file
# "ds z3 cpu offload" in words
printf '%s\n' "When tested locally with a node of A100-80gb (640gb vram) + ds z3 cpu offload, I still can't run a 7b model" "$oom" > "$tmp/or.log"
out=$("$oomdx" diagnose --log "$tmp/or.log" --framework trl --format json --explain 2>/dev/null)
check "$out" '
if f.get("parallelism.zero_stage") != 3 or f.get("optimizer.offload") != "cpu": bad.append("stage %r offload %r" % (f.get("parallelism.zero_stage"), f.get("optimizer.offload")))
' ds_words_offload

# (2) accelerate launch of a TRL recipe
mkdir -p "$tmp/r/recipes/accelerate_configs" "$tmp/r/recipes/grpo"
printf '%s\n' 'compute_environment: LOCAL_MACHINE' 'deepspeed_config:' '  offload_optimizer_device: none' \
  '  offload_param_device: none' '  zero3_init_flag: true' '  zero_stage: 3' 'distributed_type: DEEPSPEED' \
  'mixed_precision: bf16' 'num_machines: 1' 'num_processes: 8' > "$tmp/r/recipes/accelerate_configs/zero3.yaml"
printf '%s\n' 'model_name_or_path: Qwen/Qwen2.5-7B-Instruct' 'torch_dtype: bfloat16' 'bf16: true' 'use_vllm: true' \
  'gradient_accumulation_steps: 4' 'gradient_checkpointing: true' 'max_prompt_length: 4096' \
  'max_completion_length: 2048' 'num_generations: 8' 'per_device_train_batch_size: 2' > "$tmp/r/recipes/grpo/config.yaml"
printf '%s\n' '#!/bin/bash' 'accelerate launch --config_file recipes/accelerate_configs/zero3.yaml \' \
  '    src/open_r1/grpo.py --config recipes/grpo/config.yaml' > "$tmp/r/train.sh"
got=$("$oomdx" facts -c "$tmp/r/train.sh" --format json 2>&1)
printf '%s' "$got" | python3 -c '
import json, sys
j = json.load(sys.stdin)
f = {x["name"]: x for x in j["facts"]}
want = {"job.framework": "trl", "training.seq_len": 6144, "training.local_batch_size": 2, "activation_checkpoint.mode": "full",
        "parallelism.zero_stage": 3, "job.world_size": 8, "job.model_name": "Qwen/Qwen2.5-7B-Instruct"}
bad = ["%s = %r, expected %r" % (k, f.get(k, {}).get("value"), v) for k, v in want.items() if f.get(k, {}).get("value") != v]
if not f.get("training.seq_len", {}).get("file", "").endswith("config.yaml"): bad.append("seq_len not from the recipe")
if j.get("unknown_keys"): bad.append("unknown keys %r" % j["unknown_keys"])
for b in bad: print("FAIL trl_recipe:", b)
sys.exit(1 if bad else 0)
' || fail=1
# look-alike: a user's own script with its own --config YAML is no HF / TRL job (as before this change)
mkdir -p "$tmp/own/configs"
printf '%s\n' 'model:' '  depth: 12' 'batch_size: 32' 'lr: 0.001' > "$tmp/own/configs/x.yaml"
printf '%s\n' '#!/bin/bash' 'python train.py --config configs/x.yaml --lr 1e-4' > "$tmp/own/run.sh"
got=$("$oomdx" facts -c "$tmp/own/run.sh" --format json 2>&1)
case "$(printf '%s' "$got" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("framework"))')" in
  None) ;; *) echo "FAIL own_script_config: a framework taken from --config alone"; fail=1 ;; esac
# the same line in a log, its files not at hand: named as not read, no HF default taken for the job's (a line that
# names only the config files stays unrecognized, as before: --config signs no adapter)
printf '%s\n' '$ accelerate launch --config_file recipes/accelerate_configs/zero3.yaml src/open_r1/grpo.py --config recipes/grpo/config.yaml --per_device_train_batch_size 2' "$oom" > "$tmp/launch.log"
out=$("$oomdx" diagnose --log "$tmp/launch.log" --format json --explain 2>/dev/null)
check "$out" '
if "recipes/grpo/config.yaml" not in json.dumps(f.get("job.missing_files")): bad.append("missing recipe not named: %r" % f.get("job.missing_files"))
if f.get("activation_checkpoint.mode") == "none" or f.get("training.local_batch_size") != 2: bad.append("an HF default taken for the job, or the flag lost")
if recs.get("enable_full_ac", {}).get("confidence") == "high": bad.append("checkpointing advised at high on an unread recipe")
' trl_recipe_in_log

# (3) no estimate: the defaults the advice rests on are named, with their file
printf '%s\n' '[INFO|2025-01-10 12:00:05] llamafactory.model.adapter:143 >> Fine-tuning method: LoRA' "$oom" > "$tmp/lf_only.log"
out=$("$oomdx" diagnose --log "$tmp/lf_only.log" --format json 2>/dev/null)
check "$out" '
line = [i for i in j["inputs"] if "defaults taken" in i]
if not line or "disable_gradient_checkpointing=false" not in line[0] or "llama_factory.yaml" not in line[0]: bad.append("inputs %r" % j["inputs"])
if j.get("framework_defaults_applied") != ["disable_gradient_checkpointing=false"]: bad.append("framework_defaults_applied %r" % j.get("framework_defaults_applied"))
if "enable_full_ac" in recs: bad.append("checkpointing advised though the default has it on")
' defaults_no_estimate
zh=$("$oomdx" diagnose --log "$tmp/lf_only.log" --lang zh 2>/dev/null)
case "$zh" in *"默认值"*"disable_gradient_checkpointing=false"*) ;; *) echo "FAIL defaults_no_estimate_zh"; fail=1 ;; esac
# with an estimate the line stays in the estimate section, not among the inputs
out=$("$oomdx" diagnose --log "$tmp/lf_only.log" --model llama3-8b --format json 2>/dev/null)
check "$out" '
if any("defaults taken" in i for i in j["inputs"]): bad.append("defaults among the inputs beside an estimate")
' defaults_with_estimate

[ "$fail" = 0 ] && echo "pasted job settings: ok"
exit "$fail"
