# Shared by the adapter script tests (axolotl_adapter.sh, torchtune_adapter.sh), sourced with the
# script's arguments: OOMDX_BINARY SOURCE_ROOT.
set -u
oomdx="$1"
root="$2"
fx="$root/tests/fixtures/configs"
export NO_COLOR=1
fail=0
facts() { "$oomdx" facts -c "$1" --format json 2>&1; }

# detect_each "file adapter" ...: each fixture is detected as the adapter named beside it
detect_each() {
  local pair got
  for pair in "$@"; do
    set -- $pair
    got=$(facts "$fx/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["framework"])' 2>&1)
    if [ "$got" != "$2" ]; then echo "FAIL: $1 detected as '$got', expected $2"; fail=1; fi
  done
}

# facts, values and provenance (producer, line) of each mapped key; no unknown key
check_facts() {  # file, then python dict literal {name: (value, producer_suffix, line or None)}; value None: no fact
  facts "$fx/$1" | python3 -c '
import json, sys
j = json.load(sys.stdin)
want = eval(sys.argv[1])
facts = {f["name"]: f for f in j["facts"]}
bad = []
if j.get("unknown_keys"): bad.append("unknown keys: %r" % j["unknown_keys"])
for name, (val, prod, line) in want.items():
    f = facts.get(name)
    if val is None:
        if f is not None: bad.append("%s = %r, expected no fact" % (name, f["value"]))
        continue
    if f is None: bad.append("%s missing" % name); continue
    if f["value"] != val: bad.append("%s = %r, expected %r" % (name, f["value"], val))
    if not f["producer"].endswith(prod): bad.append("%s producer %r, expected *%s" % (name, f["producer"], prod))
    if line is not None and f.get("line") != line: bad.append("%s line %r, expected %r" % (name, f.get("line"), line))
for b in bad: print("FAIL %s: %s" % (sys.argv[2], b))
sys.exit(1 if bad else 0)
' "$2" "$1" || fail=1
}

# check_estimate JSON CHECKS: runs python CHECKS on an `oomdx estimate --format json` output, with
# e (the estimate), txt (it as text), comps (components by id), GiB and bad (append failures)
check_estimate() {
  printf '%s' "$1" | python3 -c '
import json, sys
j = json.load(sys.stdin)
e = j.get("estimate", j)
txt = json.dumps(e)
comps = {c["id"]: c for c in e["components"]}
bad = []
GiB = 1024 ** 3
exec(sys.argv[1])
for b in bad: print("FAIL estimate:", b)
sys.exit(1 if bad else 0)
' "$2" || { fail=1; printf '%s\n' "$1" | head -c 3000; }
}
