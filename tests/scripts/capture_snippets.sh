#!/usr/bin/env bash
# The capture snippets compile as Python (syntax only; torch is not needed).
set -eu
oomdx="$1"
command -v python3 >/dev/null || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for dev in cuda npu; do
  for flags in "" "--on-oom" "--leak-pair" "--on-oom --leak-pair"; do
    n=$((n + 1))
    "$oomdx" capture --device "$dev" $flags > "$tmp/snippet_$n.py"
    grep -q "_record_memory_history(max_entries=" "$tmp/snippet_$n.py"
    python3 -m py_compile "$tmp/snippet_$n.py"
  done
done
grep -q "torch.npu.memory._dump_snapshot" "$tmp/snippet_5.py"
grep -q "_cuda_attach_out_of_memory_observer" "$tmp/snippet_2.py"
echo "$n capture snippets compile"
