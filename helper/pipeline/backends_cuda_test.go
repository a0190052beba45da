//go:build cuda

package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/backend/cuda"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/internal/shareddata"
	"github.com/hubscope/hubscope/ipc/settings"
)

// valueTol is the conformance suite's bound on a pair's value (fctest.Tol): the two backends'
// networks may differ only in pairs this close to the threshold.
const valueTol = 1e-5

// TestBackendsGiveSameBundles (issue #5, Verify): the same scan analysed on the CPU backend
// and on the CUDA backend must give the same bundle up to the measure's tolerance — the
// networks' edge sets equal except for pairs within 1e-5 of the threshold, common edges'
// weights within 1e-5, hubs.tsv identical and every number in metrics.json equal within a
// relative 1e-4 when the edge sets are equal (the graph code after the network is the same
// host code; only the float32 weights' last bits may differ). Phantom (every measure), a real
// BOLD slice with its mask and a real scan with the automatic mask.
func TestBackendsGiveSameBundles(t *testing.T) {
	if _, err := cuda.Available(); err != nil {
		if os.Getenv("HUBSCOPE_REQUIRE_GPU") == "1" {
			t.Fatalf("no usable GPU: %v", err)
		}
		t.Skipf("no usable GPU: %v", err)
	}
	phantomScan, phantomMask, _ := phantom(t, 6)
	data := shareddata.Dir()
	type tc struct {
		name        string
		scan, mask  string
		measure     string
		density     float64
		abs         bool
		metrics     string
		random      int
		needsShared bool
	}
	cases := []tc{
		{name: "phantom-pearson-full", scan: phantomScan, mask: phantomMask, measure: "pearson", density: 0.01, metrics: settings.MetricsFull, random: 3},
		{name: "phantom-spearman", scan: phantomScan, mask: phantomMask, measure: "spearman", density: 0.01, metrics: settings.MetricsBasic},
		{name: "phantom-kendall", scan: phantomScan, mask: phantomMask, measure: "kendall", density: 0.005, metrics: settings.MetricsBasic},
		{name: "haxby-slice-pearson-full", scan: filepath.Join(data, "haxby2001_slice_bold.nii.gz"), mask: filepath.Join(data, "haxby2001_slice_mask.nii.gz"),
			measure: "pearson", density: 0.02, metrics: settings.MetricsFull, random: 3, needsShared: true},
		{name: "haxby-25mm-spearman-abs", scan: filepath.Join(data, "haxby2001_run001_bold_25mm.nii.gz"), mask: filepath.Join(data, "haxby2001_mask_25mm_brain.nii.gz"),
			measure: "spearman", density: 0.05, abs: true, metrics: settings.MetricsBasic, needsShared: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.needsShared {
				if _, err := os.Stat(c.scan); err != nil {
					if os.Getenv("HUBSCOPE_REQUIRE_GPU") == "1" {
						t.Fatalf("real scan missing: %v", err)
					}
					t.Skipf("real scan missing: %v", err)
				}
			}
			var dirs [2]string
			for k, be := range []string{"cpu", "cuda"} {
				cfg := Defaults()
				cfg.Scan, cfg.Mask, cfg.Backend = c.scan, c.mask, be
				cfg.Measure, cfg.Density, cfg.Abs, cfg.Metrics, cfg.Random = c.measure, c.density, c.abs, c.metrics, c.random
				cfg.Out = filepath.Join(t.TempDir(), be)
				res, err := Run(context.Background(), cfg, nil)
				if err != nil {
					t.Fatalf("%s backend: %v", be, err)
				}
				if res.Metrics.Network.Backend != be {
					t.Fatalf("asked for %s, metrics.json says %s", be, res.Metrics.Network.Backend)
				}
				dirs[k] = res.Dir
			}
			same := compareNetworks(t, dirs[0], dirs[1])
			if !same {
				return // the tolerance allowed a boundary pair to differ: the metrics may too
			}
			for _, d := range compareTSV(readFile(t, dirs[0], "hubs.tsv"), readFile(t, dirs[1], "hubs.tsv")) {
				t.Error("hubs.tsv: " + d)
			}
			mc, mg := readMetrics(t, dirs[0]), readMetrics(t, dirs[1])
			compareRandomBaselines(t, mc, mg)
			diffs := compareJSON("", mc, mg)
			for _, d := range diffs {
				t.Error(d)
			}
		})
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// compareNetworks checks the two bundles' networks and reports whether their edge sets are
// equal: a pair in one only must lie within valueTol of the CPU network's threshold.
func compareNetworks(t *testing.T, cpuDir, cudaDir string) bool {
	t.Helper()
	var nets [2]*network.Network
	for k, dir := range []string{cpuDir, cudaDir} {
		nw, err := bundle.ReadNetwork(filepath.Join(dir, "network.npz"))
		if err != nil {
			t.Fatal(err)
		}
		nets[k] = nw
	}
	a, b := nets[0], nets[1]
	if a.N != b.N || a.Edges() != b.Edges() {
		t.Fatalf("networks: %d nodes, %d edges on the CPU; %d, %d on the GPU", a.N, a.Edges(), b.N, b.Edges())
	}
	thr := readMetrics(t, cpuDir)["network"].(map[string]any)["threshold"].(float64)
	only, common := 0, 0
	worst := 0.0
	for i := 0; i < a.N; i++ {
		ra, wa := a.Indices[a.Indptr[i]:a.Indptr[i+1]], a.Weights[a.Indptr[i]:a.Indptr[i+1]]
		rb, wb := b.Indices[b.Indptr[i]:b.Indptr[i+1]], b.Weights[b.Indptr[i]:b.Indptr[i+1]]
		x, y := 0, 0
		for x < len(ra) || y < len(rb) {
			switch {
			case y == len(rb) || (x < len(ra) && ra[x] < rb[y]):
				checkBoundary(t, "CPU", i, ra[x], wa[x], thr)
				only++
				x++
			case x == len(ra) || rb[y] < ra[x]:
				checkBoundary(t, "GPU", i, rb[y], wb[y], thr)
				only++
				y++
			default:
				d := math.Abs(float64(wa[x]) - float64(wb[y]))
				worst = max(worst, d)
				if d > valueTol {
					t.Errorf("edge (%d,%d): weight %v on the CPU, %v on the GPU", i, ra[x], wa[x], wb[y])
				}
				common++
				x++
				y++
			}
		}
	}
	t.Logf("%d nodes, %d common edges (largest weight difference %.2g), %d in one network only (within %g of the threshold %.6f)",
		a.N, common, worst, only, valueTol, thr)
	return only == 0
}

func checkBoundary(t *testing.T, side string, i int, j uint32, w float32, thr float64) {
	t.Helper()
	if math.Abs(math.Abs(float64(w))-thr) > valueTol {
		t.Errorf("edge (%d,%d) with weight %v only in the %s network, %g from the threshold %.6f", i, j, w, side, math.Abs(float64(w))-thr, thr)
	}
}

// compareTSV lists the differences between two tables: the same rows and columns, numbers
// within compareJSON's tolerance (strength sums float32 weights whose last bits may differ),
// other fields equal.
func compareTSV(a, b string) []string {
	ra, rb := strings.Split(strings.TrimSpace(a), "\n"), strings.Split(strings.TrimSpace(b), "\n")
	if len(ra) != len(rb) {
		return []string{fmt.Sprintf("%d rows on the CPU, %d on the GPU", len(ra), len(rb))}
	}
	var out []string
	for r := range ra {
		fa, fb := strings.Split(ra[r], "\t"), strings.Split(rb[r], "\t")
		if len(fa) != len(fb) {
			out = append(out, fmt.Sprintf("row %d: %d fields against %d", r, len(fa), len(fb)))
			continue
		}
		for c := range fa {
			x, errA := strconv.ParseFloat(fa[c], 64)
			y, errB := strconv.ParseFloat(fb[c], 64)
			if errA == nil && errB == nil {
				out = append(out, compareJSON(fmt.Sprintf("row %d field %d", r, c), x, y)...)
			} else if fa[c] != fb[c] {
				out = append(out, fmt.Sprintf("row %d field %d: %q on the CPU, %q on the GPU", r, c, fa[c], fb[c]))
			}
		}
	}
	return out
}

// compareJSON lists the differences between two metrics.json documents: numbers beyond a
// relative 1e-4 (absolute 1e-9 near zero), other values unequal. The backend's name and the
// input path are expected to differ.
func compareJSON(path string, a, b any) []string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return []string{path + ": object against " + fmt.Sprintf("%T", b)}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			p := path + "." + k
			if p == ".network.backend" || p == ".network.device" || p == ".scan.path" || randomBaseline(p) {
				continue
			}
			out = append(out, compareJSON(p, x[k], y[k])...)
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return []string{fmt.Sprintf("%s: %d elements against %v", path, len(x), b)}
		}
		var out []string
		for k := range x {
			out = append(out, compareJSON(fmt.Sprintf("%s[%d]", path, k), x[k], y[k])...)
		}
		return out
	case float64:
		y, ok := b.(float64)
		if !ok || math.Abs(x-y) > 1e-9+1e-4*math.Max(math.Abs(x), math.Abs(y)) {
			return []string{fmt.Sprintf("%s: %v on the CPU, %v on the GPU", path, x, b)}
		}
		return nil
	default:
		if fmt.Sprint(a) != fmt.Sprint(b) {
			return []string{fmt.Sprintf("%s: %v on the CPU, %v on the GPU", path, a, b)}
		}
		return nil
	}
}

