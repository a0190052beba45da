package synth

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/realign"
	"github.com/hubscope/hubscope/helper/scan"
)

// Motion describes the head motion WriteMoving plants: every volume's rigid parameters relative
// to the first stay within MaxShiftMM (each translation) and MaxRotDeg (each rotation).
type Motion struct {
	MaxShiftMM float64 // default 3
	MaxRotDeg  float64 // default 3
}

// MotionTruthPath is the true-motion table WriteMoving puts beside out:
// <base>_truth_motion.tsv (realign's table: trans_x … rot_z in mm and radians, FD).
func MotionTruthPath(out string) string {
	mod, _ := TruthPaths(out)
	return strings.TrimSuffix(mod, "_truth_modules.nii.gz") + "_truth_motion.tsv"
}

// motionPad is the margin (voxels) added around the mask's grid: the soft head edge (3 voxels of
// dilation plus the blur) and the motion must stay inside the field of view.
func motionPad(voxelMM float64, m Motion) int {
	return 5 + int(math.Ceil((m.MaxShiftMM+m.MaxRotDeg*math.Pi/180*80)/voxelMM))
}

// MotionTrajectory returns L rigid parameter sets: a smooth drift (two random-phase sinusoids per
// parameter, 0.5–2 and 3–8 cycles over the run), shifted so volume 0 is the origin and scaled so
// every parameter stays within the limits.
func MotionTrajectory(l int, m Motion, seed int64) []realign.Params {
	rng := newRand(seed, streamMotion)
	p := make([]realign.Params, l)
	for k := 0; k < 6; k++ {
		f1, f2 := 0.5+1.5*rng.Float64(), 3+5*rng.Float64()
		ph1, ph2 := 2*math.Pi*rng.Float64(), 2*math.Pi*rng.Float64()
		raw := make([]float64, l)
		var peak float64
		for t := range raw {
			x := float64(t) / float64(max(l, 1))
			raw[t] = 0.7*math.Sin(2*math.Pi*f1*x+ph1) + 0.3*math.Sin(2*math.Pi*f2*x+ph2)
			raw[t] -= 0.7*math.Sin(ph1) + 0.3*math.Sin(ph2)
			peak = math.Max(peak, math.Abs(raw[t]))
		}
		lim := m.MaxShiftMM
		if k >= 3 {
			lim = m.MaxRotDeg * math.Pi / 180
		}
		amp := lim * (0.5 + 0.5*rng.Float64()) // this parameter's peak: half to all of the limit
		for t := range raw {
			if peak > 0 {
				p[t][k] = raw[t] / peak * amp
			}
		}
	}
	return p
}

// WriteMoving writes a phantom whose head moves: the phantom of Write (same parameters, same
// truth) on the mask's grid padded by a margin, with a soft-edged head — a baseline of
// p.Baseline inside the mask and three voxels beyond it, falling to 0 through a Gaussian blur of
// σ = 1 voxel — so that interpolation does not turn the edge into a motion-locked artefact
// (a hard 1000→0 edge rings through the two interpolations of moving and realigning), times a
// smooth tissue texture (see texture); each volume is then moved by its rigid parameters
// (MotionTrajectory; cubic B-spline interpolation of the head at M⁻¹·y for every voxel y). Beside out: the truth files of Write on the padded grid and
// MotionTruthPath(out). Returns the truth and the planted motion.
func WriteMoving(ctx context.Context, mask scan.Mask, affine [4][4]float64, p Params, m Motion, out string, rep progress.Reporter) (*Truth, []realign.Params, error) {
	rep = progress.OrDiscard(rep)
	if m.MaxShiftMM == 0 && m.MaxRotDeg == 0 {
		m = Motion{MaxShiftMM: 3, MaxRotDeg: 3}
	}
	if m.MaxShiftMM < 0 || m.MaxRotDeg < 0 || m.MaxShiftMM > 20 || m.MaxRotDeg > 20 {
		return nil, nil, fmt.Errorf("synth: motion limits %g mm / %g° outside 0–20", m.MaxShiftMM, m.MaxRotDeg)
	}
	if err := checkOut(out); err != nil {
		return nil, nil, err
	}
	vs := math.Sqrt(affine[0][0]*affine[0][0] + affine[1][0]*affine[1][0] + affine[2][0]*affine[2][0])
	pm, pa := padMask(mask, affine, motionPad(vs, m))
	g, w, err := create(pm, pa, p, out)
	if err != nil {
		return nil, nil, err
	}
	d := pm.Dims
	grid := realign.Grid{Dims: d, Affine: pa}
	soft := softHead(pm)
	tex := texture(d, p.Seed)
	traj := MotionTrajectory(p.Length, m, p.Seed)
	c := grid.Center()
	vals := make([]float64, len(g.nodes))
	head := make([]float32, grid.Len())
	err = writeVolumes(ctx, w, out, p.Length, grid.Len(), rep, func(t int, vol []float32) {
		g.next(vals)
		for f, s := range soft {
			head[f] = float32(p.Baseline * s * tex[f])
		}
		for v, f := range g.nodes {
			head[f] = float32(vals[v] * soft[f] * tex[f])
		}
		inv, _ := realign.Inverse(traj[t].Matrix(c))
		realign.Resample(grid, head, inv, realign.BSpline, vol)
	})
	if err != nil {
		return nil, nil, err
	}
	modPath, hubPath := TruthPaths(out)
	motPath := MotionTruthPath(out)
	err = writeTruth(g, pm, pa, modPath, hubPath)
	if err == nil {
		err = writeMotionTruth(motPath, traj)
	}
	if err != nil {
		os.Remove(out)
		os.Remove(modPath)
		os.Remove(hubPath)
		return nil, nil, err
	}
	rep.Note(fmt.Sprintf("moving phantom %s: %d voxels, %d volumes, motion within %g mm / %g°; truth in %s",
		filepath.Base(out), len(g.nodes), p.Length, m.MaxShiftMM, m.MaxRotDeg, filepath.Base(motPath)))
	return g.truth, traj, nil
}

