package register

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/realign"
	"github.com/hubscope/hubscope/helper/register/registertest"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/internal/shareddata"
)

func dataDir(t testing.TB) string {
	d := shareddata.Dir()
	if _, err := os.Stat(filepath.Join(d, "dicom", "ref")); err != nil {
		if pyref.Strict() {
			t.Fatalf("real scans not found under %s (set HUBSCOPE_DATA)", d)
		}
		t.Skipf("real scans not found under %s (set HUBSCOPE_DATA)", d)
	}
	return d
}

// maskedEPI reads the first volume of a real EPI and keeps its brain (nilearn's
// compute_epi_mask rule, scan.EPIMask).
func maskedEPI(t *testing.T, path string) Image {
	h, data, err := nifti.ReadImage(path)
	if err != nil {
		t.Fatal(err)
	}
	dims := [3]int{h.Nx(), h.Ny(), h.Nz()}
	vol := data[:dims[0]*dims[1]*dims[2]]
	m := scan.EPIMask(vol, dims, 0.2, 0.85)
	out := make([]float32, len(vol))
	for f, in := range m.In {
		if in {
			out[f] = vol[f]
		}
	}
	return Image{Dims: dims, Affine: h.Affine(), Data: out}
}

// labelAgreement is the smallest fraction of a real scan's brain voxels whose AAL label must be
// the same through our affine and dipy's (measured on ax_asc_35sl_6: see TestAgainstDipy's log
// and docs/realign.md); below it one of the two registrations failed.
const labelAgreement = 0.75

// cornerBound: how far (mm) our affine may put the MNI brain's corners from dipy's best of three
// starts (TestAgainstDipy): the goal, 1 voxel of the 2 mm template. Measured on
// ax_asc_35sl_6 against dipy on the 4 mm template: 1.96 mm (1.82 mm under the race detector,
// where ours uses the 4 mm template too); against dipy's documented centre-of-mass start alone
// 3.8 mm, which is why the reference is the best of three (docs/realign.md).
const cornerBound = 2.0

