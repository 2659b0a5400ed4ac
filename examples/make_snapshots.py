#!/usr/bin/env python3
"""Writes the example snapshots from the readable descriptions beside them (<case>/*.snapshot.json),
with the fixture generator in tests/fixtures/snapshots (stdlib pickle only)."""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures", "snapshots"))
import gen_snapshots  # noqa: E402

for desc in sorted(glob.glob(os.path.join(HERE, "*", "*.snapshot.json"))):
    with open(desc) as f:
        d = json.load(f)
    name = os.path.basename(desc)[: -len(".snapshot.json")]
    for fname, data in gen_snapshots.render(name, d).items():
        if fname.endswith(".pickle"):
            with open(os.path.join(os.path.dirname(desc), fname), "wb") as f:
                f.write(data)
            print("wrote", os.path.relpath(os.path.join(os.path.dirname(desc), fname), HERE))
