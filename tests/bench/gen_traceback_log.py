#!/usr/bin/env python3
"""Writes a traceback-heavy synthetic log of about SIZE_MB megabytes to PATH.

usage: gen_traceback_log.py PATH SIZE_MB

Rank-prefixed Python tracebacks of 20 frames each (a frame line and its code line), each ending in
a non-memory exception and a step line, and a CUDA OOM at the end: the worst case for the
per-line work on frame, phase and context lines (docs/log.md, branch logspeed4)."""
import sys

path, size_mb = sys.argv[1], int(sys.argv[2])
target = size_mb << 20
frames = [
    ("/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", 1518, "_wrapped_call_impl",
     "return self._call_impl(*args, **kwargs)"),
    ("/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", 1527, "_call_impl",
     "return forward_call(*args, **kwargs)"),
    ("/workspace/train.py", 282, "train_step", "loss = model(batch).loss"),
    ("/opt/conda/lib/python3.10/site-packages/transformers/models/llama/modeling_llama.py", 1183, "forward",
     "outputs = self.model("),
]
written = k = 0
with open(path, "w", buffering=1 << 22) as out:
    while written < target:
        r = k % 8
        k += 1
        lines = [f"[rank{r}]: Traceback (most recent call last):\n"]
        for j in range(20):
            f = frames[j % 4]
            lines.append(f'[rank{r}]:   File "{f[0]}", line {f[1]}, in {f[2]}\n')
            lines.append(f"[rank{r}]:     {f[3]}\n")
        lines.append(f"[rank{r}]: ValueError: batch {k} has an empty sequence\n")
        lines.append(f"[rank{r}]: step {k}: skipping batch\n")
        chunk = "".join(lines)
        out.write(chunk)
        written += len(chunk)
    out.write("[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
              "GPU 5 has a total capacity of 79.10 GiB of which 1.21 GiB is free.\n")