// TestAgainstDipy registers a real EPI volume to the template with ToMNI and with dipy, and
// compares where the two put the MNI brain's bounding-box corners in the scan, the brain voxels'
// MNI positions and their AAL labels. The reference is dipy's best solution (its own cost) of
// three starts (registertest.DipyStarts: centres of mass, principal axes, ours): from its
// documented centre-of-mass start alone dipy stops short of its own optimum on these slabs and
// its answers from the three starts spread by 6.9 / 9.2 / 20.9 mm at the corners on the 4 mm
// template (docs/realign.md).
func TestAgainstDipy(t *testing.T) {
	dir := dataDir(t)
	pyref.Require(t, "numpy", "nibabel", "dipy")
	tpl, err := Template()
	if err != nil {
		t.Fatal(err)
	}
	aal, err := atlas.LoadFS(assets.Atlas, assets.AtlasImage, assets.AtlasNames)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	// dipy registers to the embedded 4 mm template: 5–10 CPU-s a start instead of 35–65 on the
	// 2 mm one (the 2 mm figures of docs/realign.md were measured outside the test).
	h4, d4, err := nifti.ReadImageFS(assets.Template, assets.TemplateImage)
	if err != nil {
		t.Fatal(err)
	}
	tplPath := filepath.Join(tmp, "template.nii")
	if err := nifti.WriteImage(tplPath, nifti.NewHeader([]int{h4.Nx(), h4.Ny(), h4.Nz()}, nifti.Float32, h4.Affine(), 0), d4); err != nil {
		t.Fatal(err)
	}
	// One scan keeps the check within CI's time (three dipy runs take ~25 CPU-s); the pipeline's
	// TestRegisteredHubsAgainstDipy checks sag_int_36sl_21 the same way through its hubs.
	for _, name := range []string{"ax_asc_35sl_6"} {
		epi := maskedEPI(t, filepath.Join(dir, "dicom", "ref", name+".nii"))
		start := time.Now()
		res, err := ToMNI(context.Background(), epi, tpl)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		epiPath := filepath.Join(tmp, name+".nii")
		if err := nifti.WriteImage(epiPath, nifti.NewHeader([]int{epi.Dims[0], epi.Dims[1], epi.Dims[2]}, nifti.Float32, epi.Affine, 0), epi.Data); err != nil {
			t.Fatal(err)
		}
		ours, _ := realign.Inverse(res.ToMNI) // MNI → scan
		sols := registertest.DipyStarts(t, tplPath, epiPath, ours)
		var spread float64
		for _, a := range sols {
			for _, b := range sols {
				spread = math.Max(spread, registertest.CornerDistance(a.Affine, b.Affine))
			}
			t.Logf("%s: dipy from %s: cost %.4f, corners %.1f mm from ours (%.1f CPU-s)", name, a.Start, a.Cost, registertest.CornerDistance(a.Affine, ours), a.CPU)
		}
		dm := sols[0].Affine
		t.Logf("%s: dipy's best is from %s; its three solutions spread by %.1f mm at the corners", name, sols[0].Start, spread)
		// An independent measure of both: the overlap (Dice) of the scan's brain mask with the
		// MNI152 2 mm brain mask, over the template voxels inside the scan's field of view.
		dOurs, dDipy := brainDice(t, epi, ours), brainDice(t, epi, dm)
		t.Logf("%s: Dice of the scan's brain mask with the MNI brain mask — ours %.4f, dipy's %.4f", name, dOurs, dDipy)
		if dOurs < dDipy-0.005 {
			t.Errorf("%s: our affine overlaps the scan's brain with the MNI brain less (Dice %.4f) than dipy's (%.4f)", name, dOurs, dDipy)
		}
		lv, err := makeLevel(tpl, epi, levelsFor(tpl)[1])
		if err != nil {
			t.Fatal(err)
		}
		inv, _ := realign.Inverse(epi.Affine)
		miOurs, miDipy := mutualInformation(lv, realign.Mul(inv, ours), epi.Dims), mutualInformation(lv, realign.Mul(inv, dm), epi.Dims)
		t.Logf("%s: MI at 4 mm — ours %.4f, dipy's %.4f", name, miOurs, miDipy)
		// Our optimum must be at least as good as dipy's under our own cost (else the search
		// stalled, as compass search from the centre of mass alone did on fMRI_MB_asc_25).
		if miOurs < miDipy-0.005 {
			t.Errorf("%s: dipy's affine scores MI %.4f under our cost, ours only %.4f: the search stalled", name, miDipy, miOurs)
		}
		worst := registertest.CornerDistance(ours, dm)
		t.Logf("%s: %v, MI %.3f, zooms %.3f %.3f %.3f, shear %.3f, plausible %v; brain corners differ from dipy's best by up to %.2f mm\n ours MNI→scan %v\n dipy %v",
			name, took.Round(time.Millisecond), res.MI, res.Zooms[0], res.Zooms[1], res.Zooms[2], res.Shear, res.Plausible, worst, ours, dm)
		// The goal: 1 voxel of the 2 mm template (cornerBound).
		if worst > cornerBound || !res.Plausible {
			t.Errorf("%s: corners %.1f mm from dipy's best (bound %.1f mm), plausible %v %s", name, worst, cornerBound, res.Plausible, res.Problem)
		}
		// Atlas labels through either affine (the check of hub labels; every brain voxel
		// of the scan stands for a possible hub: a two-volume scan has no meaningful network).
		same, labelled, dists := 0, 0, []float64{}
		toDipy, _ := realign.Inverse(dm)
		f := 0
		for k := 0; k < epi.Dims[2]; k++ {
			for j := 0; j < epi.Dims[1]; j++ {
				for i := 0; i < epi.Dims[0]; i++ {
					if epi.Data[f] > 0 {
						x := realign.Apply(epi.Affine, [3]float64{float64(i), float64(j), float64(k)})
						a, b := realign.Apply(res.ToMNI, x), realign.Apply(toDipy, x)
						dists = append(dists, math.Sqrt((a[0]-b[0])*(a[0]-b[0])+(a[1]-b[1])*(a[1]-b[1])+(a[2]-b[2])*(a[2]-b[2])))
						la, _ := aal.Region(a)
						lb, _ := aal.Region(b)
						if la > 0 || lb > 0 {
							labelled++
							if la == lb {
								same++
							}
						}
					}
					f++
				}
			}
		}
		sortFloats(dists)
		agree := float64(same) / float64(labelled)
		t.Logf("%s: MNI positions of %d brain voxels through ours and dipy's affine differ by median %.1f mm, 95th percentile %.1f mm; AAL labels agree for %.1f %% of the %d voxels either labels",
			name, len(dists), dists[len(dists)/2], dists[len(dists)*95/100], 100*agree, labelled)
		if p95 := dists[len(dists)*95/100]; p95 > 4 {
			t.Errorf("%s: brain voxels' MNI positions through ours and dipy's affine differ by %.1f mm at the 95th percentile (bound 4 mm)", name, p95)
		}
		if agree < labelAgreement {
			t.Errorf("%s: AAL labels through ours and dipy's affine agree for only %.1f %% of brain voxels (bound %.0f %%)", name, 100*agree, 100*labelAgreement)
		}
	}
}

