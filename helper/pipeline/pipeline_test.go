package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/graph/community"
	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/ipc/settings"
)

// phantom writes the demo phantom resampled to voxelMM and returns the scan path, its truth
// module map (used as the user mask, so nodes are exactly the phantom's voxels, in the same
// order) and the planted truth.
func phantom(t *testing.T, voxelMM float64) (scanPath, maskPath string, truth *synth.Truth) {
	t.Helper()
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, voxelMM)
	scanPath = filepath.Join(t.TempDir(), "phantom.nii.gz")
	truth, err = synth.Write(context.Background(), m, a, synth.DefaultParams(), scanPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	maskPath, _ = synth.TruthPaths(scanPath)
	return scanPath, maskPath, truth
}

func readMetrics(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPhantomRecovery runs the clinician's default analysis (Pearson, exact density 1 %) on a
// phantom and checks that the planted hubs are found by degree (recall ≥ 0.8) and the planted
// modules by Leiden (NMI ≥ 0.9), and that the bundle is complete.
func TestPhantomRecovery(t *testing.T) {
	scanPath, maskPath, truth := phantom(t, 6)
	cfg := rawDefaults()
	cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics = scanPath, maskPath, filepath.Join(t.TempDir(), "bundle"), "cpu", settings.MetricsBasic
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	n := m.Scan.Nodes
	if n != len(truth.Modules) {
		t.Fatalf("%d nodes, phantom has %d voxels", n, len(truth.Modules))
	}
	pairs := int64(n) * int64(n-1) / 2
	if want := int64(0.01*float64(pairs) + 0.5); m.Network.Edges != want {
		t.Fatalf("density 1 %%: %d edges, want exactly %d", m.Network.Edges, want)
	}
	isHub := map[int]bool{}
	for _, h := range m.hubs {
		isHub[h] = true
	}
	found := 0
	for _, h := range truth.Hubs {
		if isHub[h] {
			found++
		}
	}
	if recall := float64(found) / float64(len(truth.Hubs)); recall < 0.8 {
		t.Errorf("hub recall %.2f (%d of %d planted hubs among %d hubs), want ≥ 0.8", recall, found, len(truth.Hubs), len(m.hubs))
	}

	// Modules: read back the map the bundle wrote and compare with the planted labels.
	h, vals, err := nifti.ReadImage(filepath.Join(res.Dir, "modules.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	tm, tvals, err := nifti.ReadImage(maskPath)
	if err != nil {
		t.Fatal(err)
	}
	if h.Nx() != tm.Nx() || len(vals) != len(tvals) {
		t.Fatalf("module map grid %v differs from the scan's %v", h.Dim, tm.Dim)
	}
	var found0, planted []int
	for i, tv := range tvals {
		if tv != 0 {
			found0 = append(found0, int(vals[i]))
			planted = append(planted, int(tv))
		}
	}
	nmi, err := community.NormalizedMutualInformation(found0, planted)
	if err != nil {
		t.Fatal(err)
	}
	if nmi < 0.9 {
		t.Errorf("modules vs planted: NMI %.3f, want ≥ 0.9 (%d modules found)", nmi, m.Modules[0].Count)
	}
	for _, f := range []string{"network.npz", "nodes.tsv", "edges.tsv", "degree.nii.gz", "strength.nii.gz", "hubs.nii.gz",
		"hub_z.nii.gz", "hubs.tsv", "modules.nii.gz", "clustering.nii.gz", "participation.nii.gz", "metrics.json", "provenance.json"} {
		if _, err := os.Stat(filepath.Join(res.Dir, f)); err != nil {
			t.Errorf("bundle lacks %s", f)
		}
	}
	checkBundleWithPython(t, res.Dir, scanPath)
}

// checkBundleWithPython opens the bundle with scipy and nibabel, independently of our readers:
// the network is a strict upper triangle whose degrees equal degree.nii.gz at each node's
// voxel, nodes.tsv's mm coordinates equal nibabel's affine applied to its ijk, and hubs.nii.gz
// marks exactly the nodes with degree > mean + 1 SD.
func checkBundleWithPython(t *testing.T, dir, scanPath string) {
	pyref.Require(t, "numpy", "scipy", "nibabel")
	out := pyref.Run(t, `
import sys, json, numpy as np, scipy.sparse as sp, nibabel as nib
d, scan = sys.argv[1], sys.argv[2]
A = sp.load_npz(d + "/network.npz").tocsr()
assert A.shape[0] == A.shape[1]
assert sp.tril(A).nnz == 0, "not strictly upper triangular"
deg = np.asarray((A + A.T).astype(bool).sum(1)).ravel()
nodes = np.genfromtxt(d + "/nodes.tsv", delimiter="\t", names=True)
ijk = np.stack([nodes["i"], nodes["j"], nodes["k"]], 1).astype(int)
img = nib.load(d + "/degree.nii.gz")
aff = nib.load(scan).affine
assert np.allclose(img.affine, aff, atol=1e-4), "degree map affine differs from the scan's"
dm = np.asarray(img.dataobj)
assert (dm[ijk[:, 0], ijk[:, 1], ijk[:, 2]] == deg).all(), "degree map != network degrees"
mm = nib.affines.apply_affine(aff, ijk)
assert np.allclose(mm, np.stack([nodes["x_mm"], nodes["y_mm"], nodes["z_mm"]], 1), atol=1e-3)
hubs = np.asarray(nib.load(d + "/hubs.nii.gz").dataobj)[ijk[:, 0], ijk[:, 1], ijk[:, 2]]
assert ((hubs == 1) == (deg > deg.mean() + deg.std())).all(), "hub map != degree > mean + 1 SD"
m = json.load(open(d + "/metrics.json"))
assert m["network"]["edges"] == A.nnz
print("ok", A.shape[0], A.nnz)
`, dir, scanPath)
	if !strings.HasPrefix(string(out), "ok") {
		t.Fatalf("python check: %s", out)
	}
}

// TestFullMetricsSmallWorld runs full metrics with random networks on a small phantom.
func TestFullMetricsSmallWorld(t *testing.T) {
	scanPath, maskPath, _ := phantom(t, 10)
	cfg := rawDefaults()
	cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Random = scanPath, maskPath, filepath.Join(t.TempDir(), "b"), "cpu", 3
	cfg.Density = 0.05
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := res.Metrics.Global
	if g == nil || g.SmallWorld == nil || g.ConnectedPairs == 0 {
		t.Fatalf("full metrics lack path or small-world measures: %+v", g)
	}
	// A modular phantom network clusters far more than its degree-preserving randomisations.
	if g.SmallWorld.Gamma <= 1.5 || g.SmallWorld.Sigma <= 1 {
		t.Errorf("γ = %.2f, σ = %.2f: a modular phantom should be small-world (γ > 1.5, σ > 1)", g.SmallWorld.Gamma, g.SmallWorld.Sigma)
	}
	if len(res.Metrics.Modules) != 2 || res.Metrics.Modules[0].QZScore == nil {
		t.Fatalf("want Leiden (with Q's z-score) and leading-eigenvector modules: %+v", res.Metrics.Modules)
	}
	if z := *res.Metrics.Modules[0].QZScore; z < 3 {
		t.Errorf("Q z-score %.1f against random networks: the planted modules should stand out (z ≥ 3)", z)
	}
	for _, f := range []string{"efficiency.nii.gz", "eigenvector.nii.gz", "degree_distribution.png"} {
		if _, err := os.Stat(filepath.Join(res.Dir, f)); err != nil {
			t.Errorf("full bundle lacks %s", f)
		}
	}
	v := readMetrics(t, res.Dir)
	sw, ok := v["global"].(map[string]any)["small_world"].(map[string]any)
	if !ok {
		t.Fatalf("metrics.json lacks global.small_world")
	}
	// The random networks are rewired with the setting's swaps per edge (default 5), and
	// metrics.json says how many.
	if got := sw["swaps_per_edge"]; got != float64(settings.DefaultSwapsPerEdge) || g.SmallWorld.SwapsPerEdge != 5 {
		t.Errorf("metrics.json swaps_per_edge = %v, result %g: want the default 5", got, g.SmallWorld.SwapsPerEdge)
	}
	checkMetricsSchema(t, res.Dir)

	// --swaps-per-edge 10 restores the rewiring of 0.1.0: more swaps, other random networks.
	cfg.Out, cfg.SwapsPerEdge = filepath.Join(t.TempDir(), "b10"), 10
	res10, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	sw10 := res10.Metrics.Global.SmallWorld
	if sw10.SwapsPerEdge != 10 || readMetrics(t, res10.Dir)["global"].(map[string]any)["small_world"].(map[string]any)["swaps_per_edge"] != 10.0 {
		t.Errorf("--swaps-per-edge 10: result and metrics.json say %g swaps per edge", sw10.SwapsPerEdge)
	}
	if slices.Equal(sw10.RandomClustering, g.SmallWorld.RandomClustering) {
		t.Errorf("10 and 5 swaps per edge gave the same random networks' C: the setting does not reach the rewiring")
	}
}

// cancelAfter cancels the run once the named stage starts.
type cancelAfter struct {
	progress.Reporter
	stage  string
	cancel func()
}

func (c cancelAfter) Start(stage string, total int64) {
	if strings.HasPrefix(stage, c.stage) {
		c.cancel()
	}
}

func TestCancelLeavesNothing(t *testing.T) {
	scanPath, maskPath, _ := phantom(t, 8)
	for _, stage := range []string{"load", "edges", "nodal", "write"} {
		t.Run(stage, func(t *testing.T) {
			parent := t.TempDir()
			cfg := rawDefaults()
			cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics = scanPath, maskPath, filepath.Join(parent, "b"), "cpu", settings.MetricsBasic
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			start := time.Now()
			_, err := Run(ctx, cfg, cancelAfter{progress.Discard, stage, cancel})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled at %q: err = %v, want context.Canceled", stage, err)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Logf("cancellation took %v", d)
			}
			entries, _ := os.ReadDir(parent)
			if len(entries) != 0 {
				t.Fatalf("cancelled run left %v behind", entries)
			}
		})
	}
}

func TestBadInputLeavesNothing(t *testing.T) {
	scanPath, maskPath, _ := phantom(t, 10)
	dir := t.TempDir()
	// A 3D image where a 4D series is needed.
	h, vals, err := nifti.ReadImage(maskPath)
	if err != nil {
		t.Fatal(err)
	}
	threeD := filepath.Join(dir, "anat.nii.gz")
	if err := nifti.WriteImage(threeD, h, vals); err != nil {
		t.Fatal(err)
	}
	// A mask on another grid.
	m, a, _ := synth.DemoMask()
	m, a = synth.ResampleMask(m, a, 12)
	other := filepath.Join(dir, "other_mask.nii.gz")
	hm := nifti.NewHeader([]int{m.Dims[0], m.Dims[1], m.Dims[2]}, nifti.Uint8, a, 0)
	data := make([]float32, len(m.In))
	for i, in := range m.In {
		if in {
			data[i] = 1
		}
	}
	if err := nifti.WriteImage(other, hm, data); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, scan, mask, want string
	}{
		{"missing scan", filepath.Join(dir, "nope.nii.gz"), "", "nope.nii.gz"},
		{"3D scan", threeD, "", "anat.nii.gz"},
		{"mask grid mismatch", scanPath, other, "other_mask.nii.gz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := rawDefaults()
			out := filepath.Join(t.TempDir(), "b")
			cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics = c.scan, c.mask, out, "cpu", settings.MetricsNone
			_, err := Run(context.Background(), cfg, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want an error naming %s", err, c.want)
			}
			entries, _ := os.ReadDir(filepath.Dir(out))
			if len(entries) != 0 {
				t.Fatalf("failed run left %v behind", entries)
			}
		})
	}
}

