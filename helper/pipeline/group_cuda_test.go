//go:build cuda

package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/backend/cuda"
	"github.com/hubscope/hubscope/helper/group"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/ipc/settings"
)

// TestGroupBackendsGiveSameBundles: the group-mean (Fisher z) bundle of a phantom cohort built
// with --backend cuda runs the mean on the device engine (metrics.json names it) and equals
// the CPU engine's bundle up to the conformance tolerance, as TestBackendsGiveSameBundles
// asks of one scan.
func TestGroupBackendsGiveSameBundles(t *testing.T) {
	if _, err := cuda.Available(); err != nil {
		if os.Getenv("HUBSCOPE_REQUIRE_GPU") == "1" {
			t.Fatalf("no usable GPU: %v", err)
		}
		t.Skipf("no usable GPU: %v", err)
	}
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, 8)
	p := synth.DefaultParams()
	p.Length = 80
	dir := filepath.Join(t.TempDir(), "bids")
	ct, err := synth.WriteCohort(context.Background(), m, a, p, synth.CohortOptions{Subjects: 4}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var subs []group.Subject
	for _, s := range ct.Subjects {
		subs = append(subs, group.Subject{Label: "sub-" + s, Path: synth.CohortScan(dir, s)})
	}
	var dirs [2]string
	for k, be := range []string{"cpu", "cuda"} {
		cfg := Defaults()
		cfg.Backend, cfg.Metrics, cfg.Mode, cfg.Density = be, settings.MetricsBasic, settings.ModeDensity, 0.05
		cfg.Out = filepath.Join(t.TempDir(), be)
		cfg.Group = &GroupConfig{Subjects: subs, Mean: group.MeanFisherZ, MaskRule: group.MaskIntersect}
		res, err := Run(context.Background(), cfg, nil)
		if err != nil {
			t.Fatalf("%s backend: %v", be, err)
		}
		if res.Metrics.Network.Backend != be {
			t.Fatalf("asked for %s, the group mean ran on %s", be, res.Metrics.Network.Backend)
		}
		dirs[k] = res.Dir
	}
	if !compareNetworks(t, dirs[0], dirs[1]) {
		return // a boundary pair differed within the tolerance: the metrics may too
	}
	for _, d := range compareTSV(readFile(t, dirs[0], "hubs.tsv"), readFile(t, dirs[1], "hubs.tsv")) {
		t.Error("hubs.tsv: " + d)
	}
	for _, d := range compareJSON("", readMetrics(t, dirs[0]), readMetrics(t, dirs[1])) {
		t.Error(d)
	}
}