// randomBaseline says whether a metrics.json key depends on the random networks, which the CUDA
// backend makes by its own (parallel) swap chain: compareRandomBaselines checks them in
// distribution instead of compareJSON's equality. The observed network's C_p and L_p inside
// small_world stay exact.
func randomBaseline(p string) bool {
	if strings.HasPrefix(p, ".global.small_world.") {
		k := strings.TrimPrefix(p, ".global.small_world.")
		return k != "clustering_coefficient" && k != "characteristic_path_length" && k != "random_networks" && k != "swaps_per_edge"
	}
	return strings.HasPrefix(p, ".modules[0].random_q") || strings.HasPrefix(p, ".modules[0].q_z")
}

// compareRandomBaselines checks that the two backends' random networks agree in distribution:
// the mean C_rand, L_rand and Q_rand within 3 combined SDs of the two sets of networks (a few
// networks each, so the SDs are rough; distributions that differ by a fraction of an SD
// pass, a wrong chain does not).
func compareRandomBaselines(t *testing.T, mc, mg map[string]any) {
	t.Helper()
	num := func(m map[string]any, path ...string) (float64, bool) {
		var v any = m
		for _, k := range path {
			switch x := v.(type) {
			case map[string]any:
				v = x[k]
			case []any:
				i, _ := strconv.Atoi(k)
				if i >= len(x) {
					return 0, false
				}
				v = x[i]
			default:
				return 0, false
			}
		}
		f, ok := v.(float64)
		return f, ok
	}
	for _, q := range [][3]string{
		{"global.small_world", "random_clustering_mean", "random_clustering_sd"},
		{"global.small_world", "random_path_length_mean", "random_path_length_sd"},
		{"modules.0", "random_q_mean", "random_q_sd"},
	} {
		base := strings.Split(q[0], ".")
		a, okA := num(mc, append(base, q[1])...)
		b, okB := num(mg, append(base, q[1])...)
		if okA != okB {
			t.Errorf("%s.%s: present on one backend only", q[0], q[1])
			continue
		}
		if !okA {
			continue
		}
		sa, _ := num(mc, append(base, q[2])...)
		sb, _ := num(mg, append(base, q[2])...)
		tol := 3*math.Sqrt(sa*sa+sb*sb) + 1e-9*math.Abs(a)
		t.Logf("%s.%s: CPU %.6g ± %.3g, GPU %.6g ± %.3g", q[0], q[1], a, sa, b, sb)
		if math.Abs(a-b) > tol {
			t.Errorf("%s.%s: CPU %.6g ± %.3g, GPU %.6g ± %.3g: the random networks differ in distribution", q[0], q[1], a, sa, b, sb)
		}
	}
}
