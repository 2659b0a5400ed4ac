#!/usr/bin/env python3
"""The held-out anchor rows and the running figure (est64).

Reads the output of `OOMDX_ANCHOR_DETAIL=1 ./build/tests/test_estimator -s -tc='held-out*'` (a file, or stdin) and
prints the held-out figure (rows, median |error|, rows within 15 %) and, with --past, every row past 15 % with its
framework, method, ranks, micro-batch x length (from knowledge/anchors/) and the estimate's own breakdown.

Rows are filed under the summary line each held-out case prints after them ("held-out ...: N, median"), not under
the TEST CASE header doctest prints at the case's first assertion (which comes after the rows).
"""
import glob
import os
import re
import statistics
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROW = re.compile(r'^(\S+)\s+(\S+)\s+([\d.]+) (\S+)\s+([\d.]+) \S+\s+([+-][\d.]+)%(?: \(device ([+-][\d.]+)%\))?\s+(.*)$')
SUMMARY = re.compile(r'^([^:]+): (\d+), median')


def anchor_settings():
    out = {}
    for f in glob.glob(os.path.join(ROOT, 'knowledge/anchors/*.yaml')):
        for a in (yaml.safe_load(open(f)) or {}).get('anchors', []):
            kv = {}
            for part in ('base', 'set'):
                kv.update(a.get(part) or {})
            out[a['id']] = kv
    return out


def held_out_rows(lines):
    rows, pending, last = [], [], None
    for line in lines:
        m = ROW.match(line)
        if m:
            rid, stat, meas, unit, est, err, dev, interval = m.groups()
            last = dict(id=rid, stat=stat, measured=float(meas), unit=unit, estimate=float(est), error=float(err),
                        device=dev, covered='covers' in interval, breakdown='')
            pending.append(last)
            continue
        if last and line.startswith('    ') and 'phase, stage' in line:
            last['breakdown'] = line.strip()
            continue
        s = SUMMARY.match(line)
        if s:
            if s.group(1).startswith('held-out'):
                rows += pending
            pending = []
    return rows


def method(kv):
    if kv.get('training.finetuning_type', 'full') != 'lora':
        return kv.get('training.finetuning_type', 'full')
    if kv.get('training.quantization_bit'):
        return 'QLoRA/%s' % kv['training.quantization_bit']
    return 'DoRA' if kv.get('training.use_dora') else 'LoRA'


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    lines = (open(args[0]) if args else sys.stdin).read().splitlines()
    rows = held_out_rows(lines)
    if not rows:
        sys.exit('no held-out rows found (run with -s and OOMDX_ANCHOR_DETAIL=1)')
    errs = [abs(r['error']) for r in rows]
    past = [r for r in rows if abs(r['error']) > 15]
    print('%d rows, median |error| %.1f %%, within 15 %%: %d, past 15 %%: %d (%d inside the interval)' % (
        len(rows), statistics.median(errs), len(rows) - len(past), len(past), sum(r['covered'] for r in past)))
    if '--past' in sys.argv:
        settings = anchor_settings()
        for r in past:
            kv = settings.get(r['id'], {})
            print('%-44s %-18s %9.2f %-3s %9.2f %+7.1f %%%s | %s %s x%s %sx%s\n    %s' % (
                r['id'], r['stat'], r['measured'], r['unit'], r['estimate'], r['error'],
                ' (device %s %%)' % r['device'] if r['device'] else '', kv.get('job.framework', '?'), method(kv),
                kv.get('job.world_size', 1), kv.get('training.local_batch_size', '?'), kv.get('training.seq_len', '?'),
                r['breakdown']))


if __name__ == '__main__':
    main()
