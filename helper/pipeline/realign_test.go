package pipeline

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/realign"
	"github.com/hubscope/hubscope/helper/register"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/ipc/settings"
)

func TestRealignWanted(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "scan.nii.gz")
	prep := filepath.Join(dir, "sub-01_task-rest_space-MNI152NLin2009cAsym_desc-preproc_bold.nii.gz")
	conf := func(scan, mode, confounds string) Config {
		c := Config{Scan: scan}
		c.Realign, c.Confounds = mode, confounds
		return c
	}
	for _, c := range []struct {
		cfg  Config
		want bool
	}{
		{conf(raw, "", ""), false},
		{conf(raw, RealignOff, ""), false},
		{conf(raw, RealignAuto, ""), true},
		{conf(raw, RealignOn, ""), true},
		{conf(prep, RealignAuto, ""), false},
		{conf(prep, RealignOn, ""), true},
		{conf(raw, RealignAuto, "c.tsv"), false},
		{conf(filepath.Join(dir, "series.csv"), RealignOn, ""), false},
	} {
		if got, why := realignWanted(c.cfg); got != c.want {
			t.Errorf("%s realign=%q: got %v (%s), want %v", filepath.Base(c.cfg.Scan), c.cfg.Realign, got, why, c.want)
		}
	}
	bad := Defaults()
	bad.Scan, bad.Out, bad.Realign = raw, filepath.Join(dir, "out"), "sometimes"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "--realign") {
		t.Errorf("--realign sometimes: %v", err)
	}
}

