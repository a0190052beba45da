package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunPicksFMRIPrepRun: `run DERIV --participant … --task …` finds the preprocessed run in
// a derivatives folder, and the default cleaning finds its confounds table and says so.
func TestRunPicksFMRIPrepRun(t *testing.T) {
	root := t.TempDir()
	fn := filepath.Join(root, "sub-ph", "func")
	if err := os.MkdirAll(fn, 0o755); err != nil {
		t.Fatal(err)
	}
	bold := filepath.Join(fn, "sub-ph_task-rest_desc-preproc_bold.nii.gz")
	if code, out, errOut := runHelper(t, "synth", "--voxel-mm", "10", "--hubs", "5", "--nuisance", "2", "--out", bold); code != 0 {
		t.Fatalf("synth: exit %d\n%s\n%s", code, out, errOut)
	}
	out := filepath.Join(t.TempDir(), "b")
	code, stdout, errOut := runHelper(t, "run", root, "--participant", "ph", "--task", "rest", "--metrics", "none", "--backend", "cpu", "--out", out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, errOut)
	}
	if !strings.Contains(stdout, `cleaning    auto: fMRIPrep confounds, nilearn's "simple" strategy`) || !strings.Contains(stdout, "sub-ph_task-rest_desc-preproc_bold.nii.gz") {
		t.Fatalf("summary does not say the run and its cleaning:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "qc", "carpet.png")); err != nil {
		t.Error(err)
	}
	code, _, errOut = runHelper(t, "run", root, "--participant", "zz", "--out", filepath.Join(t.TempDir(), "c"))
	if code == 0 || !strings.Contains(errOut, "no *_desc-preproc_bold.nii.gz matches sub-zz") {
		t.Fatalf("unknown participant: exit %d, %s", code, errOut)
	}
}

// TestTinyScanDefaultCleaning: the default cleaning (auto: tCompCor on a scan without a
// confounds table) works on a tiny synthetic scan whose loudest series tie (goodScan: 120
// voxels, 7 frequencies), where nothing lies above the 98th percentile of variance.
func TestTinyScanDefaultCleaning(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tiny.nii")
	if err := os.WriteFile(p, goodScan(t), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runHelper(t, "run", p, "--out", filepath.Join(dir, "out"), "--backend", "cpu", "--metrics", "none", "--r", "0.3")
	if code != 0 || !strings.Contains(stdout, "tCompCor") {
		t.Fatalf("exit code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	// Its one component and one confound direction are counted in the singular.
	if !strings.Contains(stdout, "detrend and 1 tCompCor component from the scan; no band-pass (12 volumes too few for the filter)") ||
		!strings.Contains(stdout, "12 of 12 volumes kept, 1 confound direction,") {
		t.Errorf("cleaning line:\n%s", stdout)
	}
}
