#!/usr/bin/env python3
"""Writes a synthetic multi-rank training log of about SIZE_MB megabytes to PATH.

usage: gen_log.py PATH SIZE_MB [RANKS]   (RANKS: 64 unless given)

Progress lines of several frameworks (torchtitan with ANSI colours, Megatron, DeepSpeed,
HF dicts, tqdm), NCCL INFO noise, [rankN]: prefixes, and an OOM at the end."""
import sys

path, size_mb = sys.argv[1], int(sys.argv[2])
ranks = int(sys.argv[3]) if len(sys.argv) > 3 else 64
target = size_mb * 1024 * 1024
ESC = "\x1b"
out = open(path, "w", buffering=1 << 22)
out.write("+ torchrun --nnodes 8 --nproc_per_node 8 -m torchtitan.train --job.config_file llama3_70b.toml --training.local_batch_size 8\n")
out.write("[titan] 2026-01-01 00:00:00,000 - root - INFO - world_size 64\n")
written = 0
step = 0
block = []
while written < target:
    step += 1
    lines = []
    for r in range(ranks):
        mem = 40.0 + step * 0.0001 + r * 0.01
        lines.append(f"[rank{r}]:[titan] 2026-01-01 10:00:00,123 - root - INFO - {ESC}[31mstep: {step:2}  {ESC}[32mloss:  2.{step % 97:05d}  {ESC}[33mgrad_norm:  0.5{r % 10}  {ESC}[38;2;180;60;0mmemory: {mem:5.2f}GiB({mem / 0.8:.2f}%)  {ESC}[34mtps: 1,234  {ESC}[36mtflops: 200.12  {ESC}[35mmfu: 20.25%{ESC}[39m\n")
        if r % 8 == 0:
            lines.append(f"[rank{r}]: iteration {step:8d}/  100000 | consumed samples: {step * 512:12d} | elapsed time per iteration (ms): 1234.5 | learning rate: 1.000000E-04 | global batch size:   512 | lm loss: 2.345678E+00 | loss scale: 1.0 | grad norm: 0.512 | number of skipped iterations:   0 | number of nan iterations:   0 |\n")
        if r % 16 == 1:
            lines.append(f"[rank{r}]: MA 12.5{step % 10} GB         Max_MA 14.02 GB         CA 15.3 GB         Max_CA 16 GB \n")
            lines.append(f"[rank{r}]: {{'loss': 1.94{step % 10}, 'grad_norm': 0.53, 'learning_rate': 1.99e-05, 'epoch': 0.{step % 100:02d}}}\n")
        if r % 32 == 2:
            lines.append(f"host-{r // 8}:{10000 + r}:{20000 + r} [{r % 8}] NCCL INFO Channel 03/0 : {r}[{r % 8}] -> {(r + 1) % ranks}[{(r + 1) % 8}] via P2P/IPC/read\n")
            lines.append(f"[rank{r}]: dataloader: fetched batch {step} from shard /data/shard-{step % 1000:04d}.bin in 12 ms (prefetch queue 4/8)\n")
    chunk = "".join(lines)
    out.write(chunk)
    written += len(chunk)
out.write("[rank5]: Traceback (most recent call last):\n")
out.write('[rank5]:   File "/opt/torchtitan/train.py", line 500, in train_step\n')
out.write(f"[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total capacity of 79.10 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this process has 77.88 GiB memory in use. Of the allocated memory 75.23 GiB is allocated by PyTorch, and 1.40 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)\n")
out.write(f"[rank9]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.10 GiB of which 1.01 GiB is free. Including non-PyTorch memory, this process has 78.08 GiB memory in use. Of the allocated memory 75.43 GiB is allocated by PyTorch, and 1.40 GiB is reserved by PyTorch but unallocated.\n")
out.write("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\nRoot Cause (first observed failure):\n[0]:\n  rank      : 5 (local_rank: 5)\n  exitcode  : 1 (pid: 4242)\n")
out.close()
