#!/usr/bin/env python3
"""The bad-input suite: every input kind, broken every way, through the real CLI.

usage: run.py OOMDX [--keep DIR] [NAME_SUBSTRING ...]

Each case writes one hostile file, runs oomdx on it and checks the outcome:
  error  exit code 2, nothing on stdout (no partial report), exactly one line on stderr that
         names the file with a line or byte position (file:N: or "byte N") and contains `expect`;
  ok     exit code 0 or 1 with valid output: a tolerated input (an enormous log line, a log in
         Latin-1) gives a clear result, and `expect` is found in stdout.
Inputs are generated here (stdlib only); nothing from ../shared is used.
"""
import gzip
import json
import os
import pickle
import struct
import subprocess
import sys
import tempfile

CASES = []


def case(name, kind, data, args, expect, outcome="error", env=None, position=True):
    CASES.append(dict(name=name, kind=kind, data=data, args=args, expect=expect, outcome=outcome,
                      env=env or {}, position=position and len(data) > 0))


# ---------------------------------------------------------------- inputs
def deep(open_s, close_s, n):
    return (open_s * n + close_s * n).encode()


def snapshot_dict(block_size=1 << 20, blocks=1, trace=None):
    segs = []
    for i in range(blocks):
        segs.append({"device": 0, "address": i << 40, "total_size": block_size, "allocated_size": block_size,
                     "active_size": block_size, "requested_size": block_size, "stream": 0,
                     "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
                     "frames": [], "blocks": [{"address": i << 40, "size": block_size,
                                               "requested_size": block_size, "state": "active_allocated",
                                               "frames": []}]})
    return {"segments": segs, "device_traces": [trace or []]}


GOOD_PICKLE = pickle.dumps(snapshot_dict(), protocol=4)
GOOD_TOML = b'[job]\ndescription = "bad inputs"\n\n[training]\nlocal_batch_size = 8\nseq_len = 4096\n'
GOOD_DS = b'{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 3}}\n'
GOOD_HF = b'model_name_or_path: meta-llama/Llama-3-8B\nper_device_train_batch_size: 4\ncutoff_len: 4096\n' \
          b'lora_target: [q_proj, v_proj]\n'
GOOD_SH = b'#!/bin/bash\ntorchrun pretrain_gpt.py --micro-batch-size 2 --seq-length 4096 --data-path "/data/corpus"\n'
GOOD_PY = b'def llama3_debug():\n    return Trainer.Config(training=Training(local_batch_size=8, seq_len=2048))\n'
GOOD_MODEL = b'{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,' \
             b' "intermediate_size": 14336, "vocab_size": 128256}\n'
GOOD_RULE = b'- rule: bad_input_rule\n  step: step0\n  condition: oom.source == "hccl"\n  finding: "x"\n'
OOM_LINE = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity " \
           b"of 79.11 GiB of which 1.02 GiB is free. Of the allocated memory 70.00 GiB is allocated by PyTorch, " \
           b"and 5.00 GiB is reserved by PyTorch but unallocated.\n"
GARBAGE = bytes((i * 7919 + 13) % 256 for i in range(1 << 16))
INVALID_UTF8 = b"\xc3\x28\xa0\xa1\xe2\x28\xa1\xff\xfe"


def alias_bomb(prefix=b"", item=b"{k}: "):
    """Nine-fold nested YAML aliases: 9^8 (43 M) nodes from a few hundred bytes."""
    out = prefix + item.replace(b"{k}", b"a") + b'&a ["x","x","x","x","x","x","x","x","x"]\n'
    prev = b"a"
    for k in b"bcdefgh":
        k = bytes([k])
        out += item.replace(b"{k}", k) + b"&" + k + b" [" + b",".join([b"*" + prev] * 9) + b"]\n"
        prev = k
    return out


def truncate(b, frac=0.5):
    return b[:max(1, int(len(b) * frac))]


# ---------------------------------------------------------------- logs
LOG = ["log", "{f}", "--format", "json"]
case("log: empty", "log", b"", LOG, "empty file")
case("log: binary garbage", "log", GARBAGE, LOG, "binary")
case("log: UTF-16", "log", "RuntimeError: CUDA out of memory\n".encode("utf-16"), LOG, "UTF-16")
case("log: snapshot given as a log", "log", GOOD_PICKLE, LOG, "binary")
case("log: truncated gzip", "log.gz", truncate(gzip.compress(OOM_LINE * 2000)), LOG, "gzip")
case("log: gzip of garbage bytes", "log.gz", b"\x1f\x8b\x08\x00" + GARBAGE[:4000], LOG, "gzip")
case("log: gzip holding binary", "log.gz", gzip.compress(GARBAGE), LOG, "binary")
case("log: invalid UTF-8 around an OOM (tolerated)", "log", INVALID_UTF8 + b" " + OOM_LINE, LOG,
     '"source": "caching_allocator"', outcome="ok")
