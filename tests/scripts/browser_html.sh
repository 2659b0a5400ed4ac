#!/usr/bin/env bash
# Renders the examples (or fixtures) to HTML, loads the pages in one headless Chromium (cdp_shots.py), and fails on
# a console error, a missing section or an empty chart. Screenshots are kept for review in
# $OOMDX_HTML_OUT, else ./browser_html under the build folder (ctest runs in it).
# $1 = oomdx binary, $2 = repo root. Exit 77 when chromium or python3 is missing.
set -u
oomdx="$1"
root="$2"
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser="$b"; break; fi
done
[ -n "$browser" ] || { echo "skipped: chromium is not installed"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skipped: python3 is not installed"; exit 77; }

if [ -n "${OOMDX_HTML_OUT:-}" ]; then out="$OOMDX_HTML_OUT"
elif [ "$(pwd -P)" = "$(cd "$root" && pwd -P)" ]; then out=$(mktemp -d /tmp/oomdx_browser_html.XXXXXX)
else out="$PWD/browser_html"; fi
mkdir -p "$out"
rm -f "$out"/*.html "$out"/*.png "$out"/*.dom "$out"/*.log
echo "output: $out"

fail=0
n=0
minimal=" "

# render NAME DIR ARGS...: runs oomdx ARGS --format html in DIR, writes NAME.html.
render() {
  local name="$1" dir="$2"
  shift 2
  local rc=0
  (cd "$dir" && "$oomdx" "$@" --format html) > "$out/$name.html" 2> "$out/$name.oomdx.log" || rc=$?
  if [ "$rc" -gt 1 ]; then
    echo "FAIL $name: oomdx exited $rc: $(head -c 300 "$out/$name.oomdx.log")"
    fail=1
    rm -f "$out/$name.html"
    return
  fi
  n=$((n + 1))
}

if ls "$root"/examples/*/cmd >/dev/null 2>&1; then
  for cmdfile in "$root"/examples/*/cmd; do
    ex=$(dirname "$cmdfile")
    name=$(basename "$ex")
    line=$(grep -v '^[[:space:]]*#' "$cmdfile" | tr '\n' ' ')
    eval "args=($line)"
    [ "${args[0]:-}" = "oomdx" ] && args=("${args[@]:1}")
    case "${args[0]:-}" in
      diagnose|preflight|snapshot) ;;
      *) echo "skip $name: '${args[0]:-}' has no HTML format"; continue ;;
    esac
    # Drop any --format/-f given in the example; HTML is appended.
    clean=()
    skip_next=0
    for a in "${args[@]}"; do
      if [ "$skip_next" = 1 ]; then skip_next=0; continue; fi
      case "$a" in
        --format|-f) skip_next=1 ;;
        --format=*) ;;
        *) clean+=("$a") ;;
      esac
    done
    render "$name" "$ex" "${clean[@]}"
    # An example whose report has no figure to draw (no OOM message, no estimate, no snapshot)
    # says so in a `no_chart` file; its page is checked without the chart requirement.
    [ -f "$ex/no_chart" ] && minimal="$minimal $name "
    # The snapshot page of the example's first snapshot, if it has one.
    for snapf in "$ex"/*.pickle; do
      [ -f "$snapf" ] && render "${name}_snapshot" "$ex" snapshot "$snapf"
      break
    done
  done
else
  echo "no examples/*/cmd: using fixtures"
  fx="$root/tests/fixtures"
  for log in "$fx"/logs/*.log; do
    render "diagnose_$(basename "$log" .log)" "$fx" diagnose --log "$log" --model llama3-8b --device h100
  done
  snapf="$fx/snapshots/v2_7_oom_expandable.pickle"
  [ -f "$snapf" ] && render snapshot_v2_7_oom "$fx" snapshot "$snapf"
  [ -f "$fx/snapshots/v2_6_annotations.pickle" ] && render snapshot_v2_6 "$fx" snapshot "$fx/snapshots/v2_6_annotations.pickle"
  [ -f "$snapf" ] && render diagnose_log_snapshot "$fx" diagnose --log "$fx/logs/torchtitan_leak.log" \
      --snapshot "$snapf" --model llama3-8b --device h100
  render preflight_llama3_8b "$fx" preflight --model llama3-8b --device h100 --world-size 8
fi

[ "$n" -gt 0 ] || { echo "FAIL: nothing rendered"; exit 1; }

check_dom() {
  python3 - "$1" "$2" <<'PY'
import sys
from html.parser import HTMLParser
path, kind = sys.argv[1], sys.argv[2]
SHAPES = {"rect", "polyline", "circle", "line", "path", "polygon"}
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts = []      # shape count per chart
        self.in_chart = False
        self.ids = set()
        self.external = []
        self.items = []       # ("bar" | "legend", key, [(segment, bytes)]) in document order
        self.bar = None
        self.legend = None
        self.unlabelled = 0   # legends that do not say which bar they describe
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a: self.ids.add(a["id"])
        if tag == "g" and "data-bar" in a:
            self.bar = ("bar", a["data-bar"], [])
            self.items.append(self.bar)
        elif tag == "rect" and self.bar is not None and "data-seg" in a:
            self.bar[2].append((a["data-seg"], a.get("data-bytes")))
        elif tag == "div" and "legend" in (a.get("class") or "").split():
            if "data-for" in a:
                self.legend = ("legend", a["data-for"], [])
                self.items.append(self.legend)
            else:
                self.unlabelled += 1
        elif tag == "span" and self.legend is not None and "data-seg" in a:
            self.legend[2].append((a["data-seg"], a.get("data-bytes")))
        for k in ("src", "href"):
            v = a.get(k) or ""
            if v and not v.startswith("#") and not v.startswith("data:"): self.external.append(f"{tag} {k}={v}")
        if tag in ("script", "link", "iframe", "img"): self.external.append(tag)
        if tag == "svg" and "chart" in (a.get("class") or "").split():
            self.in_chart = True
            self.charts.append(0)
        elif self.in_chart and tag in SHAPES:
            self.charts[-1] += 1
    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
    def handle_endtag(self, tag):
        if tag == "svg": self.in_chart = False
        if tag == "g": self.bar = None
        if tag == "div": self.legend = None
p = P()
p.feed(open(path, encoding="utf-8", errors="replace").read())
errs = []
if not p.charts and kind != "minimal": errs.append("no chart at all")
for i, c in enumerate(p.charts):
    if c == 0: errs.append(f"chart {i + 1} is empty")
if p.external: errs.append("external references or scripts: " + ", ".join(p.external[:5]))
if kind == "diagnosis":
    for need in ("summary", "route", "findings", "recommendations"):
        if need not in p.ids: errs.append(f"section {need} missing")
if kind == "snapshot" and "snapshot" not in p.ids: errs.append("snapshot section missing")
# Each legend names its bar (data-for) and lists exactly that bar's segments, in order; every
# tagged bar has its legend after it. A snapshot page has no legend without its bar.
last_bar, legends = {}, 0
for what, key, segs in p.items:
    if what == "bar":
        if key in last_bar and last_bar[key][1] is False: errs.append(f"bar {key} has no legend")
        last_bar[key] = (segs, False)
    else:
        legends += 1
        if key not in last_bar: errs.append(f"legend {key} comes before any bar {key}")
        elif last_bar[key][0] != segs: errs.append(f"legend {key} lists {segs[:3]}... but its bar draws {last_bar[key][0][:3]}...")
        else: last_bar[key] = (last_bar[key][0], True)
for key, (segs, seen) in last_bar.items():
    if not seen: errs.append(f"bar {key} has no legend")
if kind == "snapshot" and p.unlabelled: errs.append(f"{p.unlabelled} legend(s) without the bar they describe")
print(f"{len(p.charts)} charts, {sum(p.charts)} shapes, {legends} bar legends checked")
if errs:
    print("; ".join(errs))
    sys.exit(1)
PY
}

# One browser loads every page: screenshot NAME.png, DOM NAME.dom, console NAME.chromium.log.
timeout 900 python3 "$root/tests/scripts/cdp_shots.py" "$browser" 1200x3000 "$out" "$out"/*.html
rc=$?
for html in "$out"/*.html; do
  name=$(basename "$html" .html)
  kind=diagnosis
  grep -q '<h1>oomdx snapshot' "$html" && kind=snapshot
  case "$minimal" in *" $name "*) kind=minimal ;; esac
  msg=""
  [ "$rc" -eq 0 ] || msg="$msg the browser could not be driven (exit $rc);"
  [ -s "$out/$name.png" ] || msg="$msg no screenshot;"
  if grep -E 'CONSOLE[:(]|Uncaught|Refused to|Failed to load resource' "$out/$name.chromium.log" > "$out/$name.console.log"; then
    msg="$msg console errors: $(head -c 400 "$out/$name.console.log");"
  fi
  if [ -s "$out/$name.dom" ]; then
    res=$(check_dom "$out/$name.dom" "$kind") || msg="$msg $res;"
  else
    msg="$msg empty DOM dump;"
  fi
  if [ -n "$msg" ]; then
    echo "FAIL $name:$msg"
    fail=1
  else
    echo "ok   $name: $res, $(wc -c < "$out/$name.png") byte screenshot"
  fi
done

if [ "$fail" -ne 0 ]; then
  echo "browser test failed; pages, DOM dumps, browser logs and screenshots in $out"
  exit 1
fi
echo "$n pages rendered and checked in $browser; screenshots in $out"
