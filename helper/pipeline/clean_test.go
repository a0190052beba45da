package pipeline

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/graph/community"
	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// cleanFixture builds an fMRIPrep-layout run from a real scan (first vols volumes, written by
// nibabel) and, with confounds, a real fMRIPrep confounds table with its sidecar (nilearn's
// v21 test file: 30 rows, 3 non-steady-state volumes; its rows 1–29 appended once more with
// the outlier flags cleared, so that 24 motion + 2 tissue + cosine regressors fit the run).
func cleanFixture(t *testing.T, nilearn, scanFile string, vols int, withConfounds bool) string {
	t.Helper()
	data := os.Getenv("HUBSCOPE_DATA")
	if data == "" {
		data = filepath.Join(nilearn, "..", "..", "data")
	}
	src := filepath.Join(data, scanFile)
	if _, err := os.Stat(src); err != nil {
		if pyref.Strict() {
			t.Fatalf("shared data missing: %v (set HUBSCOPE_DATA)", err)
		}
		t.Skipf("shared data missing: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "sub-01", "func")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bold := filepath.Join(dir, "sub-01_task-rest_space-MNI152NLin2009cAsym_desc-preproc_bold.nii.gz")
	pyref.Run(t, `
import sys, nibabel as nib
img = nib.load(sys.argv[1])
nib.save(img.slicer[..., :int(sys.argv[3])], sys.argv[2])
`, src, bold, strconv.Itoa(vols))
	if withConfounds {
		fm := filepath.Join(nilearn, "nilearn", "interfaces", "fmriprep", "data", "test-v21_desc-confounds_timeseries")
		pyref.Run(t, `
import sys, shutil, pandas as pd
c = pd.read_csv(sys.argv[1] + ".tsv", sep="\t")
more = c.iloc[1:].copy()
for col in c.columns:
    if "non_steady_state" in col or "motion_outlier" in col:
        more[col] = 0.0
c = pd.concat([c, more]).iloc[:int(sys.argv[3])]
c.to_csv(sys.argv[2] + ".tsv", sep="\t", index=False, na_rep="n/a")
shutil.copy(sys.argv[1] + ".json", sys.argv[2] + ".json")
`, fm, filepath.Join(dir, "sub-01_task-rest_desc-confounds_timeseries"), strconv.Itoa(vols))
	}
	return bold
}

func readSeries(t *testing.T, dir string) ([]float32, int, int) {
	t.Helper()
	r, err := bundle.OpenSeries(filepath.Join(dir, bundle.SeriesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	x, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return x, r.N, r.L
}

// TestCleaningEqualsNilearn: `run --denoise simple` on an fMRIPrep-layout run (confounds and
// TR found by naming) and `--denoise auto` on a raw scan give the series nilearn 0.10.4 gives
// for the same masked series: load_confounds_strategy("simple") + signal.clean, and
// high_variance_confounds + Butterworth 0.01–0.08 Hz.
func TestCleaningEqualsNilearn(t *testing.T) {
	nl := pyref.Nilearn(t)
	for _, c := range []struct {
		name, mode, ref string
		scan            string
		vols            int
		conf            bool
		wantStrategy    string
	}{
		{"simple on an fMRIPrep run", CleanSimple, "simple", "haxby2001_run001_bold_25mm.nii.gz", 59, true, `"simple" strategy`},
		{"auto finds the table", CleanAuto, "simple", "haxby2001_run001_bold_25mm.nii.gz", 50, true, "a confounds table was found"},
		{"auto on a raw scan", CleanAuto, "raw", "haxby2001_slice_bold.nii.gz", 200, false, "tCompCor"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bold := cleanFixture(t, nl, c.scan, c.vols, c.conf)
			run := func(mode string) (string, *Result) {
				cfg := Defaults()
				cfg.Scan, cfg.Backend, cfg.Metrics, cfg.KeepSeries = bold, "cpu", settings.MetricsNone, true
				cfg.Density = 0.05
				cfg.Denoise = mode
				cfg.Out = filepath.Join(t.TempDir(), "b")
				res, err := Run(context.Background(), cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				return res.Dir, res
			}
			rawDir, _ := run(CleanNone)
			cleanDir, res := run(c.mode)
			d := res.Metrics.Denoise
			if d == nil || !strings.Contains(d.Strategy, c.wantStrategy) {
				t.Fatalf("strategy %+v, want %q", d, c.wantStrategy)
			}
			raw, n, l := readSeries(t, rawDir)
			got, n2, l2 := readSeries(t, cleanDir)
			if n2 != n {
				t.Fatalf("%d nodes cleaned, %d raw", n2, n)
			}
			f := filepath.Join(t.TempDir(), "x.f32")
			b := make([]byte, 4*len(raw))
			for i, v := range raw {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
			}
			if err := os.WriteFile(f, b, 0o600); err != nil {
				t.Fatal(err)
			}
			script, err := os.ReadFile("testdata/clean_ref.py")
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "y")
			pyref.Run(t, string(script), nl, c.ref, bold, f, strconv.Itoa(n), strconv.Itoa(l), "2.5", out)
			yb, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(yb) != 8*n*l2 {
				t.Fatalf("nilearn gave %d values, we %d×%d", len(yb)/8, n, l2)
			}
			worst := 0.0
			for i := 0; i < n; i++ {
				for k := 0; k < l2; k++ {
					w := math.Float64frombits(binary.LittleEndian.Uint64(yb[8*(k*n+i):]))
					worst = math.Max(worst, math.Abs(float64(got[i*l2+k])-w))
				}
			}
			t.Logf("%d nodes × %d→%d volumes, %d confounds (rank %d), %.0f %% variance removed: max |Δ| %.2g (z-scores)",
				n, l, l2, len(d.Confounds), d.ConfoundRank, 100*d.VarianceRemoved, worst)
			// The raw recipe's tolerance is looser: its five tCompCor directions come from an
			// eigendecomposition (gonum here, LAPACK's syevd in nilearn) and carry its rounding.
			tol := 2e-5
			if c.ref == "raw" {
				tol = 2e-4
			}
			if worst > tol {
				t.Errorf("cleaned series differ from nilearn's by %.3g", worst)
			}
			checkNetworkOfReference(t, cleanDir, yb, n, l2, 0.05)
		})
	}
}

// TestNuisancePhantomNeedsCleaning: on `synth --nuisance` (drifts, motion effects and a
// global physiological signal twice the fluctuation's SD, with its fMRIPrep-style confounds
// table) the raw series lose the planted modules, and --denoise auto (which finds the table
// and applies fMRIPrep's simple strategy) recovers them: NMI ≥ 0.9.
func TestNuisancePhantomNeedsCleaning(t *testing.T) {
	m, affine, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	mm, density := 6.0, 0.01
	if raceEnabled {
		mm, density = 8, 0.03 // 3,735 voxels (the race detector learns nothing from more), denser
	}
	m, affine = synth.ResampleMask(m, affine, mm)
	dir := t.TempDir()
	bold := filepath.Join(dir, "sub-ph_task-rest_desc-preproc_bold.nii.gz")
	if _, err := synth.WriteNuisance(context.Background(), m, affine, synth.DefaultParams(), synth.DefaultNuisance, bold, nil); err != nil {
		t.Fatal(err)
	}
	modPath, _ := synth.TruthPaths(bold)
	_, truth, err := nifti.ReadImage(modPath)
	if err != nil {
		t.Fatal(err)
	}
	nmi := map[string]float64{}
	for _, mode := range []string{CleanNone, CleanAuto} {
		cfg := Defaults()
		cfg.Scan, cfg.Backend, cfg.Metrics, cfg.Denoise, cfg.Density = bold, "cpu", settings.MetricsBasic, mode, density
		cfg.Out = filepath.Join(t.TempDir(), "b")
		res, err := Run(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, found, err := nifti.ReadImage(filepath.Join(res.Dir, "modules.nii.gz"))
		if err != nil {
			t.Fatal(err)
		}
		var a, b []int
		for f, v := range truth {
			if v > 0 {
				a, b = append(a, int(v)), append(b, int(found[f]))
			}
		}
		if nmi[mode], err = community.NormalizedMutualInformation(a, b); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("planted modules: NMI raw %.3f, cleaned (auto) %.3f", nmi[CleanNone], nmi[CleanAuto])
	if nmi[CleanAuto] < 0.9 || nmi[CleanNone] > 0.5 {
		t.Errorf("NMI raw %.3f (want the nuisance to hide the modules), cleaned %.3f (want ≥ 0.9)", nmi[CleanNone], nmi[CleanAuto])
	}
}

// TestCleaningQCAndBadInput: a scrubbing run writes qc/ (report with traces, carpet, FD plot)
// and metrics.json's censored volumes; each bad request stops with one line naming the
// problem and leaves no bundle.
func TestCleaningQCAndBadInput(t *testing.T) {
	m, affine, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, affine = synth.ResampleMask(m, affine, 10)
	dir := t.TempDir()
	p := synth.DefaultParams()
	p.Hubs = 5
	bold := filepath.Join(dir, "sub-ph_task-rest_desc-preproc_bold.nii.gz")
	if _, err := synth.WriteNuisance(context.Background(), m, affine, p, synth.DefaultNuisance, bold, nil); err != nil {
		t.Fatal(err)
	}
	run := func(c CleanConfig, window int) (*Result, string, error) {
		cfg := Defaults()
		cfg.Scan, cfg.Backend, cfg.Metrics, cfg.Cleaning = bold, "cpu", settings.MetricsNone, cleaning(c)
		if window > 0 {
			cfg.DFCWindow, cfg.DFCStep = window, 1
		}
		cfg.Out = filepath.Join(t.TempDir(), "b")
		res, err := Run(context.Background(), cfg, nil)
		return res, cfg.Out, err
	}
	res, _, err := run(CleanConfig{Denoise: CleanScrubbing, FD: 0.12}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Metrics.Denoise
	if len(d.Censored) == 0 || d.VolumesKept+len(d.Censored)+d.Dropped != d.VolumesIn {
		t.Fatalf("censored %v, kept %d of %d", d.Censored, d.VolumesKept, d.VolumesIn)
	}
	for _, f := range []string{QCDenoiseFile, QCCarpetFile, QCFDFile} {
		if st, err := os.Stat(filepath.Join(res.Dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	var qc struct {
		Censored []int      `json:"censored_volumes"`
		FD       []*float64 `json:"framewise_displacement"`
		After    []float64  `json:"dvars_after"`
	}
	b, _ := os.ReadFile(filepath.Join(res.Dir, QCDenoiseFile))
	if err := json.Unmarshal(b, &qc); err != nil || len(qc.FD) != d.VolumesIn || qc.FD[0] != nil || len(qc.After) != d.VolumesKept ||
		fmt.Sprint(qc.Censored) != fmt.Sprint(d.Censored) {
		t.Fatalf("qc/denoise.json: %v %+v", err, qc)
	}

	// DFC with the same censoring: windows on the original axis (after the dropped volumes),
	// those with more than 20 % censored left out and listed, the rest kept.
	const win = 30
	res, _, err = run(CleanConfig{Denoise: CleanScrubbing, FD: 0.12}, win)
	if err != nil {
		t.Fatal(err)
	}
	var sum schema.DFCSummary
	b, _ = os.ReadFile(filepath.Join(res.Dir, "dfc", "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	axis := d.VolumesIn - d.Dropped
	censoredIn := func(start int) int {
		c := 0
		for _, v := range d.Censored {
			if v-d.Dropped >= start && v-d.Dropped < start+win {
				c++
			}
		}
		return c
	}
	if len(sum.Windows)+len(sum.Skipped) != axis-win+1 || len(sum.Skipped) == 0 || len(sum.Windows) == 0 || sum.MaxCensored != 0.2 {
		t.Fatalf("%d windows + %d skipped on an axis of %d (window %d), max share %g", len(sum.Windows), len(sum.Skipped), axis, win, sum.MaxCensored)
	}
	for _, sk := range sum.Skipped {
		if c := censoredIn(sk.Start); sk.Censored != c || 5*c <= win {
			t.Errorf("skipped window at %d: %d censored listed, %d in it", sk.Start, sk.Censored, c)
		}
	}
	for _, w := range sum.Windows {
		if w.Start != w.Index || 5*censoredIn(w.Start) > win {
			t.Errorf("window %d at %d kept with %d censored", w.Index, w.Start, censoredIn(w.Start))
		}
	}

	short := filepath.Join(dir, "short.tsv")
	os.WriteFile(short, []byte("trans_x\n1\n2\n3\n"), 0o600)
	only := filepath.Join(dir, "only.tsv")
	var sb strings.Builder
	sb.WriteString("trans_x\ttrans_y\n")
	for i := 0; i < p.Length; i++ {
		fmt.Fprintf(&sb, "%d\t%d\n", i%3, i%5)
	}
	os.WriteFile(only, []byte(sb.String()), 0o600)
	for _, c := range []struct {
		name string
		c    CleanConfig
		want string
	}{
		{"rows", CleanConfig{Denoise: CleanSimple, Confounds: short}, "3 rows of confounds but the scan has 200 volumes"},
		{"preset columns", CleanConfig{Denoise: CleanSimple, Confounds: only}, "missing confounds trans_z"},
		{"column", CleanConfig{Denoise: CleanNone, Confounds: only, ConfoundColumns: []string{"trans_x", "rot_q"}}, "no column rot_q"},
		{"Nyquist", CleanConfig{Denoise: CleanNone, Detrend: true, Band: [2]float64{0.01, 0.3}}, "Nyquist"},
		{"low ≥ high", CleanConfig{Denoise: CleanNone, Band: [2]float64{0.08, 0.01}}, "LOW < HIGH"},
		{"all censored", CleanConfig{Denoise: CleanScrubbing, FD: 1e-9, DVARS: 1e-9}, "every volume is censored"},
		{"too few volumes", CleanConfig{Denoise: CleanSimple, DropVolumes: 175}, "too few for"},
		{"TR", CleanConfig{Denoise: CleanNone, Band: [2]float64{0.01, 0.08}, TR: 100}, "--tr"},
		{"window", CleanConfig{Denoise: CleanSimple, DropVolumes: 20}, "window (--window, dfc_window) 190 volumes is longer"},
	} {
		window := 0
		if c.name == "window" {
			window = 190 // fits the scan's 200 volumes, not the 180 left after the drop
		}
		_, out, err := run(c.c, window)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Errorf("%s: a bundle was left at %s", c.name, out)
		}
	}
}

// checkNetworkOfReference: the bundle's Pearson network at the given density equals the one
// built in float64 from nilearn's cleaned series (time-major n columns), pairs ranked by r
// with ties by (i, j); only pairs within 1e-5 of the cut may differ.
func checkNetworkOfReference(t *testing.T, dir string, yb []byte, n, l int, density float64) {
	t.Helper()
	y := make([][]float64, n)
	for i := range y {
		y[i] = make([]float64, l)
		m, ss := 0.0, 0.0
		for k := range y[i] {
			y[i][k] = math.Float64frombits(binary.LittleEndian.Uint64(yb[8*(k*n+i):]))
			m += y[i][k]
		}
		m /= float64(l)
		for k := range y[i] {
			y[i][k] -= m
			ss += y[i][k] * y[i][k]
		}
		for k := range y[i] {
			y[i][k] /= math.Sqrt(ss)
		}
	}
	type pair struct {
		i, j int
		r    float64
	}
	var ps []pair
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			r := 0.0
			for k := range y[i] {
				r += y[i][k] * y[j][k]
			}
			ps = append(ps, pair{i, j, r})
		}
	}
	sort.Slice(ps, func(a, b int) bool {
		if ps[a].r != ps[b].r {
			return ps[a].r > ps[b].r
		}
		return ps[a].i < ps[b].i || (ps[a].i == ps[b].i && ps[a].j < ps[b].j)
	})
	k := int(math.Round(density * float64(n*(n-1)/2)))
	cut := ps[k-1].r
	ref := map[[2]int]bool{}
	for _, p := range ps[:k] {
		ref[[2]int{p.i, p.j}] = true
	}
	nw, err := bundle.ReadNetwork(filepath.Join(dir, "network.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if nw.Edges() != int64(k) {
		t.Fatalf("%d edges, the reference %d", nw.Edges(), k)
	}
	rOf := map[[2]int]float64{}
	for _, p := range ps {
		rOf[[2]int{p.i, p.j}] = p.r
	}
	differ := 0
	for i := 0; i < n; i++ {
		js, _ := nw.Row(i)
		for _, j := range js {
			e := [2]int{i, int(j)}
			if !ref[e] {
				differ++
				if math.Abs(rOf[e]-cut) > 1e-5 {
					t.Errorf("edge %v (r %.7f) is not in nilearn's network (cut %.7f)", e, rOf[e], cut)
				}
			}
		}
	}
	t.Logf("network at density %g: %d edges, %d differ from the float64 network of nilearn's series (at the cut)", density, k, differ)
}

// TestAutoCleaningUsesRealignment: a raw scan realigned by the run gets the 24 motion
// parameters of its own motion table (qc/motion.tsv) besides tCompCor, and --fd censors by
// the realignment's framewise displacement.
func TestAutoCleaningUsesRealignment(t *testing.T) {
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, 12)
	p := synth.DefaultParams()
	p.Length, p.Hubs = 60, 10
	dir := t.TempDir()
	in := filepath.Join(dir, "moving.nii.gz")
	if _, _, err := synth.WriteMoving(context.Background(), m, a, p, synth.Motion{MaxShiftMM: 2, MaxRotDeg: 2}, in, nil); err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	cfg.Scan, cfg.Out, cfg.Backend, cfg.Metrics, cfg.Density = in, filepath.Join(dir, "out"), "cpu", settings.MetricsNone, 0.05
	cfg.Realign, cfg.Cleaning = RealignOn, cleaning(CleanConfig{Denoise: CleanAuto, FD: 1})
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Metrics.Denoise
	if d == nil || !strings.Contains(d.Strategy, "24 motion parameters from the realignment") {
		t.Fatalf("strategy %+v", d)
	}
	tsv, err := os.ReadFile(filepath.Join(res.Dir, "qc", "motion.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(tsv)), "\n")
	high := 0
	for _, l := range lines[2:] {
		f := strings.Split(l, "\t")
		if v, _ := strconv.ParseFloat(f[len(f)-1], 64); v > 1 {
			high++
		}
	}
	if high > 0 && len(d.Censored) < high {
		t.Errorf("%d volumes with FD > 1 mm but %d censored", high, len(d.Censored))
	}
	t.Logf("%s; %d volumes over 1 mm, %d censored", d.Strategy, high, len(d.Censored))
}

// cleaning is the settings that choose c (CleanFrom's inverse), for tests that state a
// cleaning as a CleanConfig.
func cleaning(c CleanConfig) settings.Cleaning {
	s := settings.Cleaning{Denoise: c.Denoise, Confounds: c.Confounds, TR: c.TR, Detrend: c.Detrend,
		DropVolumes: c.DropVolumes, FD: c.FD, DVARS: c.DVARS, GlobalSignal: c.GlobalSignal,
		ConfoundColumns: strings.Join(c.ConfoundColumns, ",")}
	if c.Band != [2]float64{} {
		s.Band = strconv.FormatFloat(c.Band[0], 'g', -1, 64) + "," + strconv.FormatFloat(c.Band[1], 'g', -1, 64)
	}
	return s
}

func TestCleanFromSettings(t *testing.T) {
	for _, c := range []CleanConfig{
		{Denoise: CleanAuto},
		{Denoise: CleanNone, Detrend: true, Band: [2]float64{0.01, 0.08}, DropVolumes: 10, TR: 2, GlobalSignal: true},
		{Denoise: CleanScrubbing, Confounds: "c.tsv", FD: 0.3, DVARS: 1.2, ConfoundColumns: []string{"trans_x", "rot_z"}},
	} {
		if got := CleanFrom(cleaning(c)); !reflect.DeepEqual(got, c) {
			t.Errorf("CleanFrom(%+v) = %+v", cleaning(c), got)
		}
	}
}