func TestExistingBundleIsKept(t *testing.T) {
	scanPath, maskPath, _ := phantom(t, 10)
	out := filepath.Join(t.TempDir(), "b")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(out, "notes.txt")
	os.WriteFile(keep, []byte("patient notes"), 0o644)
	cfg := rawDefaults()
	cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics = scanPath, maskPath, out, "cpu", settings.MetricsNone
	if _, err := Run(context.Background(), cfg, nil); err == nil {
		t.Fatal("run into an existing directory without --overwrite succeeded")
	}
	cfg.Overwrite = true
	if _, err := Run(context.Background(), cfg, nil); err == nil {
		t.Fatal("--overwrite replaced a directory that is not a HubScope bundle")
	}
	if b, _ := os.ReadFile(keep); string(b) != "patient notes" {
		t.Fatal("existing file was touched")
	}
}

func TestConfigValidation(t *testing.T) {
	base := rawDefaults()
	base.Scan, base.Out = "s.nii.gz", "out"
	for _, c := range []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.Measure = "cosine" }, "unknown measure"},
		{func(c *Config) { c.Density = 1.5 }, "density"},
		{func(c *Config) { c.Mode, c.R = "r", 1 }, "threshold r"},
		{func(c *Config) { c.Mode, c.Alpha = "alpha", 0 }, "alpha"},
		{func(c *Config) { c.Mode, c.Alpha, c.Correction = "alpha", 0.05, "holm" }, "correction"},
		{func(c *Config) { c.Mode, c.K = "knn", 0 }, "knn"},
		{func(c *Config) { c.Backend = "tpu" }, "backend"},
		{func(c *Config) { c.Metrics = "all" }, "metrics"},
		{func(c *Config) { c.Out = "" }, "--out"},
	} {
		cfg := base
		c.mut(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error about %q, got %v", c.want, err)
		}
	}
	if err := base.Validate(); err != nil {
		t.Errorf("defaults rejected: %v", err)
	}
}

