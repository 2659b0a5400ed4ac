"""Normalizes an oomdx JSON report for golden comparison: sorted keys, two-space indent, the
version and timings masked, the checkout path (argv[1]) removed from strings."""
import json
import sys

root = sys.argv[1].rstrip("/") + "/" if len(sys.argv) > 1 else None
VOLATILE = {"version", "seconds", "candidates_per_second", "stage_seconds"}


def clean(x):
    if isinstance(x, dict):
        return {k: ("<masked>" if k in VOLATILE else clean(v)) for k, v in x.items()}
    if isinstance(x, list):
        return [clean(v) for v in x]
    if isinstance(x, str) and root:
        return x.replace(root, "")
    return x


print(json.dumps(clean(json.load(sys.stdin)), indent=2, sort_keys=True, ensure_ascii=False))
