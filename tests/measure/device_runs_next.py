# Second set of device measurements, prepared 2026-12-04 and NOT RUN YET (the device loan was paused in that
# session): eight more HF Trainer rows (eager attention, 4096- and 8192-token LoRA, LoRA r 64 on every linear,
# Adafactor, gradient accumulation, Qwen2.5 0.5B fp32 and 7B bf16 full fine-tuning) and two HF Trainer runs that
# run out of memory under a memory fraction, each leaving its real log (tqdm bar, loss dicts, traceback) and the
# snapshot torch dumps on the OOM: LoRA on a batch length that grows 512 tokens a step (failing step 4 expected),
# full fine-tuning with fp32 weights (step 1). Same method as device_peaks.py:
#   OUT=/tmp/out python3 tests/measure/device_runs_next.py
OUT = os.environ.get("OUT", "/tmp/out")
MODELS = {
    "llama32-1b": dict(arch="llama", hidden=2048, inter=8192, layers=16, heads=32, kv=8, vocab=128256, tie=True, theta=500000.0),
    "llama32-3b": dict(arch="llama", hidden=3072, inter=8192, layers=28, heads=24, kv=8, vocab=128256, tie=True, theta=500000.0),
    "llama3-8b": dict(arch="llama", hidden=4096, inter=14336, layers=32, heads=32, kv=8, vocab=128256, tie=False, theta=500000.0),
    "mistral-7b": dict(arch="mistral", hidden=4096, inter=14336, layers=32, heads=32, kv=8, vocab=32000, tie=False, theta=10000.0),
    "qwen25-0.5b": dict(arch="qwen2", hidden=896, inter=4864, layers=24, heads=14, kv=2, vocab=151936, tie=True, theta=1000000.0),
    "qwen25-7b": dict(arch="qwen2", hidden=3584, inter=18944, layers=28, heads=28, kv=4, vocab=152064, tie=False, theta=1000000.0),
}
ROWS = [
    dict(name="llama32-1b_lora16_qv_eager_mb2_s2048_nogc", model="llama32-1b", load="bf16", method="lora", r=16, targets=["q_proj", "v_proj"], gc=False, mb=2, seq=2048, attn="eager"),
    dict(name="mistral-7b_lora16_qv_mb4_s4096_gc", model="mistral-7b", load="bf16", method="lora", r=16, targets=["q_proj", "v_proj"], gc=True, mb=4, seq=4096),
    dict(name="qwen25-0.5b_full_fp32load_mb16_s512_nogc", model="qwen25-0.5b", load="fp32", method="full", gc=False, mb=16, seq=512),
    dict(name="llama32-3b_lora64_all_mb8_s2048_gc", model="llama32-3b", load="bf16", method="lora", r=64, targets="all-linear", gc=True, mb=8, seq=2048),
    dict(name="llama3-8b_lora16_qv_mb1_s8192_gc", model="llama3-8b", load="bf16", method="lora", r=16, targets=["q_proj", "v_proj"], gc=True, mb=1, seq=8192),
    dict(name="llama32-1b_full_bf16load_adafactor_mb4_s1024_nogc", model="llama32-1b", load="bf16", method="full", gc=False, mb=4, seq=1024, optim="adafactor"),
    dict(name="llama32-1b_full_fp32load_mb4_s1024_gc_ga4", model="llama32-1b", load="fp32", method="full", gc=True, mb=4, seq=1024, ga=4),
    dict(name="qwen25-7b_full_bf16load_mb2_s1024_gc", model="qwen25-7b", load="bf16", method="full", gc=True, mb=2, seq=1024),
]
OOMS = [
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

def driver():
    os.makedirs(OUT, exist_ok=True)
    t_start = time.time()
    results = []
    env = dict(os.environ); env["PYTHONUNBUFFERED"] = "1"
    jobs = [("oom", o["name"], 90) for o in OOMS] + [("row", r["name"], 100) for r in ROWS]
    for what, name, limit in jobs:
        left = 350 - (time.time() - t_start)
        if left < 25:
            print("SKIP (time)", what, name, flush=True); continue
        logp = os.path.join(OUT, "%s.log" % name) if what == "oom" else "/tmp/log_%s.txt" % name
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
            json.dump(results, open(os.path.join(OUT, "rows2.json"), "w"), indent=1)

if __name__ == "__main__":
    if len(sys.argv) == 1:
        driver()
    elif sys.argv[1] == "row":
        train(next(r for r in ROWS if r["name"] == sys.argv[2]))
    else:
        train(next(r for r in OOMS if r["name"] == sys.argv[2]), oom=True)
