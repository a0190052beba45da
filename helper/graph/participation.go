package graph

import (
	"fmt"
	"math"
)

// ParticipationCoefficients returns Guimerà & Amaral's (2005) participation coefficient for a
// module assignment (module[i] ≥ 0 for every node): P_i = 1 − Σ_s (k_is / k_i)², where k_is
// counts i's neighbours in module s; 0 for isolated nodes (as the Brain Connectivity Toolbox's
// participation_coef). P near 0: all links inside one module (provincial); near 1: links
// spread evenly over modules (connector). Binary; O(E) time, O(N) memory.
func ParticipationCoefficients(g *Graph, module []int32) ([]float64, error) {
	if err := checkModules(g, module); err != nil {
		return nil, err
	}
	p := make([]float64, g.N)
	count := map[int32]int{}
	for i := 0; i < g.N; i++ {
		k := g.Degree(i)
		if k == 0 {
			continue
		}
		clear(count)
		for _, j := range g.Neighbors(i) {
			count[module[j]]++
		}
		// Σ_s k_is² in integers: exact, so the map's random order cannot change the result.
		var s int64
		for _, c := range count {
			s += int64(c) * int64(c)
		}
		p[i] = 1 - float64(s)/(float64(k)*float64(k))
	}
	return p, nil
}

// WithinModuleDegreeZ returns Guimerà & Amaral's within-module degree z-score,
// z_i = (κ_i − ⟨κ⟩_s) / σ_s, where κ_i counts i's neighbours in its own module s and ⟨κ⟩_s, σ_s
// (population SD) are taken over the nodes of s; 0 when σ_s = 0 (BCT's module_degree_zscore
// gives NaN there; a map needs a number). With ParticipationCoefficients it separates
// provincial hubs (high z, low P) from connector hubs (high z, high P).
func WithinModuleDegreeZ(g *Graph, module []int32) ([]float64, error) {
	if err := checkModules(g, module); err != nil {
		return nil, err
	}
	kappa := make([]float64, g.N)
	for i := 0; i < g.N; i++ {
		for _, j := range g.Neighbors(i) {
			if module[j] == module[i] {
				kappa[i]++
			}
		}
	}
	type acc struct{ n, s, ss float64 }
	stats := map[int32]*acc{}
	for i, m := range module {
		a := stats[m]
		if a == nil {
			a = &acc{}
			stats[m] = a
		}
		a.n++
		a.s += kappa[i]
	}
	for i, m := range module {
		a := stats[m]
		d := kappa[i] - a.s/a.n
		a.ss += d * d
	}
	z := make([]float64, g.N)
	for i, m := range module {
		a := stats[m]
		if sd := math.Sqrt(a.ss / a.n); sd > 0 {
			z[i] = (kappa[i] - a.s/a.n) / sd
		}
	}
	return z, nil
}

func checkModules(g *Graph, module []int32) error {
	if g == nil {
		return fmt.Errorf("graph: module measures of a nil graph")
	}
	if len(module) != g.N {
		return fmt.Errorf("graph: %d module labels for %d nodes", len(module), g.N)
	}
	for i, m := range module {
		if m < 0 {
			return fmt.Errorf("graph: node %d has negative module label %d", i, m)
		}
	}
	return nil
}
