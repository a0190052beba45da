#!/usr/bin/env bash
# Smoke test of the built hubscope-helper binary as a user meets it: exit codes, one clear
# error line naming the file for bad input, nothing left behind, a small phantom analysed end
# to end. Usage: scripts/cli-smoke.sh bin/hubscope-helper
set -uo pipefail
bin=${1:?usage: cli-smoke.sh HELPER_BINARY}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0

check() { # name, expected exit code, expected stderr substring, command...
  local name=$1 code=$2 want=$3; shift 3
  "$@" >"$work/out" 2>"$work/err"; local got=$?
  if [ "$got" -ne "$code" ] || ! grep -qF -- "$want" "$work/err" "$work/out"; then
    echo "FAIL $name: exit $got (want $code), output lacks '$want':"; sed 's/^/    /' "$work/err" | tail -5
    fail=$((fail+1))
  else
    pass=$((pass+1))
  fi
}

check "version" 0 "hubscope-helper" "$bin" version
check "no command" 2 "usage" "$bin"
check "unknown command" 2 "unknown command" "$bin" frobnicate
check "run without scan" 2 "give exactly one scan" "$bin" run --out "$work/x"
check "run without --out" 2 "--out DIR is required" "$bin" run "$work/scan.nii.gz"
check "missing scan" 1 "missing.nii.gz" "$bin" run "$work/missing.nii.gz" --out "$work/b1"
printf 'n+1\0 this is not a nifti header' > "$work/junk.nii"
check "junk file" 1 "junk.nii" "$bin" run "$work/junk.nii" --out "$work/b2"
printf '\x1f\x8b\x08\x00garbage-that-is-not-deflate' > "$work/corrupt.nii.gz"
check "corrupt gzip" 1 "corrupt.nii.gz" "$bin" run "$work/corrupt.nii.gz" --out "$work/b3"
check "two threshold modes" 2 "several thresholds given" "$bin" run "$work/s.nii.gz" --density 0.01 --r 0.3 --out "$work/b4"
check "bad density" 2 "want a fraction in (0, 1]" "$bin" run "$work/missing.nii.gz" --density 2 --out "$work/b5"
check "serve on a foreign address" 1 "not a loopback address" "$bin" serve --web 8.8.8.8:80 --socket "$work/h.sock" --results "$work/res"
check "serve idle exit" 0 "no client and no job" timeout 60 "$bin" serve --socket "$work/h.sock" --results "$work/res" --idle-exit 1s
[ -S "$work/h.sock" ] && { echo "FAIL: serve left its socket behind"; fail=$((fail+1)); }
for d in b1 b2 b3 b4 b5; do
  if ls -a "$work" | grep -q "$d"; then echo "FAIL: a failed run left $d behind"; fail=$((fail+1)); fi
done

# A small phantom end to end: synth on the 8 mm demo grid, then the default analysis.
check "synth" 0 "ground truth" "$bin" synth --voxel-mm 8 --length 120 --out "$work/ph.nii.gz"
check "run phantom" 0 "results" "$bin" run "$work/ph.nii.gz" --mask "$work/ph_truth_modules.nii.gz" --metrics basic --out "$work/bundle"
for f in network.npz nodes.tsv degree.nii.gz hubs.tsv metrics.json provenance.json; do
  [ -s "$work/bundle/$f" ] || { echo "FAIL: bundle lacks $f"; fail=$((fail+1)); }
done
check "existing bundle refused" 1 "exists" "$bin" run "$work/ph.nii.gz" --metrics none --out "$work/bundle"

echo "cli-smoke: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
