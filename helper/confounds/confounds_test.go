package confounds

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// fmriprepFiles are the real fMRIPrep confounds files nilearn ships for its own tests
// (fMRIPrep 20.x timeseries, 1.4-era regressors, and one without non-steady-state columns),
// copied into a BIDS layout beside an empty preproc image so nilearn finds them by name.
func fmriprepFiles(t *testing.T, nilearn string) []string {
	t.Helper()
	data := filepath.Join(nilearn, "nilearn", "interfaces", "fmriprep", "data")
	var imgs []string
	for i, f := range []struct{ tsv, suffix string }{
		{"test-v21_desc-confounds_timeseries", "timeseries"},
		{"test_desc-confounds_regressors", "regressors"},
		{"no_nonsteady_desc-confounds_regressors", "regressors"},
	} {
		dir := filepath.Join(t.TempDir(), "func")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		base := fmt.Sprintf("sub-%02d_task-rest", i+1)
		for _, ext := range []string{".tsv", ".json"} {
			b, err := os.ReadFile(filepath.Join(data, f.tsv+ext))
			if err != nil {
				if ext == ".json" && os.IsNotExist(err) {
					continue
				}
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, base+"_desc-confounds_"+f.suffix+ext), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		img := filepath.Join(dir, base+"_space-MNI152NLin2009cAsym_desc-preproc_bold.nii.gz")
		if err := os.WriteFile(img, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	return imgs
}

type lcCase struct {
	preset string
	kwargs map[string]any
	s      Strategy
}

func strategyCases() []lcCase {
	var cs []lcCase
	for _, p := range []string{"simple", "scrubbing", "compcor"} {
		s, _ := Preset(p)
		cs = append(cs, lcCase{p, map[string]any{}, s})
		for _, g := range []string{"basic", "full"} {
			cs = append(cs, lcCase{p, map[string]any{"global_signal": g}, s.WithGlobalSignal(g)})
		}
	}
	s, _ := Preset("scrubbing")
	s.FD, s.DVARS = 0.5, 1.5
	cs = append(cs, lcCase{"scrubbing", map[string]any{"fd_threshold": 0.5, "std_dvars_threshold": 1.5}, s})
	base := func(comp ...string) Strategy {
		return Strategy{Components: comp, Motion: "full", WMCSF: "basic", GlobalSignal: "basic", Compcor: "anat_combined",
			Scrub: 5, FD: 0.2, DVARS: 3, Demean: true}
	}
	kw := func(s Strategy) map[string]any {
		m := map[string]any{"strategy": s.Components, "motion": s.Motion, "wm_csf": s.WMCSF, "global_signal": s.GlobalSignal,
			"compcor": s.Compcor, "scrub": s.Scrub, "fd_threshold": s.FD, "std_dvars_threshold": s.DVARS, "demean": s.Demean}
		if s.NCompcor > 0 {
			m["n_compcor"] = s.NCompcor
		}
		return m
	}
	for _, exp := range []string{"basic", "power2", "derivatives", "full"} {
		s := base("motion", "wm_csf", "global_signal")
		s.Motion, s.WMCSF, s.GlobalSignal = exp, exp, exp
		cs = append(cs, lcCase{"", kw(s), s})
	}
	for _, m := range []string{"anat_combined", "anat_separated", "temporal", "temporal_anat_combined", "temporal_anat_separated"} {
		for _, n := range []int{0, 2} {
			s := base("high_pass", "compcor")
			s.Compcor, s.NCompcor = m, n
			cs = append(cs, lcCase{"", kw(s), s})
		}
	}
	for _, sc := range []struct {
		scrub     int
		fd, dvars float64
	}{{0, 0.2, 3}, {5, 0.5, 1.5}, {3, 0.1, 1}, {5, 0.05, 0.5}} {
		s := base("motion", "scrub")
		s.Scrub, s.FD, s.DVARS = sc.scrub, sc.fd, sc.dvars
		cs = append(cs, lcCase{"", kw(s), s})
	}
	s = base("high_pass", "motion", "wm_csf", "scrub")
	s.Demean = false
	cs = append(cs, lcCase{"", kw(s), s})
	return cs
}

// TestSelectEqualsLoadConfounds: on nilearn's real fMRIPrep files, every preset and a sweep
// of load_confounds choices give the same columns (names, order, values) and sample masks,
// and fail exactly where nilearn fails.
func TestSelectEqualsLoadConfounds(t *testing.T) {
	dir := pyref.Nilearn(t)
	imgs := fmriprepFiles(t, dir)
	cases := strategyCases()
	var spec []map[string]any
	for _, img := range imgs {
		for _, c := range cases {
			var preset any
			if c.preset != "" {
				preset = c.preset
			}
			spec = append(spec, map[string]any{"img": img, "preset": preset, "kwargs": c.kwargs})
		}
	}
	js, _ := json.Marshal(spec)
	specFile := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(specFile, js, 0o600); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("testdata/load_confounds.py")
	if err != nil {
		t.Fatal(err)
	}
	var ref []struct {
		Error string
		Names []string
		Cols  [][]*float64
		Mask  []int
	}
	if err := json.Unmarshal(pyref.Run(t, string(script), dir, specFile), &ref); err != nil {
		t.Fatal(err)
	}
	k, same, refused := 0, 0, 0
	for _, img := range imgs {
		tsv, _ := filepath.Glob(strings.TrimSuffix(img, "_space-MNI152NLin2009cAsym_desc-preproc_bold.nii.gz") + "_desc-confounds_*.tsv")
		tab, err := Read(tsv[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			r := ref[k]
			k++
			name := fmt.Sprintf("%s %s %v", filepath.Base(tsv[0]), c.preset, c.kwargs)
			sel, err := tab.Select(c.s)
			if r.Error == "" && r.Mask != nil && len(r.Mask) == 0 { // nilearn: all-NaN columns
				if err == nil || !strings.Contains(err.Error(), "every volume is censored") {
					t.Errorf("%s: nilearn censors every volume; we gave %v", name, err)
				}
				refused++
				continue
			}
			if (err != nil) != (r.Error != "") {
				t.Errorf("%s: our error %v, nilearn's %q", name, err, r.Error)
				continue
			}
			if err != nil {
				refused++
				continue
			}
			if strings.Join(sel.Names, ",") != strings.Join(r.Names, ",") {
				t.Errorf("%s: columns\n%v\nnilearn\n%v", name, sel.Names, r.Names)
				continue
			}
			if fmt.Sprint(sel.SampleMask) != fmt.Sprint(r.Mask) || (sel.SampleMask == nil) != (r.Mask == nil) {
				t.Errorf("%s: sample mask %v, nilearn %v", name, sel.SampleMask, r.Mask)
				continue
			}
			for j, col := range sel.Cols {
				for i, v := range col {
					w := r.Cols[j][i]
					if w == nil || math.Abs(v-*w) > 1e-9*math.Max(1, math.Abs(*w)) {
						t.Fatalf("%s: %s[%d] = %g, nilearn %v", name, sel.Names[j], i, v, w)
					}
				}
			}
			same++
		}
	}
	t.Logf("%d strategies × files identical to load_confounds, %d refused by both", same, refused)
}

// TestReadRefusesBadFiles: one line naming the file and the problem.
func TestReadRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, body, want string }{
		{"text.tsv", "trans_x\ttrans_y\n0.1\tabc\n", `line 2, column "trans_y": "abc" is not a number`},
		{"short.tsv", "trans_x\ttrans_y\n0.1\n", "line 2 has 1 cells but the header names 2"},
		{"noheader.tsv", "0.1\t0.2\n0.1\t0.3\n", "no header row"},
		{"camel.tsv", "TransX\tTransY\n0.1\t0.2\n", "camel case"},
		{"empty.tsv", "", "empty"},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Read(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want %q with the path", c.name, err, c.want)
		}
	}
	p := filepath.Join(dir, "partial.tsv")
	os.WriteFile(p, []byte("trans_x\ttrans_y\ttrans_z\n1\t2\t3\n4\t5\t6\n"), 0o600)
	tab, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := Preset("simple")
	_, err = tab.Select(s)
	if err == nil || !strings.Contains(err.Error(), "rot_x") || !strings.Contains(err.Error(), "wm_csf") {
		t.Errorf("missing preset columns: %v, want rot_x… and wm_csf named", err)
	}
}
