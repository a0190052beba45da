package pipeline

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/realign"
	"github.com/hubscope/hubscope/helper/register"
	"github.com/hubscope/hubscope/helper/register/registertest"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/internal/shareddata"
	"github.com/hubscope/hubscope/ipc/settings"
)

// TestRegisteredHubsAgainstDipy is the check that hub MNI coordinates and atlas labels
// of a real scan agree with those computed through dipy's affine. The real scanner EPIs of the
// shared data (dcm_qa) have two volumes each, too few for a network, so the scan here is the
// real sag_int_36sl_21 volume (its anatomy, grid and header) repeated over 30 volumes with
// fluctuations shared within 12 smooth blobs planted in its brain: the network and its hubs
// come from those, and the registration sees the real EPI's mean. `run --register on` writes the
// hubs' MNI positions and AAL labels (qc/hubs_mni.tsv); dipy registers the same masked mean
// image (registertest: dipy's best of three starts, on the embedded 4 mm template, which keeps
// dipy at ~10 CPU-s a start), and every hub's MNI position and AAL label through dipy's affine
// is compared with ours.
func TestRegisteredHubsAgainstDipy(t *testing.T) {
	dir := shareddata.Require(t, filepath.Join("dicom", "ref", "sag_int_36sl_21.nii"))
	h, data, err := nifti.ReadImage(filepath.Join(dir, "dicom", "ref", "sag_int_36sl_21.nii"))
	if err != nil {
		t.Fatal(err)
	}
	dims := [3]int{h.Nx(), h.Ny(), h.Nz()}
	n := dims[0] * dims[1] * dims[2]
	base := data[:n]
	mask := scan.EPIMask(base, dims, 0.2, 0.85)
	aff := h.Affine()
	var brain []int
	for f, in := range mask.In {
		if in {
			brain = append(brain, f)
		}
	}
	// 12 blobs (Gaussian, σ 8 mm) centred on brain voxels, each with its own time course.
	const length, blobs = 30, 12
	rng := rand.New(rand.NewPCG(23, 5))
	var centres [][3]float64
	for range blobs {
		f := brain[rng.IntN(len(brain))]
		centres = append(centres, realign.Apply(aff, [3]float64{float64(f % dims[0]), float64(f / dims[0] % dims[1]), float64(f / (dims[0] * dims[1]))}))
	}
	course := make([][]float64, blobs)
	for b := range course {
		course[b] = make([]float64, length)
		for k := range course[b] {
			course[b][k] = rng.NormFloat64()
		}
	}
	series := make([]float32, n*length)
	for _, f := range brain {
		x := realign.Apply(aff, [3]float64{float64(f % dims[0]), float64(f / dims[0] % dims[1]), float64(f / (dims[0] * dims[1]))})
		var w [blobs]float64
		for b, c := range centres {
			d := registertest.Dist(x, c)
			w[b] = math.Exp(-d * d / (2 * 8 * 8))
		}
		for k := 0; k < length; k++ {
			s := 0.01 * rng.NormFloat64()
			for b := range w {
				s += 0.03 * w[b] * course[b][k]
			}
			series[k*n+f] = base[f] * float32(1+s)
		}
	}
	tmp := t.TempDir()
	in, maskPath := filepath.Join(tmp, "sag_int_series.nii"), filepath.Join(tmp, "mask.nii")
	hdr := nifti.NewHeader([]int{dims[0], dims[1], dims[2], length}, nifti.Float32, aff, 3)
	if err := nifti.WriteImage(in, hdr, series); err != nil {
		t.Fatal(err)
	}
	m8 := make([]float32, n)
	for _, f := range brain {
		m8[f] = 1
	}
	if err := nifti.WriteImage(maskPath, nifti.NewHeader([]int{dims[0], dims[1], dims[2]}, nifti.Uint8, aff, 0), m8); err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics, cfg.Density = in, maskPath, filepath.Join(tmp, "out"), "cpu", settings.MetricsNone, 0.005
	cfg.Register, cfg.KeepSeries = RealignOn, true
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	// Ours: the hubs' world positions (hubs.tsv) and MNI positions and labels (qc/hubs_mni.tsv).
	hubRows := tsvRows(t, filepath.Join(cfg.Out, "hubs.tsv"))
	mniRows := tsvRows(t, filepath.Join(cfg.Out, "qc", "hubs_mni.tsv"))
	if len(mniRows) < 20 || len(mniRows) != len(hubRows) {
		t.Fatalf("%d MNI rows for %d hubs (want ≥ 20 hubs)", len(mniRows), len(hubRows))
	}
	// dipy on the same masked mean image the registration saw.
	mh, mean, err := nifti.ReadImage(filepath.Join(cfg.Out, "mean.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for f := range mean {
		if !mask.In[f] {
			mean[f] = 0
		}
	}
	epiPath := filepath.Join(tmp, "mean_brain.nii")
	if err := nifti.WriteImage(epiPath, nifti.NewHeader([]int{dims[0], dims[1], dims[2]}, nifti.Float32, mh.Affine(), 0), mean); err != nil {
		t.Fatal(err)
	}
	th, td, err := nifti.ReadImageFS(assets.Template, assets.TemplateImage)
	if err != nil {
		t.Fatal(err)
	}
	tplPath := filepath.Join(tmp, "template_4mm.nii")
	if err := nifti.WriteImage(tplPath, nifti.NewHeader([]int{th.Nx(), th.Ny(), th.Nz()}, nifti.Float32, th.Affine(), 0), td); err != nil {
		t.Fatal(err)
	}
	var rr RegistrationReport
	readJSON(t, filepath.Join(cfg.Out, "qc", "registration.json"), &rr)
	if rr.Result == nil || !rr.LabelsUseIt {
		t.Fatalf("registration: %+v", rr)
	}
	ours, _ := realign.Inverse(rr.Result.ToMNI)
	sols := registertest.DipyStarts(t, tplPath, epiPath, ours)
	for _, s := range sols {
		t.Logf("dipy from %s: cost %.4f, corners %.1f mm from ours, %.1f CPU-s", s.Start, s.Cost, registertest.CornerDistance(s.Affine, ours), s.CPU)
	}
	toDipy, ok := realign.Inverse(sols[0].Affine)
	if !ok {
		t.Fatal("dipy's affine is singular")
	}
	aal, err := atlas.LoadFS(assets.Atlas, assets.AtlasImage, assets.AtlasNames)
	if err != nil {
		t.Fatal(err)
	}
	var dists []float64
	same, within2 := 0, 0
	for r, row := range hubRows {
		var world, mni [3]float64
		for k := 0; k < 3; k++ {
			world[k] = parseField(t, row, []string{"x_mm", "y_mm", "z_mm"}[k])
			mni[k] = parseField(t, mniRows[r], []string{"x_mni", "y_mni", "z_mni"}[k])
		}
		d := registertest.Dist(mni, realign.Apply(toDipy, world))
		dists = append(dists, d)
		if d <= 2 {
			within2++
		}
		if _, name := aal.Region(realign.Apply(toDipy, world)); name == mniRows[r]["region"] {
			same++
		}
	}
	sort.Float64s(dists)
	share, close2 := float64(same)/float64(len(dists)), float64(within2)/float64(len(dists))
	t.Logf("%d hubs: MNI positions through ours and dipy's best affine differ by median %.2f mm, max %.2f mm; %.0f %% within 2 mm; AAL labels agree for %.0f %%",
		len(dists), dists[len(dists)/2], dists[len(dists)-1], 100*close2, 100*share)
	if dists[len(dists)/2] > 2 || share < 0.75 {
		t.Errorf("hubs through ours and dipy's affine: median %.2f mm apart (bound 2 mm, one voxel of the 2 mm template), labels agree for %.0f %% (bound 75 %%)", dists[len(dists)/2], 100*share)
	}
}

// tsvRows reads a tab-separated table with a header into rows keyed by column name.
func tsvRows(t *testing.T, path string) []map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	head := strings.Split(lines[0], "\t")
	var rows []map[string]string
	for _, l := range lines[1:] {
		row := map[string]string{}
		for i, v := range strings.Split(l, "\t") {
			if i < len(head) {
				row[head[i]] = v
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func parseField(t *testing.T, row map[string]string, col string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(row[col], 64)
	if err != nil {
		t.Fatalf("column %s: %v", col, err)
	}
	return v
}

// TestRunRegistrationImplausible: a scan whose header gives voxels 0.6× their true size (its
// brain is 0.6× the MNI brain in world space) cannot be registered within the plausible zooms.
// The run keeps the network, writes qc/registration.json with the refusal, gives the hubs no
// MNI positions or AAL labels, says why in one line, and does not claim that the scan was not
// registered.
func TestRunRegistrationImplausible(t *testing.T) {
	tpl, err := register.Template()
	if err != nil {
		t.Fatal(err)
	}
	tinv, _ := realign.Inverse(tpl.Affine)
	var a, shrunk [4][4]float64 // the true voxel → world map (6 mm voxels), and the header's
	a[0][0], a[1][1], a[2][2], a[3][3] = 6, 6, 6, 1
	a[0][3], a[1][3], a[2][3] = -100, -136, -84
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			shrunk[i][j] = 0.6 * a[i][j]
		}
	}
	shrunk[3][3] = 1
	dims := []int{34, 40, 35, 12}
	n := dims[0] * dims[1] * dims[2]
	data := make([]float32, n*dims[3])
	rng := rand.New(rand.NewPCG(7, 8))
	f := 0
	for k := 0; k < dims[2]; k++ {
		for j := 0; j < dims[1]; j++ {
			for i := 0; i < dims[0]; i++ {
				y := realign.Apply(tinv, realign.Apply(a, [3]float64{float64(i), float64(j), float64(k)}))
				if v, ok := realign.TrilinearAt(tpl.Data, tpl.Dims, y[0], y[1], y[2]); ok && v > 0 {
					for t := 0; t < dims[3]; t++ {
						data[t*n+f] = float32(v * (1 + 0.03*rng.NormFloat64()))
					}
				}
				f++
			}
		}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "shrunk.nii")
	if err := nifti.WriteImage(in, nifti.NewHeader(dims, nifti.Float32, shrunk, 2), data); err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	cfg.Scan, cfg.Out, cfg.Backend, cfg.Metrics, cfg.Density = in, filepath.Join(dir, "out"), "cpu", settings.MetricsNone, 0.01
	cfg.Register = RealignOn
	rec := &noteRecorder{}
	if _, err := Run(context.Background(), cfg, rec); err != nil {
		t.Fatal(err)
	}
	notes := rec.notes
	var rr RegistrationReport
	readJSON(t, filepath.Join(cfg.Out, "qc", "registration.json"), &rr)
	if !rr.Estimated || rr.Result == nil || rr.Result.Plausible || rr.LabelsUseIt || !strings.Contains(rr.Reason, "refused") {
		t.Fatalf("registration.json of a scan 0.6× the MNI brain: %+v", rr)
	}
	t.Logf("zooms %.2f × %.2f × %.2f, shear %.2f: %s", rr.Result.Zooms[0], rr.Result.Zooms[1], rr.Result.Zooms[2], rr.Result.Shear, rr.Reason)
	if _, err := os.Stat(filepath.Join(cfg.Out, "qc", "hubs_mni.tsv")); !os.IsNotExist(err) {
		t.Errorf("qc/hubs_mni.tsv written for a refused registration (%v)", err)
	}
	hubs := tsvRows(t, filepath.Join(cfg.Out, "hubs.tsv"))
	if len(hubs) == 0 {
		t.Fatal("no hubs: the network was not kept")
	}
	for _, col := range []string{"x_mni", "region"} {
		if _, ok := hubs[0][col]; ok {
			t.Errorf("hubs.tsv has %s after a refused registration", col)
		}
	}
	said := 0
	for _, l := range notes {
		if strings.Contains(l, "registration") && strings.Contains(l, "refused") {
			said++
		}
		if strings.Contains(l, "was not registered") {
			t.Errorf("a note says the scan was not registered, but it was (and refused): %q", l)
		}
	}
	var mj struct {
		Hubs struct {
			Unnamed string `json:"unnamed"`
		} `json:"hubs"`
	}
	readJSON(t, filepath.Join(cfg.Out, "metrics.json"), &mj)
	if !strings.Contains(mj.Hubs.Unnamed, "refused") {
		t.Errorf("metrics.json says of the unnamed hubs %q; want the refused registration named", mj.Hubs.Unnamed)
	}
	if said != 1 {
		t.Errorf("%d notes say the registration was refused, want 1: %q", said, notes)
	}
}
