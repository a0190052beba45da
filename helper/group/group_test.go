package group

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/group/grouptest"
	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/helper/sweep"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/internal/shareddata"
)

// cohortOf makes S subjects' N×L series sharing a block structure (grouptest.Series).
func cohortOf(n, s, l int, seed uint64) *Cohort {
	return &Cohort{S: s, L: l, X: grouptest.Series(n, s, l, seed, false), Scan: &scan.Scan{N: n, L: l}}
}

// reference is the float64 mean over subjects of r (or of Fisher z, back with tanh) of every
// pair i < j, as ref[i][j] (grouptest.Reference).
func reference(c *Cohort, fisher bool) [][]float64 {
	n := c.Scan.N
	clamp := 0.0
	if fisher {
		clamp = ZClamp
	}
	flat := grouptest.Reference(c.X, n, c.S, c.L, fc.Pearson, clamp)
	ref := make([][]float64, n)
	for i := range ref {
		ref[i] = flat[i*n : (i+1)*n]
	}
	return ref
}

// checkAgainst compares nw with the reference for a strength cut t (edges within 1e-5 of t may
// go either way) and the weights within 1e-5 (float32 series and products; atanh near
// |r| = 1 magnifies their rounding by 1/(1 − r²)).
func checkAgainst(t *testing.T, nw *network.Network, ref [][]float64, cut float64) {
	t.Helper()
	got := map[[2]int]float32{}
	for i := 0; i < nw.N; i++ {
		cols, ws := nw.Row(i)
		for p, j := range cols {
			got[[2]int{i, int(j)}] = ws[p]
		}
	}
	for i := range ref {
		for j := i + 1; j < len(ref); j++ {
			w, ok := got[[2]int{i, j}]
			r := ref[i][j]
			if math.Abs(r-cut) < 1e-5 {
				continue
			}
			if ok != (r > cut) {
				t.Fatalf("pair (%d,%d): reference %.8f, cut %.8f, edge %v", i, j, r, cut, ok)
			}
			if ok && math.Abs(float64(w)-r) > 1e-5 {
				t.Fatalf("pair (%d,%d): weight %.8f, reference %.8f", i, j, w, r)
			}
		}
	}
}

func kth(ref [][]float64, k int) float64 {
	var all []float64
	for i := range ref {
		all = append(all, ref[i][i+1:]...)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(all)))
	return all[k-1]
}

