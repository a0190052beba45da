// Package registertest holds the reference the registration tests compare against: dipy's
// affine registration (Debian's python3-dipy) run from several starts, keeping the solution
// with dipy's best cost. dipy's answer from its documented centre-of-mass start alone moves by up
// to 20 mm between templates and stalls short of its own optimum on slab EPIs
// (docs/realign.md, "Against dipy"), so one run of it is no fixed reference.
package registertest

import (
	"encoding/json"
	"math"
	"sort"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/realign"
)

// Solution is one dipy run: where it started, the MNI → scan world affine it ended at, and its
// final cost (dipy's negative mutual information at the finest level; lower is better).
type Solution struct {
	Start  string         `json:"start"`
	Affine realign.Affine `json:"affine"`
	Cost   float64        `json:"cost"`
	CPU    float64        `json:"cpu_s"`
}

// dipyStarts runs dipy 1.6's affine chain as its documentation gives it — translation, rigid,
// affine, each with MutualInformationMetric(32 bins), level_iters [10000, 1000, 100], sigmas
// [3, 1, 0], factors [4, 2, 1] — from three starts: the centres of mass (dipy's documented
// start), the principal axes of the two brains (the rotation of the least angle that maps the
// template brain's axes onto the scan brain's, about the centres of mass), and the affine given
// as the third argument (ours). It prints the solutions as JSON.
const dipyStarts = `
import sys, json, time, numpy as np, nibabel as nib
from dipy.align.imaffine import AffineRegistration, MutualInformationMetric, transform_centers_of_mass
from dipy.align.transforms import TranslationTransform3D, RigidTransform3D, AffineTransform3D
s = nib.load(sys.argv[1]); m = nib.load(sys.argv[2]); ours = np.array(json.loads(sys.argv[3]))
S = np.asarray(s.dataobj, dtype=np.float64); M = np.asarray(m.dataobj, dtype=np.float64)
def pts(img, D):
    ijk = np.argwhere(D > 0).T
    return (img.affine @ np.vstack([ijk, np.ones(ijk.shape[1])]))[:3]
def principal_axes():
    a, b = pts(s, S), pts(m, M)
    va, vb = np.linalg.eigh(np.cov(a))[1], np.linalg.eigh(np.cov(b))[1]
    best = None
    for sg in ([1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1], [-1, 1, 1], [1, -1, 1], [1, 1, -1], [-1, -1, -1]):
        r = vb @ np.diag(sg) @ va.T
        if np.linalg.det(r) > 0 and (best is None or np.trace(r) > np.trace(best)):
            best = r
    out = np.eye(4); out[:3, :3] = best; out[:3, 3] = b.mean(1) - best @ a.mean(1)
    return out
starts = [('centre of mass', transform_centers_of_mass(S, s.affine, M, m.affine).affine),
          ('principal axes', principal_axes()), ('ours', ours)]
out = []
for name, a in starts:
    t0 = time.process_time()
    reg = AffineRegistration(metric=MutualInformationMetric(32, None), level_iters=[10000, 1000, 100],
                             sigmas=[3.0, 1.0, 0.0], factors=[4, 2, 1], verbosity=0)
    for tr in (TranslationTransform3D(), RigidTransform3D(), AffineTransform3D()):
        amap, _, cost = reg.optimize(S, M, tr, None, s.affine, m.affine, starting_affine=a, ret_metric=True)
        a = amap.affine
    out.append({'start': name, 'affine': a.tolist(), 'cost': float(cost), 'cpu_s': time.process_time() - t0})
print(json.dumps(out))
`

// DipyStarts registers the brain-masked EPI at epiPath to the template at templatePath with
// dipy from the three starts (ours: our MNI → scan world affine) and returns the solutions,
// best (lowest cost) first. It needs numpy, nibabel and dipy (pyref.Require).
func DipyStarts(t testing.TB, templatePath, epiPath string, ours realign.Affine) []Solution {
	t.Helper()
	pyref.Require(t, "numpy", "nibabel", "dipy")
	arg, err := json.Marshal(ours)
	if err != nil {
		t.Fatal(err)
	}
	var sols []Solution
	if err := json.Unmarshal(pyref.Run(t, dipyStarts, templatePath, epiPath, string(arg)), &sols); err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(sols, func(i, j int) bool { return sols[i].Cost < sols[j].Cost })
	return sols
}

// Corners are the MNI brain's bounding-box corners (mm), where the issue measures how far two
// registrations differ (1 voxel of the 2 mm template).
var Corners = func() [][3]float64 {
	var c [][3]float64
	for _, x := range []float64{-70, 70} {
		for _, y := range []float64{-104, 72} {
			for _, z := range []float64{-50, 80} {
				c = append(c, [3]float64{x, y, z})
			}
		}
	}
	return c
}()

// CornerDistance is the largest distance (mm) between where a and b (both MNI → scan world) put
// the Corners.
func CornerDistance(a, b realign.Affine) float64 {
	var worst float64
	for _, c := range Corners {
		worst = math.Max(worst, Dist(realign.Apply(a, c), realign.Apply(b, c)))
	}
	return worst
}

// Dist is the Euclidean distance of two points (mm).
func Dist(a, b [3]float64) float64 {
	return math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2]))
}
