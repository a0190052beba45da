package derivatives

import (
	"strings"
	"testing"
)

// FuzzParseName reads arbitrary file names as BIDS BOLD names: no panic; a name it accepts
// has only letters and digits in its labels, so the derivative names and folders built from
// it hold no path or shell character, and the run's ID reads back as the same run.
func FuzzParseName(f *testing.F) {
	for _, s := range []string{
		"sub-01_task-rest_bold.nii.gz", "sub-01_ses-a_task-rest_acq-mb_run-2_bold.nii",
		"sub-01_task-rest_dir-AP_echo-1_bold.nii.gz", "sub-../_task-x_bold.nii", "sub-01_task-a;rm -rf_bold.nii",
		"task-rest_bold.nii.gz", "sub-01__bold.nii", "sub-Ω_bold.nii.gz", "readme.txt",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, base string) {
		r, ok, err := parseName(base)
		if !ok || err != nil {
			if err != nil && !strings.Contains(err.Error(), base) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, l := range []string{r.Subject, r.Session, r.Task, r.Acq, r.RunIndex} {
			if l != "" && ValidLabel("x", l) != nil {
				t.Fatalf("accepted label %q", l)
			}
		}
		name, err := r.Name("hubscope", "degree", ".nii.gz")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{name, r.Dir(), r.ID()} {
			if strings.ContainsAny(s, "\\ $`'\";&|<>*?()\n\x00") || strings.Contains(s, "..") {
				t.Fatalf("name %q from %q holds a path or shell character", s, base)
			}
		}
		back, ok, err := parseName(r.ID() + "_bold.nii.gz")
		if !ok || err != nil || back != (Run{Subject: r.Subject, Session: r.Session, Task: r.Task, Acq: r.Acq, RunIndex: r.RunIndex}) {
			t.Fatalf("ID %q reads back as %+v (%v); want %+v", r.ID(), back, err, r)
		}
	})
}
