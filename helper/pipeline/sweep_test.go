package pipeline

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// A sweep run writes its table, JSON, curves and hub stability map, and its loosest network
// is the bundle's network.
func TestSweepBundle(t *testing.T) {
	scanPath, maskPath, _ := phantom(t, 12)
	cfg := Defaults()
	cfg.Scan, cfg.Mask, cfg.Backend, cfg.Metrics = scanPath, maskPath, "cpu", settings.MetricsNone
	cfg.Out = filepath.Join(t.TempDir(), "b")
	cfg.Sweep = "density=0.02:0.06:0.02"
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sweep.tsv", "sweep.json", "sweep.png", "sweep.svg", "hub_stability.nii.gz"} {
		if _, err := os.Stat(filepath.Join(res.Dir, f)); err != nil {
			t.Error(err)
		}
	}
	if got := res.Metrics.Network.Density; got < 0.0599 || got > 0.0601 {
		t.Errorf("bundle network density %g, want the loosest 0.06", got)
	}
	b, _ := os.ReadFile(filepath.Join(res.Dir, "sweep.json"))
	var sj struct {
		Thresholds []struct{ Edges int64 } `json:"thresholds"`
		AUC        map[string]float64      `json:"auc"`
	}
	if err := json.Unmarshal(b, &sj); err != nil || len(sj.Thresholds) != 3 || sj.Thresholds[2].Edges != res.Metrics.Network.Edges {
		t.Errorf("sweep.json: %v %+v", err, sj)
	}
	_, vals, err := nifti.ReadImage(filepath.Join(res.Dir, "hub_stability.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vals {
		if v < 0 || v > 1 || (v != 0 && v != 1.0/3 && v != float32(2.0/3) && v != 1) {
			t.Fatalf("hub stability value %g is not a share of 3 thresholds", v)
		}
	}
	// Full metrics: the loosest threshold's network is the bundle's, so its Q, γ, λ and σ are
	// metrics.json's (the same Leiden, the same random networks).
	full := cfg
	// Sparse and few random networks; under the race detector a coarser phantom (it learns
	// nothing more from more nodes).
	full.Out, full.Metrics, full.Random, full.Sweep = filepath.Join(t.TempDir(), "full"), settings.MetricsFull, 2, "density=0.01,0.02"
	if raceEnabled || testing.Short() {
		full.Scan, full.Mask, _ = phantom(t, 16)
		full.Sweep, full.Denoise = "density=0.03,0.05", ""
	}
	fres, err := Run(context.Background(), full, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(filepath.Join(fres.Dir, "sweep.json"))
	var fs schema.Sweep
	if err := json.Unmarshal(b, &fs); err != nil || fs.SmallWorld == nil || fs.SmallWorld.RandomNetworks != 2 || len(fs.Points) != 2 {
		t.Fatalf("sweep.json: %v, small_world %+v", err, fs.SmallWorld)
	}
	last, m := fs.Points[len(fs.Points)-1], fres.Metrics
	sw := m.Global.SmallWorld
	if last.Modularity == nil || *last.Modularity != m.Modules[0].Q || last.Sigma == nil || sw == nil ||
		math.Abs(*last.Sigma-sw.Sigma) > 1e-12*sw.Sigma || math.Abs(*last.Gamma-sw.Gamma) > 1e-12*sw.Gamma {
		t.Errorf("loosest threshold: Q %v σ %v, metrics.json Q %g small world %+v", last.Modularity, last.Sigma, m.Modules[0].Q, sw)
	}
	for _, key := range []string{"modularity", "sigma"} {
		if _, ok := fs.AUC[key]; !ok || fs.Points[0].Sigma == nil {
			t.Errorf("no AUC of %s, or no σ at density 0.01", key)
		}
	}
	bad := cfg
	bad.Out, bad.Sweep, bad.Mode = filepath.Join(t.TempDir(), "c"), "r=0.5,0.6", "knn"
	if _, err := Run(context.Background(), bad, nil); err == nil {
		t.Error("a sweep with knn was accepted")
	}
}
