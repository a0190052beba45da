package cohort

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// lesionCohort writes controls and patients without one module's planted hubs, runs the
// cohort and returns the derivatives folder and the lesioned voxels.
func lesionCohort(t *testing.T, controls, patients int, voxelMM float64, length int, sweepSpec ...string) (string, string, map[[3]int]bool) {
	t.Helper()
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, voxelMM)
	p := synth.DefaultParams()
	p.Length = length
	bids := filepath.Join(t.TempDir(), "bids")
	ct, err := synth.WriteCohort(context.Background(), m, a, p, synth.CohortOptions{Subjects: controls, Lesion: true, Patients: patients}, bids, nil)
	if err != nil {
		t.Fatal(err)
	}
	lesion := map[[3]int]bool{}
	var flat []int
	for f, in := range m.In {
		if in {
			flat = append(flat, f)
		}
	}
	for _, v := range ct.Lesioned {
		f := flat[v]
		lesion[[3]int{f % m.Dims[0], f / m.Dims[0] % m.Dims[1], f / (m.Dims[0] * m.Dims[1])}] = true
	}
	cfg := pipeline.Defaults()
	cfg.Backend, cfg.Metrics = "cpu", settings.MetricsNone
	cfg.Mask = filepath.Join(bids, "truth", "modules.nii.gz") // the phantom's brain: every voxel a node in every run
	// The cohort phantom carries no nuisance and plants its modules across the whole
	// spectrum: auto's band-pass and tCompCor would remove the planted signal itself.
	cfg.Denoise = pipeline.CleanNone
	if len(sweepSpec) > 0 {
		cfg.Sweep = sweepSpec[0]
	}
	opt := Options{BIDS: bids, Out: filepath.Join(t.TempDir(), "deriv"), Config: cfg}
	st, err := Run(context.Background(), opt, nil)
	if err != nil || Failed(st) != nil {
		t.Fatal(err, Failed(st))
	}
	rows, parts, err := Collect(opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteTable(opt, rows, parts); err != nil {
		t.Fatal(err)
	}
	return bids, opt.Out, lesion
}

