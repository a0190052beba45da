#!/usr/bin/env bash
# Real-window smoke test of the desktop app: under Xvfb, start the helper (own socket and
# results folder) and `hubscope --open phantom --smoke-dump`, wait for the result, take X
# screenshots of the 3D tab and then of the Slices tab, and check that the 3D view shows hub
# spheres in module colours, that the hub table lists atlas regions, and that the slice viewer
# (its saved snapshot and on screen) shows the hub at its crosshair in its module's colour
# (internal/smoke/smokecheck); then of the Quality tab (the phantom has a confounds table: FD
# and DVARS traces), of a second app's Norm tab for a phantom patient against a normative
# cohort of phantom controls (the hubs lost recover the planted lesion), of a third app's
# T-maps tab for the cohort's two-group comparison (hubscope --open-results: significant nodes
# in the lesion, the t-map in the diverging scale), of a fourth app's Network tab for the
# controls' group-mean network (its subjects, mean and mask rule), and of a fifth app's Sweep
# tab (hubscope --sweep: the curves, the bundle's threshold marked).
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

# The phantom carries head motion and an fMRIPrep confounds table (a BIDS name finds it), so
# the default cleaning (auto → fMRIPrep's simple) has an FD trace for the Quality tab.
SCAN=sub-01_task-rest_desc-preproc_bold.nii.gz
bin/hubscope-helper synth --voxel-mm 6 --nuisance 2 --out "$T/$SCAN" >/dev/null
# A normative cohort of 4 phantom controls and 3 patients who lost the planted hubs of one
# module (truth/lesion.tsv). The cohort phantom has no nuisance and plants its modules across
# the whole spectrum, so it is analysed uncleaned (--denoise none, as the engine's norm test
# does): the default cleaning's band-pass and tCompCor remove part of the planted signal, and
# with 4 controls the lesion's degree drop then hid in their spread (1 of 8 lesion voxels
# flagged; uncleaned, all 8). The patients against the controls (compare) give the T-maps.
bin/hubscope-helper synth --subjects 4 --lesion --patients 3 --voxel-mm 6 --length 120 --out "$T/cohort" >/dev/null
bin/hubscope-helper cohort "$T/cohort" --out "$T/deriv" --metrics none --denoise none >/dev/null
bin/hubscope-helper norm build "$T/deriv" --out "$T/norm" --group-column diagnosis --group control >/dev/null
bin/hubscope-helper compare "$T/deriv" --group-column diagnosis --permutations 100 >/dev/null
bin/hubscope-helper group "$T"/cohort/sub-0?/func/*_bold.nii.gz --out "$T/group" --metrics none --denoise none >/dev/null
PATIENT=$(ls "$T"/cohort/sub-patient01/func/*_bold.nii.gz)
bin/hubscope-helper serve --socket "$T/helper.sock" --results "$T/results" >"$T/helper.log" 2>&1 &
HELPER_PID=$!

# Inside the X server: the app, a wait for its dump (the analysis takes ~15 s on 2 cores),
# then the root window's screenshot.
xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
  set -u
  bin/hubscope --helper bin/hubscope-helper --socket "$1/helper.sock" --open "$1/$2" --smoke-dump "$1/dump" >"$1/app.log" 2>&1 &
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
  touch "$1/dump/show-quality"
  waitfor() { for _ in $(seq 1 240); do [ -f "$1" ] && return 0; sleep 0.5; done; echo "gui-smoke: no $1 in 120 s"; return 1; }
  waitfor "$1/dump/quality-done" || { tail -20 "$1/app.log"; kill $app; exit 1; }
  import -window root "$1/root-quality.png"
  kill $app; wait $app 2>/dev/null || true
  # The patient against the normative cohort (Norm tab), then the phantom with a threshold
  # sweep (Sweep tab): one app each, on the same helper.
  bin/hubscope --helper bin/hubscope-helper --socket "$1/helper.sock" --denoise none --norm "$1/norm" --open "$3" --smoke-dump "$1/dump-norm" >"$1/app-norm.log" 2>&1 &
  app=$!
  waitfor "$1/dump-norm/done" || { tail -20 "$1/app-norm.log"; kill $app; exit 1; }
  touch "$1/dump-norm/show-slices" "$1/dump-norm/show-norm"
  waitfor "$1/dump-norm/norm-done" || { tail -20 "$1/app-norm.log"; kill $app; exit 1; }
  import -window root "$1/root-norm.png"
  kill $app; wait $app 2>/dev/null || true
  # The cohort folder with its comparison (T-maps tab: the t-map over the anatomy).
  bin/hubscope --helper bin/hubscope-helper --socket "$1/helper.sock" --open-results "$1/deriv" --smoke-dump "$1/dump-cohort" >"$1/app-cohort.log" 2>&1 &
  app=$!
  waitfor "$1/dump-cohort/t-maps-done" || { tail -20 "$1/app-cohort.log"; kill $app; exit 1; }
  import -window root "$1/root-tmaps.png"
  kill $app; wait $app 2>/dev/null || true
  # The group-mean network of the controls (hubscope-helper group) opened as a result.
  bin/hubscope --helper bin/hubscope-helper --socket "$1/helper.sock" --open-results "$1/group" --smoke-dump "$1/dump-group" >"$1/app-group.log" 2>&1 &
  app=$!
  waitfor "$1/dump-group/done" || { tail -20 "$1/app-group.log"; kill $app; exit 1; }
  sleep 1
  import -window root "$1/root-group.png"
  kill $app; wait $app 2>/dev/null || true
  bin/hubscope --helper bin/hubscope-helper --socket "$1/helper.sock" --sweep "r=0.3:0.6:0.1" --open "$1/$2" --smoke-dump "$1/dump-sweep" >"$1/app-sweep.log" 2>&1 &
  app=$!
  waitfor "$1/dump-sweep/done" || { tail -20 "$1/app-sweep.log"; kill $app; exit 1; }
  touch "$1/dump-sweep/show-slices" "$1/dump-sweep/show-sweep"
  waitfor "$1/dump-sweep/sweep-done" || { tail -20 "$1/app-sweep.log"; kill $app; exit 1; }
  import -window root "$1/root-sweep.png"
  kill $app; wait $app 2>/dev/null || true
' _ "$T" "$SCAN" "$PATIENT" || { echo "--- helper log"; tail -20 "$T/helper.log"; exit 1; }

go run ./internal/smoke/smokecheck "$T/dump" "$T/root.png" "$T/root-slices.png"
go run ./internal/smoke/smokecheck tab "$T/dump" Quality "$T/root-quality.png"
go run ./internal/smoke/smokecheck tab "$T/dump-norm" Norm "$T/root-norm.png" "$T/cohort/truth/lesion.tsv"
go run ./internal/smoke/smokecheck tab "$T/dump-cohort" T-maps "$T/root-tmaps.png" "$T/cohort/truth/lesion.tsv"
go run ./internal/smoke/smokecheck group "$T/dump-group" "$T/root-group.png" 4
go run ./internal/smoke/smokecheck tab "$T/dump-sweep" Sweep "$T/root-sweep.png"
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
  cp "$T/root-quality.png" "$1/quality-window.png"
  cp "$T/root-norm.png" "$1/norm-window.png"
  cp "$T/root-tmaps.png" "$1/tmaps-window.png"
  cp "$T/root-group.png" "$1/group-window.png"
  cp "$T/root-sweep.png" "$1/sweep-window.png"
  cp "$T/dump/view3d.png" "$1/3d-view.png"
  cp "$T/dump/slices.png" "$1/slices.png"
  cp "$T/dump/report.html" "$1/report-example.html"
  # The PDF's first page as a small picture (the PDF itself is ~0.4 MB, too large to keep).
  pdftoppm -r 50 -png -f 1 -l 1 -singlefile "$T/dump/report.pdf" "$1/report-page1"
  echo "gui-smoke: screenshots in $1"
fi
echo "gui-smoke: OK"