case("log: 64 MB single line (tolerated)", "log", b"x" * (64 << 20) + b"\n" + OOM_LINE, LOG,
     '"source": "caching_allocator"', outcome="ok")
case("log: size overflow in the message (tolerated, size dropped)", "log",
     OOM_LINE.replace(b"2.00 GiB", b"99999999999999999999999.00 GiB"), LOG, '"requested_bytes": null', outcome="ok")
case("log: above log_file_bytes", "log", OOM_LINE * 100, ["--limit", "log_file_bytes=1KiB"] + LOG,
     "limit log_file_bytes")

# ---------------------------------------------------------------- configs
for ext, good, deep_text, fmt in [
        ("toml", GOOD_TOML, b"a = " + deep("[", "]", 5000), "TOML"),
        ("json", GOOD_DS, deep("[", "]", 5000), "JSON"),
        ("yaml", GOOD_HF, b"a: " + deep("[", "]", 5000), "YAML"),
        ("sh", GOOD_SH, b"A=" + deep("$(", ")", 5000), "shell"),
        ("py", GOOD_PY, b"def f():\n    return " + deep("(", ")", 5000), "Python")]:
    CONF = ["estimate", "--config", "{f}", "--model", "llama3-8b", "--device", "h100-80gb"]
    case(f"config {ext}: empty", ext, b"", CONF, "empty")
    marks = {"yaml": b"[q_", "sh": b'"/data'}
    cut = good.index(marks[ext]) + 4 if ext in marks else int(len(good) * 0.6)
    case(f"config {ext}: truncated", ext, good[:cut], CONF, "")
    case(f"config {ext}: binary garbage", ext, GARBAGE, CONF, "binary")
    case(f"config {ext}: a pickle given as config", ext, GOOD_PICKLE, CONF, "binary")
    token = {"toml": b"bad inputs", "json": b"stage", "yaml": b"Llama", "sh": b"corpus", "py": b"debug"}[ext]
    case(f"config {ext}: invalid UTF-8", ext, good.replace(token, INVALID_UTF8, 1), CONF, "UTF-8")
    case(f"config {ext}: deep nesting", ext, deep_text, CONF, "nested")
    case(f"config {ext}: 20 MB (above text_file_bytes)", ext, good + b"#" + b"x" * (20 << 20) + b"\n", CONF,
         "limit text_file_bytes", position=False)
case("config yaml: alias bomb", "yaml", GOOD_HF + alias_bomb(),
     ["estimate", "--config", "{f}", "--model", "llama3-8b", "--device", "h100-80gb"], "alias bomb")
case("config toml: integer overflow", "toml", b"[training]\nlocal_batch_size = 99999999999999999999999\n",
     ["estimate", "--config", "{f}", "--model", "llama3-8b", "--device", "h100-80gb"], "")
case("config json: integer overflow", "json", b'{"train_micro_batch_size_per_gpu": 1e999}\n',
     ["estimate", "--config", "{f}", "--model", "llama3-8b", "--device", "h100-80gb"], "")

# ---------------------------------------------------------------- model dims (HF config.json)
MODEL = ["estimate", "--model", "{f}", "--device", "h100-80gb"]
case("model: empty", "json", b"", MODEL, "empty")
case("model: truncated", "json", truncate(GOOD_MODEL), MODEL, "")
case("model: binary garbage", "json", GARBAGE, MODEL, "binary")
case("model: invalid UTF-8", "json", GOOD_MODEL.replace(b"llama", INVALID_UTF8), MODEL, "UTF-8")
case("model: deep nesting", "json", b'{"a": ' + deep("[", "]", 5000) + b"}", MODEL, "nested")
case("model: size overflow", "json", GOOD_MODEL.replace(b"4096", b"1e300"), MODEL, "hidden_size")
case("model: negative layers", "json", GOOD_MODEL.replace(b'"num_hidden_layers": 32', b'"num_hidden_layers": -3'),
     MODEL, "num_layers")

