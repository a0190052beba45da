package cohort

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/group"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// The cohort's group-mean network is the group command's network over the runs whose bundles
// are complete, with the cohort's settings; it names every run with its scan's SHA-256, and
// a rerun skips it unless the runs, their scans, the settings or its files changed.
func TestCohortGroupMean(t *testing.T) {
	bids := phantomCohort(t, 3)
	cfg := pipeline.Defaults()
	cfg.Backend, cfg.Metrics, cfg.Mode, cfg.R = "cpu", settings.MetricsNone, settings.ModeR, 0.2
	cfg.Sweep, cfg.Denoise = "r=0.2,0.3", settings.DenoiseNone
	opt := Options{BIDS: bids, Out: filepath.Join(t.TempDir(), "deriv"), Config: cfg, Jobs: 2}
	ctx := context.Background()
	if st, err := Run(ctx, opt, nil); err != nil || Failed(st) != nil {
		t.Fatal(err, Failed(st))
	}
	gm := func(want string) GroupStatus {
		t.Helper()
		gs, err := GroupMeans(ctx, opt, nil)
		if err != nil || len(gs) != 1 || gs[0].State != want {
			t.Fatalf("group means: %v, %+v (want state %s)", err, gs, want)
		}
		return gs[0]
	}
	g := gm("done")
	if g.Bundle != filepath.Join(opt.Out, "group", "task-rest_desc-groupmean_hubscope") || strings.Join(g.Runs, " ") != "sub-01_task-rest sub-02_task-rest sub-03_task-rest" {
		t.Errorf("bundle %s, runs %v", g.Bundle, g.Runs)
	}
	// The same network as the group command's run over the same scans.
	runs, _ := Runs(opt)
	var subs []group.Subject
	for _, r := range runs {
		subs = append(subs, group.Subject{Label: r.ID(), Path: r.Path})
	}
	ref := cfg
	ref.Out = filepath.Join(t.TempDir(), "ref")
	ref.Group = &pipeline.GroupConfig{Subjects: subs, Mean: group.MeanFisherZ, MaskRule: group.MaskIntersect}
	if _, err := pipeline.Run(ctx, ref, nil); err != nil {
		t.Fatal(err)
	}
	got, err := bundle.ReadNetwork(filepath.Join(g.Bundle, "network.npz"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := bundle.ReadNetwork(filepath.Join(ref.Out, "network.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if got.N != want.N || !slices.Equal(got.Indptr, want.Indptr) || !slices.Equal(got.Indices, want.Indices) || !slices.Equal(got.Weights, want.Weights) || got.Edges() == 0 {
		t.Errorf("cohort group mean: %d nodes %d edges; group command: %d nodes %d edges", got.N, got.Edges(), want.N, want.Edges())
	}
	if _, err := os.Stat(filepath.Join(g.Bundle, "sweep.json")); err != nil {
		t.Errorf("the cohort's sweep was not applied: %v", err)
	}
	// provenance.json and the marker name every run with the SHA-256 its own marker records.
	var prov schema.Provenance
	var mk Marker
	var side schema.CohortGroupSidecar
	for f, v := range map[string]any{filepath.Join(g.Bundle, "provenance.json"): &prov, filepath.Join(g.Bundle, MarkerFile): &mk,
		filepath.Join(opt.Out, "group", "task-rest_desc-groupmean_hubscope.json"): &side} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if len(prov.Subjects) != 3 || len(mk.Subjects) != 3 || len(side.Sources) != 3 || side.Mean != group.MeanFisherZ || side.Bundle != "task-rest_desc-groupmean_hubscope" {
		t.Fatalf("provenance subjects %v, marker subjects %v, sidecar %+v", prov.Subjects, mk.Subjects, side)
	}
	for i, r := range runs {
		var rm Marker
		b, _ := os.ReadFile(filepath.Join(BundleDir(opt.Out, r), MarkerFile))
		json.Unmarshal(b, &rm)
		if p, m := prov.Subjects[i], mk.Subjects[i]; p.SHA256 != rm.Input.SHA256 || m.SHA256 != rm.Input.SHA256 || m.Label != r.ID() || p.Path != r.Path {
			t.Errorf("run %s: provenance %+v, marker %+v, the run's marker %s", r.ID(), p, m, rm.Input.SHA256)
		}
	}
	if side.Sources[0] != "bids::sub-01/func/sub-01_task-rest_bold.nii.gz" {
		t.Errorf("sidecar sources %v", side.Sources)
	}
	if _, ok := mk.Files["task-rest_desc-groupmean_hubscope.json"]; !ok {
		t.Errorf("the marker does not list the sidecar: %v", mk.Files)
	}
	// Resumable: skipped when complete; built again when a setting, a file or the runs change.
	gm("skipped")
	opt.GroupMean = group.MeanR
	if g = gm("done"); !strings.Contains(g.Reason, "group.mean: fisher-z → r") {
		t.Errorf("mean changed: %q", g.Reason)
	}
	if !raceEnabled { // one rebuild fewer under -race, where each costs 10–50×
		deg := filepath.Join(g.Bundle, "degree.nii.gz")
		b, _ := os.ReadFile(deg)
		b[len(b)/2] ^= 1
		os.WriteFile(deg, b, 0o644)
		if g = gm("done"); !strings.Contains(g.Reason, "degree.nii.gz differs") {
			t.Errorf("damaged file: %q", g.Reason)
		}
	}
	// A run whose bundle is incomplete is left out and named; the mean is over the others.
	os.Remove(filepath.Join(BundleDir(opt.Out, runs[2]), MarkerFile))
	if g = gm("done"); len(g.Runs) != 2 || len(g.Left) != 1 || !strings.HasPrefix(g.Left[0], "sub-03_task-rest (no completion marker") ||
		!strings.Contains(g.Reason, "runs left out: sub-03_task-rest") {
		t.Errorf("incomplete run: runs %v, left %v, reason %q", g.Runs, g.Left, g.Reason)
	}
	os.Remove(filepath.Join(BundleDir(opt.Out, runs[1]), MarkerFile))
	if g = gm("not built"); !strings.Contains(g.Reason, "1 complete run(s) of task rest") {
		t.Errorf("one run: %q", g.Reason)
	}
	if st, err := Run(ctx, opt, nil); err != nil || Failed(st) != nil {
		t.Fatal(err, Failed(st))
	}
	// Settings a group mean cannot take: not built, saying why; none: nothing at all.
	opt.Config.Measure = settings.Kendall
	if g = gm("not built"); !strings.Contains(g.Reason, "kendall") {
		t.Errorf("kendall: %q", g.Reason)
	}
	opt.GroupMean = GroupMeanNone
	if gs, err := GroupMeans(ctx, opt, nil); err != nil || gs != nil {
		t.Errorf("--group-mean none: %v %v", gs, err)
	}
}
