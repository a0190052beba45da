package synth

import (
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/scan"
)

var demo struct {
	once  sync.Once
	scan  *scan.Scan
	truth *Truth
	err   error
}

// demoPhantom generates the default phantom on the embedded 4 mm demo mask (28,971 voxels),
// once for all tests, which only read it.
func demoPhantom(t *testing.T) (*scan.Scan, *Truth, Params) {
	t.Helper()
	p := DefaultParams()
	demo.once.Do(func() {
		m, a, err := DemoMask()
		if err != nil {
			demo.err = err
			return
		}
		demo.scan, demo.truth, demo.err = Generate(m, a, p)
	})
	if demo.err != nil {
		t.Fatal(demo.err)
	}
	return demo.scan, demo.truth, p
}

func TestGenerateIsDeterministic(t *testing.T) {
	m, a := testMask(t, 8)
	p := DefaultParams()
	p.Length = 60
	s1, t1, err := Generate(m, a, p)
	if err != nil {
		t.Fatal(err)
	}
	s2, t2, err := Generate(m, a, p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s1.Data, s2.Data) || !slices.Equal(t1.Modules, t2.Modules) || !slices.Equal(t1.Hubs, t2.Hubs) {
		t.Fatal("two runs with the same parameters differ")
	}
	for h := range t1.HubModules {
		if !slices.Equal(t1.HubModules[h], t2.HubModules[h]) {
			t.Fatalf("hub %d couples %v, then %v", t1.Hubs[h], t1.HubModules[h], t2.HubModules[h])
		}
	}
	// Pin a few values so that a change of the generator (or of math/rand/v2's streams) is seen:
	// the phantom of a given seed is part of what tests elsewhere rely on.
	const want0, want1 = float32(1018.9108), float32(1011.7139)
	if got0, got1 := s1.Data[0], s1.Data[len(s1.Data)-1]; math.Abs(float64(got0-want0)) > 1e-3 || math.Abs(float64(got1-want1)) > 1e-3 {
		t.Errorf("first and last values %v, %v; pinned %v, %v", got0, got1, want0, want1)
	}

	p.Seed = 2
	s3, t3, err := Generate(m, a, p)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(s1.Data, s3.Data) || slices.Equal(t1.Hubs, t3.Hubs) {
		t.Fatal("seeds 1 and 2 give the same phantom")
	}
	// More hubs leave the module signals alone (separate random streams).
	p.Seed, p.Hubs = 1, 60
	_, t4, err := Generate(m, a, p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(t1.Signals[3], t4.Signals[3]) || !slices.Equal(t1.Modules, t4.Modules) {
		t.Fatal("changing the number of hubs changed the module signals or parcels")
	}
}

func TestScanFields(t *testing.T) {
	m, a := testMask(t, 8)
	p := DefaultParams()
	p.Length = 20
	s, tr, err := Generate(m, a, p)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != m.Count() || s.L != 20 || len(s.Data) != s.N*s.L || len(s.IJK) != s.N || s.TR != 2 ||
		s.Dims != m.Dims || s.Affine != a || s.Mask.Count() != s.N || s.Dropped.MaskVoxels != s.N {
		t.Fatalf("scan fields: N %d L %d len %d IJK %d TR %g dims %v mask %d", s.N, s.L, len(s.Data), len(s.IJK), s.TR, s.Dims, s.Mask.Count())
	}
	prev := -1
	for v, p := range s.IJK {
		f := m.Flat(int(p[0]), int(p[1]), int(p[2]))
		if !m.In[f] || f <= prev {
			t.Fatalf("node %d at %v (flat %d) is outside the mask or out of order", v, p, f)
		}
		prev = f
	}
	if len(tr.Modules) != s.N || len(tr.Hubs) != p.Hubs || len(tr.HubModules) != p.Hubs || len(tr.Signals) != p.Modules {
		t.Fatalf("truth sizes: %d modules, %d hubs, %d hub module sets, %d signals", len(tr.Modules), len(tr.Hubs), len(tr.HubModules), len(tr.Signals))
	}
	for h, v := range tr.Hubs {
		set := tr.HubModules[h]
		if len(set) < p.HubModulesMin || len(set) > p.HubModulesMax || !slices.Contains(set, int(tr.Modules[v])) || !slices.IsSorted(set) {
			t.Errorf("hub %d of module %d couples %v", v, tr.Modules[v], set)
		}
		if h > 0 && tr.Hubs[h-1] >= v {
			t.Errorf("hubs not increasing: %v", tr.Hubs)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	m, a := testMask(t, 8)
	cases := []struct {
		name string
		mod  func(*Params)
		want string
	}{
		{"no modules", func(p *Params) { p.Modules = 0 }, "modules"},
		{"short", func(p *Params) { p.Length = 2 }, "length"},
		{"TR", func(p *Params) { p.TR = 0 }, "TR"},
		{"band order", func(p *Params) { p.LowHz, p.HighHz = 0.1, 0.01 }, "band"},
		{"Nyquist", func(p *Params) { p.TR = 6 }, "Nyquist"},
		{"AR", func(p *Params) { p.AR = 1 }, "AR"},
		{"rho", func(p *Params) { p.ModuleCorrelation = 0 }, "module correlation"},
		{"hub fraction", func(p *Params) { p.HubSignalFraction = 1.5 }, "hub signal fraction"},
		{"hub modules", func(p *Params) { p.HubModulesMax = 8 }, "hubs coupling"},
		{"datatype", func(p *Params) { p.DataType = nifti.Uint8 }, "datatype"},
		{"int16 range", func(p *Params) { p.Baseline = 30000 }, "int16"},
		{"band too narrow", func(p *Params) { p.Length = 12 }, "independent directions"},
		{"too many hubs", func(p *Params) { p.Hubs = 1 << 20 }, "hubs"},
	}
	for _, c := range cases {
		p := DefaultParams()
		c.mod(&p)
		_, _, err := Generate(m, a, p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	if _, _, err := Generate(m, a, Params{Modules: 7, Hubs: 40, TR: 2, Length: 200, Seed: 1}); err == nil || !strings.Contains(err.Error(), "DefaultParams") {
		t.Errorf("parameters without the signal model: error %v, want a pointer to DefaultParams", err)
	}
	if _, _, err := Generate(scan.Mask{Dims: [3]int{2, 2, 2}, In: make([]bool, 8)}, a, DefaultParams()); err == nil {
		t.Error("empty mask accepted")
	}
	if _, _, err := Generate(scan.Mask{Dims: [3]int{2, 2, 2}, In: make([]bool, 7)}, a, DefaultParams()); err == nil {
		t.Error("mask of the wrong size accepted")
	}
}

// moduleSums returns, for the ordinary (non-hub) voxels of every module, their count and the
// sum of their normalised series. With unit-norm, zero-mean rows p_i, the mean correlation over
// the pairs inside module m is (‖S_m‖² − n_m)/(n_m(n_m − 1)), and between modules m and m′ it is
// S_m·S_m′/(n_m·n_m′): exact means over all pairs at O(N·L) cost.
func moduleSums(s *scan.Scan, tr *Truth, pn [][]float64, modules int) ([]int, [][]float64) {
	n := make([]int, modules+1)
	sum := make([][]float64, modules+1)
	for m := range sum {
		sum[m] = make([]float64, s.L)
	}
	hub := make([]bool, s.N)
	for _, v := range tr.Hubs {
		hub[v] = true
	}
	for v, lab := range tr.Modules {
		if hub[v] {
			continue
		}
		n[lab]++
		for t, x := range pn[v] {
			sum[lab][t] += x
		}
	}
	return n, sum
}

func TestPlantedModulesAndHubs(t *testing.T) {
	s, tr, p := demoPhantom(t)
	pn := normalized(s)
	n, sum := moduleSums(s, tr, pn, p.Modules)
	within := make([]float64, p.Modules+1)
	for m := 1; m <= p.Modules; m++ {
		nm := float64(n[m])
		within[m] = (dotF(sum[m], sum[m]) - nm) / (nm * (nm - 1))
		// Expected ρ; the sample correlation of L = 200 points is biased by O(1/L).
		if math.Abs(within[m]-p.ModuleCorrelation) > 0.02 {
			t.Errorf("module %d (%d voxels): mean within-module correlation %.4f, want %.2f ± 0.02", m, n[m], within[m], p.ModuleCorrelation)
		}
		for m2 := m + 1; m2 <= p.Modules; m2++ {
			across := dotF(sum[m], sum[m2]) / (nm * float64(n[m2]))
			// Orthonormal module signals: only noise remains, averaged over ~10⁷ pairs.
			if math.Abs(across) > 0.01 {
				t.Errorf("modules %d and %d: mean correlation %.4f, want |r| ≤ 0.01", m, m2, across)
			}
		}
	}
	t.Logf("mean within-module correlation per module: %.3f", within[1:])

	// Hubs: mean correlation with the ordinary voxels of each module. Expected √(f·ρ/|S|) for
	// the modules they couple (0.25–0.31), 0 for the others. Degree-based hub detection needs
	// the former above the within-module correlation that ordinary voxels reach.
	margin, ratio, pairs := math.Inf(1), 0.0, 0
	for h, v := range tr.Hubs {
		set := tr.HubModules[h]
		want := math.Sqrt(p.HubSignalFraction * p.ModuleCorrelation / float64(len(set)))
		for m := 1; m <= p.Modules; m++ {
			r := dotF(pn[v], sum[m]) / float64(n[m])
			if slices.Contains(set, m) {
				margin = min(margin, r-within[m])
				ratio += r / want
				pairs++
				if math.Abs(r-want) > 0.05 || r <= within[m] {
					t.Errorf("hub %d (couples %v): mean r with module %d is %.3f, want %.3f ± 0.05 and above the module's within-module %.3f", v, set, m, r, want, within[m])
				}
			} else if math.Abs(r) > 0.05 {
				t.Errorf("hub %d (couples %v): mean r with module %d is %.3f, want ≈ 0", v, set, m, r)
			}
		}
	}
	// Over all hubs the sampling noise averages out: the coupling must be what the model says.
	if ratio /= float64(pairs); math.Abs(ratio-1) > 0.03 {
		t.Errorf("hubs' mean correlation with their modules is %.3f × the model's √(f·ρ/|S|), want 1 ± 0.03", ratio)
	}
	t.Logf("hub–module correlation / model: %.3f; smallest excess over the within-module mean: %.3f", ratio, margin)
}

func TestIntensity(t *testing.T) {
	s, _, p := demoPhantom(t)
	lo, hi := p.Baseline*(1-8*p.Amplitude), p.Baseline*(1+8*p.Amplitude)
	sdSum := 0.0
	for v := range s.N {
		x := s.Series(v)
		mean, ss := 0.0, 0.0
		for _, y := range x {
			if float64(y) < lo || float64(y) > hi {
				t.Fatalf("node %d: intensity %v outside %g–%g", v, y, lo, hi)
			}
			mean += float64(y)
		}
		mean /= float64(s.L)
		for _, y := range x {
			ss += (float64(y) - mean) * (float64(y) - mean)
		}
		sd := math.Sqrt(ss/float64(s.L-1)) / p.Baseline
		if math.Abs(mean/p.Baseline-1) > 0.01 || sd < 0.01 || sd > 0.03 {
			t.Fatalf("node %d: mean %.1f, relative SD %.4f; want 1000 ± 1 %%, SD 1–3 %%", v, mean, sd)
		}
		sdSum += sd
	}
	if got := sdSum / float64(s.N); math.Abs(got-p.Amplitude) > 0.001 {
		t.Errorf("mean relative SD %.4f, want %.3f", got, p.Amplitude)
	}
}

// bandFraction is the share of a series' power (DC excluded) at frequencies in [lo, hi] Hz,
// from gonum's FFT: an independent route to the spectrum of what moduleSignals synthesised.
func bandFraction(x []float64, tr, lo, hi float64) float64 {
	fft := fourier.NewFFT(len(x))
	c := fft.Coefficients(nil, x)
	in, all := 0.0, 0.0
	for k := 1; k < len(c); k++ {
		pw := cmplx.Abs(c[k]) * cmplx.Abs(c[k])
		f := fft.Freq(k) / tr
		all += pw
		if f >= lo-1e-12 && f <= hi+1e-12 {
			in += pw
		}
	}
	return in / all
}

func TestBandLimited(t *testing.T) {
	s, tr, p := demoPhantom(t)
	for m, sig := range tr.Signals {
		if f := bandFraction(sig, p.TR, p.LowHz, p.HighHz); f < 1-1e-9 {
			t.Errorf("module signal %d: %.6f of its power in %g–%g Hz, want all", m+1, f, p.LowHz, p.HighHz)
		}
		mean, ss := 0.0, 0.0
		for _, x := range sig {
			mean += x
			ss += x * x
		}
		if math.Abs(mean) > 1e-9 || math.Abs(ss/float64(p.Length)-1) > 1e-9 {
			t.Errorf("module signal %d: mean %g, variance %g; want 0 and 1", m+1, mean/float64(p.Length), ss/float64(p.Length))
		}
		for m2 := range m {
			if r := dotF(sig, tr.Signals[m2]) / float64(p.Length); math.Abs(r) > 1e-9 {
				t.Errorf("module signals %d and %d correlate at %g", m2+1, m+1, r)
			}
		}
	}
	// The data: a module's mean series averages the voxels' independent noise away, leaving its
	// band-limited signal; white-ish AR(1) noise alone would put most of its power above 0.1 Hz.
	for m, series := range moduleMeans(s, tr, p.Modules) {
		if f := bandFraction(series, p.TR, p.LowHz, p.HighHz); f < 0.95 {
			t.Errorf("module %d mean series: %.3f of its power in the band, want ≥ 0.95", m+1, f)
		}
	}
}

// moduleMeans averages the series of every module's voxels (hubs included).
func moduleMeans(s *scan.Scan, tr *Truth, modules int) [][]float64 {
	out := make([][]float64, modules)
	cnt := make([]int, modules)
	for m := range out {
		out[m] = make([]float64, s.L)
	}
	for v, lab := range tr.Modules {
		cnt[lab-1]++
		for t, x := range s.Series(v) {
			out[lab-1][t] += float64(x)
		}
	}
	for m := range out {
		for t := range out[m] {
			out[m][t] /= float64(cnt[m])
		}
	}
	return out
}

func TestAR1Noise(t *testing.T) {
	s, tr, p := demoPhantom(t)
	hub := make(map[int]bool)
	for _, v := range tr.Hubs {
		hub[v] = true
	}
	c, sd := math.Sqrt(p.ModuleCorrelation), math.Sqrt(1-p.ModuleCorrelation)
	// Pooled over voxels, Σ e(t)e(t−1) / Σ e(t−1)² is the least-squares estimate of φ from
	// about 5.8·10⁶ pairs (no per-series small-sample bias), and Σ e² / (N·L) estimates the
	// unit variance.
	var cross, lagged, square float64
	count := 0
	e := make([]float64, s.L)
	for v := range s.N {
		if hub[v] {
			continue
		}
		sig := tr.Signals[tr.Modules[v]-1]
		// Invert x = B(1 + a(c·s + σ·e)) for the noise e of an ordinary voxel.
		for t, x := range s.Series(v) {
			e[t] = ((float64(x)/p.Baseline-1)/p.Amplitude - c*sig[t]) / sd
		}
		for t := range e {
			square += e[t] * e[t]
			if t > 0 {
				cross += e[t] * e[t-1]
				lagged += e[t-1] * e[t-1]
			}
		}
		count++
	}
	phi, variance := cross/lagged, square/float64(count*s.L)
	if math.Abs(phi-p.AR) > 0.005 || math.Abs(variance-1) > 0.01 {
		t.Errorf("noise: AR(1) coefficient %.4f (want %.2f), variance %.4f (want 1)", phi, p.AR, variance)
	}
}

func TestParcelsAreCompactContiguous(t *testing.T) {
	s, tr, p := demoPhantom(t)
	checkParcels(t, "4 mm", s.Mask, s.IJK, tr.Modules, p.Modules)

	// Above lloydSample voxels the k-means runs on a subsample: the demo mask at 2 mm
	// (≈230,000 voxels, every 5th node) must still give balanced, contiguous parcels.
	m, a := testMask(t, 2)
	var ijk [][3]int32
	for f, in := range m.In {
		if in {
			ijk = append(ijk, [3]int32{int32(f % m.Dims[0]), int32(f / m.Dims[0] % m.Dims[1]), int32(f / (m.Dims[0] * m.Dims[1]))})
		}
	}
	if len(ijk) <= lloydSample {
		t.Fatalf("2 mm mask has only %d voxels", len(ijk))
	}
	checkParcels(t, "2 mm", m, ijk, parcellate(ijk, a, 9, newRand(5, streamParcels)), 9)
}

// checkParcels asserts that every module holds 0.5–1.6× the mean module size and that its
// largest 26-connected part holds at least 98 % of it.
func checkParcels(t *testing.T, name string, mask scan.Mask, ijk [][3]int32, labels []int32, modules int) {
	t.Helper()
	size := make([]int, modules+1)
	for _, lab := range labels {
		size[lab]++
	}
	mean := float64(len(labels)) / float64(modules)
	for m := 1; m <= modules; m++ {
		if float64(size[m]) < 0.5*mean || float64(size[m]) > 1.6*mean {
			t.Errorf("%s: module %d has %d voxels; mean %.0f", name, m, size[m], mean)
		}
	}
	label := make([]int32, len(mask.In))
	for v, pos := range ijk {
		label[mask.Flat(int(pos[0]), int(pos[1]), int(pos[2]))] = labels[v]
	}
	seen := make([]bool, len(label))
	largest := make([]int, modules+1)
	d := mask.Dims
	for start, lab := range label {
		if lab == 0 || seen[start] {
			continue
		}
		stack, n := []int{start}, 0
		seen[start] = true
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			n++
			i, j, k := f%d[0], f/d[0]%d[1], f/(d[0]*d[1])
			for dk := -1; dk <= 1; dk++ {
				for dj := -1; dj <= 1; dj++ {
					for di := -1; di <= 1; di++ {
						a, b, c := i+di, j+dj, k+dk
						if a < 0 || b < 0 || c < 0 || a >= d[0] || b >= d[1] || c >= d[2] {
							continue
						}
						g := mask.Flat(a, b, c)
						if label[g] == lab && !seen[g] {
							seen[g] = true
							stack = append(stack, g)
						}
					}
				}
			}
		}
		largest[lab] = max(largest[lab], n)
	}
	for m := 1; m <= modules; m++ {
		if float64(largest[m]) < 0.98*float64(size[m]) {
			t.Errorf("%s: module %d: largest connected part %d of %d voxels", name, m, largest[m], size[m])
		}
	}
	t.Logf("%s: module sizes %v", name, size[1:])
}

// TestBandLimitedScipy cross-checks bandFraction against scipy.signal.periodogram on the
// modules' mean series.
func TestBandLimitedScipy(t *testing.T) {
	pyref.Require(t, "numpy", "scipy")
	s, tr, p := demoPhantom(t)
	means := moduleMeans(s, tr, p.Modules)
	var b strings.Builder
	for _, series := range means {
		for i, x := range series {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "means.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := pyref.Run(t, `
import sys, numpy as np
from scipy.signal import periodogram
x = np.loadtxt(sys.argv[1], ndmin=2)
f, pxx = periodogram(x, fs=1 / float(sys.argv[2]), detrend='constant', axis=1)
band = (f >= float(sys.argv[3]) - 1e-12) & (f <= float(sys.argv[4]) + 1e-12)
# periodogram doubles every one-sided bin but DC and Nyquist; undo it at Nyquist to get |X_k|².
if len(x[0]) % 2 == 0: pxx[:, -1] *= 2
print(' '.join(repr(v) for v in pxx[:, band].sum(axis=1) / pxx[:, 1:].sum(axis=1)))
`, path, strconv.FormatFloat(p.TR, 'g', -1, 64), strconv.FormatFloat(p.LowHz, 'g', -1, 64), strconv.FormatFloat(p.HighHz, 'g', -1, 64))
	fields := strings.Fields(string(out))
	if len(fields) != p.Modules {
		t.Fatalf("scipy said %q", out)
	}
	for m, f := range fields {
		want, _ := strconv.ParseFloat(f, 64)
		got := bandFraction(means[m], p.TR, p.LowHz, p.HighHz)
		if math.Abs(got-want) > 1e-9 || got < 0.95 {
			t.Errorf("module %d mean series: band power fraction %.6f (gonum), %.6f (scipy); want equal and ≥ 0.95", m+1, got, want)
		}
	}
}