// knownAffineScan is the template moved by a known affine (rotation, translation, anisotropic
// zoom, shear) and resampled onto a 3.5 mm grid whose corner is at origin (mm) with dims voxels;
// it returns the scan and the known affine (MNI → scan world).
func knownAffineScan(tpl Image, origin [3]float64, dims [3]int) (Image, realign.Affine) {
	c := [3]float64{0, -18, 18}
	truth := paramMatrix([12]float64{6, -4, 3, 0.12, -0.05, 0.08, 1.06, 0.95, 1.1, 0.03, 0, 0}, c) // MNI → scan world
	inv, _ := realign.Inverse(truth)
	var a realign.Affine
	a[0][0], a[1][1], a[2][2], a[3][3] = 3.5, 3.5, 3.5, 1
	a[0][3], a[1][3], a[2][3] = origin[0], origin[1], origin[2]
	data := make([]float32, dims[0]*dims[1]*dims[2])
	tinv, _ := realign.Inverse(tpl.Affine)
	f := 0
	for k := 0; k < dims[2]; k++ {
		for j := 0; j < dims[1]; j++ {
			for i := 0; i < dims[0]; i++ {
				y := realign.Apply(realign.Mul(tinv, inv), realign.Apply(a, [3]float64{float64(i), float64(j), float64(k)}))
				if v, ok := realign.TrilinearAt(tpl.Data, tpl.Dims, y[0], y[1], y[2]); ok {
					data[f] = float32(v)
				}
				f++
			}
		}
	}
	return Image{Dims: dims, Affine: a, Data: data}, truth
}

// knownAffinePhantom registers back a "scan" that is the template moved by a known affine
// (rotation, translation, anisotropic zoom, shear) and resampled onto a 3.5 mm grid whose
// corner is at origin (mm) with dims voxels, and returns how far the MNI brain's bounding-box
// corners land from where the known affine puts them (mm).
func knownAffinePhantom(t *testing.T, origin [3]float64, dims [3]int) (float64, *Result) {
	worst, res, _ := knownAffinePhantomMI(t, origin, dims)
	return worst, res
}

// knownAffinePhantomMI is knownAffinePhantom that also returns the mutual information at the
// finest level of the truth and of our result, under our cost ([truth, ours]).
func knownAffinePhantomMI(t *testing.T, origin [3]float64, dims [3]int) (float64, *Result, [2]float64) {
	t.Helper()
	tpl, err := Template()
	if err != nil {
		t.Fatal(err)
	}
	epi, truth := knownAffineScan(tpl, origin, dims)
	res, err := ToMNI(context.Background(), epi, tpl)
	if err != nil {
		t.Fatal(err)
	}
	ours, _ := realign.Inverse(res.ToMNI)
	var worst float64
	for _, p := range registertest.Corners {
		u, v := realign.Apply(ours, p), realign.Apply(truth, p)
		worst = math.Max(worst, math.Sqrt((u[0]-v[0])*(u[0]-v[0])+(u[1]-v[1])*(u[1]-v[1])+(u[2]-v[2])*(u[2]-v[2])))
	}
	lv, err := makeLevel(tpl, epi, levelsFor(tpl)[1])
	if err != nil {
		t.Fatal(err)
	}
	ainv, _ := realign.Inverse(epi.Affine)
	return worst, res, [2]float64{mutualInformation(lv, realign.Mul(ainv, truth), dims), mutualInformation(lv, realign.Mul(ainv, ours), dims)}
}

