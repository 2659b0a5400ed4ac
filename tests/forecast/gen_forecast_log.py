#!/usr/bin/env python3
"""Synthetic training logs with a known forecast truth, for the forecast test.

Writes torchtitan-style `step: N ... memory: X.XXGiB(P.PP%)` lines for one or more ranks:
a warm-up rise to a plateau, then linear growth, with uniform noise of up to +-NOISE GiB on
every reading; the percentage is of the capacity, as torchtitan prints it, so the capacity is
read from the log. The truth is the step at which the noiseless trend of the fastest-growing
rank reaches the capacity (and 0.95 of it). Prints the truth as JSON on stdout.

usage: gen_forecast_log.py OUT --seed S [--capacity GiB] [--plateau GiB] [--growth GiB/step]
       [--warmup STEPS] [--every N] [--ranks R] [--noise GiB] [--fraction F] [--flat]
`--fraction F`: the log stops at F of the way to the truth (0.15 = 15%)."""
import argparse, json, math, random

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--seed", type=int, default=1)
p.add_argument("--capacity", type=float, default=79.10)
p.add_argument("--plateau", type=float, default=40.0)
p.add_argument("--growth", type=float, default=0.02)
p.add_argument("--warmup", type=int, default=10)
p.add_argument("--every", type=int, default=1)
p.add_argument("--ranks", type=int, default=1)
p.add_argument("--noise", type=float, default=0.3)
p.add_argument("--fraction", type=float, default=0.15)
p.add_argument("--seconds", type=float, default=2.5, help="seconds per step")
p.add_argument("--flat", action="store_true", help="no growth after the warm-up")
a = p.parse_args()
rng = random.Random(a.seed)

# rank r grows a little slower than rank 0 (rank 0 reaches capacity first) and starts a bit lower
growth = [0.0 if a.flat else a.growth * (1 - 0.03 * r) for r in range(a.ranks)]
plateau = [a.plateau - 0.2 * r for r in range(a.ranks)]
start = a.plateau * 0.5


def trend(r, s):
    if s <= a.warmup:
        return start + (plateau[r] - start) * s / a.warmup
    return plateau[r] + growth[r] * (s - a.warmup)


truth = {}
if not a.flat:
    steps = [a.warmup + (a.capacity - plateau[r]) / growth[r] for r in range(a.ranks)]
    budget = [a.warmup + (0.95 * a.capacity - plateau[r]) / growth[r] for r in range(a.ranks)]
    r0 = min(range(a.ranks), key=lambda r: steps[r])
    truth = {"rank": r0, "capacity_step": steps[r0], "budget_step": budget[r0]}
    last = max(a.warmup + 2 * a.every, math.ceil(a.fraction * steps[r0]))
else:
    last = 2000
truth["last_step"] = last
with open(a.out, "w") as f:
    f.write("+ torchrun --nproc_per_node %d -m torchtitan.train --job.config_file ./synthetic.toml\n" % a.ranks)
    t0 = 1767225600.0  # 2026-01-01 00:00:00 UTC
    for s in range(1, last + 1):
        if s % a.every and s != 1:
            continue
        for r in range(a.ranks):
            gib = trend(r, s) + rng.uniform(-a.noise, a.noise)
            ts = t0 + s * a.seconds + r * 0.01
            hms = "%02d:%02d:%02d,%03d" % ((ts // 3600) % 24, (ts // 60) % 60, ts % 60, (ts * 1000) % 1000)
            f.write("[rank%d]:[titan] 2026-01-01 %s - root - INFO - step: %2d  loss:  2.%04d  "
                    "memory: %.2fGiB(%.2f%%)  tps: 1,234  tflops: 200.12  mfu: 20.25%%\n"
                    % (r, hms, s, s % 9973, gib, gib / a.capacity * 100))
print(json.dumps(truth))