func writeMotionTruth(path string, traj []realign.Params) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	res := &realign.Result{Params: traj, FD: realign.FramewiseDisplacement(traj)}
	if err := res.WriteTSV(f); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// padMask embeds the mask in a grid grown by pad voxels on every side.
func padMask(m scan.Mask, a [4][4]float64, pad int) (scan.Mask, [4][4]float64) {
	d := [3]int{m.Dims[0] + 2*pad, m.Dims[1] + 2*pad, m.Dims[2] + 2*pad}
	in := make([]bool, d[0]*d[1]*d[2])
	for k := 0; k < m.Dims[2]; k++ {
		for j := 0; j < m.Dims[1]; j++ {
			for i := 0; i < m.Dims[0]; i++ {
				if m.In[m.Flat(i, j, k)] {
					in[(i+pad)+d[0]*((j+pad)+d[1]*(k+pad))] = true
				}
			}
		}
	}
	for r := 0; r < 3; r++ {
		a[r][3] -= float64(pad) * (a[r][0] + a[r][1] + a[r][2])
	}
	return scan.Mask{Dims: d, In: in}, a
}

// softHead is the baseline's shape: the mask dilated by 3 voxels (6-neighbourhood), blurred by a
// Gaussian of σ = 1 voxel, then set to exactly 1 on the mask itself (where the blur is already
// within 0.5 % of 1) so that the network's voxels carry no edge.
func softHead(m scan.Mask) []float64 {
	in := m.In
	for i := 0; i < 3; i++ {
		in = morph(m.Dims, in, true)
	}
	v := make([]float32, len(in))
	for f, ok := range in {
		if ok {
			v[f] = 1
		}
	}
	s := realignSmooth(v, m.Dims)
	out := make([]float64, len(s))
	for f, x := range s {
		out[f] = float64(x)
		if m.In[f] {
			out[f] = 1
		}
	}
	return out
}

// realignSmooth blurs by σ = 1 voxel (FWHM 2.355 voxels) with realign's separable Gaussian.
func realignSmooth(v []float32, dims [3]int) []float32 {
	return realign.Smooth(v, dims, [3]float64{1, 1, 1}, math.Sqrt(8*math.Ln2))
}

// streamMotion is the PCG stream of the motion trajectory (apart from the generator's streams).
const streamMotion = 101

// texture is the tissue contrast inside the head: 1 + 0.15·T with T a smooth random field (white
// noise blurred by σ = 2 voxels, scaled to unit SD). Motion over it changes a voxel's intensity by
// tens of units — more than the planted fluctuations — which is what realignment must undo;
// smooth enough that a cubic spline resamples it without a motion-locked error.
func texture(d [3]int, seed int64) []float64 {
	rng := newRand(seed, streamMotion+1)
	w := make([]float32, d[0]*d[1]*d[2])
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	s := realign.Smooth(w, d, [3]float64{1, 1, 1}, 2*math.Sqrt(8*math.Ln2))
	var ss float64
	for _, x := range s {
		ss += float64(x) * float64(x)
	}
	sd := math.Sqrt(ss / float64(len(s)))
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = 1 + 0.15*float64(x)/sd
	}
	return out
}
