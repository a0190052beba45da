package synth

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BIDSValidatorVersion is the pinned bids-validator release: scripts/setup-deps.sh's bids
// profile fetches npm's bids-validator 1.15.0 tarball (one bundle, no dependencies to install)
// into a cache folder, and make test runs it on Debian's nodejs through HUBSCOPE_BIDS_VALIDATOR.
const BIDSValidatorVersion = "1.15.0"

// TestCohortPassesBIDSValidator runs the BIDS validator over the cohort that "synth
// --subjects" writes (the BIDS input of "cohort"): the program named by
// HUBSCOPE_BIDS_VALIDATOR, else bids-validator on PATH. Without one it is skipped, and fails
// under HUBSCOPE_STRICT=1 (make test installs it); any error the validator reports fails it.
// The validator's 1.x line has no derivatives mode (it reports a derivative dataset's files
// as NOT_INCLUDED), so HubScope's BIDS-named outputs are checked by our own entity-rule test
// (helper/pipeline TestBIDSNames) instead.
func TestCohortPassesBIDSValidator(t *testing.T) {
	bin := os.Getenv("HUBSCOPE_BIDS_VALIDATOR")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("bids-validator"); err != nil {
			msg := "no bids-validator (scripts/setup-deps.sh bids installs bids-validator@" + BIDSValidatorVersion + "; set HUBSCOPE_BIDS_VALIDATOR to its bin/bids-validator)"
			if os.Getenv("HUBSCOPE_STRICT") == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	v, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	if got := strings.TrimSpace(string(v)); got != BIDSValidatorVersion {
		t.Fatalf("%s is bids-validator %s; the pinned release is %s (scripts/setup-deps.sh bids)", bin, got, BIDSValidatorVersion)
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
