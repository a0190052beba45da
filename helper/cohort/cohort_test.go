package cohort

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

func phantomCohort(t *testing.T, subjects int) string {
	t.Helper()
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, 14)
	p := synth.DefaultParams()
	p.Length = 60
	dir := filepath.Join(t.TempDir(), "bids")
	if _, err := synth.WriteCohort(context.Background(), m, a, p, synth.CohortOptions{Subjects: subjects}, dir, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

func states(st []Status) string {
	var s []string
	for _, x := range st {
		s = append(s, x.Run.Subject+":"+x.State)
	}
	return strings.Join(s, " ")
}

func TestCohortResumes(t *testing.T) {
	bids := phantomCohort(t, 3)
	cfg := pipeline.Defaults()
	cfg.Backend, cfg.Metrics = "cpu", settings.MetricsNone
	opt := Options{BIDS: bids, Out: filepath.Join(t.TempDir(), "deriv"), Config: cfg, Jobs: 2}
	ctx := context.Background()
	st, err := Run(ctx, opt, nil)
	if err != nil || Failed(st) != nil || states(st) != "01:done 02:done 03:done" {
		t.Fatalf("first run: %v %v %s", err, Failed(st), states(st))
	}
	for _, f := range []string{"dataset_description.json", "sub-01/func/sub-01_task-rest_desc-degree_hubscope.nii.gz",
		"sub-01/func/sub-01_task-rest_desc-degree_hubscope.json", "sub-02/func/sub-02_task-rest_hubscope/" + MarkerFile} {
		if _, err := os.Stat(filepath.Join(opt.Out, f)); err != nil {
			t.Error(err)
		}
	}
	if st, _ = Run(ctx, opt, nil); states(st) != "01:skipped 02:skipped 03:skipped" {
		t.Errorf("second run: %s", states(st))
	}
	// A damaged file, and a changed setting, make the runs concerned run again.
	deg := filepath.Join(opt.Out, "sub-02/func/sub-02_task-rest_desc-degree_hubscope.nii.gz")
	b, _ := os.ReadFile(deg)
	b[len(b)/2] ^= 1
	os.WriteFile(deg, b, 0o644)
	if st, _ = Run(ctx, opt, nil); states(st) != "01:skipped 02:done 03:skipped" || !strings.Contains(st[1].Reason, "differs") {
		t.Errorf("after damage: %s (%s)", states(st), st[1].Reason)
	}
	opt.Subject = "03" // the per-subject step
	opt.Config.HubSD = 1.5
	stale := filepath.Join(opt.Out, "sub-03/func/sub-03_task-rest_desc-old_hubscope.nii.gz")
	os.WriteFile(stale, []byte("left by an earlier analysis"), 0o644)
	if st, _ = Run(ctx, opt, nil); states(st) != "03:done" || !strings.Contains(st[0].Reason, "hub_sd: 1 → 1.5") {
		t.Errorf("changed settings: %s (%s)", states(st), st[0].Reason)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a copy from an earlier analysis survived the new one")
	}
	opt.Subject, opt.Config.HubSD = "", 1
	// The table joins participants.tsv; a participant it does not list is named.
	rows, parts, err := Collect(opt)
	if err != nil {
		t.Fatal(err)
	}
	path, err := WriteTable(opt, rows, parts)
	if err != nil {
		t.Fatal(err)
	}
	tab, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(tab)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "participant_id\trun\tdiagnosis\tage\tsex\t") || !strings.Contains(lines[0], "network.edges") {
		t.Errorf("table:\n%s", tab)
	}
	// Its sidecar describes the run column and every measure column.
	var side schema.CohortTableSidecar
	if b, err := os.ReadFile(strings.TrimSuffix(path, ".tsv") + ".json"); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &side); err != nil {
		t.Fatal(err)
	}
	cols := strings.Split(lines[0], "\t")
	for _, c := range append([]string{"run"}, cols[len(parts.Columns)+1:]...) {
		if side[c].Description == "" {
			t.Errorf("measures.json does not describe %s", c)
		}
	}
	if len(side) != len(cols)-len(parts.Columns) {
		t.Errorf("measures.json describes %d columns, the table has %d besides participants.tsv's", len(side), len(cols)-len(parts.Columns))
	}
	// With an atlas (the phantom's modules) the table gains each region's mean degree, which
	// is the mean of the run's degree map over the region's nodes.
	withAtlas := opt
	withAtlas.Config.Atlas = filepath.Join(bids, "truth", "modules.nii.gz")
	rows, _, err = Collect(withAtlas)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rows[0].Measures["region_degree.1"]; !ok {
		t.Errorf("no region_degree.1 column: %v", rows[0].Measures)
	}
	h, mods, err := nifti.ReadImage(withAtlas.Config.Atlas)
	if err != nil {
		t.Fatal(err)
	}
	_, degree, err := nifti.ReadImage(filepath.Join(rows[0].Bundle, "degree.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	ijk, err := readNodes(filepath.Join(rows[0].Bundle, "nodes.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	sum, cnt := map[int]float64{}, map[int]float64{}
	for _, v := range ijk {
		f := v[0] + h.Nx()*(v[1]+h.Ny()*v[2])
		sum[int(mods[f])] += float64(degree[f])
		cnt[int(mods[f])]++
	}
	for l := 1; l <= 7; l++ {
		got, ok := rows[0].Measures[fmt.Sprintf("region_degree.%d", l)]
		if want := sum[l] / cnt[l]; cnt[l] > 0 && (!ok || math.Abs(got-want) > 1e-9*want) {
			t.Errorf("region %d mean degree %g, want %g", l, got, want)
		}
	}
	pt := filepath.Join(bids, "participants.tsv")
	pb, _ := os.ReadFile(pt)
	os.WriteFile(pt, []byte(strings.Replace(string(pb), "sub-02\t", "sub-09\t", 1)), 0o644)
	if _, _, err := Collect(opt); err == nil || !strings.Contains(err.Error(), "does not list sub-02") {
		t.Errorf("unlisted participant: %v", err)
	}
	os.WriteFile(pt, pb, 0o644)
	// A broken scan fails alone; the others are skipped as complete.
	scan3 := synth.CohortScan(bids, "03")
	os.WriteFile(scan3, []byte("not a nifti"), 0o644)
	st, _ = Run(ctx, opt, nil)
	if states(st) != "01:skipped 02:skipped 03:failed" || Failed(st) == nil || !strings.Contains(Failed(st).Error(), "sub-03_task-rest") {
		t.Errorf("broken scan: %s %v", states(st), Failed(st))
	}
	if _, _, err := Collect(opt); err != nil {
		t.Logf("table after a failure: %v", err) // sub-03's earlier complete bundle remains
	}
	opt.Subject = "a/b"
	if _, err := Run(ctx, opt, nil); err == nil || !strings.Contains(err.Error(), "only letters and digits") {
		t.Errorf("bad subject label: %v", err)
	}
}
