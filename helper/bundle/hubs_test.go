package bundle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/scan"
)

func TestHubTableParsesInNumpy(t *testing.T) {
	pyref.Require(t, "numpy", "nibabel")
	s := smallScan()
	degree := make([]int, s.N)
	strength := make([]float64, s.N)
	z := make([]float64, s.N)
	for v := range degree {
		degree[v] = 10 + v
		strength[v] = 0.1 * float64(v*v)
		z[v] = float64(v)/3 - 1
	}
	hubs := []int{9, 4, 7}
	dir := filepath.Join(t.TempDir(), "out")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHubTable(s, hubs, degree, strength, z, []string{"Precuneus_L", "", "Cingulum_Mid_R"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	aff, _ := json.Marshal(s.Affine)
	out := pyref.Run(t, `
import json, sys
import numpy as np
from nibabel.affines import apply_affine
d, aff = sys.argv[1], np.array(json.loads(sys.argv[2]))
t = np.genfromtxt(d + '/hubs.tsv', delimiter='\t', names=True, dtype=None, encoding='utf-8')
ijk = np.stack([t['i'], t['j'], t['k']], axis=1)
print(json.dumps({"names": list(t.dtype.names), "node": t['node'].tolist(), "ijk": ijk.tolist(),
  "mm_err": float(np.abs(apply_affine(aff, ijk) - np.stack([t['x_mm'], t['y_mm'], t['z_mm']], axis=1)).max()),
  "degree": t['degree'].tolist(), "strength": t['strength'].tolist(), "hub_z": t['hub_z'].tolist(),
  "atlas": [str(x) for x in t['atlas_label']]}))
`, dir, string(aff))
	var v struct {
		Names    []string   `json:"names"`
		Node     []int      `json:"node"`
		IJK      [][3]int32 `json:"ijk"`
		MMErr    float64    `json:"mm_err"`
		Degree   []int      `json:"degree"`
		Strength []float64  `json:"strength"`
		HubZ     []float64  `json:"hub_z"`
		Atlas    []string   `json:"atlas"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(v.Names, ","); got != strings.Join(HubTableColumns, ",")+",atlas_label" {
		t.Fatalf("columns %s", got)
	}
	for r, h := range hubs {
		if v.Node[r] != h || v.IJK[r] != s.IJK[h] || v.Degree[r] != degree[h] || v.Strength[r] != strength[h] || v.HubZ[r] != z[h] {
			t.Errorf("row %d: node %d ijk %v degree %d strength %v z %v; want node %d ijk %v %d %v %v",
				r, v.Node[r], v.IJK[r], v.Degree[r], v.Strength[r], v.HubZ[r], h, s.IJK[h], degree[h], strength[h], z[h])
		}
	}
	if v.MMErr > 5e-4 {
		t.Errorf("coordinates differ from nibabel's apply_affine by %g mm", v.MMErr)
	}
	if strings.Join(v.Atlas, "|") != "Precuneus_L||Cingulum_Mid_R" {
		t.Errorf("atlas labels %q", v.Atlas)
	}
}

func TestHubTableOfPlainMatrix(t *testing.T) {
	s := &scan.Scan{N: 3, L: 9, Labels: []string{"PCC", "mPFC", "LIPC"}}
	dir := filepath.Join(t.TempDir(), "out")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHubTable(s, []int{1}, []int{1, 2, 1}, []float64{0.5, 1.25, 0.75}, []float64{-1, 1.5, -0.5}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHubTable(s, []int{3}, []int{1, 2, 1}, []float64{0.5, 1.25, 0.75}, []float64{-1, 1.5, -0.5}, nil); err == nil {
		t.Error("hub outside the nodes accepted")
	}
	w3, _ := Create(filepath.Join(t.TempDir(), "y"), false)
	defer w3.Abort()
	if err := w3.WriteHubTableMNI(s, []int{1}, []int{1, 2, 1}, []float64{0.5, 1.25, 0.75}, []float64{-1, 1.5, -0.5}, nil, [][3]float64{{1, 2, 3}}); err == nil || !strings.Contains(err.Error(), "MNI positions") {
		t.Errorf("MNI positions for a plain matrix: %v", err)
	}
	w2, _ := Create(filepath.Join(t.TempDir(), "x"), false)
	defer w2.Abort()
	if err := w2.WriteHubTable(s, []int{0}, []int{1}, nil, nil, nil); err == nil {
		t.Error("short per-node slices accepted")
	}
	w.Abort()
	w, _ = Create(dir, false)
	if err := w.WriteHubTable(s, []int{1}, []int{1, 2, 1}, []float64{0.5, 1.25, 0.75}, []float64{-1, 1.5, -0.5}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "hubs.tsv"))
	if want := "node\tlabel\tdegree\tstrength\thub_z\n1\tmPFC\t2\t1.25\t1.5\n"; string(b) != want {
		t.Errorf("hubs.tsv = %q, want %q", b, want)
	}
}