func TestGroupMeanMatchesFloat64(t *testing.T) {
	n, s, l := 90, 3, 40
	for _, mean := range []string{MeanFisherZ, MeanR} {
		c0 := cohortOf(n, s, l, 1)
		ref := reference(c0, mean == MeanFisherZ)
		for _, cfg := range []fc.Config{
			{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.15, BlockRows: 16},
			{Measure: fc.Pearson, Mode: fc.Density, Density: 0.05, BlockRows: 32},
			{Measure: fc.Pearson, Mode: fc.Density, Density: 0.05},
		} {
			t.Run(fmt.Sprintf("%s/%v/%d", mean, cfg.Mode, cfg.BlockRows), func(t *testing.T) {
				c := cohortOf(n, s, l, 1) // Network may consume X
				nw, rpt, err := Network(context.Background(), c, mean, cfg, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := nw.Validate(); err != nil {
					t.Fatal(err)
				}
				cut := cfg.Threshold
				if cfg.Mode == fc.Density {
					k := int(math.Round(cfg.Density * float64(n*(n-1)/2)))
					if nw.Edges() != int64(k) {
						t.Fatalf("%d edges, want %d", nw.Edges(), k)
					}
					cut = (kth(ref, k) + kth(ref, k+1)) / 2
				}
				checkAgainst(t, nw, ref, cut)
				if rpt.L != l {
					t.Errorf("report L %d, want the per-subject %d", rpt.L, l)
				}
			})
		}
	}
	// k nearest neighbours: every node keeps its 3 strongest partners (on the reference).
	ref := reference(cohortOf(n, s, l, 1), true)
	c := cohortOf(n, s, l, 1)
	nw, _, err := Network(context.Background(), c, MeanFisherZ, fc.Config{Mode: fc.NearestNeighbours, K: 3, BlockRows: 16}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	adj := map[[2]int]bool{}
	for i := 0; i < n; i++ {
		cols, _ := nw.Row(i)
		for _, j := range cols {
			adj[[2]int{i, int(j)}], adj[[2]int{int(j), i}] = true, true
		}
	}
	for i := 0; i < n; i++ {
		type pv struct {
			j int
			v float64
		}
		var ps []pv
		for j := 0; j < n; j++ {
			if j != i {
				ps = append(ps, pv{j, ref[min(i, j)][max(i, j)]})
			}
		}
		sort.Slice(ps, func(a, b int) bool { return ps[a].v > ps[b].v })
		for _, p := range ps[:3] {
			if !adj[[2]int{i, p.j}] && ps[2].v-ps[3].v > 1e-5 {
				t.Fatalf("node %d lacks its top-3 partner %d", i, p.j)
			}
		}
	}
}

func TestGroupRefusals(t *testing.T) {
	c := cohortOf(20, 2, 10, 2)
	if _, _, err := Network(context.Background(), c, MeanFisherZ, fc.Config{Mode: fc.Significance, Alpha: 0.05}, nil, nil); err == nil {
		t.Error("significance accepted")
	}
	if _, _, err := Network(context.Background(), c, "median", fc.Config{Mode: fc.Strength, Threshold: 0.5}, nil, nil); err == nil {
		t.Error("unknown mean accepted")
	}
	for i := 0; i < 10; i++ { // node 3 constant in subject 2
		c.X[3*20+10+i] = 1
	}
	if _, _, err := Network(context.Background(), c, MeanFisherZ, fc.Config{Mode: fc.Strength, Threshold: 0.5}, nil, nil); err == nil || !strings.Contains(err.Error(), "node 3 is constant in subject 2") {
		t.Errorf("constant node in one subject: %v", err)
	}
	// fc.Build leaves the rows to the engine (ChecksSeries): a NaN in one subject's part of a
	// row is still refused, naming the node and the subject.
	c = cohortOf(20, 2, 10, 2)
	c.X[7*20+10+4] = float32(math.NaN())
	if _, _, err := Network(context.Background(), c, MeanFisherZ, fc.Config{Mode: fc.Strength, Threshold: 0.5}, nil, nil); err == nil || !strings.Contains(err.Error(), "node 7 holds a NaN or an infinity in subject 2") {
		t.Errorf("NaN in one subject: %v", err)
	}
}

func dataDir(t *testing.T, files ...string) string {
	t.Helper()
	dir := shareddata.Dir()
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			if pyref.Strict() {
				t.Fatalf("test data missing: %v", err)
			}
			t.Skipf("test data missing: %v", err)
		}
	}
	return dir
}

// numpyRef is the float64 numpy reference of both means (Fisher z, r) on the subjects' files
// masked by mask, nodes in HubScope's order; the networks at r̄ > 0.3 must agree with it.
const numpyRef = `
import sys, numpy as np, nibabel as nib
mask, files = sys.argv[1], sys.argv[2:]
m = np.asarray(nib.load(mask).dataobj) > 0
# nodes in increasing flat index with i fastest (NIfTI order), as HubScope numbers them
fl = lambda a: a.reshape(-1, a.shape[-1], order="F")
subs = [fl(np.asarray(nib.load(f).dataobj, dtype=np.float64))[m.ravel(order="F")] for f in files]
keep = np.all([x.std(axis=1) > 0 for x in subs], axis=0)
rs = [np.corrcoef(x[keep]) for x in subs]
n = keep.sum(); iu = np.triu_indices(n, 1)
z = np.tanh(np.mean([np.arctanh(np.clip(r, -1+1e-7, 1-1e-7)) for r in rs], axis=0))[iu]
r = np.mean(rs, axis=0)[iu]
print(n)
print(" ".join(repr(float(v)) for v in z))
print(" ".join(repr(float(v)) for v in r))
`