// TestRecoversKnownAffine: the whole head in the field of view; the MNI brain's corners must
// land within 2 mm (1 voxel of the 2 mm template: the goal) of the truth. Measured
// 1.30 mm (1.50 mm before the cost sampled the background around the brain; 2.47 mm when only
// the scan was smoothed). Our
// optimum must score at least the truth's MI under our cost: the rest of the error is then the
// cost's (measured MI 1.763 at ours, 1.705 at the truth), not a search that stopped early.
func TestRecoversKnownAffine(t *testing.T) {
	worst, res, mi := knownAffinePhantomMI(t, [3]float64{-105, -140, -90}, [3]int{60, 70, 62})
	t.Logf("known affine: corners within %.2f mm; zooms %.3f %.3f %.3f, shear %.3f; MI at the truth %.4f, at ours %.4f", worst, res.Zooms[0], res.Zooms[1], res.Zooms[2], res.Shear, mi[0], mi[1])
	if worst > 2 || !res.Plausible {
		t.Errorf("known affine recovered only to %.2f mm at the brain's corners (plausible %v)", worst, res.Plausible)
	}
	if mi[1] < mi[0] {
		t.Errorf("the truth scores MI %.4f under our cost, our optimum only %.4f: the search stopped short", mi[0], mi[1])
	}
}

// TestRecoversKnownAffineSlab: the same phantom seen through a 98 mm slab (28 slices of 3.5 mm,
// scan z −30…64 mm) that cuts the brain top and bottom, as the real slab EPIs do. Measured
// 1.65 mm (1.45 mm before the background margin): the cost, which only counts template samples
// inside the field of view, shows no
// coverage bias here, so the z zoom of ~1.2 that ours and dipy find on the real slabs is not
// this method's artefact of partial coverage (docs/realign.md).
func TestRecoversKnownAffineSlab(t *testing.T) {
	worst, res := knownAffinePhantom(t, [3]float64{-105, -140, -30}, [3]int{60, 70, 28})
	t.Logf("known affine, 98 mm slab: corners within %.2f mm; zooms %.3f %.3f %.3f, shear %.3f", worst, res.Zooms[0], res.Zooms[1], res.Zooms[2], res.Shear)
	if worst > 2 || !res.Plausible {
		t.Errorf("known affine through a slab recovered only to %.2f mm at the brain's corners (plausible %v)", worst, res.Plausible)
	}
}

func TestImplausibleScalingRefused(t *testing.T) {
	var a realign.Affine
	a[0][0], a[1][1], a[2][2], a[3][3] = 2, 0.5, 1, 1
	z, _ := zoomsShear(a)
	if z != [3]float64{2, 0.5, 1} {
		t.Fatalf("zooms %v", z)
	}
	a[0][1] = 0.6
	if _, sh := zoomsShear(a); math.Abs(sh-0.3) > 1e-12 {
		t.Fatalf("shear %v, want 0.3", sh)
	}
}

// brainDice is the Dice overlap of the scan's brain (epi's non-zero voxels) with the embedded
// MNI152 2 mm brain mask, both seen on the template's 2 mm grid through m (MNI → scan world),
// over the template voxels inside the scan's field of view.
func brainDice(t *testing.T, epi Image, m realign.Affine) float64 {
	t.Helper()
	mask, a, err := synth.DefaultMask()
	if err != nil {
		t.Fatal(err)
	}
	inv, _ := realign.Inverse(epi.Affine)
	toVox := realign.Mul(inv, m)
	in := make([]float32, len(epi.Data))
	for f, v := range epi.Data {
		if v > 0 {
			in[f] = 1
		}
	}
	var both, nm, ne float64
	f := 0
	for k := 0; k < mask.Dims[2]; k++ {
		for j := 0; j < mask.Dims[1]; j++ {
			for i := 0; i < mask.Dims[0]; i++ {
				y := realign.Apply(toVox, realign.Apply(a, [3]float64{float64(i), float64(j), float64(k)}))
				v, ok := realign.TrilinearAt(in, epi.Dims, y[0], y[1], y[2])
				if ok {
					e, b := v > 0.5, mask.In[f]
					if e {
						ne++
					}
					if b {
						nm++
					}
					if e && b {
						both++
					}
				}
				f++
			}
		}
	}
	return 2 * both / (nm + ne)
}
