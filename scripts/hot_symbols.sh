#!/usr/bin/env bash
# Writes cmake/oomdx_hot_symbols.txt: the functions `oomdx snapshot FILE --format json` executes,
# which the link puts first (CMakeLists.txt, OOMDX_CODE_ORDER; docs/snapshot.md, snap10).
#
# usage: scripts/hot_symbols.sh [OOMDX_BINARY]   (default: build/oomdx; needs valgrind, python3)
#
# Runs the binary under callgrind on small snapshots written by tests/bench/gen_snapshot.py
# (the 100k-d20 bench shape, and one with compile_context, user_metadata, C++ frames and an
# OOM, so that those paths are listed too), maps every executed instruction
# to the symbol that holds it (nm), and writes the names in the order of their addresses in
# the binary. The list only decides the layout: a stale or missing name costs resident code
# pages, never a result. Run it again after large changes to the snapshot path.
# `--version` is not run (it builds every subcommand's options; `oomdx snapshot` builds its own only,
# engine/cli/main.cpp): listed, those builders put ~95 KiB of code a snapshot run never executes
# in the hot region (docs/snapshot.md, snap19).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-$root/build/oomdx}")
out=$root/cmake/oomdx_hot_symbols.txt
command -v valgrind >/dev/null || { echo "hot_symbols: needs valgrind" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oomdx-hot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

python3 "$root/tests/bench/gen_snapshot.py" "$tmp/a.pickle" --events 100000 --depth 20 --stacks 1000 2>/dev/null
python3 "$root/tests/bench/gen_snapshot.py" "$tmp/b.pickle" --events 20000 --depth 35 --stacks 2000 \
    --cpp --compile-context --user-metadata --oom 2>/dev/null
"$bin" snapshot "$tmp/a.pickle" --format json >/dev/null  # the stored rule set, as in a normal run
n=0
for args in "snapshot $tmp/a.pickle --format json" "snapshot $tmp/b.pickle --format json"; do
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$tmp/cg.$n" "$bin" $args >/dev/null 2>&1
    n=$((n + 1))
done

python3 - "$bin" "$out" "$tmp"/cg.* <<'PY'
import bisect, re, subprocess, sys

binary, out, profiles = sys.argv[1], sys.argv[2], sys.argv[3:]
# Executed instruction addresses (callgrind's --dump-instr positions; a static-pie binary's
# are its link-time addresses). Lines after `calls=` are the call's cost, not an instruction.
addrs = set()
for path in profiles:
    cur, after_call = 0, False
    for line in open(path):
        if line.startswith("calls="):
            after_call = True
            continue
        if not line or line[0] not in "0123456789+-*":
            continue
        tok = line.split()[0]
        if tok.startswith("0x"):
            cur = int(tok, 16)
        elif tok[0] in "+-":
            d = int(tok[1:], 16) if tok[1:].startswith("0x") else int(tok[1:])
            cur = cur + d if tok[0] == "+" else cur - d
        elif tok != "*":
            cur = int(tok)
        if after_call:
            after_call = False
            continue
        addrs.add(cur)

syms = []
nm = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True, check=True)
for l in nm.stdout.splitlines():
    p = l.split()
    if len(p) == 4 and p[2] in "tTwW" and int(p[1], 16) > 0:
        syms.append((int(p[0], 16), int(p[1], 16), p[3]))
syms.sort()
starts = [s[0] for s in syms]
hot = {}
for a in addrs:
    i = bisect.bisect_right(starts, a) - 1
    if i >= 0 and syms[i][0] <= a < syms[i][0] + syms[i][1]:
        hot[syms[i][0]] = syms[i]
names = []
seen = set()
size = sum(s[1] for s in hot.values())
for s in sorted(hot.values()):
    if s[2] not in seen:
        seen.add(s[2])
        names.append(s[2])
# glibc picks its string and memory functions by CPU at start (IFUNC): valgrind's CPU gets the
# AVX2 ones, this machine's may get EVEX or SSE2. Every variant of a function run here is listed.
variant = r"_(sse2|ssse3|sse42|sse4_1|sse4_2|avx2|avx|evex|evex512|avx512|avx512f|avx512bw)(_|$)"
bases = {m.group(1) for n in names for m in [re.match(r"^(__[a-z0-9]+?)" + variant, n)] if m}
for a, sz, n in syms:
    if n not in seen and any(re.match("^" + re.escape(b) + variant, n) for b in bases):
        seen.add(n)
        names.append(n)
        size += sz
# Run but not found above, so listed by name (else each one's page fault maps a window of cold
# code; docs/snapshot.md, snap40): valgrind gives the process no vDSO, so glibc's start-up never
# sets it up under callgrind (setup_vdso, dl_vdso_vsym), and crtbegin.o's functions have no size.
every = {}
for l in nm.stdout.splitlines():
    p = l.split()
    if len(p) >= 3 and p[-2] in "tTwW":
        every.setdefault(p[-1], int(p[1], 16) if len(p) == 4 else 0)
for n in ("_dl_new_object", "_dl_add_to_namespace_list", "_dl_setup_hash", "_dl_lookup_direct",
          "_dl_lookup_symbol_x", "do_lookup_x", "check_match", "_dl_name_match_p",
          "frame_dummy", "register_tm_clones", "deregister_tm_clones", "__do_global_dtors_aux"):
    hit = [(0, every[n], n)] if n in every else []
    if hit and n not in seen:
        seen.add(n)
        names.append(n)
        size += hit[0][1]
with open(out, "w") as f:
    f.write("\n".join(names) + "\n")
print(f"hot_symbols: {len(names)} functions, {size / 1024:.0f} KiB of code -> {out}")
PY
