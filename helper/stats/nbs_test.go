package stats

import (
	"math/rand/v2"
	"testing"
)

func nbsCohort(rng *rand.Rand, regions, na, nb int, planted map[[2]int]bool, d float64) NBSInput {
	in := NBSInput{Regions: regions, Threshold: 3, Permutations: 200, Seed: 3}
	for s := 0; s < na+nb; s++ {
		in.InA = append(in.InA, s < na)
	}
	for a := 0; a < regions; a++ {
		for b := a + 1; b < regions; b++ {
			v := make([]float64, na+nb)
			for s := range v {
				v[s] = rng.NormFloat64()
				if planted[[2]int{a, b}] && s < na {
					v[s] += d
				}
			}
			in.Edges, in.Values = append(in.Edges, [2]int{a, b}), append(in.Values, v)
		}
	}
	return in
}

// A planted connected subnetwork (a star and a triangle around region 3) is one significant
// component holding most planted edges; null cohorts give FWE p > 0.05 in ≥ 90 % of repetitions.
func TestNBS(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	planted := map[[2]int]bool{}
	for _, b := range []int{4, 5, 6, 7, 8, 9} {
		planted[[2]int{3, b}] = true
	}
	planted[[2]int{4, 5}], planted[[2]int{5, 6}] = true, true
	in := nbsCohort(rng, 20, 12, 12, planted, 2.5)
	_, comps, err := NBS(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(comps) == 0 || comps[0].P > 0.05 {
		t.Fatalf("planted component not found: %+v", comps)
	}
	hit := 0
	for _, k := range comps[0].Edges {
		if planted[in.Edges[k]] {
			hit++
		}
	}
	t.Logf("largest component: %d edges (%d planted of %d), p %.3f", len(comps[0].Edges), hit, len(planted), comps[0].P)
	if float64(hit) < 0.8*float64(len(planted)) {
		t.Errorf("component holds %d of %d planted edges", hit, len(planted))
	}
	falsePos := 0
	for r := 0; r < 10; r++ {
		in := nbsCohort(rng, 15, 8, 8, nil, 0)
		in.Permutations = 100
		_, comps, _ := NBS(in)
		if len(comps) > 0 && comps[0].P <= 0.05 {
			falsePos++
		}
	}
	if falsePos > 1 {
		t.Errorf("null cohorts: %d of 10 with a component at p ≤ 0.05", falsePos)
	}
	if _, _, err := NBS(NBSInput{Regions: 2, Edges: [][2]int{{1, 0}}, Threshold: 3, Permutations: 1}); err == nil {
		t.Error("edge (1, 0) accepted")
	}
}
