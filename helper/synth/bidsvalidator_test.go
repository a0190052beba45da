package synth

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BIDSValidatorVersion is the bids-validator release the optional check below was run with
// (npm install bids-validator@1.15.0; it runs on Debian's nodejs without network).
const BIDSValidatorVersion = "1.15.0"

// TestCohortPassesBIDSValidator runs the BIDS validator over the cohort that "synth
// --subjects" writes (the BIDS input of "cohort"), when one is installed: the program named by
// HUBSCOPE_BIDS_VALIDATOR, else bids-validator on PATH. It is optional (skipped without the
// validator, CI does not install npm packages); any error the validator reports fails it.
func TestCohortPassesBIDSValidator(t *testing.T) {
	bin := os.Getenv("HUBSCOPE_BIDS_VALIDATOR")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("bids-validator"); err != nil {
			t.Skip("no bids-validator (npm install bids-validator@" + BIDSValidatorVersion + "; set HUBSCOPE_BIDS_VALIDATOR to its bin/bids-validator)")
		}
	}
	if v, err := exec.Command(bin, "--version").Output(); err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	} else {
		t.Logf("bids-validator %s", v)
	}
	m, a, err := DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = ResampleMask(m, a, 14)
	p := DefaultParams()
	p.Length = 40
	dir := filepath.Join(t.TempDir(), "bids")
	if _, err := WriteCohort(context.Background(), m, a, p, CohortOptions{Subjects: 2, Lesion: true}, dir, nil); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, dir, "--json").Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("%s %s: %v", bin, dir, err)
	}
	var rep struct {
		Issues struct {
			Errors, Warnings []struct {
				Key, Reason string
			}
		}
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("bids-validator's JSON: %v\n%s", err, out)
	}
	for _, e := range rep.Issues.Errors {
		t.Errorf("bids-validator error %s: %s", e.Key, e.Reason)
	}
	for _, w := range rep.Issues.Warnings {
		t.Logf("bids-validator warning %s: %s", w.Key, w.Reason)
	}
}
