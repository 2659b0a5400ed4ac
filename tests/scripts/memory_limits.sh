#!/usr/bin/env bash
# Hostile inputs under a small address-space limit (ulimit -v 1 GB): each must end with its own
# clear error (exit 2) or a result, never an allocation failure or a crash. Skipped under ASan,
# whose shadow memory needs terabytes of address space.
set -uo pipefail
oomdx=$1
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
libs=$(ldd "$oomdx" 2>/dev/null || true)  # not piped into grep -q: with pipefail, SIGPIPE would hide a match
if grep -q 'libasan\|libclang_rt.asan' <<<"$libs"; then echo "sanitizer build: skipped"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import gzip, sys
w = sys.argv[1]
def put(name, data): open(f"{w}/{name}", "wb").write(data)
put("stack.pickle", b"\x80\x04" + b"]" * (24 << 20) + b".")           # containers without end
put("memo.pickle", b"\x80\x04]r\xff\xff\xff\x7f.")                    # memo slot 2^31-1
put("string.pickle", b"\x80\x04\x8e" + (1 << 62).to_bytes(8, "little") + b"ab")  # BINBYTES8 of 4 EiB
put("deep.json", b"[" * (8 << 20))
put("line.log", b"y" * (64 << 20) + b"\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB\n")
with gzip.open(f"{w}/zeros.log.gz", "wb", compresslevel=1) as f:      # 1 GiB of NULs, 1 MB on disk
    for _ in range(1024): f.write(b"\0" * (1 << 20))
with gzip.open(f"{w}/newlines.log.gz", "wb", compresslevel=1) as f:   # 256 MiB of empty lines
    for _ in range(256): f.write(b"\n" * (1 << 20))
put("items.yaml", b"a: [" + b"1," * (1 << 20) + b"1]\n")               # 2M-node YAML
put("items.toml", b"a = [" + b"1," * (1 << 20) + b"1]\n")
PY
fail=0
# expect RC SUBSTRING -- ARGS...
expect() {
    local rc=$1 want=$2; shift 3
    local err got
    err=$( (ulimit -v 1000000; "$oomdx" "$@" 2>&1 >/dev/null) ); got=$?
    if [ "$got" != "$rc" ] || ! grep -qF -- "$want" <<<"$err"; then
        echo "FAIL oomdx $*: exit $got (want $rc), stderr: ${err:0:300} (want '$want')"; fail=1
    else
        echo "ok   oomdx $* -> exit $got${want:+, '$want'}"
    fi
}
expect 2 "limit snapshot_containers" -- snapshot "$work/stack.pickle"
expect 2 "limit snapshot_memo" -- snapshot "$work/memo.pickle"
expect 2 "byte" -- snapshot "$work/string.pickle"
expect 2 "limit snapshot_depth" -- snapshot "$work/deep.json"
expect 0 "" -- log "$work/line.log"
expect 2 "binary data" -- log "$work/zeros.log.gz"
expect 0 "" -- log "$work/newlines.log.gz"
expect 2 "limit text_items" -- estimate --config "$work/items.yaml" -m llama3-8b -d h100-80gb
expect 2 "limit text_items" -- estimate --config "$work/items.toml" -m llama3-8b -d h100-80gb
expect 2 "limit log_file_bytes" -- log --limit log_file_bytes=64MiB "$work/newlines.log.gz"
exit $fail
