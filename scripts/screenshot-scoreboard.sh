#!/usr/bin/env bash
# A screenshot of a scoreboard page (`run ... --report html=PAGE.html`) in headless Chromium, for
# the docs: scripts/screenshot-scoreboard.sh PAGE.html OUT.png [WIDTHxHEIGHT] [FRAGMENT]
# (default 1366x768, a laptop screen; FRAGMENT such as 'cell=Gather-13/onnxruntime' opens a cell).
# $ONNX_IDX_CHECK_CHROMIUM names the browser, else chromium (Debian: apt-get install chromium).
set -euo pipefail
if [[ $# -lt 2 || $# -gt 4 ]]; then
  echo "usage: $0 PAGE.html OUT.png [WIDTHxHEIGHT] [FRAGMENT]" >&2
  exit 2
fi
page=$1 out=$2 size=${3:-1366x768} fragment=${4:-}
if ! [[ $size =~ ^([0-9]+)x([0-9]+)$ ]]; then
  echo "error: size '$size' is not WIDTHxHEIGHT (e.g. 1366x768)" >&2
  exit 2
fi
width=${BASH_REMATCH[1]} height=${BASH_REMATCH[2]}
if [[ ! -f $page ]]; then
  echo "error: no page at $page" >&2
  exit 2
fi
browser=${ONNX_IDX_CHECK_CHROMIUM:-}
if [[ -z $browser ]]; then
  for name in chromium chromium-browser google-chrome; do
    if command -v "$name" >/dev/null 2>&1; then browser=$name; break; fi
  done
fi
if [[ -z $browser ]]; then
  echo "error: no chromium found (apt-get install chromium, or set ONNX_IDX_CHECK_CHROMIUM)" >&2
  exit 1
fi
url="file://$(realpath "$page")${fragment:+#$fragment}"
out_abs="$(realpath -m "$out")"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# --virtual-time-budget lets the page's script draw before the shot.
"$browser" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
  --user-data-dir="$profile" --window-size="$width,$height" --force-device-scale-factor=1 \
  --virtual-time-budget=2000 --screenshot="$out_abs" "$url" >/dev/null 2>&1
if [[ ! -s $out_abs ]]; then
  echo "error: $browser wrote no screenshot to $out" >&2
  exit 1
fi
echo "wrote $out (${width}x${height})"
