package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/group"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/ipc/settings"
)

// The group command's bundle holds the network group.Network builds from the same subjects,
// with group.json naming them, and a sweep over it. Nothing goes through the temporary
// folder (the demo mask and the union mask are read in memory: a copy there was left behind
// when the process was killed).
func TestGroupBundle(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	defer func() {
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Errorf("left in TMPDIR: %v", ents)
		}
	}()
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, 14)
	p := synth.DefaultParams()
	p.Length = 60
	dir := filepath.Join(t.TempDir(), "bids")
	ct, err := synth.WriteCohort(context.Background(), m, a, p, synth.CohortOptions{Subjects: 3}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var subs []group.Subject
	for _, s := range ct.Subjects {
		subs = append(subs, group.Subject{Label: "sub-" + s, Path: synth.CohortScan(dir, s)})
	}
	for _, rule := range []string{group.MaskIntersect, group.MaskUnion} {
		cfg := rawDefaults()
		cfg.Backend, cfg.Metrics, cfg.Mode, cfg.R = "cpu", settings.MetricsBasic, "r", 0.2
		cfg.Out = filepath.Join(t.TempDir(), "g")
		cfg.Group = &GroupConfig{Subjects: subs, Mean: group.MeanFisherZ, MaskRule: rule}
		cfg.Sweep = "r=0.2,0.3,0.4"
		res, err := Run(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "mask rule "+rule) {
			t.Errorf("notes %q do not say the mask rule %s", res.Notes, rule)
		}
		c, err := group.Load(context.Background(), subs, group.Options{MaskRule: rule}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := group.Network(context.Background(), c, group.MeanFisherZ, fc.Config{Mode: fc.Strength, Threshold: 0.2}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := bundle.ReadNetwork(filepath.Join(res.Dir, "network.npz"))
		if err != nil {
			t.Fatal(err)
		}
		if got.Edges() != want.Edges() || got.N != want.N || res.Metrics.Sweep == nil || len(res.Metrics.Sweep.Points) != 3 {
			t.Errorf("%s: bundle %d nodes %d edges, group.Network %d nodes %d edges", rule, got.N, got.Edges(), want.N, want.Edges())
		}
		// provenance.json names every subject with its scan's size and SHA-256, not only the first.
		var prov bundle.Provenance
		readJSON(t, filepath.Join(res.Dir, "provenance.json"), &prov)
		if len(prov.Subjects) != len(subs) {
			t.Fatalf("%s: provenance lists %d subjects, want %d", rule, len(prov.Subjects), len(subs))
		}
		for i, s := range subs {
			in, err := bundle.DescribeInput(s.Path)
			if err != nil {
				t.Fatal(err)
			}
			if g := prov.Subjects[i]; g.Label != s.Label || g.Path != s.Path || g.Bytes != in.Bytes || g.SHA256 != in.SHA256 {
				t.Errorf("%s: provenance subject %d = %+v, want %s %s %d %s", rule, i, g, s.Label, s.Path, in.Bytes, in.SHA256)
			}
		}
	}
	// Cleaning applies to every subject before the mean: 6 volumes dropped, detrended and
	// band-passed per subject, the same network as cleaning each subject by hand.
	cl := Defaults()
	cl.Backend, cl.Metrics, cl.Mode, cl.R = "cpu", settings.MetricsNone, "r", 0.2
	cl.Out = filepath.Join(t.TempDir(), "clean")
	cl.Group = &GroupConfig{Subjects: subs, Mean: group.MeanFisherZ, MaskRule: group.MaskIntersect}
	cl.Cleaning = cleaning(CleanConfig{Detrend: true, Band: [2]float64{0.01, 0.08}, DropVolumes: 6})
	res, err := Run(context.Background(), cl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics.Scan.TimePoints != 54 || !strings.Contains(strings.Join(res.Notes, " "), "cleaning in every subject") {
		t.Errorf("cleaned group: %d time points, notes %q", res.Metrics.Scan.TimePoints, res.Notes)
	}
	c, err := group.Load(context.Background(), subs, group.Options{Clean: func(sub group.Subject, s *scan.Scan) error {
		_, err := clean(cl.clean(), sub.Path, s)
		return err
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := group.Network(context.Background(), c, group.MeanFisherZ, fc.Config{Mode: fc.Strength, Threshold: 0.2}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := bundle.ReadNetwork(filepath.Join(res.Dir, "network.npz"))
	if err != nil || got.Edges() != want.Edges() {
		t.Errorf("cleaned group network: %v, %d edges, by hand %d", err, got.Edges(), want.Edges())
	}
	bad := Defaults()
	bad.Out, bad.Measure = filepath.Join(t.TempDir(), "k"), "kendall"
	bad.Group = &GroupConfig{Subjects: subs, Mean: group.MeanR, MaskRule: group.MaskIntersect}
	if _, err := Run(context.Background(), bad, nil); err == nil || !strings.Contains(err.Error(), "kendall") {
		t.Errorf("kendall group: %v", err)
	}
}