func checkNumpy(t *testing.T, subs []Subject, mask string) {
	t.Helper()
	args := []string{mask}
	for _, s := range subs {
		args = append(args, s.Path)
	}
	lines := strings.Split(strings.TrimSpace(string(pyref.Run(t, numpyRef, args...))), "\n")
	n, _ := strconv.Atoi(lines[0])
	for li, mean := range []string{MeanFisherZ, MeanR} {
		c, err := Load(context.Background(), subs, Options{MaskRule: MaskFile, MaskPath: mask}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Scan.N != n {
			t.Fatalf("%d common nodes, numpy %d", c.Scan.N, n)
		}
		ref := make([][]float64, n)
		f := strings.Fields(lines[1+li])
		p := 0
		for i := range ref {
			ref[i] = make([]float64, n)
			for j := i + 1; j < n; j++ {
				ref[i][j], _ = strconv.ParseFloat(f[p], 64)
				p++
			}
		}
		nw, _, err := Network(context.Background(), c, mean, fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.3}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if nw.Edges() == 0 {
			t.Fatal("no edges")
		}
		checkAgainst(t, nw, ref, 0.3)
		t.Logf("%s: %d nodes, %d edges equal numpy's", mean, n, nw.Edges())
	}
}

// A cohort of real scans: the Haxby run cut into three 40-volume "subjects", one of them a
// resampled copy (every voxel scaled and offset, as another scanner's intensities would be).
// Load with the mask file, then both means against numpy in float64 from the files.
func TestRealCohortAgainstNumpy(t *testing.T) {
	pyref.Require(t, "numpy", "nibabel")
	data := dataDir(t, "haxby2001_run001_bold_25mm.nii.gz", "haxby2001_mask_25mm_brain.nii.gz")
	dir := t.TempDir()
	pyref.Run(t, `
import sys, numpy as np, nibabel as nib
src, dir = sys.argv[1:3]
img = nib.load(src); d = np.asarray(img.dataobj, dtype=np.float64)
for s in range(3):
    part = d[..., s*40:(s+1)*40]
    if s == 2: part = part * 1.7 + 30.0
    nib.save(nib.Nifti1Image(part.astype(np.float32), img.affine, img.header), f"{dir}/sub-{s+1:02d}_bold.nii.gz")
`, filepath.Join(data, "haxby2001_run001_bold_25mm.nii.gz"), dir)
	var subs []Subject
	for s := 1; s <= 3; s++ {
		subs = append(subs, Subject{Label: fmt.Sprintf("sub-%02d", s), Path: filepath.Join(dir, fmt.Sprintf("sub-%02d_bold.nii.gz", s))})
	}
	checkNumpy(t, subs, filepath.Join(data, "haxby2001_mask_25mm_brain.nii.gz"))
	// Differing lengths are refused with the names.
	short := Subject{Label: "sub-short", Path: filepath.Join(data, "haxby2001_run001_bold_25mm.nii.gz")}
	_, err := Load(context.Background(), append(subs[:2:2], short), Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), "sub-short 121 volumes, where the shortest has 40") {
		t.Errorf("different lengths: %v", err)
	}
	// --truncate: every subject's first 40 volumes; sub-short's are the first 40 of its series
	// as one scan, value for value.
	mask := filepath.Join(data, "haxby2001_mask_25mm_brain.nii.gz")
	c, err := Load(context.Background(), []Subject{subs[0], short}, Options{MaskPath: mask, Truncate: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.L != 40 || !strings.Contains(strings.Join(c.Notes, "\n"), "--truncate: every subject's first 40 volumes") {
		t.Fatalf("truncated cohort: L %d, notes %q", c.L, c.Notes)
	}
	sameWays(t, c, []Subject{subs[0], short}, Options{MaskPath: mask, Truncate: true})
	whole, err := scan.Load(context.Background(), short.Path, scan.Options{MaskPath: mask}, nil)
	if err != nil {
		t.Fatal(err)
	}
	whole.IndexGrid()
	for v, p := range c.Scan.IJK {
		src, ok := whole.NodeAt(int(p[0]), int(p[1]), int(p[2]))
		if !ok {
			t.Fatalf("node %d not in sub-short's own scan", v)
		}
		a, b := whole.Data[src*whole.L:src*whole.L+40], c.X[v*2*40+40:v*2*40+80]
		for k := range a {
			if a[k] != b[k] {
				t.Fatalf("node %d volume %d: sub-short %g, truncated %g", v, k, a[k], b[k])
			}
		}
	}
	// Another TR: sub-fast is sub-02's data labelled TR 1.25 s, resampled to the group's 2.5 s
	// (20 volumes), then the others truncated to those 20 with --truncate.
	pyref.Run(t, `
import sys, nibabel as nib
img = nib.load(sys.argv[1]); h = img.header.copy(); z = list(h.get_zooms()); z[3] = 1.25; h.set_zooms(z)
nib.save(nib.Nifti1Image(img.get_fdata().astype("float32"), img.affine, h), sys.argv[2])
`, subs[1].Path, filepath.Join(dir, "sub-fast_bold.nii.gz"))
	fast := Subject{Label: "sub-fast", Path: filepath.Join(dir, "sub-fast_bold.nii.gz")}
	if _, err := Load(context.Background(), []Subject{subs[0], fast}, Options{MaskPath: mask}, nil); err == nil || !strings.Contains(err.Error(), "sub-01 40 volumes, where the shortest has 20") {
		t.Errorf("TR 1.25 s among 2.5 s: %v", err)
	}
	c, err = Load(context.Background(), []Subject{subs[0], fast}, Options{MaskPath: mask, Truncate: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(c.Notes, "\n")
	if c.L != 20 || c.Scan.TR != 2.5 || !strings.Contains(notes, "TR: 1 at 1.25 s (sub-fast) resampled to 2.5 s") {
		t.Fatalf("TR resampling: L %d, TR %g, notes %q", c.L, c.Scan.TR, notes)
	}
	sameWays(t, c, []Subject{subs[0], fast}, Options{MaskPath: mask, Truncate: true})
	sameWays(t, c, []Subject{fast, subs[0]}, Options{MaskPath: mask, Truncate: true}) // the resampled one first
	t.Logf("%s", notes)
}

// sameWays checks that every way of loading gives c's matrix (with the subjects in the order
// given: c's when that is the same, else each subject's part of each row swapped).
func sameWays(t *testing.T, c *Cohort, subs []Subject, opt Options) {
	t.Helper()
	for _, how := range []loadWay{wayStream, wayKeep, wayTwoPass} {
		opt.how = how
		d, err := Load(context.Background(), subs, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d.L != c.L || d.Scan.N != c.Scan.N || len(d.X) != len(c.X) {
			t.Fatalf("way %d: %d nodes × %d volumes, want %d × %d", how, d.Scan.N, d.L, c.Scan.N, c.L)
		}
		swap := subs[0].Path != c.Subjects[0].Path
		L := c.L
		for v := 0; v < c.Scan.N; v++ {
			for s := 0; s < 2; s++ {
				cs := s
				if swap {
					cs = 1 - s
				}
				a, b := d.X[v*2*L+s*L:v*2*L+(s+1)*L], c.X[v*2*L+cs*L:v*2*L+(cs+1)*L]
				if !slices.Equal(a, b) {
					t.Fatalf("way %d: node %d subject %d differs", how, v, s)
				}
			}
		}
	}
}

// TestResampler: band-limited resampling of a signal below the new Nyquist frequency onto a
// coarser TR recovers the signal at the new times (the interior: the mirrored ends are exact
// only for a signal with zero slope there), and equal TRs leave the samples as they are.
func TestResampler(t *testing.T) {
	sig := func(t float64) float64 {
		return math.Cos(2*math.Pi*0.013*t+0.3) + 0.6*math.Sin(2*math.Pi*0.071*t) + 0.3*math.Cos(2*math.Pi*0.17*t+1)
	}
	const from, to, n = 0.72, 2.0, 600 // 0.17 Hz < the new Nyquist 0.25 Hz
	x := make([]float32, n)
	for j := range x {
		x[j] = float32(sig(float64(j) * from))
	}
	r := newResampler(n, from, to)
	if want := 216; r.rows != want { // ⌊599 · 0.72 / 2⌋ + 1
		t.Fatalf("rows %d, want %d", r.rows, want)
	}
	y := make([]float32, r.rows)
	r.apply(y, x)
	var worst, rms float64
	inner := 0
	for k, v := range y {
		tk := float64(k) * to
		if tk < 60 || tk > float64(n-1)*from-60 {
			continue
		}
		e := math.Abs(float64(v) - sig(tk))
		worst, rms = math.Max(worst, e), rms+e*e
		inner++
	}
	rms = math.Sqrt(rms / float64(inner))
	t.Logf("0.72 → 2 s: %d samples, interior (%d) error max %.2e, RMS %.2e (signal amplitude ≈ 1.9)", r.rows, inner, worst, rms)
	if worst > 0.02 {
		t.Errorf("interior error %.3g", worst)
	}
	// A component above the new Nyquist frequency is removed, not aliased.
	for j := range x {
		x[j] = float32(math.Cos(2 * math.Pi * 0.4 * float64(j) * from))
	}
	r.apply(y, x)
	var peak float64
	for k, v := range y {
		if tk := float64(k) * to; tk > 60 && tk < float64(n-1)*from-60 {
			peak = math.Max(peak, math.Abs(float64(v)))
		}
	}
	if peak > 0.05 {
		t.Errorf("0.4 Hz at TR 2 s (Nyquist 0.25 Hz): residue %.3f of amplitude 1 (aliased?)", peak)
	}
	id := newResampler(50, 2, 2)
	for j := range x[:50] {
		x[j] = float32(math.Sin(float64(j*j) * 0.37))
	}
	z := make([]float32, 50)
	id.apply(z, x[:50])
	for j := range z {
		if math.Abs(float64(z[j]-x[j])) > 1e-5 {
			t.Fatalf("equal TRs: sample %d %g → %g", j, x[j], z[j])
		}
	}
}

// A sweep over a group-mean network: each threshold's filter of the loosest group network
// equals the group network built at that threshold alone.
func TestGroupSweepNested(t *testing.T) {
	n, s, l := 70, 3, 30
	for _, spec := range []string{"density=0.02,0.05,0.1", "r=0.1,0.2,0.3"} {
		sp, err := sweep.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		cfg := fc.Config{Measure: fc.Pearson, BlockRows: 16}
		sp.FC(&cfg)
		loose, _, err := Network(context.Background(), cohortOf(n, s, l, 4), MeanFisherZ, cfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range sp.Values {
			got, _, err := sweep.Filter(loose, sp.Kind, v)
			if err != nil {
				t.Fatal(err)
			}
			one := fc.Config{Measure: fc.Pearson, BlockRows: 16}
			sweep.Spec{Kind: sp.Kind, Values: []float64{v}}.FC(&one)
			want, _, err := Network(context.Background(), cohortOf(n, s, l, 4), MeanFisherZ, one, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Edges() != want.Edges() {
				t.Fatalf("%s at %g: %d edges filtered, %d built", spec, v, got.Edges(), want.Edges())
			}
			for p := range got.Indices {
				if got.Indices[p] != want.Indices[p] || got.Weights[p] != want.Weights[p] {
					t.Fatalf("%s at %g: edge %d differs", spec, v, p)
				}
			}
		}
	}
}

// Phantom subjects (synth --subjects: one layout, individual signals and noise) against numpy.
func TestPhantomCohortAgainstNumpy(t *testing.T) {
	pyref.Require(t, "numpy", "nibabel")
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, 16)
	p := synth.DefaultParams()
	p.Length = 50
	dir := filepath.Join(t.TempDir(), "bids")
	ct, err := synth.WriteCohort(context.Background(), m, a, p, synth.CohortOptions{Subjects: 3, Lesion: true}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var subs []Subject
	for _, s := range ct.Subjects {
		subs = append(subs, Subject{Label: "sub-" + s, Path: synth.CohortScan(dir, s)})
	}
	checkNumpy(t, subs, filepath.Join(dir, "truth", "modules.nii.gz"))
}

// TestOneDecodeMatchesTwoPasses: the loader's ways that decode each file once (streaming each
// subject into the matrix, or keeping each subject's series from the survey) give the cohort
// the loader that decoded each file twice (survey, then read) gave, value for value: three int16 phantom subjects whose automatic masks differ (a
// slab of sub-03 dimmed below its mask's threshold but still varying, so the union holds
// voxels outside sub-03's own mask and sub-03 is read again for them), one of them at TR 1 s
// with 119 volumes (resampled to the group's 2 s: 60), every subject cleaned, with the rules
// intersect and union. The collector, not GOGC, keeps the garbage down: GOGC is the caller's
// throughout.
func TestOneDecodeMatchesTwoPasses(t *testing.T) {
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, 14)
	p := synth.DefaultParams()
	p.Length = 60
	dir := filepath.Join(t.TempDir(), "bids")
	ct, err := synth.WriteCohort(context.Background(), m, a, p, synth.CohortOptions{Subjects: 3}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var subs []Subject
	for _, s := range ct.Subjects {
		subs = append(subs, Subject{Label: "sub-" + s, Path: synth.CohortScan(dir, s)})
	}
	// sub-02 at TR 1 s: its 60 volumes and 59 more (time reversed), 119 in all.
	h, d, err := nifti.ReadImage(subs[1].Path)
	if err != nil {
		t.Fatal(err)
	}
	if h.DataType != nifti.Int16 {
		t.Fatalf("phantom stored as %s, the test wants int16", h.DataType)
	}
	G := h.VoxelsPerVolume()
	fast := append([]float32(nil), d...)
	for v := 58; v >= 0; v-- {
		fast = append(fast, d[v*G:(v+1)*G]...)
	}
	hf := nifti.NewHeader([]int{h.Nx(), h.Ny(), h.Nz(), 119}, nifti.Int16, h.Affine(), 1)
	subs[1].Path = filepath.Join(t.TempDir(), "sub-02_fast.nii.gz")
	if err := nifti.WriteImage(subs[1].Path, hf, fast); err != nil {
		t.Fatal(err)
	}
	// sub-03 with its lowest slabs at a twentieth of their intensity.
	h, d, err = nifti.ReadImage(subs[2].Path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range d {
		if f := i % G; f/(h.Nx()*h.Ny()) < 3 {
			d[i] = float32(math.Round(float64(d[i]) / 20))
		}
	}
	subs[2].Path = filepath.Join(t.TempDir(), "sub-03_dim.nii.gz")
	if err := nifti.WriteImage(subs[2].Path, h, d); err != nil {
		t.Fatal(err)
	}
	svs, err := surveyAll(context.Background(), subs, "", true, newCollector(), progress.OrDiscard(nil))
	if err != nil {
		t.Fatal(err)
	}
	for i, sv := range svs {
		if sv.KeptBytes() == 0 {
			t.Fatalf("%s: survey kept no series", subs[i].Label)
		}
	}
	if svs[0].Mask.Count() == svs[2].Mask.Count() {
		t.Fatalf("sub-01 and sub-03 have masks of %d voxels: the test wants them to differ", svs[0].Mask.Count())
	}
	gogc := debug.SetGCPercent(77)
	defer debug.SetGCPercent(gogc)
	clean := func(_ Subject, s *scan.Scan) error {
		if g := debug.SetGCPercent(77); g != 77 {
			return fmt.Errorf("GOGC %d while loading", g)
		}
		for v := 0; v < s.N; v++ { // demean, and drop the first volume
			x := s.Series(v)
			var sum float64
			for _, y := range x {
				sum += float64(y)
			}
			for k := range x {
				x[k] -= float32(sum / float64(s.L))
			}
			copy(s.Data[v*(s.L-1):(v+1)*(s.L-1)], x[1:])
		}
		s.L--
		s.Data = s.Data[:s.N*s.L]
		return nil
	}
	counts := map[string]int{}
	for _, rule := range []string{MaskIntersect, MaskUnion} {
		want, err := Load(context.Background(), subs, Options{MaskRule: rule, Clean: clean, how: wayTwoPass}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, how := range []loadWay{wayStream, wayKeep, wayAuto} {
			name := fmt.Sprintf("%s, way %d", rule, how)
			got, err := Load(context.Background(), subs, Options{MaskRule: rule, Clean: clean, how: how}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.L != 59 || got.L != want.L || got.Scan.N != want.Scan.N || len(got.X) != len(want.X) {
				t.Fatalf("%s: one decode %d nodes × %d volumes, two passes %d × %d", name, got.Scan.N, got.L, want.Scan.N, want.L)
			}
			for i := range want.X {
				if math.Float32bits(got.X[i]) != math.Float32bits(want.X[i]) {
					t.Fatalf("%s: value %d (node %d): one decode %g, two passes %g", name, i, i/(3*got.L), got.X[i], want.X[i])
				}
			}
			if !slices.Equal(got.Scan.IJK, want.Scan.IJK) || !slices.Equal(got.Scan.Mask.In, want.Scan.Mask.In) || !slices.Equal(got.Notes, want.Notes) ||
				!slices.Equal(got.Inputs, want.Inputs) || got.Scan.TR != 2 || got.Scan.Dropped != want.Scan.Dropped {
				t.Errorf("%s: one decode nodes/mask/notes/inputs/TR differ from two passes': notes %q vs %q", name, got.Notes, want.Notes)
			}
			if !strings.Contains(strings.Join(got.Notes, "\n"), "TR: 1 at 1 s (sub-02) resampled to 2 s") {
				t.Errorf("%s: notes %q do not say the resampling", name, got.Notes)
			}
			counts[rule] = got.Scan.N
		}
		t.Logf("%s: %d nodes × 3 subjects × %d volumes equal; %s", rule, want.Scan.N, want.L, want.Notes[0])
	}
	if counts[MaskUnion] <= counts[MaskIntersect] {
		t.Errorf("union %d nodes, intersection %d: the union should hold sub-03's dimmed voxels", counts[MaskUnion], counts[MaskIntersect])
	}
}

// TestLoadCancels: a load cancelled while a subject is being cleaned stops with an error that
// wraps context.Canceled and names a subject, whichever way it reads (12 subjects: the other
// goroutines stop within a volume, or before copying).
func TestLoadCancels(t *testing.T) {
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, 16)
	p := synth.DefaultParams()
	p.Length = 30
	dir := filepath.Join(t.TempDir(), "bids")
	ct, err := synth.WriteCohort(context.Background(), m, a, p, synth.CohortOptions{Subjects: 2}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var subs []Subject
	for i := range 12 {
		s := ct.Subjects[i%2]
		subs = append(subs, Subject{Label: fmt.Sprintf("sub-%02d", i+1), Path: synth.CohortScan(dir, s)})
	}
	for _, how := range []loadWay{wayStream, wayKeep} {
		ctx, cancel := context.WithCancel(context.Background())
		clean := func(sub Subject, s *scan.Scan) error {
			if sub.Label == "sub-03" {
				cancel()
			}
			return nil
		}
		_, err := Load(ctx, subs, Options{Clean: clean, how: how}, nil)
		cancel()
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "sub-") {
			t.Errorf("way %d: cancelled load: %v", how, err)
		}
	}
}

// TestCollector: after a twentieth of the live heap (at least 32 MiB) is allocated, check
// collects; before, it does not.
func TestCollector(t *testing.T) {
	runtime.GC()
	c := newCollector()
	var st runtime.MemStats
	runtime.ReadMemStats(&st)
	n0 := st.NumGC
	c.check()
	runtime.ReadMemStats(&st)
	if st.NumGC != n0 {
		t.Fatalf("collected with nothing allocated (%d → %d)", n0, st.NumGC)
	}
	for range 40 {
		sink = make([]byte, 4<<20)
	}
	c.check()
	runtime.ReadMemStats(&st)
	if st.NumGC == n0 {
		t.Fatal("160 MiB allocated and no collection")
	}
}

var sink []byte

// TestSubjectNamed: a subject's error names the subject and its file once each.
func TestSubjectNamed(t *testing.T) {
	p := "/data/sub-01/func/sub-01_task-rest_bold.nii.gz"
	cases := []struct {
		sub  Subject
		err  string
		want string
	}{
		{Subject{"a.nii", "/x/a.nii"}, "open /x/a.nii: no such file", "open /x/a.nii: no such file"},
		{Subject{"a.nii", "/x/a.nii"}, "3D image", "/x/a.nii: 3D image"},
		{Subject{"sub-01", p}, "open " + p + ": truncated", "sub-01: open " + p + ": truncated"},
		{Subject{"sub-01", p}, "3 volumes left", "sub-01 (" + p + "): 3 volumes left"},
		{Subject{"sub-01", p}, "sub-01 has another grid", "sub-01 has another grid"},
	}
	for _, c := range cases {
		if got := c.sub.named(errors.New(c.err)).Error(); got != c.want {
			t.Errorf("%v, %q: got %q, want %q", c.sub, c.err, got, c.want)
		}
	}
}
