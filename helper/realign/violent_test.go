package realign

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// pairScores registers volume 1 of a two-volume file to volume 0 with dipy's rigid
// registration (as dipyRigid) and scores three transforms of volume 1 onto volume 0 — none, ours
// (argv[2], static world → moving world) and dipy's — by a cost neither method optimises,
// computed in numpy over the head of volume 0 (above an eighth of the mean of its bright
// voxels): the correlation of the two volumes after trilinear reslicing. (The normalised mutual
// information is printed too, but it rates any resliced pair below the pair left on its grid,
// whose intensities are not interpolated: it cannot rank "none" against a transform.) It prints
// dipy's affine and the scores.
const pairScores = `
import sys, json, numpy as np, nibabel as nib
from scipy import ndimage
from dipy.align.imaffine import AffineRegistration, MutualInformationMetric
from dipy.align.transforms import RigidTransform3D
im = nib.load(sys.argv[1]); d = np.asarray(im.dataobj, dtype=np.float64); A = im.affine
ours = np.array(json.loads(sys.argv[2]))
reg = AffineRegistration(metric=MutualInformationMetric(32, None), level_iters=[10000, 1000, 100],
                         sigmas=[3.0, 1.0, 0.0], factors=[4, 2, 1], verbosity=0)
dipy = reg.optimize(d[..., 0], d[..., 1], RigidTransform3D(), None, A, A).affine
v0, v1 = d[..., 0], d[..., 1]
bright = v0[v0 > v0.mean()]
head = v0 > bright.mean() / 8
ijk = np.argwhere(head).T; x = A @ np.vstack([ijk, np.ones(ijk.shape[1])])
def H(p): p = p[p > 0]; return -np.sum(p * np.log(p))
def score(M):
    y = (np.linalg.inv(A) @ M @ x)[:3]
    a = v0[head]; b = ndimage.map_coordinates(v1, y, order=1, mode='constant')
    h, _, _ = np.histogram2d(a, b, bins=64); p = h / h.sum()
    return {'NMI': (H(p.sum(1)) + H(p.sum(0))) / H(p.ravel()), 'R': np.corrcoef(a, b)[0, 1]}
print(json.dumps({'dipy': dipy.tolist(), 'none': score(np.eye(4)), 'ours': score(ours), 'dipy_score': score(dipy)}))
`

// TestViolentPairsAgainstDipy: the three real dcm_qa pairs, in which the participant rotated the
// head violently between and during the two volumes. No rigid transform fits a head that moved
// during a volume, so ours (least squares) and dipy's (mutual information) need not agree within
// 0.1 mm / 0.1° here, and they do not (docs/realign.md, "The real pairs with violent head
// motion"). What is checked: both transforms align the pair better than leaving it, and ours
// within 0.02 of dipy's or better, by the correlation of the resliced pair (numpy). Measured
// (2026-11-28): ax_asc 0.669 ours against 0.505 dipy (dipy stops near the identity), sag_int
// 0.834 against 0.846, fMRI_MB 0.818 against 0.817; none 0.480 / 0.816 / 0.752.
func TestViolentPairsAgainstDipy(t *testing.T) {
	dir := dataDir(t)
	pyref.Require(t, "numpy", "scipy", "nibabel", "dipy")
	for _, name := range []string{"ax_asc_35sl_6", "sag_int_36sl_21", "fMRI_MB_asc_25"} {
		path := filepath.Join(dir, "dicom", "ref", name+".nii")
		g, vols := readSeries(t, path)
		opt := DefaultOptions()
		opt.RegisterToMean = false
		res, err := Estimate(context.Background(), g, vols, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Params[1].Matrix(g.Center())
		arg, _ := json.Marshal(m)
		var out struct {
			Dipy      Affine                   `json:"dipy"`
			None      struct{ NMI, R float64 } `json:"none"`
			Ours      struct{ NMI, R float64 } `json:"ours"`
			DipyScore struct{ NMI, R float64 } `json:"dipy_score"`
		}
		b := pyref.Run(t, pairScores, path, string(arg))
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		dp := ParamsOf(out.Dipy, g.Center())
		mm, deg := paramDiff(res.Params[1], dp)
		t.Logf("%s: ours %s\n  dipy %s\n  differ by %.2f mm / %.2f°; NMI none %.4f, ours %.4f, dipy %.4f; r none %.4f, ours %.4f, dipy %.4f",
			name, fmtParams(res.Params[1]), fmtParams(dp), mm, deg, out.None.NMI, out.Ours.NMI, out.DipyScore.NMI, out.None.R, out.Ours.R, out.DipyScore.R)
		if out.Ours.R <= out.None.R || out.DipyScore.R <= out.None.R {
			t.Errorf("%s: a transform aligns the pair worse than none (correlation: none %.4f, ours %.4f, dipy %.4f)", name, out.None.R, out.Ours.R, out.DipyScore.R)
		}
		if out.Ours.R < out.DipyScore.R-0.02 {
			t.Errorf("%s: ours aligns the pair worse than dipy's (correlation %.4f against %.4f)", name, out.Ours.R, out.DipyScore.R)
		}
	}
}
