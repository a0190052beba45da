package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/dfc"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// The DFC stage writes dfc/ as documented: summary.json decodes strictly into schema.DFCSummary
// and encodes back to the same bytes, the 4D degree map holds each window's degrees (those of
// the per-window networks), windows.tsv has one row per window, provenance has the settings.
func TestDFCBundle(t *testing.T) {
	scanPath, maskPath, _ := phantom(t, 12)
	cfg := Defaults()
	cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics = scanPath, maskPath, filepath.Join(t.TempDir(), "bundle"), "cpu", settings.MetricsBasic
	cfg.Mode, cfg.R = "r", 0.3
	cfg.DFCWindow, cfg.DFCStep, cfg.DFCNetworks, cfg.DFCRank = 60, 35, true, 4
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, T := res.Metrics.Scan.Nodes, res.Metrics.Scan.TimePoints
	k := (T-60)/35 + 1
	dir := res.Dir

	raw, err := os.ReadFile(filepath.Join(dir, "dfc", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var sum schema.DFCSummary
	if err := dec.Decode(&sum); err != nil {
		t.Fatalf("dfc/summary.json does not decode as schema.DFCSummary: %v", err)
	}
	again, _ := json.MarshalIndent(&sum, "", "  ")
	if !bytes.Equal(bytes.TrimSpace(raw), bytes.TrimSpace(again)) {
		t.Errorf("dfc/summary.json does not round-trip through schema.DFCSummary:\n%s\nvs\n%s", raw, again)
	}
	if sum.Window != 60 || sum.Step != 35 || sum.TR != 2 || len(sum.Windows) != k {
		t.Fatalf("summary: window %d, step %d, TR %g, %d windows; want 60, 35, 2, %d", sum.Window, sum.Step, sum.TR, len(sum.Windows), k)
	}

	_, deg4, err := nifti.ReadImage(filepath.Join(dir, "dfc", "degree.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := nifti.Open(filepath.Join(dir, "dfc", "degree.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if h.Header.Volumes() != k || h.Header.PixDim[4] != 70 {
		t.Fatalf("degree.nii.gz: %d volumes, time step %g s; want %d and 35·TR = 70 s", h.Header.Volumes(), h.Header.PixDim[4], k)
	}
	s, err := scan.Load(context.Background(), scanPath, scan.Options{MaskPath: maskPath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	vox := len(deg4) / k
	totalEdges := int64(0)
	for i, win := range sum.Windows {
		if win.Index != i || win.Start != 35*i {
			t.Errorf("window %d: index %d, start %d", i, win.Index, win.Start)
		}
		for _, key := range []string{"density", "mean_degree", "clustering_coefficient", "largest_component_share", "modularity", "lowrank_mae_svd"} {
			if _, ok := win.Measures[key]; !ok && win.Edges > 0 {
				t.Errorf("window %d lacks measure %q", i, key)
			}
		}
		nw, err := bundle.ReadNetwork(filepath.Join(dir, "dfc", fmt.Sprintf("network_%03d.npz", i)))
		if err != nil {
			t.Fatal(err)
		}
		if nw.N != n || nw.Edges() != win.Edges {
			t.Fatalf("network_%03d.npz: %d nodes, %d edges; summary says %d edges over %d nodes", i, nw.N, nw.Edges(), win.Edges, n)
		}
		totalEdges += win.Edges
		d := dfc.Degrees(nw)
		for v, p := range s.IJK {
			flat := int(p[0]) + s.Dims[0]*(int(p[1])+s.Dims[1]*int(p[2]))
			if got := deg4[i*vox+flat]; got != float32(d[v]) {
				t.Fatalf("degree.nii.gz window %d node %d: %g, network says %d", i, v, got, d[v])
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "dfc", fmt.Sprintf("lowrank_%03d.npy", i))); err != nil {
			t.Error(err)
		}
	}
	if totalEdges == 0 {
		t.Fatal("no window has an edge: the checks prove nothing")
	}
	for _, name := range []string{"degree_sd.nii.gz", "degree_cv.nii.gz", "lowrank.tsv"} {
		if _, err := os.Stat(filepath.Join(dir, "dfc", name)); err != nil {
			t.Error(err)
		}
	}
	tsv, err := os.ReadFile(filepath.Join(dir, "dfc", "windows.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(tsv)), "\n")
	if len(lines) != k+1 || !strings.HasPrefix(lines[0], "window\tstart\tedges\tthreshold\tdensity") {
		t.Errorf("windows.tsv: %d lines, header %q", len(lines), lines[0])
	}
	prov, err := os.ReadFile(filepath.Join(dir, "provenance.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"dfc_window": 60`, `"dfc_step": 35`, `"dfc_rank": 4`, "dynamic connectivity: " + fmt.Sprint(k) + " windows"} {
		if !bytes.Contains(prov, []byte(want)) {
			t.Errorf("provenance.json lacks %s", want)
		}
	}
}

// cancelAt cancels the run when the dynamic-connectivity stage reaches a given window.
type cancelAt struct {
	cancel context.CancelFunc
	inDFC  atomic.Bool
	done   atomic.Int64
	at     int64
}

func (c *cancelAt) Start(stage string, _ int64) { c.inDFC.Store(stage == "dynamic connectivity") }
func (c *cancelAt) Add(n int64) {
	if c.inDFC.Load() && c.done.Add(n) >= c.at {
		c.cancel()
	}
}
func (c *cancelAt) Note(string) {}

// Cancelling in the middle of the windows leaves no bundle (and no partial directory).
func TestDFCCancelLeavesNoBundle(t *testing.T) {
	scanPath, maskPath, _ := phantom(t, 12)
	cfg := Defaults()
	parent := t.TempDir()
	cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics = scanPath, maskPath, filepath.Join(parent, "bundle"), "cpu", settings.MetricsNone
	cfg.DFCWindow, cfg.DFCStep, cfg.DFCNetworks = 40, 5, true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep := &cancelAt{cancel: cancel, at: 2}
	if _, err := Run(ctx, cfg, rep); err == nil {
		t.Fatal("Run finished although cancelled during the windows")
	}
	if rep.done.Load() < 2 {
		t.Fatalf("cancelled before the windows (%d done): the test did not reach the DFC stage", rep.done.Load())
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Fatalf("cancelled run left %v in the output's parent", ents[0].Name())
	}
}

// Bad window settings fail at once, naming the setting; a window longer than the scan fails
// before the bundle directory appears.
func TestDFCSettings(t *testing.T) {
	base := Defaults()
	base.Scan, base.Out = "scan.nii.gz", "out"
	for _, c := range []struct {
		w, s, rank int
		measure    string
		want       string
	}{
		{2, 1, 0, "pearson", "--window"},
		{10, 0, 0, "pearson", "--step"},
		{0, 3, 0, "pearson", "--window"},
		{10, 1, 11, "pearson", "--dfc-rank"},
		{10, 1, 3, "kendall", "--dfc-rank"},
	} {
		cfg := base
		cfg.DFCWindow, cfg.DFCStep, cfg.DFCRank, cfg.Measure = c.w, c.s, c.rank, c.measure
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("window %d step %d rank %d %s: %v; want an error naming %s", c.w, c.s, c.rank, c.measure, err, c.want)
		}
	}
	ok := base
	ok.DFCWindow, ok.DFCStep = 30, 1
	if err := ok.Validate(); err != nil {
		t.Errorf("window 30 step 1: %v", err)
	}

	scanPath, maskPath, _ := phantom(t, 12)
	cfg := Defaults()
	cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend = scanPath, maskPath, filepath.Join(t.TempDir(), "bundle"), "cpu"
	cfg.DFCWindow, cfg.DFCStep = 201, 1 // the phantom has 200 volumes
	if _, err := Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), "--window") || !strings.Contains(err.Error(), "200") {
		t.Fatalf("window longer than the scan: %v", err)
	}
	if _, err := os.Stat(cfg.Out); !os.IsNotExist(err) {
		t.Fatalf("bundle directory exists after a refused window: %v", err)
	}
}

// A matrix input (no voxel grid) still gets summary.json and windows.tsv, and no maps.
func TestDFCMatrixInput(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	const n, T = 30, 40
	for i := 0; i < n; i++ {
		for k := 0; k < T; k++ {
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%d", (i*7919+k*104729+(i%3)*k*k)%97)
		}
		b.WriteByte('\n')
	}
	in := filepath.Join(dir, "rois.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	cfg.Scan, cfg.Out, cfg.Backend, cfg.Metrics = in, filepath.Join(dir, "bundle"), "cpu", settings.MetricsNone
	cfg.Mode, cfg.K = "knn", 3
	cfg.DFCWindow, cfg.DFCStep = 10, 10
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadDir(filepath.Join(res.Dir, "dfc"))
	var names []string
	for _, e := range got {
		names = append(names, e.Name())
	}
	if want := []string{"summary.json", "windows.tsv"}; !slices.Equal(names, want) && !reflect.DeepEqual(names, want) {
		t.Fatalf("dfc/ holds %v, want %v", names, want)
	}
}