// TestRunRealigned runs the pipeline on a small moving phantom with --realign on: the bundle
// holds the motion table (one row per volume, fMRIPrep's columns), its plot and summary, and the
// motion found is the planted one.
func TestRunRealigned(t *testing.T) {
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, 12)
	p := synth.DefaultParams()
	p.Length, p.Hubs = 30, 10
	dir := t.TempDir()
	in := filepath.Join(dir, "moving.nii.gz")
	_, traj, err := synth.WriteMoving(context.Background(), m, a, p, synth.Motion{MaxShiftMM: 2, MaxRotDeg: 2}, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	cfg.Scan, cfg.Out, cfg.Backend, cfg.Metrics, cfg.Density = in, filepath.Join(dir, "out"), "cpu", settings.MetricsNone, 0.05
	cfg.Realign, cfg.Denoise = RealignOn, CleanNone
	// The 24-parameter motion expansion regressed from the realignment's own table.
	var cols []string
	for _, n := range []string{"trans_x", "trans_y", "trans_z", "rot_x", "rot_y", "rot_z"} {
		cols = append(cols, n, n+"_derivative1", n+"_power2", n+"_derivative1_power2")
	}
	cfg.ConfoundColumns = strings.Join(cols, ",")
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics == nil || res.Metrics.Denoise == nil || len(res.Metrics.Denoise.Confounds) != 24 {
		t.Fatalf("cleaning with the motion table: %+v", res.Metrics)
	}
	tsv, err := os.ReadFile(filepath.Join(cfg.Out, "qc", "motion.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(tsv)), "\n")
	if len(lines) != p.Length+1 || !strings.HasPrefix(lines[0], "trans_x\ttrans_y\ttrans_z\trot_x\trot_y\trot_z\tframewise_displacement") {
		t.Fatalf("motion.tsv: %d lines, header %q", len(lines), lines[0])
	}
	var mr MotionReport
	b, err := os.ReadFile(filepath.Join(cfg.Out, "qc", "motion.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &mr); err != nil {
		t.Fatal(err)
	}
	var peak float64
	for _, q := range traj {
		for k := 0; k < 3; k++ {
			peak = max(peak, q[k], -q[k])
		}
	}
	if !mr.Realigned || mr.Volumes != p.Length || mr.MaxTranslationMM < peak-0.2 || mr.MaxTranslationMM > peak+0.2 {
		t.Errorf("motion.json %+v; planted largest translation %.2f mm", mr, peak)
	}
	if st, err := os.Stat(filepath.Join(cfg.Out, "qc", "motion.png")); err != nil || st.Size() < 1000 {
		t.Errorf("motion.png: %v", err)
	}
}

// TestRunRegistered: --register on a (non-MNI-coded) moving phantom writes qc/registration.json
// with an estimate; the same scan with sform code 4 is left alone and the report says why.
func TestRunRegistered(t *testing.T) {
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, 8)
	p := synth.DefaultParams()
	p.Length, p.Hubs = 20, 10
	dir := t.TempDir()
	in := filepath.Join(dir, "moving.nii")
	if _, _, err := synth.WriteMoving(context.Background(), m, a, p, synth.Motion{MaxShiftMM: 1, MaxRotDeg: 1}, in, nil); err != nil {
		t.Fatal(err)
	}
	run := func(scan, out string) RegistrationReport {
		cfg := Defaults()
		cfg.Scan, cfg.Out, cfg.Backend, cfg.Metrics, cfg.Density = scan, filepath.Join(dir, out), "cpu", settings.MetricsNone, 0.05
		cfg.Register = RealignOn
		if _, err := Run(context.Background(), cfg, nil); err != nil {
			t.Fatal(err)
		}
		var rr RegistrationReport
		b, err := os.ReadFile(filepath.Join(cfg.Out, "qc", "registration.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &rr); err != nil {
			t.Fatal(err)
		}
		return rr
	}
	rr := run(in, "native")
	if !rr.Estimated || rr.Result == nil || rr.Reason == "" {
		t.Fatalf("native scan: %+v", rr)
	}
	t.Logf("native phantom: %s; zooms %.3v, shear %.3f, plausible %v", rr.Reason, rr.Result.Zooms, rr.Result.Shear, rr.Result.Plausible)
	// The same scan marked MNI152 (sform code 4): nothing estimated.
	h, data, err := nifti.ReadImage(in)
	if err != nil {
		t.Fatal(err)
	}
	h.SformCode = nifti.XformMNI152
	mni := filepath.Join(dir, "mni.nii")
	if err := nifti.WriteImage(mni, h, data); err != nil {
		t.Fatal(err)
	}
	if rr := run(mni, "mni"); rr.Estimated || !strings.Contains(rr.Reason, "MNI152") {
		t.Fatalf("MNI-coded scan: %+v", rr)
	}
}

// TestRunRegisteredHubsMNI: a scan that is the MNI template seen through a known affine (plus
// noise, 12 volumes) registers plausibly, and qc/hubs_mni.tsv puts every hub where the known
// affine says, within 3 mm.
func TestRunRegisteredHubsMNI(t *testing.T) {
	tpl, err := register.Template()
	if err != nil {
		t.Fatal(err)
	}
	truth := [4][4]float64{{0.99, -0.1, 0, 4}, {0.1, 0.99, 0.05, -3}, {0, -0.05, 1.05, 2}, {0, 0, 0, 1}} // MNI → scan world
	inv, _ := realign.Inverse(truth)
	tinv, _ := realign.Inverse(tpl.Affine)
	var a [4][4]float64
	a[0][0], a[1][1], a[2][2], a[3][3] = 4, 4, 4, 1
	a[0][3], a[1][3], a[2][3] = -100, -136, -84
	dims := []int{50, 60, 52, 12}
	n := dims[0] * dims[1] * dims[2]
	data := make([]float32, n*dims[3])
	rng := rand.New(rand.NewPCG(3, 4))
	f := 0
	for k := 0; k < dims[2]; k++ {
		for j := 0; j < dims[1]; j++ {
			for i := 0; i < dims[0]; i++ {
				y := realign.Apply(realign.Mul(tinv, inv), realign.Apply(a, [3]float64{float64(i), float64(j), float64(k)}))
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
	in := filepath.Join(dir, "native.nii")
	if err := nifti.WriteImage(in, nifti.NewHeader(dims, nifti.Float32, a, 2), data); err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	cfg.Scan, cfg.Out, cfg.Backend, cfg.Metrics, cfg.Density = in, filepath.Join(dir, "out"), "cpu", settings.MetricsNone, 0.01
	cfg.Register = RealignAuto
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	tab, err := os.ReadFile(filepath.Join(cfg.Out, "qc", "hubs_mni.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	hubs, err := os.ReadFile(filepath.Join(cfg.Out, "hubs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	mniRows := strings.Split(strings.TrimSpace(string(tab)), "\n")[1:]
	hubRows := strings.Split(strings.TrimSpace(string(hubs)), "\n")
	head := strings.Split(hubRows[0], "\t")
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	if len(mniRows) == 0 || len(mniRows) != len(hubRows)-1 {
		t.Fatalf("%d MNI rows for %d hubs", len(mniRows), len(hubRows)-1)
	}
	var worst float64
	for r, row := range mniRows {
		m := strings.Split(row, "\t")
		h := strings.Split(hubRows[r+1], "\t")
		var world, mni [3]float64
		for k, name := range []string{"x_mm", "y_mm", "z_mm"} {
			world[k], _ = strconv.ParseFloat(h[col[name]], 64)
			mni[k], _ = strconv.ParseFloat(m[1+k], 64)
		}
		// hubs.tsv carries the same MNI position as qc/hubs_mni.tsv.
		for k, name := range []string{"x_mni", "y_mni", "z_mni"} {
			c, ok := col[name]
			if !ok {
				t.Fatalf("hubs.tsv of a registered scan lacks %s: %v", name, head)
			}
			if v, _ := strconv.ParseFloat(h[c], 64); math.Abs(v-mni[k]) > 0.006 {
				t.Errorf("hub %s: hubs.tsv %s %v, qc/hubs_mni.tsv %v", h[0], name, v, mni[k])
			}
		}
		want := realign.Apply(inv, world)
		worst = max(worst, math.Sqrt((want[0]-mni[0])*(want[0]-mni[0])+(want[1]-mni[1])*(want[1]-mni[1])+(want[2]-mni[2])*(want[2]-mni[2])))
	}
	t.Logf("%d hubs: MNI positions within %.2f mm of the known affine's", len(mniRows), worst)
	if worst > 3 {
		t.Errorf("hub MNI positions up to %.2f mm from the known affine's", worst)
	}
}

// TestRealignAuto: --realign auto on a raw scan realigns the moving phantom and leaves an (all
// but) still one as it is, and qc/motion.json says which and why.
func TestRealignAuto(t *testing.T) {
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, 12)
	p := synth.DefaultParams()
	p.Length, p.Hubs = 20, 10
	for _, c := range []struct {
		mm   float64
		want bool
	}{{0.01, false}, {2, true}} {
		dir := t.TempDir()
		in := filepath.Join(dir, "scan.nii.gz")
		if _, _, err := synth.WriteMoving(context.Background(), m, a, p, synth.Motion{MaxShiftMM: c.mm, MaxRotDeg: c.mm}, in, nil); err != nil {
			t.Fatal(err)
		}
		cfg := Defaults()
		cfg.Scan, cfg.Out, cfg.Backend, cfg.Metrics, cfg.Density = in, filepath.Join(dir, "out"), "cpu", settings.MetricsNone, 0.05
		cfg.Realign, cfg.Denoise = RealignAuto, CleanNone
		if _, err := Run(context.Background(), cfg, nil); err != nil {
			t.Fatal(err)
		}
		var mr MotionReport
		b, err := os.ReadFile(filepath.Join(cfg.Out, "qc", "motion.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &mr); err != nil {
			t.Fatal(err)
		}
		t.Logf("planted ≤ %g mm / %g°: %s", c.mm, c.mm, mr.Reason)
		if mr.Realigned != c.want || math.Abs(mr.ScreenThresholdMM-1.2) > 1e-9 || !strings.Contains(mr.Reason, "--realign auto") {
			t.Errorf("planted ≤ %g mm: realigned %v (want %v), threshold %g mm, %q", c.mm, mr.Realigned, c.want, mr.ScreenThresholdMM, mr.Reason)
		}
		if _, err := os.Stat(filepath.Join(cfg.Out, "qc", "motion.tsv")); (err == nil) != c.want {
			t.Errorf("planted ≤ %g mm: motion.tsv present %v", c.mm, err == nil)
		}
	}
}
