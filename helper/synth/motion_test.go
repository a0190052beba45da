package synth

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/graph/community"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/realign"
	"github.com/hubscope/hubscope/helper/scan"
)

// TestMovingPhantomRealigned writes the moving phantom (motion up to 3 mm / 3°), realigns it, and
// checks that the planted motion comes back within 0.1 mm / 0.1° RMS and that Leiden finds the
// planted modules (NMI ≥ 0.9) in the realigned scan's density-1 % network, while the network of
// the scan as written (not realigned) loses them.
func TestMovingPhantomRealigned(t *testing.T) {
	m, a := testMask(t, 8)
	p := DefaultParams()
	p.DataType = nifti.Float32
	if raceEnabled {
		p.Length = 120
	}
	out := filepath.Join(t.TempDir(), "moving.nii")
	tr, traj, err := WriteMoving(context.Background(), m, a, p, Motion{MaxShiftMM: 3, MaxRotDeg: 3}, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	var peakMM, peakDeg float64
	for _, q := range traj {
		for k := 0; k < 3; k++ {
			peakMM = math.Max(peakMM, math.Abs(q[k]))
			peakDeg = math.Max(peakDeg, math.Abs(q[k+3])*180/math.Pi)
		}
	}
	if peakMM < 1.5 || peakMM > 3 || peakDeg < 1.5 || peakDeg > 3 {
		t.Fatalf("planted motion peaks at %.2f mm / %.2f°, want 1.5–3", peakMM, peakDeg)
	}
	h, data, err := nifti.ReadImage(out)
	if err != nil {
		t.Fatal(err)
	}
	g := realign.Grid{Dims: [3]int{h.Nx(), h.Ny(), h.Nz()}, Affine: h.Affine()}
	vols := make([][]float32, h.Volumes())
	for v := range vols {
		vols[v] = slices.Clone(data[v*g.Len() : (v+1)*g.Len()])
	}
	res, err := realign.Estimate(context.Background(), g, vols, realign.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var st, sr float64
	for v := range traj {
		for k := 0; k < 3; k++ {
			st += math.Pow(res.Params[v][k]-traj[v][k], 2)
			sr += math.Pow((res.Params[v][k+3]-traj[v][k+3])*180/math.Pi, 2)
		}
	}
	rmsMM, rmsDeg := math.Sqrt(st/float64(3*len(traj))), math.Sqrt(sr/float64(3*len(traj)))
	t.Logf("motion recovered to %.4f mm / %.4f° RMS (planted peaks %.2f mm / %.2f°)", rmsMM, rmsDeg, peakMM, peakDeg)
	if rmsMM > 0.1 || rmsDeg > 0.1 {
		t.Errorf("motion RMS error %.4f mm / %.4f°, want ≤ 0.1", rmsMM, rmsDeg)
	}
	pm := padMaskOf(t, out)
	before := modulesNMI(t, pm, data, g.Len(), len(vols), tr.Modules)
	ropt := realign.DefaultOptions()
	ropt.Interp = realign.BSpline
	if _, err := realign.Reslice(context.Background(), g, vols, res, ropt, nil); err != nil {
		t.Fatal(err)
	}
	flat := make([]float32, 0, len(data))
	for _, v := range vols {
		flat = append(flat, v...)
	}
	after := modulesNMI(t, pm, flat, g.Len(), len(vols), tr.Modules)
	t.Logf("Leiden NMI with the planted modules: %.3f as written, %.3f realigned", before, after)
	if after < 0.9 {
		t.Errorf("realigned NMI %.3f, want ≥ 0.9", after)
	}
	if before > after-0.1 {
		t.Errorf("the unrealigned scan keeps its modules (NMI %.3f vs %.3f realigned): the phantom's motion does not bite", before, after)
	}
}

// padMaskOf returns the phantom's mask on its padded grid: the voxels of the truth module map.
func padMaskOf(t *testing.T, out string) scan.Mask {
	modPath, _ := TruthPaths(out)
	h, lab, err := nifti.ReadImage(modPath)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]bool, len(lab))
	for f, v := range lab {
		in[f] = v > 0
	}
	return scan.Mask{Dims: [3]int{h.Nx(), h.Ny(), h.Nz()}, In: in}
}

// modulesNMI builds the density-1 % network of the mask's voxels (Pearson) and compares its
// Leiden modules with the planted ones.
func modulesNMI(t *testing.T, m scan.Mask, data []float32, nvox, l int, truth []int32) float64 {
	s := &scan.Scan{N: m.Count(), L: l}
	s.Data = make([]float32, 0, s.N*l)
	for f, ok := range m.In {
		if ok {
			for v := 0; v < l; v++ {
				s.Data = append(s.Data, data[v*nvox+f])
			}
		}
	}
	p := normalized(s)
	n := len(p)
	vals := make([]float32, 0, n*(n-1)/2)
	for i := range n {
		for j := i + 1; j < n; j++ {
			vals = append(vals, float32(dotF(p[i], p[j])))
		}
	}
	k := int(math.Round(0.01 * float64(len(vals))))
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	thr := sorted[len(sorted)-k]
	var edges [][2]int32
	idx := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			if vals[idx] >= thr {
				edges = append(edges, [2]int32{int32(i), int32(j)})
			}
			idx++
		}
	}
	gr, err := graph.FromEdges(n, edges, nil)
	if err != nil {
		t.Fatal(err)
	}
	mods, err := community.LeidenModules(context.Background(), gr, community.LeidenOptions{Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int, len(truth))
	for i, v := range truth {
		want[i] = int(v)
	}
	nmi, err := community.NormalizedMutualInformation(mods.Membership, want)
	if err != nil {
		t.Fatal(err)
	}
	return nmi
}