func TestComparePlantedLesion(t *testing.T) {
	bids, deriv, lesion := lesionCohort(t, 6, 6, 14, 100)
	res, err := Compare(context.Background(), CompareOptions{Deriv: deriv, GroupColumn: "diagnosis", Groups: []string{"patient", "control"},
		Permutations: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(deriv, "compare", "compare_nodes.tsv"))
	hit, found := 0, 0
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		var v [3]int
		f := strings.Split(l, "\t")
		for c := range v {
			v[c] = atoi(f[c+1])
		}
		found++
		if lesion[v] {
			hit++
		}
	}
	recall := float64(hit) / float64(len(lesion))
	t.Logf("%d lesioned hubs, %d nodes at FDR 0.05, %d of them lesioned (recall %.2f); %d nodes tested", len(lesion), found, hit, recall, res.Nodal[0].Nodes)
	if recall < 0.8 {
		t.Errorf("recall %.2f < 0.8", recall)
	}
	for _, f := range []string{"t_degree.nii.gz", "p_degree.nii.gz", "q_degree.nii.gz", "p_permutation_degree.nii.gz", "compare_global.tsv"} {
		if _, err := os.Stat(filepath.Join(deriv, "compare", f)); err != nil {
			t.Error(err)
		}
	}
	// compare.json records what was compared and a compared run's bundle on the maps' grid.
	var c schema.Comparison
	if b, err := os.ReadFile(filepath.Join(deriv, "compare", schema.ComparisonFile)); err != nil {
		t.Error(err)
	} else if err := json.Unmarshal(b, &c); err != nil {
		t.Error(err)
	}
	if c.Groups != [2]string{"patient", "control"} || c.N != res.N || c.Alpha != 0.05 || c.Permutations != 200 ||
		!slices.Equal(c.Maps, []string{"degree"}) || c.Significant["degree"] != found || c.Nodes != res.Nodal[0].Nodes {
		t.Errorf("compare.json: %+v (found %d, result %+v)", c, found, res.Nodal)
	}
	if h, _, err := nifti.ReadImage(filepath.Join(c.ReferenceBundle, "degree.nii.gz")); err != nil || !filepath.IsAbs(c.ReferenceBundle) ||
		!strings.HasPrefix(c.ReferenceBundle, c.Deriv) {
		t.Errorf("compare.json's reference bundle %q: %v", c.ReferenceBundle, err)
	} else if th, _, err := nifti.ReadImage(filepath.Join(deriv, "compare", "t_degree.nii.gz")); err != nil || th.Nx() != h.Nx() || th.Ny() != h.Ny() || th.Nz() != h.Nz() {
		t.Errorf("t_degree's grid differs from the reference bundle's: %v", err)
	}
	// Region scale: the network-based statistic on the phantom's modules as the atlas finds a
	// component through the lesioned module.
	modules := filepath.Join(bids, "truth", "modules.nii.gz")
	nbs, err := Compare(context.Background(), CompareOptions{Deriv: deriv, GroupColumn: "diagnosis", Atlas: modules,
		Permutations: 200, Seed: 2, Out: filepath.Join(t.TempDir(), "nbs")})
	if err != nil {
		t.Fatal(err)
	}
	h, labels, err := nifti.ReadImage(modules)
	if err != nil {
		t.Fatal(err)
	}
	var lesioned int
	for v := range lesion {
		lesioned = int(labels[v[0]+h.Nx()*(v[1]+h.Ny()*v[2])])
	}
	if len(nbs.NBS) == 0 || nbs.NBS[0].P > 0.05 {
		t.Fatalf("NBS: no component at p ≤ 0.05: %+v", nbs.NBS)
	}
	b, _ = os.ReadFile(filepath.Join(nbs.Out, "nbs.tsv"))
	if !strings.Contains(strings.Split(string(b), "\n")[1], fmt.Sprintf("region %d", lesioned)) {
		t.Errorf("NBS component misses the lesioned module %d:\n%s", lesioned, b)
	}
	t.Logf("NBS: %d edges among %d modules, p %.3f", len(nbs.NBS[0].Edges), len(nbs.NBS[0].Regions), nbs.NBS[0].P)
	// With a covariate regressed out the lesion is still found.
	cov, err := Compare(context.Background(), CompareOptions{Deriv: deriv, GroupColumn: "diagnosis", Groups: []string{"patient", "control"},
		Covariates: []string{"age", "sex"}, Out: filepath.Join(t.TempDir(), "cov")})
	if err != nil || cov.Nodal[0].Significant == 0 || len(cov.Notes) == 0 {
		t.Errorf("with covariates: %v, %+v", err, cov)
	}
	// A null split (controls by sex) finds few nodes.
	null, err := Compare(context.Background(), CompareOptions{Deriv: deriv, GroupColumn: "sex", Out: filepath.Join(t.TempDir(), "null")})
	if err != nil {
		t.Fatal(err)
	}
	if rate := float64(null.Nodal[0].Significant) / float64(null.Nodal[0].Nodes); rate > 0.05 {
		t.Errorf("null split: %.3f of nodes at FDR 0.05", rate)
	}
	for _, c := range []struct {
		opt  CompareOptions
		want string
	}{
		{CompareOptions{Deriv: deriv, GroupColumn: "group"}, `no column "group"`},
		{CompareOptions{Deriv: deriv, GroupColumn: "age"}, "name the two to compare"},
		{CompareOptions{Deriv: deriv, GroupColumn: "diagnosis", Covariates: []string{"weight"}}, `no covariate column "weight"`},
		{CompareOptions{Deriv: t.TempDir(), GroupColumn: "diagnosis"}, "run the cohort command first"},
	} {
		if _, err := Compare(context.Background(), c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.opt, err, c.want)
		}
	}
	// Fewer than 3 per group.
	tab := filepath.Join(deriv, TableFile)
	tb, _ := os.ReadFile(tab)
	lines := strings.Split(strings.TrimSpace(string(tb)), "\n")
	var keep []string
	for _, l := range lines {
		if !strings.Contains(l, "patient0") || strings.Contains(l, "patient01") || strings.Contains(l, "patient02") {
			keep = append(keep, l)
		}
	}
	os.WriteFile(tab, []byte(strings.Join(keep, "\n")+"\n"), 0o644)
	if _, err := Compare(context.Background(), CompareOptions{Deriv: deriv, GroupColumn: "diagnosis"}); err == nil || !strings.Contains(err.Error(), "at least 3 per group") {
		t.Errorf("2 patients: %v", err)
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
