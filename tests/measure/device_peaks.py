# Measures real peaks on a CUDA device, for the estimator's own anchors and real snapshot fixtures.
# Not run by the test suite (no GPU in CI). Run on a machine with torch, transformers and peft:
#   OUT=/tmp/out python3 tests/measure/device_peaks.py [set1|set2]
# Set 1 writes rows_set1.json (one HF Trainer run per row: max_memory_allocated / max_memory_reserved over 3 steps,
# random weights built from the model's published dimensions, random tokens of the stated length) and, from a
# small Llama trained by hand, three snapshots as torch.cuda.memory._dump_snapshot writes them (gzipped) with the
# run's stdout: a run to OOM under a 6 GiB memory fraction with Python stacks and with all stacks, and a clean
# six-step run. Results of 2026-12-04 (H200, torch 2.11.0, transformers 5.17.0, peft 0.21.0):
# knowledge/anchors/measured_h200.yaml.
# Set 2, prepared 2026-12-04 and NOT RUN YET (the device loan was paused in that session): eight more HF Trainer
# rows (eager attention, 4096- and 8192-token LoRA, LoRA r 64 on every linear, Adafactor, gradient accumulation,
# Qwen2.5 0.5B fp32 and 7B bf16 full fine-tuning) and two HF Trainer runs that run out of memory under a memory
# fraction, each leaving its real log (tqdm bar, loss dicts, traceback) and the snapshot torch dumps on the OOM:
# LoRA on a batch length that grows 512 tokens a step (failing step 4 expected), full fine-tuning with fp32 weights.
import os, sys, json, time, gzip, shutil, subprocess, traceback

OUT = os.environ.get("OUT", "/tmp/out")
MODELS = {
    "llama32-1b": dict(arch="llama", hidden=2048, inter=8192, layers=16, heads=32, kv=8, vocab=128256, tie=True, theta=500000.0),
    "llama3-8b": dict(arch="llama", hidden=4096, inter=14336, layers=32, heads=32, kv=8, vocab=128256, tie=False, theta=500000.0),
    "qwen25-1.5b": dict(arch="qwen2", hidden=1536, inter=8960, layers=28, heads=12, kv=2, vocab=151936, tie=True, theta=1000000.0),
    "qwen25-7b": dict(arch="qwen2", hidden=3584, inter=18944, layers=28, heads=28, kv=4, vocab=152064, tie=False, theta=1000000.0),
    "tiny": dict(arch="llama", hidden=1024, inter=2816, layers=8, heads=16, kv=4, vocab=32000, tie=False, theta=10000.0),
    "llama32-3b": dict(arch="llama", hidden=3072, inter=8192, layers=28, heads=24, kv=8, vocab=128256, tie=True, theta=500000.0),
    "mistral-7b": dict(arch="mistral", hidden=4096, inter=14336, layers=32, heads=32, kv=8, vocab=32000, tie=False, theta=10000.0),
    "qwen25-0.5b": dict(arch="qwen2", hidden=896, inter=4864, layers=24, heads=14, kv=2, vocab=151936, tie=True, theta=1000000.0),
}
ROWS1 = [
    dict(name="llama32-1b_full_fp32load_mb4_s1024_nogc", model="llama32-1b", load="fp32", method="full", gc=False, mb=4, seq=1024),
    dict(name="llama3-8b_lora16_qv_bf16_mb2_s2048_gc", model="llama3-8b", load="bf16", method="lora", r=16, targets=["q_proj", "v_proj"], gc=True, mb=2, seq=2048),
    dict(name="llama3-8b_lora16_all_bf16_mb1_s2048_nogc", model="llama3-8b", load="bf16", method="lora", r=16, targets="all-linear", gc=False, mb=1, seq=2048),
    dict(name="qwen25-7b_lora8_all_bf16_mb4_s1024_gc", model="qwen25-7b", load="bf16", method="lora", r=8, targets="all-linear", gc=True, mb=4, seq=1024),
    dict(name="llama32-1b_lora16_qv_bf16_mb4_s2048_nogc", model="llama32-1b", load="bf16", method="lora", r=16, targets=["q_proj", "v_proj"], gc=False, mb=4, seq=2048),
    dict(name="qwen25-1.5b_full_bf16load_mb8_s1024_gc", model="qwen25-1.5b", load="bf16", method="full", gc=True, mb=8, seq=1024),
    dict(name="llama32-1b_full_fp32load_mb8_s2048_gc", model="llama32-1b", load="fp32", method="full", gc=True, mb=8, seq=2048),
    dict(name="llama3-8b_full_bf16load_mb1_s2048_gc", model="llama3-8b", load="bf16", method="full", gc=True, mb=1, seq=2048),
]
ROWS2 = [
    dict(name="llama32-1b_lora16_qv_eager_mb2_s2048_nogc", model="llama32-1b", load="bf16", method="lora", r=16, targets=["q_proj", "v_proj"], gc=False, mb=2, seq=2048, attn="eager"),
    dict(name="mistral-7b_lora16_qv_mb4_s4096_gc", model="mistral-7b", load="bf16", method="lora", r=16, targets=["q_proj", "v_proj"], gc=True, mb=4, seq=4096),
    dict(name="qwen25-0.5b_full_fp32load_mb16_s512_nogc", model="qwen25-0.5b", load="fp32", method="full", gc=False, mb=16, seq=512),
    dict(name="llama32-3b_lora64_all_mb8_s2048_gc", model="llama32-3b", load="bf16", method="lora", r=64, targets="all-linear", gc=True, mb=8, seq=2048),
    dict(name="llama3-8b_lora16_qv_mb1_s8192_gc", model="llama3-8b", load="bf16", method="lora", r=16, targets=["q_proj", "v_proj"], gc=True, mb=1, seq=8192),
    dict(name="llama32-1b_full_bf16load_adafactor_mb4_s1024_nogc", model="llama32-1b", load="bf16", method="full", gc=False, mb=4, seq=1024, optim="adafactor"),
    dict(name="llama32-1b_full_fp32load_mb4_s1024_gc_ga4", model="llama32-1b", load="fp32", method="full", gc=True, mb=4, seq=1024, ga=4),
    dict(name="qwen25-7b_full_bf16load_mb2_s1024_gc", model="qwen25-7b", load="bf16", method="full", gc=True, mb=2, seq=1024),
]
OOMS2 = [
    dict(name="hf_lora_growing_len_oom", model="llama32-1b", load="bf16", method="lora", r=16, targets=["q_proj", "v_proj"], gc=False, mb=4, seq=512, grow=True, cap_gib=20, steps=12),
    dict(name="hf_full_fp32_first_step_oom", model="llama32-1b", load="fp32", method="full", gc=False, mb=4, seq=1024, grow=False, cap_gib=18, steps=6),
]

