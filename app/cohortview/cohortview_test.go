package cohortview

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A cohort folder with compare's default output inside: the subjects × measures table sorts
// by a measure as numbers; the comparison shows the global tests and the significant nodes
// (smallest q first). A folder with neither file, and a ragged table, are refused by name.
func TestReadAndView(t *testing.T) {
	test.NewTempApp(t)
	dir := t.TempDir()
	write(t, filepath.Join(dir, MeasuresFile), "participant_id\trun\tdiagnosis\thubs.count\tnetwork.mean_degree\n"+
		"sub-01\tsub-01_task-rest\tcontrol\t990\t82.5\nsub-02\tsub-02_task-rest\tcontrol\t1180\t9.5\nsub-p1\tsub-p1_task-rest\tpatient\t100\tn/a\n")
	write(t, filepath.Join(dir, CompareDir, CompareGlobalFile), "measure\tmean_control\tmean_patient\tt\tdf\tp\tp_permutation\tq_fdr\n"+
		"hubs.count\t1085\t100\t7.1\t3.2\t0.004\t0.01\t0.02\n")
	write(t, filepath.Join(dir, CompareDir, CompareNodesFile), "map\ti\tj\tk\tt\tp\tp_permutation\tq_fdr\n"+
		"degree\t8\t13\t3\t-6.1\t0.001\tnan\t0.04\ndegree\t11\t6\t5\t-9.3\t0.0001\tnan\t0.01\n")
	r, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	v := NewView(r)
	test.NewTempWindow(t, v.Tabs)
	if len(v.Tabs.Items) != 2 || v.Tabs.Items[0].Text != "Subjects" || v.Tabs.Items[1].Text != "Comparison" {
		t.Fatalf("tabs %d", len(v.Tabs.Items))
	}
	v.Measures.HeaderTapped(4) // network.mean_degree, ascending: 9.5, 82.5, then n/a
	var order []string
	for _, row := range v.Measures.Shown() {
		order = append(order, row[0])
	}
	if strings.Join(order, ",") != "sub-02,sub-01,sub-p1" {
		t.Fatalf("sorted by mean degree: %v", order)
	}
	if n := v.Nodes.Shown(); len(n) != 2 || n[0][1] != "11" {
		t.Fatalf("significant nodes, smallest q first: %v", n)
	}
	if g := v.Global.Shown(); len(g) != 1 || g[0][3] != "7.1" {
		t.Fatalf("global tests %v", g)
	}

	if _, err := Read(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no measures.tsv") {
		t.Errorf("empty folder: %v", err)
	}
	bad := t.TempDir()
	write(t, filepath.Join(bad, MeasuresFile), "a\tb\n1\n")
	if _, err := Read(bad); err == nil || !strings.Contains(err.Error(), "measures.tsv line 2: 1 fields, the header has 2") {
		t.Errorf("ragged table: %v", err)
	}
}
