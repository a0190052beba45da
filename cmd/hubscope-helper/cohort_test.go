package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// cli runs the helper's command line in process and returns its exit status and outputs.
func cli(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	rc := realMain(context.Background(), args, &out, &errb)
	return rc, out.String(), errb.String()
}

// The cohort commands end to end on a phantom cohort, and their bad input, one line each.
func TestCohortCommands(t *testing.T) {
	dir := t.TempDir()
	bids, deriv, norm := filepath.Join(dir, "bids"), filepath.Join(dir, "deriv"), filepath.Join(dir, "norm")
	mask := filepath.Join(bids, "truth", "modules.nii.gz")
	ok := func(args ...string) string {
		t.Helper()
		rc, out, errs := cli(args...)
		if rc != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, rc, out, errs)
		}
		return out
	}
	ok("synth", "--subjects", "4", "--lesion", "--patients", "3", "--voxel-mm", "14", "--length", "60", "--out", bids)
	out := ok("group", "--bids", bids, "--metrics", "none", "--sweep", "r=0.3,0.4", "--out", filepath.Join(dir, "group"))
	if !strings.Contains(out, "7 subjects, mean of Fisher z, mask rule intersect") || !strings.Contains(out, "sweep       2 r thresholds") {
		t.Errorf("group summary:\n%s", out)
	}
	out = ok("cohort", bids, "--out", deriv, "--metrics", "none", "--backend", "cpu", "--mask", mask)
	if !strings.Contains(out, "7 runs: 7 analysed, 0 skipped") || !strings.Contains(out, "measures.tsv (7 runs") ||
		!strings.Contains(out, "group mean  task rest: 7 runs, mean of fisher-z, in "+filepath.Join(deriv, "group", "task-rest_desc-groupmean_hubscope")) ||
		!strings.Contains(out, "mask rule mask") {
		t.Errorf("cohort summary:\n%s", out)
	}
	// The group step alone (as Slurm's group job runs it) finds the group mean complete.
	if out = ok("cohort", bids, "--out", deriv, "--metrics", "none", "--backend", "cpu", "--mask", mask, "--table-only"); !strings.Contains(out, "group mean  task rest: 7 runs, complete with the same runs and settings, skipped") {
		t.Errorf("group step:\n%s", out)
	}
	if out = ok("cohort", bids, "--out", deriv, "--metrics", "none", "--backend", "cpu", "--mask", mask, "--subject", "02"); !strings.Contains(out, "1 runs: 0 analysed, 1 skipped") {
		t.Errorf("per-subject step:\n%s", out)
	}
	if out = ok("compare", deriv, "--group-column", "diagnosis", "--permutations", "50"); !strings.Contains(out, "degree:") {
		t.Errorf("compare summary:\n%s", out)
	}
	ok("norm", "build", deriv, "--group", "control", "--out", norm)
	out = ok("run", filepath.Join(bids, "sub-patient01", "func", "sub-patient01_task-rest_bold.nii.gz"), "--mask", mask, "--backend", "cpu",
		"--metrics", "none", "--norm", norm, "--out", filepath.Join(dir, "patient"))
	if !strings.Contains(out, "cohort hubs lost (z < −2)") {
		t.Errorf("run --norm summary:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", deriv, "--group-column", "handedness"}, `has no column "handedness"`},
		{[]string{"norm", "build", deriv, "--group", "nobody", "--out", filepath.Join(dir, "n2")}, "0 run(s) selected; a normative cohort needs at least 3"},
		{[]string{"run", filepath.Join(bids, "sub-01", "func", "sub-01_task-rest_bold.nii.gz"), "--mask", mask, "--density", "0.05", "--norm", norm, "--out", filepath.Join(dir, "x")}, "density: 0.01 → 0.05"},
		{[]string{"group", filepath.Join(bids, "sub-01", "func", "sub-01_task-rest_bold.nii.gz"), "--out", filepath.Join(dir, "g1")}, "at least 2 scans"},
		{[]string{"cohort", filepath.Join(dir, "nothing"), "--out", filepath.Join(dir, "d2")}, "no such file or directory"},
		{[]string{"cohort", bids, "--out", filepath.Join(dir, "d3"), "--group-mean", "median"}, `--group-mean "median": want fisher-z, r or none`},
		{[]string{"run", "x.nii.gz", "--sweep", "r=0.5", "--out", filepath.Join(dir, "s")}, "at least two thresholds"},
		{[]string{"synth", "--lesion", "--out", filepath.Join(dir, "l.nii.gz")}, "--lesion needs --subjects"},
	} {
		rc, out, errs := cli(c.args...)
		if rc == 0 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 && !strings.Contains(errs, "usage") {
			t.Errorf("%v: exit %d, stderr %q (want one line with %q)%s", c.args, rc, errs, c.want, out)
		}
	}
}
