package norm

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// A 4×4×1 grid, 16 nodes, 5 subjects: the cohort's degree is 10 everywhere but 30 at two hub
// voxels; the person loses one hub and has a block of three raised voxels.
func TestBuildAndCompare(t *testing.T) {
	dims := [3]int{4, 4, 1}
	aff := [4][4]float64{{2, 0, 0, -4}, {0, 2, 0, -4}, {0, 0, 2, 0}, {0, 0, 0, 1}}
	var ijk [][3]int
	for j := 0; j < 4; j++ {
		for i := 0; i < 4; i++ {
			ijk = append(ijk, [3]int{i, j, 0})
		}
	}
	hubs := map[int]bool{5: true, 10: true}
	deg := make([][]float64, 16)
	for k := range deg {
		base := 10.0
		if hubs[k] {
			base = 30
		}
		deg[k] = []float64{base - 1, base + 1, base, base - 0.5, base + 0.5} // SD ≈ 0.79
	}
	dir := filepath.Join(t.TempDir(), "norm")
	info, err := Build(dir, Input{Dims: dims, Affine: aff, IJK: ijk, Values: map[string][][]float64{"degree": deg},
		Subjects: []string{"a", "b", "c", "d", "e"}, Settings: map[string]any{"density": 0.01}, HubSD: 1})
	if err != nil {
		t.Fatal(err)
	}
	if info.Hubs != 2 {
		t.Fatalf("%d cohort hubs, want 2", info.Hubs)
	}
	n, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.CheckSettings(map[string]any{"density": 0.02}); err == nil || !strings.Contains(err.Error(), "density: 0.01 → 0.02") {
		t.Errorf("settings: %v", err)
	}
	if err := n.CheckGrid([3]int{4, 4, 2}, aff); err == nil {
		t.Error("another grid accepted")
	}
	person := make([]float64, 16)
	for k := range person {
		person[k] = 10
	}
	person[5], person[10] = 5, 30                // hub 5 lost, hub 10 kept
	person[2], person[3], person[7] = 14, 14, 14 // a face-connected block above the cohort
	var ijk32 [][3]int32
	for _, v := range ijk {
		ijk32 = append(ijk32, [3]int32{int32(v[0]), int32(v[1]), int32(v[2])})
	}
	isHub := make([]bool, 16)
	isHub[3] = true // a hub of the person's own network, not of the cohort's, with z > 2: gained
	res, err := n.Compare(ijk32, aff, map[string][]float64{"degree": person}, isHub, 2, func(xyz [3]float64) string { return "R" })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lost) != 1 || res.Lost[0] != 5 || len(res.Gained) != 1 || res.Gained[0] != 3 {
		t.Errorf("lost %v gained %v", res.Lost, res.Gained)
	}
	wantZ := (5 - 30) / math.Sqrt(2.5/4)
	if math.Abs(res.Z["degree"][5]-wantZ) > 1e-5 {
		t.Errorf("z at the lost hub %g, want %g", res.Z["degree"][5], wantZ)
	}
	// Clusters: {2, 3, 7} above (3 voxels), {5} below.
	if len(res.Clusters) != 2 || res.Clusters[0].Voxels != 3 || res.Clusters[0].Sign != 1 || res.Clusters[1].Sign != -1 ||
		res.Clusters[1].Peak != [3]int{1, 1, 0} || res.Clusters[1].PeakMM != [3]float64{-2, -2, 0} || res.Clusters[0].Region != "R" {
		t.Errorf("clusters %+v", res.Clusters)
	}
}

func TestFlattenDiff(t *testing.T) {
	a := Flatten(struct {
		A int `json:"a"`
		G struct {
			M string `json:"mean"`
		} `json:"group"`
	}{A: 1, G: struct {
		M string `json:"mean"`
	}{"r"}})
	if a["a"] != 1.0 || a["group.mean"] != "r" {
		t.Fatalf("flatten %v", a)
	}
	d := Diff(a, map[string]any{"a": 2.0, "x": true})
	if strings.Join(d, "|") != "a: 1 → 2|group.mean: r → (unset)|x: (unset) → true" {
		t.Errorf("diff %q", d)
	}
}
