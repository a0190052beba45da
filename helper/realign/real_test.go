package realign

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/internal/shareddata"
)

// dataDir is the shared real-data folder (internal/shareddata): skipped, or failed under
// HUBSCOPE_STRICT=1, without its real scans.
func dataDir(t testing.TB) string {
	t.Helper()
	return shareddata.Require(t, filepath.Join("dicom", "ref"))
}

// readSeries reads a 4D NIfTI as one float32 volume per time point.
func readSeries(t testing.TB, path string) (Grid, [][]float32) {
	t.Helper()
	h, data, err := nifti.ReadImage(path)
	if err != nil {
		t.Fatal(err)
	}
	g := Grid{Dims: [3]int{h.Nx(), h.Ny(), h.Nz()}, Affine: h.Affine()}
	n := g.Len()
	vols := make([][]float32, h.Volumes())
	for v := range vols {
		vols[v] = data[v*n : (v+1)*n]
	}
	return g, vols
}

// moveVolume writes a copy of vol moved by p: out(y) = vol(M⁻¹·y), sampled by cubic B-spline.
func moveVolume(g Grid, vol []float32, p Params) []float32 {
	inv, _ := Inverse(p.Matrix(g.Center()))
	out := make([]float32, g.Len())
	cov := make([]bool, g.Len())
	resliceVolume(g, vol, inv, BSpline, make([]float32, g.Len()), out, cov)
	return out
}

// dipyRigid is dipy's rigid registration (dipy.align.imaffine, mutual information, the
// pyramid of its documentation) of every volume t ≥ 1 of a 4D file to volume 0; it prints the
// static-world → moving-world affines, the same direction as Params.Matrix.
const dipyRigid = `
import sys, json, numpy as np, nibabel as nib
from dipy.align.imaffine import AffineRegistration, MutualInformationMetric
from dipy.align.transforms import RigidTransform3D
im = nib.load(sys.argv[1]); d = np.asarray(im.dataobj, dtype=np.float64); A = im.affine
reg = AffineRegistration(metric=MutualInformationMetric(32, None), level_iters=[10000, 1000, 100],
                         sigmas=[3.0, 1.0, 0.0], factors=[4, 2, 1], verbosity=0)
out = [reg.optimize(d[..., 0], d[..., t], RigidTransform3D(), None, A, A).affine.tolist()
       for t in range(1, d.shape[3])]
print(json.dumps(out))
`

// TestRealEPIMotionAgainstDipy moves a real EPI volume (dcm2niix's conversion of a Siemens
// ep2d_bold series) by known rigid transforms up to 3 mm / 3° and registers the copies back with
// realign and with dipy: both must find the truth, and each other, within 0.1 mm and 0.1°.
func TestRealEPIMotionAgainstDipy(t *testing.T) {
	dir := dataDir(t)
	pyref.Require(t, "numpy", "nibabel", "dipy")
	g, src := readSeries(t, filepath.Join(dir, "dicom", "ref", "sag_int_36sl_21.nii"))
	truth := []Params{{}, {2.5, -1.2, 0.8, 0.03, -0.02, 0.045}, {-1.5, 2.8, -2.2, -0.05, 0.04, -0.015}}
	// Blank a 4-voxel border of the source so that no head moves out of the field of view: the
	// moved copies then hold everything the reference holds, and neither method is biased by
	// content that the simulation (unlike a scanner) would cut off.
	base := append([]float32(nil), src[0]...)
	for k := 0; k < g.Dims[2]; k++ {
		for j := 0; j < g.Dims[1]; j++ {
			for i := 0; i < g.Dims[0]; i++ {
				if min(i, j, k, g.Dims[0]-1-i, g.Dims[1]-1-j, g.Dims[2]-1-k) < 4 {
					base[i+g.Dims[0]*(j+g.Dims[1]*k)] = 0
				}
			}
		}
	}
	vols := make([][]float32, len(truth))
	for v, p := range truth {
		vols[v] = moveVolume(g, base, p)
	}
	opt := DefaultOptions()
	opt.RegisterToMean = false
	res, err := Estimate(context.Background(), g, vols, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "moved.nii")
	flat := make([]float32, 0, g.Len()*len(vols))
	for _, v := range vols {
		flat = append(flat, v...)
	}
	h := nifti.NewHeader([]int{g.Dims[0], g.Dims[1], g.Dims[2], len(vols)}, nifti.Float32, g.Affine, 3)
	if err := nifti.WriteImage(path, h, flat); err != nil {
		t.Fatal(err)
	}
	var affines []Affine
	if err := json.Unmarshal(pyref.Run(t, dipyRigid, path), &affines); err != nil {
		t.Fatal(err)
	}
	c := g.Center()
	for v := 1; v < len(truth); v++ {
		dp := ParamsOf(affines[v-1], c)
		ours := res.Params[v]
		t.Logf("volume %d: truth %s\n  ours %s\n  dipy %s", v, fmtParams(truth[v]), fmtParams(ours), fmtParams(dp))
		for _, cmp := range []struct {
			what string
			a, b Params
		}{{"ours vs truth", ours, truth[v]}, {"dipy vs truth", dp, truth[v]}, {"ours vs dipy", ours, dp}} {
			if mm, deg := paramDiff(cmp.a, cmp.b); mm > 0.1 || deg > 0.1 {
				t.Errorf("volume %d, %s: differ by %.3f mm / %.3f°", v, cmp.what, mm, deg)
			}
		}
	}
}

func fmtParams(p Params) string {
	return fmt.Sprintf("%7.3f %7.3f %7.3f mm %7.3f %7.3f %7.3f°", p[0], p[1], p[2], p[3]*180/math.Pi, p[4]*180/math.Pi, p[5]*180/math.Pi)
}

// paramDiff is the largest translation difference (mm) and rotation difference (degrees).
func paramDiff(a, b Params) (mm, deg float64) {
	for k := 0; k < 3; k++ {
		mm = math.Max(mm, math.Abs(a[k]-b[k]))
		deg = math.Max(deg, math.Abs(a[k+3]-b[k+3])*180/math.Pi)
	}
	return mm, deg
}
