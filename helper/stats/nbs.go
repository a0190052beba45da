package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// NBSInput is a region-scale comparison for the network-based statistic (Zalesky, Fornito &
// Bullmore 2010): a value per edge (region pair) per subject, two groups.
type NBSInput struct {
	Regions int
	Edges   [][2]int    // region pairs (a < b)
	Values  [][]float64 // edge → subject
	InA     []bool
	// Threshold is the primary threshold on |t| (Welch) that makes an edge supra-threshold.
	Threshold    float64
	Permutations int
	Seed         uint64
}

// NBSComponent is a connected set of supra-threshold edges and its family-wise p.
type NBSComponent struct {
	Edges   []int // indices into NBSInput.Edges
	Regions []int
	// P is the share of relabellings whose largest component has at least as many edges:
	// (1 + #{max ≥ size}) / (permutations + 1), which controls the family-wise error over the
	// components (the statistic is the extent, the number of edges).
	P float64
}

// NBS returns every edge's Welch t and the components of the supra-threshold edges
// (|t| > Threshold; edges join regions), largest first, each with its permutation p.
func NBS(in NBSInput) ([]float64, []NBSComponent, error) {
	if in.Threshold <= 0 {
		return nil, nil, errors.New("NBS: the primary threshold on |t| must be positive")
	}
	if in.Permutations < 1 {
		return nil, nil, errors.New("NBS: at least 1 permutation")
	}
	for _, e := range in.Edges {
		if e[0] < 0 || e[1] >= in.Regions || e[0] >= e[1] {
			return nil, nil, fmt.Errorf("NBS: edge %v is not a region pair a < b of %d regions", e, in.Regions)
		}
	}
	tOf := func(inA []bool) []float64 {
		t := make([]float64, len(in.Values))
		for k, v := range in.Values {
			a, b := split(v, inA)
			t[k] = welchStat(a, b)
		}
		return t
	}
	t := tOf(in.InA)
	comps := components(in.Regions, in.Edges, t, in.Threshold)
	count := make([]int, len(comps))
	rng := rand.New(rand.NewPCG(in.Seed, 0x5851f42d4c957f2d))
	perm := append([]bool(nil), in.InA...)
	for p := 0; p < in.Permutations; p++ {
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		largest := 0
		for _, c := range components(in.Regions, in.Edges, tOf(perm), in.Threshold) {
			largest = max(largest, len(c.Edges))
		}
		for c := range comps {
			if largest >= len(comps[c].Edges) {
				count[c]++
			}
		}
	}
	for c := range comps {
		comps[c].P = float64(1+count[c]) / float64(in.Permutations+1)
	}
	return t, comps, nil
}

// components are the connected components (by shared regions) of the edges with |t| > thr.
func components(regions int, edges [][2]int, t []float64, thr float64) []NBSComponent {
	parent := make([]int, regions)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for k, e := range edges {
		if math.Abs(t[k]) > thr {
			parent[find(e[0])] = find(e[1])
		}
	}
	byRoot := map[int]*NBSComponent{}
	for k, e := range edges {
		if math.Abs(t[k]) > thr {
			r := find(e[0])
			if byRoot[r] == nil {
				byRoot[r] = &NBSComponent{}
			}
			byRoot[r].Edges = append(byRoot[r].Edges, k)
		}
	}
	var out []NBSComponent
	for _, c := range byRoot {
		seen := map[int]bool{}
		for _, k := range c.Edges {
			seen[edges[k][0]], seen[edges[k][1]] = true, true
		}
		for v := range seen {
			c.Regions = append(c.Regions, v)
		}
		sort.Ints(c.Regions)
		out = append(out, *c)
	}
	sort.Slice(out, func(a, b int) bool {
		if len(out[a].Edges) != len(out[b].Edges) {
			return len(out[a].Edges) > len(out[b].Edges)
		}
		return out[a].Regions[0] < out[b].Regions[0]
	})
	return out
}