// TestHubRegionsFromAtlas names the phantom's hubs with MRIcron's AAL atlas (1 mm grid, the
// phantom is on the MNI152 grid at 10 mm): hubs.tsv gains an atlas_label column whose names
// come from aal.nii.txt, and hubs in grey matter get one.
func TestHubRegionsFromAtlas(t *testing.T) {
	const aal = "/usr/share/mricron/templates/aal.nii.gz"
	if _, err := os.Stat(aal); err != nil {
		if pyref.Strict() {
			t.Fatalf("%s missing: run scripts/setup-deps.sh test (package mricron-data)", aal)
		}
		t.Skip("mricron-data not installed")
	}
	scanPath, maskPath, _ := phantom(t, 10)
	cfg := rawDefaults()
	cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics, cfg.Atlas = scanPath, maskPath, filepath.Join(t.TempDir(), "b"), "cpu", settings.MetricsNone, aal
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadFile("/usr/share/mricron/templates/aal.nii.txt")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, l := range strings.Split(string(names), "\n") {
		if f := strings.Fields(l); len(f) >= 2 {
			known[f[1]] = true
		}
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "hubs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	head := strings.Split(lines[0], "\t")
	if head[len(head)-1] != "atlas_label" {
		t.Fatalf("hubs.tsv header %v lacks atlas_label", head)
	}
	labelled := 0
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if lab := f[len(f)-1]; lab != "" {
			if !known[lab] {
				t.Fatalf("hub labelled %q, not an AAL region", lab)
			}
			labelled++
		}
	}
	if n := len(lines) - 1; n == 0 || labelled*4 < n {
		t.Fatalf("%d of %d hubs named by the atlas; want at least a quarter", labelled, n)
	}
}

// rawDefaults are Defaults with the series as loaded (--denoise none), for the test phantoms
// without nuisance: their modules span the whole spectrum, so auto's band-pass and tCompCor
// would remove the planted signal itself (the nuisance phantom tests the cleaning).
func rawDefaults() Config {
	c := Defaults()
	c.Denoise = CleanNone
	return c
}