# ---------------------------------------------------------------- snapshots (pickle and JSON)
SNAP = ["snapshot", "{f}", "--format", "json"]
case("snapshot: empty", "pickle", b"", SNAP, "empty", position=False)
case("snapshot: binary garbage", "pickle", GARBAGE, SNAP, "not a memory snapshot")
case("snapshot: TOML given as a snapshot", "pickle", GOOD_TOML, SNAP, "not a memory snapshot")
case("snapshot: log given as a snapshot", "pickle", OOM_LINE, SNAP, "not a memory snapshot")
for i in range(1, 16, 3):
    case(f"snapshot: truncated at {i}/16", "pickle", GOOD_PICKLE[:len(GOOD_PICKLE) * i // 16], SNAP, "")
case("snapshot: protocol 1 (wrong protocol)", "pickle", pickle.dumps(snapshot_dict(), protocol=1), SNAP,
     "not a memory snapshot")
case("snapshot: protocol 9 (unknown)", "pickle", b"\x80\x09" + GOOD_PICKLE[2:], SNAP, "protocol")
case("snapshot: code-running opcode (REDUCE)", "pickle", b"\x80\x04\x8c\x08builtins\x8c\x04eval\x93)R.", SNAP,
     "STACK_GLOBAL")
case("snapshot: memo index out of range", "pickle", b"\x80\x04]h\x63.", SNAP, "memo")
case("snapshot: memo index beyond snapshot_memo", "pickle", b"\x80\x04]r\xff\xff\xff\x7f.", SNAP, "memo")
case("snapshot: string length past end of file", "pickle", b"\x80\x04X\xff\xff\xff\x7fabc", SNAP, "")
case("snapshot: BINBYTES8 length 2^62", "pickle", b"\x80\x04\x8e" + struct.pack("<Q", 1 << 62) + b"ab", SNAP, "")
case("snapshot: FRAME length beyond the file", "pickle", b"\x80\x04\x95" + struct.pack("<Q", 1 << 40) + b"}.", SNAP,
     "")
case("snapshot: deep MARK nesting", "pickle", b"\x80\x04" + b"(" * 200000 + b".", SNAP, "")
case("snapshot: deep list nesting", "pickle", b"\x80\x04" + b"]" * 200000 + b"a" * 199999 + b".", SNAP, "")
case("snapshot: cyclic list (list inside itself)", "pickle", b"\x80\x04]q\x00h\x00a.", SNAP, "")
case("snapshot: cyclic dict as segments", "pickle",
     b"\x80\x04}q\x00(\x8c\x08segmentsq\x01h\x00\x8c\rdevice_tracesq\x02]u.", SNAP, "")
case("snapshot: invalid UTF-8 in a string (tolerated, replaced)", "pickle",
     GOOD_PICKLE.replace(b"large", b"\xff\xfe\xc3\x28\xa0"), SNAP, '"schema": "oomdx.snapshot/1"', outcome="ok")
case("snapshot: size overflow across blocks", "pickle",
     pickle.dumps(snapshot_dict(block_size=(1 << 62) + 1, blocks=4), protocol=4), SNAP, "out of range",
     position=False)
case("snapshot: sizes that add up beyond int64", "pickle",
     pickle.dumps(snapshot_dict(block_size=1 << 50, blocks=5000), protocol=4), SNAP, "add up", position=False)
case("snapshot: negative block size", "pickle", pickle.dumps(snapshot_dict(block_size=-5), protocol=4), SNAP,
     "out of range", position=False)
case("snapshot: above snapshot_memo", "pickle", pickle.dumps(snapshot_dict(blocks=50), protocol=4),
     ["--limit", "snapshot_memo=10"] + SNAP, "snapshot_memo")
case("snapshot: OOMDX_LIMITS lowers snapshot_depth", "pickle", b"\x80\x04" + b"]" * 100 + b"a" * 99 + b".", SNAP,
     "limit snapshot_depth", env={"OOMDX_LIMITS": "snapshot_depth=50"})
JS = json.dumps({k: v for k, v in snapshot_dict().items()}).encode()
case("snapshot json: truncated", "json", truncate(JS), SNAP, "")
case("snapshot json: deep nesting", "json", b'{"segments": ' + deep("[", "]", 20000) + b"}", SNAP, "nest")
case("snapshot json: invalid UTF-8", "json", JS.replace(b"large", INVALID_UTF8), SNAP, "UTF-8")
case("snapshot json: number overflow in sizes", "json", JS.replace(b"1048576", b"1e300"), SNAP, "out of range",
     position=False)

# ---------------------------------------------------------------- rule packs
LINT = ["rules", "lint", "{f}"]
case("rules: truncated", "yaml", truncate(GOOD_RULE, 0.7), LINT, "E1")
case("rules: binary garbage", "yaml", GARBAGE, LINT, "E100")
case("rules: a pickle given as rules", "yaml", GOOD_PICKLE, LINT, "E100")
case("rules: invalid UTF-8", "yaml", GOOD_RULE.replace(b'"x"', b'"' + INVALID_UTF8 + b'"'), LINT, "UTF-8")
case("rules: deep YAML nesting", "yaml", b"- " + deep("[", "]", 100000), LINT, "nested")
case("rules: deep expression", "yaml",
     GOOD_RULE.replace(b'oom.source == "hccl"', b"(" * 5000 + b"true" + b")" * 5000), LINT, "nested deeper")
case("rules: huge expression", "yaml",
     GOOD_RULE.replace(b'oom.source == "hccl"', b" and ".join([b"true"] * 20000)), LINT, "too large")
case("rules: size literal overflow", "yaml",
     GOOD_RULE.replace(b'oom.source == "hccl"', b"oom.requested_bytes > 99999999999999999 TiB"), LINT, "")
case("rules: alias bomb", "yaml", alias_bomb(item=b"- list: {k}\n  items: "), LINT, "alias bomb")
case("rules: 20 MB pack", "yaml", GOOD_RULE + b"#" + b"x" * (20 << 20) + b"\n", LINT, "text_file_bytes")

# ---------------------------------------------------------------- category rules, log signatures
CATS = ["snapshot", "--categories", "{f}", "{snap}"]
case("categories: binary garbage", "yaml", GARBAGE, CATS, "")
case("categories: deep nesting", "yaml", b"a: " + deep("[", "]", 100000), CATS, "nested")
case("categories: alias bomb", "yaml", alias_bomb(), CATS, "alias bomb")
case("categories: bad regex", "yaml", b"activation: '(unclosed'\n", CATS, "regular expression")


# ---------------------------------------------------------------- report outputs (--output)
case("--output: a file where a directory should be", "txt", b"not a directory\n",
     ["preflight", "--model", "llama3-8b", "--device", "h100-80gb", "-o", "json={f}/report.json"],
     "not a directory", position=False)


# ---------------------------------------------------------------- runner
def one_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[0] if len(lines) == 1 else None


def run_case(oomdx, c, work, idx):
    path = os.path.join(work, f"case{idx:03d}.{c['kind']}")
    with open(path, "wb") as f:
        f.write(c["data"])
    snap = os.path.join(work, "good.pickle")
    args = [a.replace("{f}", path).replace("{snap}", snap) for a in c["args"]]
    env = dict(os.environ, NO_COLOR="1", **c["env"])
    try:
        p = subprocess.run([oomdx] + args, capture_output=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        return "timed out after 120 s"
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    if c["outcome"] == "ok":
        if p.returncode not in (0, 1):
            return f"exit {p.returncode}, expected 0/1; stderr: {err.strip()[:300]}"
        if c["expect"] not in out:
            return f"'{c['expect']}' not in stdout: {out[:300]}"
        if "--format" in args and "json" in args:
            try:
                json.loads(p.stdout.decode("utf-8"))
            except Exception as e:
                return f"stdout is not valid UTF-8 JSON: {e}"
        return None
    if p.returncode != 2:
        return f"exit {p.returncode}, expected 2; stderr: {err.strip()[:300]}"
    if c["args"][:2] == ["rules", "lint"]:
        if path not in out and path not in err:
            return f"the rule diagnostics do not name the file: {out[:300]}"
        text = out + err
        if c["expect"] not in text:
            return f"'{c['expect']}' not in: {text[:400]}"
        return None
    if out.strip():
        return f"partial output on stdout: {out[:200]}"
    line = one_line(err)
    if line is None:
        return f"expected one line on stderr, got: {err[:400]}"
    if path not in line:
        return f"error does not name the file: {line}"
    after = line.split(path, 1)[1]
    if c["position"] and not (after[:1] == ":" and (after[1:2].isdigit() or after.startswith(": byte"))):
        return f"error has no line or byte position: {line}"
    if c["expect"] and c["expect"].lower() not in line.lower():
        return f"'{c['expect']}' not in: {line}"
    return None


def main(argv):
    oomdx = os.path.abspath(argv[1])
    rest = argv[2:]
    keep = None
    if rest[:1] == ["--keep"]:
        keep, rest = rest[1], rest[2:]
    work = keep or tempfile.mkdtemp(prefix="oomdx_bad_")
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "good.pickle"), "wb") as f:
        f.write(GOOD_PICKLE)
    failed = 0
    ran = 0
    for i, c in enumerate(CASES):
        if rest and not any(r in c["name"] for r in rest):
            continue
        ran += 1
        why = run_case(oomdx, c, work, i)
        if why:
            failed += 1
            print(f"FAIL {c['name']}: {why}")
        else:
            print(f"ok   {c['name']}")
    if not keep:
        subprocess.run(["rm", "-rf", work])
    print(f"{ran - failed}/{ran} bad-input cases pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
