#!/usr/bin/env bash
# The Chinese HTML report renders its Chinese text in Chromium: three examples rendered with
# --lang zh are loaded in headless Chromium and screenshot; a copy of each page whose Chinese
# characters are replaced by a code point no font has is screenshot too. When a CJK font shows
# the text, the two screenshots differ; identical screenshots mean every Chinese character was
# drawn as a missing-glyph box (install a CJK font: OOMDX_WITH_BROWSER=1 scripts/setup.sh installs fonts-wqy-microhei).
# Also checks <html lang="zh-CN"> and that the DOM holds the Chinese headline.
# Screenshots are kept in $OOMDX_HTML_OUT, else ./browser_html_zh under the build folder.
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
elif [ "$(pwd -P)" = "$(cd "$root" && pwd -P)" ]; then out=$(mktemp -d /tmp/oomdx_browser_zh.XXXXXX)
else out="$PWD/browser_html_zh"; fi
mkdir -p "$out"
rm -f "$out"/*.html "$out"/*.png "$out"/*.dom "$out"/*.log
echo "output: $out"

fail=0
names=""
for name in npu_workspace_oom leak_three_snapshots fragmentation_snapshot; do
  dir="$root/examples/$name"
  [ -f "$dir/cmd" ] || { echo "FAIL $name: no such example"; fail=1; continue; }
  read -r -a args < "$dir/cmd"
  page="$out/$name.zh.html"
  (cd "$dir" && "$oomdx" "${args[@]}" --lang zh --format html) > "$page" 2>/dev/null
  if ! grep -q '<html lang="zh-CN">' "$page"; then
    echo "FAIL $name: the page does not say <html lang=\"zh-CN\">"
    fail=1
    continue
  fi
  # The same page with every Chinese character replaced by U+0378 (unassigned: no font draws it).
  python3 - "$page" "$out/$name.tofu.html" <<'PY'
import re, sys
s = open(sys.argv[1], encoding="utf-8").read()
open(sys.argv[2], "w", encoding="utf-8").write(re.sub(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", "\u0378", s))
PY
  names="$names $name"
done
# One browser loads every page (screenshots NAME.zh.png / NAME.tofu.png, DOM NAME.zh.dom).
timeout 600 python3 "$root/tests/scripts/cdp_shots.py" "$browser" 1200x1600 "$out" "$out"/*.html
for name in $names; do
  page="$out/$name.zh.html"
  if [ ! -s "$out/$name.zh.png" ] || [ ! -s "$out/$name.tofu.png" ] || [ ! -s "$out/$name.zh.dom" ]; then
    echo "FAIL $name: chromium did not render the page"
    fail=1
    continue
  fi
  headline=$(python3 - "$page" <<'PY'
import html, re, sys
s = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<div class="headline[^"]*" id="summary">(.*?)</div>', s, re.S)
print(html.unescape(m.group(1)) if m else "")
PY
)
  if [ -z "$headline" ] || ! python3 -c 'import sys,re; sys.exit(0 if re.search("[\u4e00-\u9fff]", sys.argv[1]) else 1)' "$headline"; then
    echo "FAIL $name: the headline is not in Chinese: ${headline:0:120}"
    fail=1
  elif ! grep -qF "${headline:0:30}" "$out/$name.zh.dom"; then
    echo "FAIL $name: Chromium's DOM does not hold the Chinese headline"
    fail=1
  elif cmp -s "$out/$name.zh.png" "$out/$name.tofu.png"; then
    echo "FAIL $name: the Chinese text is drawn as missing glyphs (no CJK font: install fonts-wqy-microhei or fonts-noto-cjk)"
    fail=1
  else
    echo "ok   $name: Chinese text rendered ($(wc -c < "$out/$name.zh.png") byte screenshot)"
  fi
done
[ "$fail" = 0 ] || echo "pages and screenshots in $out"
exit $fail
