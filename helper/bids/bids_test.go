package bids

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{\"RepetitionTime\": 2.5}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindsFMRIPrepSiblings(t *testing.T) {
	dir := t.TempDir()
	bold := filepath.Join(dir, "sub-01_ses-1_task-rest_run-2_space-MNI152NLin2009cAsym_desc-preproc_bold.nii.gz")
	touch(t, dir, filepath.Base(bold), "sub-01_ses-1_task-rest_run-2_desc-confounds_timeseries.tsv",
		"sub-01_ses-1_task-rest_run-2_space-MNI152NLin2009cAsym_desc-brain_mask.nii.gz",
		"sub-01_ses-1_task-rest_run-2_space-MNI152NLin2009cAsym_desc-preproc_bold.json",
		"sub-01_ses-1_task-rest_run-1_desc-confounds_timeseries.tsv") // another run: not ours
	if !IsPreprocBold(bold) {
		t.Fatal("not recognised as preprocessed BOLD")
	}
	c, err := Confounds(bold)
	if err != nil || filepath.Base(c) != "sub-01_ses-1_task-rest_run-2_desc-confounds_timeseries.tsv" {
		t.Fatalf("confounds %q, %v", c, err)
	}
	if m := Mask(bold); filepath.Base(m) != "sub-01_ses-1_task-rest_run-2_space-MNI152NLin2009cAsym_desc-brain_mask.nii.gz" {
		t.Fatalf("mask %q", m)
	}
	if tr, _, err := RepetitionTime(bold); err != nil || tr != 2.5 {
		t.Fatalf("TR %g, %v", tr, err)
	}
	// Two candidates (timeseries and the older regressors) are refused by name.
	touch(t, dir, "sub-01_task-rest_run-2_desc-confounds_regressors.tsv")
	if _, err := Confounds(bold); err == nil || !strings.Contains(err.Error(), "--confounds") {
		t.Fatalf("two matches: %v", err)
	}
	// A plain name finds nothing and says nothing.
	if c, err := Confounds(filepath.Join(dir, "scan.nii.gz")); c != "" || err != nil {
		t.Fatalf("plain name: %q, %v", c, err)
	}
}

func TestFindPreprocByEntities(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{
		"sub-01/func/sub-01_task-rest_run-1_space-MNI152NLin2009cAsym_desc-preproc_bold.nii.gz",
		"sub-01/func/sub-01_task-rest_run-2_space-MNI152NLin2009cAsym_desc-preproc_bold.nii.gz",
		"sub-01/func/sub-01_task-rest_run-2_space-T1w_desc-preproc_bold.nii.gz",
		"sub-02/ses-a/func/sub-02_ses-a_task-rest_space-T1w_desc-preproc_bold.nii.gz",
		"sub-01/func/sub-01_task-rest_run-1_space-MNI152NLin2009cAsym_desc-brain_mask.nii.gz",
	} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		touch(t, filepath.Join(root, filepath.Dir(p)), filepath.Base(p))
	}
	got, err := FindPreproc(root, Entities{Participant: "01", Run: "01", Space: "MNI152NLin2009cAsym"})
	if err != nil || !strings.HasSuffix(got, "sub-01_task-rest_run-1_space-MNI152NLin2009cAsym_desc-preproc_bold.nii.gz") {
		t.Fatalf("%q, %v", got, err)
	}
	if got, err := FindPreproc(root, Entities{Participant: "sub-02"}); err != nil || !strings.Contains(got, "ses-a") {
		t.Fatalf("%q, %v", got, err)
	}
	if _, err := FindPreproc(root, Entities{Participant: "01", Run: "2"}); err == nil || !strings.Contains(err.Error(), "2 preprocessed runs match sub-01 run-2") {
		t.Fatalf("two matches: %v", err)
	}
	if _, err := FindPreproc(root, Entities{Participant: "03"}); err == nil || !strings.Contains(err.Error(), "no *_desc-preproc_bold.nii.gz matches sub-03") {
		t.Fatalf("none: %v", err)
	}
}
