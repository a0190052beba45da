#!/usr/bin/env bash
# Headless-browser smoke test of the browser app: build bin/web (make web), start the helper
# on loopback TCP with it as the page (own socket, results folder and a small upload limit),
# and drive the page in headless Chromium (internal/smoke/websmoke): the app starts and reaches
# the helper's API with the cookie its token URL was exchanged for; after that first load the
# address bar holds no token, a request without the cookie is refused, and a request from a
# page of another origin on this host that carries the cookie is refused
# (internal/smoke/websmoke/token.go); a file that is not NIfTI, one over the limit and one
# that holds no NIfTI image are refused in words; and the demo phantom uploaded through the
# page's file input is analysed to the end and its result drawn, and its results .zip and PDF
# report arrive as downloads from the page's links with the cookie and are refused without it
# (internal/smoke/websmoke/download.go); and a cohort's group-mean bundle under the helper's
# --open-root is listed by the page's "Open results folder…", opened from that list and drawn,
# and so is the cohort's folder, its subjects table read from the helper
# (internal/smoke/websmoke/folders.go).
# Usage: scripts/web-smoke.sh [SHOTS_DIR]   (screenshots and the page's console; default
# out/web-smoke). WEB_SMOKE_KEEP=1 keeps the temporary folder (helper log, results).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH LANG=C.UTF-8
shots=${1:-out/web-smoke}
scripts/setup-deps.sh web
scripts/build-web.sh bin/web

T=$(mktemp -d)
HELPER_PID=""
cleanup() {
  if [ -n "$HELPER_PID" ]; then kill "$HELPER_PID" 2>/dev/null || true; wait "$HELPER_PID" 2>/dev/null || true; fi
  if [ -n "${WEB_SMOKE_KEEP:-}" ]; then echo "web-smoke: kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

go build -o "$T/hubscope-helper" ./cmd/hubscope-helper
go build -o "$T/websmoke" ./internal/smoke/websmoke

# The demo phantom (2.4 MB at 6 mm, with its truth modules map as the mask and its confounds
# table, both uploaded beside it; the analysis
# takes about 20 s on 2 cores), a file that is
# not NIfTI, a .nii.gz that holds no image, and a .nii.gz one byte over the helper's upload
# limit, which is set just above the phantom's size so that the limit is the helper's, not the
# browser app's.
"$T/hubscope-helper" synth --voxel-mm 6 --nuisance 1 --out "$T/phantom.nii.gz" >/dev/null
echo "not a scan" >"$T/notes.txt"
echo "not a scan either" | gzip >"$T/corrupt.nii.gz"
limit=$(( $(stat -c %s "$T/phantom.nii.gz") + 1048576 ))
truncate -s $(( limit + 1 )) "$T/too-large.nii.gz"
# A 3-subject phantom cohort analysed with its group-mean network (a few seconds): the
# results folder the page opens from the helper's list.
"$T/hubscope-helper" synth --subjects 3 --voxel-mm 14 --length 60 --out "$T/cohort" >/dev/null
"$T/hubscope-helper" cohort "$T/cohort" --out "$T/open/deriv" --backend cpu --metrics basic --denoise none --r 0.3 >/dev/null

"$T/hubscope-helper" serve --socket "$T/run/helper.sock" --results "$T/results" --backend cpu \
  --open-root "$T/open" --web 127.0.0.1:0 --web-root bin/web --max-upload "$limit" >"$T/helper.out" 2>"$T/helper.log" &
HELPER_PID=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's/^web: open //p' "$T/helper.out")
  [ -n "$url" ] && break
  kill -0 "$HELPER_PID" 2>/dev/null || { echo "web-smoke: the helper exited:"; cat "$T/helper.log"; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "web-smoke: the helper printed no token URL"; cat "$T/helper.out" "$T/helper.log"; exit 1; }

"$T/websmoke" --url "$url" --helper-log "$T/helper.log" --out "$shots" \
  --not-nifti "$T/notes.txt" --too-large "$T/too-large.nii.gz" --corrupt "$T/corrupt.nii.gz" --scan "$T/phantom.nii.gz" \
  --mask "$T/phantom_truth_modules.nii.gz" --confounds "$T/phantom_desc-confounds_timeseries.tsv" \
  --open-folder deriv/group/task-rest_desc-groupmean_hubscope --open-cohort deriv \
  || { echo "--- helper log"; tail -30 "$T/helper.log"; exit 1; }
echo "web-smoke: OK (screenshots and the page's console in $shots)"
