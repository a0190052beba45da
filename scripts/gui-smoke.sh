#!/usr/bin/env bash
# Real-window smoke test of the desktop app: under Xvfb, start the helper (own socket and
# results folder) and `hubscope --open phantom --smoke-dump`, wait for the result, take X
# screenshots of the 3D tab and then of the Slices tab, and check that the 3D view shows hub
# spheres in module colours, that the hub table lists atlas regions, and that the slice viewer
# (its saved snapshot and on screen) shows the hub at its crosshair in its module's colour
# (internal/smoke/smokecheck).
# Usage: scripts/gui-smoke.sh [SHOTS_DIR]   (SHOTS_DIR: copy the screenshots there, e.g. docs/gui)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH LANG=C.UTF-8
scripts/setup-deps.sh gui
go build -o bin/hubscope-helper ./cmd/hubscope-helper
go build -o bin/hubscope ./cmd/hubscope

T=$(mktemp -d)
HELPER_PID=""
cleanup() { [ -n "$HELPER_PID" ] && kill "$HELPER_PID" 2>/dev/null; wait 2>/dev/null || true; if [ -n "${GUI_SMOKE_KEEP:-}" ]; then echo "gui-smoke: kept $T"; else rm -rf "$T"; fi; }
trap cleanup EXIT

bin/hubscope-helper synth --voxel-mm 6 --out "$T/phantom.nii.gz" >/dev/null
bin/hubscope-helper serve --socket "$T/helper.sock" --results "$T/results" >"$T/helper.log" 2>&1 &
HELPER_PID=$!

# Inside the X server: the app, a wait for its dump (the analysis takes ~15 s on 2 cores),
# then the root window's screenshot.
xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
  set -u
  bin/hubscope --helper bin/hubscope-helper --socket "$1/helper.sock" --open "$1/phantom.nii.gz" --smoke-dump "$1/dump" >"$1/app.log" 2>&1 &
  app=$!
  for _ in $(seq 1 600); do
    [ -f "$1/dump/done" ] && break
    kill -0 $app 2>/dev/null || { echo "gui-smoke: the app exited early:"; tail -20 "$1/app.log"; exit 1; }
    sleep 0.5
  done
  [ -f "$1/dump/done" ] || { echo "gui-smoke: no result shown in 300 s"; tail -20 "$1/app.log"; kill $app; exit 1; }
  import -window root "$1/root.png"
  touch "$1/dump/show-slices"
  for _ in $(seq 1 120); do
    [ -f "$1/dump/slices-done" ] && break
    sleep 0.5
  done
  [ -f "$1/dump/slices-done" ] || { echo "gui-smoke: the Slices tab was not shown in 60 s"; tail -20 "$1/app.log"; kill $app; exit 1; }
  import -window root "$1/root-slices.png"
  kill $app; wait $app 2>/dev/null || true
' _ "$T" || { echo "--- helper log"; tail -20 "$T/helper.log"; exit 1; }

go run ./internal/smoke/smokecheck "$T/dump" "$T/root.png" "$T/root-slices.png"
# The app's PDF report renders and holds its sections and figures (poppler-utils).
pdftoppm -r 30 -png "$T/dump/report.pdf" "$T/report-page" || { echo "gui-smoke: report.pdf does not render"; exit 1; }
pdftotext -layout "$T/dump/report.pdf" "$T/report.txt"
for want in "Global measures" "Hubs in 3D" "Degree distribution" "To repeat this analysis"; do
  grep -qF -- "$want" "$T/report.txt" || { echo "gui-smoke: report.pdf lacks \"$want\""; exit 1; }
done
if [ $# -ge 1 ]; then
  mkdir -p "$1"
  cp "$T/root.png" "$1/main-window.png"
  cp "$T/root-slices.png" "$1/slices-window.png"
  cp "$T/dump/view3d.png" "$1/3d-view.png"
  cp "$T/dump/slices.png" "$1/slices.png"
  cp "$T/dump/report.html" "$1/report-example.html"
  # The PDF's first page as a small picture (the PDF itself is ~0.4 MB, too large to keep).
  pdftoppm -r 50 -png -f 1 -l 1 -singlefile "$T/dump/report.pdf" "$1/report-page1"
  echo "gui-smoke: screenshots in $1"
fi
echo "gui-smoke: OK"
