package synth

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/scan"
)

func TestWriteCohort(t *testing.T) {
	m, a, err := DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = ResampleMask(m, a, 14)
	p := DefaultParams()
	p.Length = 60
	dir := filepath.Join(t.TempDir(), "bids")
	ct, err := WriteCohort(context.Background(), m, a, p, CohortOptions{Subjects: 3, Lesion: true}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ct.Subjects) != 4 || ct.Patient != "patient01" || len(ct.Lesioned) == 0 {
		t.Fatalf("cohort %+v", ct)
	}
	tsv, _ := os.ReadFile(filepath.Join(dir, "participants.tsv"))
	if got := strings.Count(string(tsv), "\n"); got != 5 || !strings.Contains(string(tsv), "sub-patient01\tpatient") {
		t.Errorf("participants.tsv:\n%s", tsv)
	}
	// Individual series on one layout: the scans differ, the planted hubs of the controls are
	// those of the layout, and the patient's removed hubs lie in one module.
	var first []float32
	for _, s := range ct.Subjects {
		sc, err := scan.Load(context.Background(), CohortScan(dir, s), scan.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = sc.Data
		} else if slices.Equal(first, sc.Data) {
			t.Errorf("sub-%s's series equal sub-%s's", s, ct.Subjects[0])
		}
	}
	mod := ct.Layout.Modules[ct.Lesioned[0]]
	for _, v := range ct.Lesioned {
		if ct.Layout.Modules[v] != mod || !slices.Contains(ct.Layout.Hubs, v) {
			t.Errorf("lesioned node %d: module %d (want %d), planted hub %v", v, ct.Layout.Modules[v], mod, slices.Contains(ct.Layout.Hubs, v))
		}
	}
	// The patient's phantom plants every other hub and none of the lesioned ones.
	pp := p
	pp.SubjectSeed, pp.LesionModule = 1, int(mod)
	g, err := newGenerator(m, a, pp)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.truth.Hubs)+len(ct.Lesioned) != len(ct.Layout.Hubs) {
		t.Errorf("patient keeps %d of %d hubs with %d lesioned", len(g.truth.Hubs), len(ct.Layout.Hubs), len(ct.Lesioned))
	}
	for _, v := range ct.Lesioned {
		if g.profile[v] != mod-1 {
			t.Errorf("lesioned hub %d still has its own profile", v)
		}
	}
	if _, err := WriteCohort(context.Background(), m, a, p, CohortOptions{Subjects: 2}, dir, nil); err == nil {
		t.Error("wrote into a non-empty folder")
	}
}
