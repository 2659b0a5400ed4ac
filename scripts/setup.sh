#!/usr/bin/env bash
# Installs the Debian 12 build dependencies (as root or with sudo) and builds oomdx into build/
# (OOMDX_SETUP_DEPS_ONLY=1: dependencies only).
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
PKGS="g++ cmake make pkg-config libyaml-cpp-dev libre2-dev libcli11-dev libfmt-dev doctest-dev
      libtomlplusplus-dev nlohmann-json3-dev zlib1g-dev python3 lld"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if [ "${OOMDX_WITH_BROWSER:-0}" = 1 ]; then
  # Chromium for the HTML tests, and a CJK font so that `--lang zh` pages show their text (the
  # report's font stack names Noto Sans CJK SC first, then WenQuanYi: the 1.6 MB WenQuanYi Micro Hei
  # is enough for the test, where fonts-noto-cjk is a 57 MB download).
  browser=""
  dpkg -s chromium >/dev/null 2>&1 || browser="chromium"
  fc-list :lang=zh family 2>/dev/null | grep -q . || browser="$browser fonts-wqy-microhei"
  if [ -n "$browser" ]; then
    [ -n "$missing" ] || $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $browser >/dev/null || \
      echo "setup: $browser not installed; browser tests will be skipped or fail" >&2
  fi
fi
if [ "${OOMDX_SETUP_DEPS_ONLY:-0}" = 1 ]; then exit 0; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