def make_model(key, dtype, attn=None):
    import torch, transformers
    m = MODELS[key]
    common = dict(hidden_size=m["hidden"], intermediate_size=m["inter"], num_hidden_layers=m["layers"],
                  num_attention_heads=m["heads"], num_key_value_heads=m["kv"], vocab_size=m["vocab"],
                  tie_word_embeddings=m["tie"], rope_theta=m["theta"], max_position_embeddings=32768)
    cls = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config, "mistral": transformers.MistralConfig}[m["arch"]]
    cfg = cls(**common)
    kw = {"attn_implementation": attn} if attn else {}
    with torch.device("cuda"):
        try:
            model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=dtype, **kw)
        except TypeError:
            model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype, **kw)
    return model, model.config

def train(spec, oom=False):
    import torch, transformers
    from torch.utils.data import Dataset, SequentialSampler
    torch.manual_seed(0)
    if oom:
        torch.cuda.set_per_process_memory_fraction(spec["cap_gib"] * 2**30 / torch.cuda.get_device_properties(0).total_memory)
    dtype = torch.bfloat16 if spec["load"] == "bf16" else torch.float32
    model, cfg = make_model(spec["model"], dtype, spec.get("attn"))
    nparams = sum(p.numel() for p in model.parameters())
    if spec["method"] == "lora":
        import peft
        lc = peft.LoraConfig(r=spec["r"], lora_alpha=2 * spec["r"], lora_dropout=0.0, target_modules=spec["targets"], task_type="CAUSAL_LM")
        model = peft.get_peft_model(model, lc)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    V, S, B = MODELS[spec["model"]]["vocab"], spec["seq"], spec["mb"]
    ga = spec.get("ga", 1)
    steps = spec.get("steps", 3)
    class DS(Dataset):
        def __len__(self): return B * ga * steps
        def __getitem__(self, i):
            L = S * (1 + i // B) if spec.get("grow") else S
            g = torch.Generator().manual_seed(i)
            ids = torch.randint(0, V, (L,), generator=g)
            return {"input_ids": ids, "labels": ids.clone(), "attention_mask": torch.ones(L, dtype=torch.long)}
    class Tr(transformers.Trainer):
        def _get_train_sampler(self, *a, **k):
            return SequentialSampler(self.train_dataset)
    peaks = []
    class CB(transformers.TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            torch.cuda.synchronize()
            peaks.append([torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()])
    ta = transformers.TrainingArguments(output_dir="/tmp/tr_" + spec["name"], per_device_train_batch_size=B, max_steps=steps,
        gradient_accumulation_steps=ga, bf16=True, gradient_checkpointing=spec["gc"],
        gradient_checkpointing_kwargs={"use_reentrant": False} if spec["gc"] else None,
        logging_steps=1, report_to="none", save_strategy="no", optim=spec.get("optim", "adamw_torch"), learning_rate=1e-5,
        dataloader_num_workers=0, disable_tqdm=not oom, remove_unused_columns=False)
    tr = Tr(model=model, args=ta, train_dataset=DS(), callbacks=[CB()])
    if oom:
        torch.cuda.memory._record_memory_history(max_entries=200000, stacks="python")
        try:
            tr.train()
        except torch.OutOfMemoryError:
            path = "/tmp/snap_%s.pickle" % spec["name"]
            torch.cuda.memory._dump_snapshot(path)
            with open(path, "rb") as f, gzip.open(os.path.join(OUT, "snap_%s.pickle.gz" % spec["name"]), "wb") as g:
                shutil.copyfileobj(f, g)
            raise
        return
    t0 = time.time()
    tr.train()
    torch.cuda.synchronize()
    res = dict(spec=spec, params=nparams, trainable=trainable, max_allocated=torch.cuda.max_memory_allocated(),
               max_reserved=torch.cuda.max_memory_reserved(), step_peaks=peaks, attn=getattr(cfg, "_attn_implementation", None),
               train_s=time.time() - t0, torch=torch.__version__, transformers=transformers.__version__)
    print("RESULT " + json.dumps(res), flush=True)

def snap(kind):
    import torch
    torch.manual_seed(0)
    if kind == "oom_all" or kind == "oom_py":
        torch.cuda.set_per_process_memory_fraction(6.0 * 2**30 / torch.cuda.get_device_properties(0).total_memory)
    model, cfg = make_model("tiny", torch.float32)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    stacks = "all" if kind == "oom_all" else "python"
    torch.cuda.memory._record_memory_history(max_entries=120000 if kind == "train" else 60000, stacks=stacks)
    V = MODELS["tiny"]["vocab"]
    path = "/tmp/snap_%s.pickle" % kind
    step = 0
    try:
        sizes = [(8, 512)] * 6 if kind == "train" else [(4, 512), (8, 512), (16, 512), (32, 512), (64, 512), (128, 512), (256, 512)]
        for mb, seq in sizes:
            ids = torch.randint(0, V, (mb, seq), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(input_ids=ids, labels=ids)
            out.loss.backward()
            opt.step(); opt.zero_grad(set_to_none=True)
            step += 1
            print("step %d | micro_batch %d | seq %d | loss %.4f | allocated %.2f GiB | reserved %.2f GiB" % (
                step, mb, seq, out.loss.item(), torch.cuda.memory_allocated() / 2**30, torch.cuda.memory_reserved() / 2**30), flush=True)
    except torch.OutOfMemoryError:
        traceback.print_exc()
        sys.stdout.flush(); sys.stderr.flush()
    t0 = time.time()
    torch.cuda.memory._dump_snapshot(path)
    print("dumped %s %d bytes in %.1f s" % (path, os.path.getsize(path), time.time() - t0), flush=True)
    with open(path, "rb") as f, gzip.open(os.path.join(OUT, "snap_%s.pickle.gz" % kind), "wb", compresslevel=6) as g:
        shutil.copyfileobj(f, g)

def driver(which):
    os.makedirs(OUT, exist_ok=True)
    t_start = time.time()
    results = []
    env = dict(os.environ); env["PYTHONUNBUFFERED"] = "1"
    jobs = ([("snap", k, 120) for k in ["oom_py", "train", "oom_all"]] + [("row", r["name"], 110) for r in ROWS1]
            if which == "set1" else [("oom", o["name"], 90) for o in OOMS2] + [("row", r["name"], 100) for r in ROWS2])
    for what, name, limit in jobs:
        left = 350 - (time.time() - t_start)
        if left < 25:
            print("SKIP (time)", what, name, flush=True); continue
        logp = os.path.join(OUT, "log_%s.txt" % name) if what in ("oom", "snap") else "/tmp/log_%s.txt" % name
        t0 = time.time()
        try:
            with open(logp, "w") as lf:
                p = subprocess.run([sys.executable, __file__, what, name], stdout=lf, stderr=subprocess.STDOUT, env=env, timeout=min(limit, left))
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        txt = open(logp, errors="replace").read()
        got = [json.loads(l[7:]) for l in txt.splitlines() if l.startswith("RESULT ")]
        print("%s %s rc=%s %.1fs" % (what, name, rc, time.time() - t0), flush=True)
        if what == "row":
            results.append(got[0] if got else dict(name=name, rc=rc, tail=txt[-3000:]))
            if not got: print(txt[-1500:], flush=True)
            json.dump(results, open(os.path.join(OUT, "rows_%s.json" % which), "w"), indent=1)

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("set1", "set2"):
        driver(sys.argv[1] if len(sys.argv) > 1 else "set1")
    elif sys.argv[1] == "row":
        train(next(r for r in ROWS1 + ROWS2 if r["name"] == sys.argv[2]))
    elif sys.argv[1] == "oom":
        train(next(r for r in OOMS2 if r["name"] == sys.argv[2]), oom=True)
    else:
        snap(sys.argv[2])
