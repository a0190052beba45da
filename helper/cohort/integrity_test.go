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

// TestTableVerifiesMarkers: the table step counts a run only when every file its marker lists
// still has the recorded size and SHA-256. A truncated metrics.json (or an edited map copy)
// makes Collect refuse, naming the run and the file; the cohort step then runs that subject
// again and the table is whole.
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
	for _, damage := range []struct{ file, want string }{
		{"sub-02/func/sub-02_task-rest_hubscope/metrics.json", "sub-02_task-rest_hubscope/metrics.json differs"},
		{"sub-01/func/sub-01_task-rest_desc-hubs_hubscope.nii.gz", "sub-01_task-rest_desc-hubs_hubscope.nii.gz differs"},
	} {
		p := filepath.Join(opt.Out, damage.file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b[:len(b)-1], 0o644); err != nil { // one byte short
			t.Fatal(err)
		}
		if _, _, err := Collect(opt); err == nil || !strings.Contains(err.Error(), damage.want) {
			t.Fatalf("table after truncating %s: %v; want %q", damage.file, err, damage.want)
		}
		st, err := Run(ctx, opt, nil)
		if err != nil || Failed(st) != nil || !strings.Contains(states(st), ":done") {
			t.Fatalf("rerun after damage: %v %v %s", err, Failed(st), states(st))
		}
		if _, _, err := Collect(opt); err != nil {
			t.Fatalf("table after the rerun: %v", err)
		}
	}
}
