package synth

import (
	"cmp"
	"math"
	"slices"

	"github.com/hubscope/hubscope/helper/scan"
)

// Graded modules (Params.CoreCorrelation): a module whose coupling to its signal falls from a
// core to its border, as a resting-state network's does from its centre (the posterior
// cingulate of the default mode network, say) to its edges.
//
// Ordinary voxel v of module m shares
//
//	ρ_v = ρ + (ρ_core − ρ)·(1 − u_v)^k
//
// of its variance with s_m (loading √ρ_v, noise √(1−ρ_v)), u_v ∈ [0, 1) being v's rank by
// distance to the module's centroid divided by the module's size. Two voxels of one module
// correlate at √(ρ_u·ρ_v) in expectation. Because u_v is a rank, the share of a module's pairs
// above a threshold θ does not depend on the voxel size, and the density of a network thresholded
// at θ is about Σ_m n_m²/N² · P(√(ρ_U·ρ_U′) ≥ θ) for U, U′ uniform: with ρ = 0.2, ρ_core = 0.95
// and k = 16 (DefaultCohortParams) about 0.18, 0.12, 0.08, 0.05, 0.03, 0.02 % at
// θ = 0.45, 0.50, …, 0.70 — the sparsities Wang et al. (2013) found in the mean of 197 subjects'
// correlation matrices at those thresholds (0.151 … 0.023 %; docs/algorithms.md). The voxels
// of a core are the provincial hubs of such a network; the planted hubs, which split their
// variance over 2–3 modules, are its connectors. A subject's own module signals and noise
// (Params.SubjectSeed) vary around the shared layout; the grading is the layout's, drawn from
// no random stream, so it leaves every other draw of the phantom unchanged.
func (g *generator) grade(labels []int32, affine [4][4]float64, signals [][]float64) {
	p, n, L := g.p, len(labels), g.p.Length
	pos := make([][3]float64, n)
	centre := make([][3]float64, p.Modules)
	count := make([]int, p.Modules)
	for v, q := range g.ijk {
		pos[v] = scan.VoxelToWorld(affine, [3]float64{float64(q[0]), float64(q[1]), float64(q[2])})
		m := labels[v] - 1
		for c := range 3 {
			centre[m][c] += pos[v][c]
		}
		count[m]++
	}
	for m := range centre {
		for c := range 3 {
			centre[m][c] /= float64(max(count[m], 1))
		}
	}
	// Nodes by module, then by distance to the module's centroid (ties to the lower node).
	order := make([]int, n)
	d := make([]float64, n)
	for v := range order {
		order[v] = v
		d[v] = dist2(pos[v], centre[labels[v]-1])
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(labels[a], labels[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(d[a], d[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	g.load, g.loadSd = make([]float64, n), make([]float64, n)
	rank := 0
	for i, v := range order {
		if i > 0 && labels[v] != labels[order[i-1]] {
			rank = 0
		}
		u := float64(rank) / float64(count[labels[v]-1])
		rho := p.ModuleCorrelation + float64((p.CoreCorrelation-p.ModuleCorrelation)*math.Pow(1-u, p.CoreExponent))
		g.load[v], g.loadSd[v] = math.Sqrt(rho), math.Sqrt(1-rho)
		rank++
	}
	g.sig = make([]float64, p.Modules*L)
	for m, s := range signals {
		copy(g.sig[m*L:], s)
	}
}
