package cohort

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/ipc/settings"
)

// TestTableVerifiesMarkers: the table step and the group steps' map reader (LoadNodal, for
// compare and norm build) count a run only when every file its marker lists still has the
// recorded size and SHA-256. A truncated metrics.json or map copy, or an edited degree map,
// makes both refuse, naming the run and the file; the cohort step then runs that subject
// again and both read it whole.
func TestTableVerifiesMarkers(t *testing.T) {
	bids := phantomCohort(t, 2)
	cfg := pipeline.Defaults()
	cfg.Backend, cfg.Metrics = "cpu", settings.MetricsNone
	opt := Options{BIDS: bids, Out: filepath.Join(t.TempDir(), "deriv"), Config: cfg, Jobs: 2}
	ctx := context.Background()
	if st, err := Run(ctx, opt, nil); err != nil || Failed(st) != nil {
		t.Fatalf("cohort: %v %v", err, Failed(st))
	}
	if _, _, err := Collect(opt); err != nil {
		t.Fatalf("table of complete bundles: %v", err)
	}
	runs, err := Runs(opt)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID())
	}
	if _, err := LoadNodal(opt.Out, ids, []string{"degree"}); err != nil {
		t.Fatalf("nodal maps of complete bundles: %v", err)
	}
	for _, damage := range []struct{ file, want string }{
		{"sub-02/func/sub-02_task-rest_hubscope/metrics.json", "sub-02_task-rest_hubscope/metrics.json differs"},
		{"sub-01/func/sub-01_task-rest_desc-hubs_hubscope.nii.gz", "sub-01_task-rest_desc-hubs_hubscope.nii.gz differs"},
		// The map compare and norm build read: edited, not truncated.
		{"sub-02/func/sub-02_task-rest_hubscope/degree.nii.gz", "sub-02_task-rest_hubscope/degree.nii.gz differs"},
	} {
		p := filepath.Join(opt.Out, damage.file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(damage.file, "degree.nii.gz") {
			b[len(b)/2] ^= 0x40 // one bit of the compressed data flipped, the size kept
		} else {
			b = b[:len(b)-1] // one byte short
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Collect(opt); err == nil || !strings.Contains(err.Error(), damage.want) {
			t.Fatalf("table after damaging %s: %v; want %q", damage.file, err, damage.want)
		}
		// The group steps (compare, norm build) read the bundles' maps through LoadNodal.
		if _, err := LoadNodal(opt.Out, ids, []string{"degree"}); err == nil || !strings.Contains(err.Error(), damage.want) {
			t.Fatalf("nodal maps after damaging %s: %v; want %q", damage.file, err, damage.want)
		}
		st, err := Run(ctx, opt, nil)
		if err != nil || Failed(st) != nil || !strings.Contains(states(st), ":done") {
			t.Fatalf("rerun after damage: %v %v %s", err, Failed(st), states(st))
		}
		if _, _, err := Collect(opt); err != nil {
			t.Fatalf("table after the rerun: %v", err)
		}
		if _, err := LoadNodal(opt.Out, ids, []string{"degree"}); err != nil {
			t.Fatalf("nodal maps after the rerun: %v", err)
		}
	}
}
