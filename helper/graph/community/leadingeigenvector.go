package community

import (
	"context"
	"fmt"
	"math"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/progress"
)

// LeadingEigenvectorOptions configures LeadingEigenvectorModules. The zero value reproduces
// Newman's method as igraph's community_leading_eigenvector runs it.
type LeadingEigenvectorOptions struct {
	// Weighted uses connection strengths for A_ij and k_i (weights must be non-negative).
	Weighted bool
	// MinEigenvalue is the eigenvalue threshold r_e of Wu et al. (2010): a group is divided
	// only when the leading eigenvalue β of B^(G) exceeds it. 0 (the default) divides whenever
	// the division increases Q; a positive value caps the number of divisions.
	MinEigenvalue float64
	// MaxModules stops dividing once this many modules exist (0: no cap).
	MaxModules int
	// Solver finds the leading eigenpair: Lanczos (default) or PowerIteration (the papers').
	Solver EigenSolver
	// Tolerance on the eigenpair's relative residual ‖B^(G)x − βx‖ / ‖B^(G)‖ (default 1e-10).
	Tolerance float64
	// MaxProducts caps the products with B^(G) per group (default 50,000). A solve that hits
	// the cap splits by its best estimate and says so through the progress reporter's Note.
	MaxProducts int
	// FineTune refines every division by Kernighan–Lin-style single-node moves that increase
	// ΔQ (Newman 2006, "fine-tuning"). Off by default, as in igraph.
	FineTune bool
	// Seed makes the random start vectors, hence the result, reproducible.
	Seed uint64
	// Krylov, when set, runs the Lanczos solves of groups of at least KrylovMinNodes nodes
	// (default 1,024; smaller groups cost less on the host than the device's launches) on an
	// accelerator: the products with B^(G) and the Gram–Schmidt passes, the vectors staying
	// there. The iteration is the host's, with classical instead of modified Gram–Schmidt,
	// so eigenvalues and Q agree to rounding.
	Krylov         KrylovDevice
	KrylovMinNodes int
}

// Modules is the result of a module-finding method.
type Modules struct {
	// Method names the algorithm ("leading eigenvector", "Leiden").
	Method string
	// Membership is the module of every node, numbered by decreasing size: 0 is the largest
	// module (ties: the module holding the lowest node index first). RelabelBySize gives the
	// 1-based labels a module map uses.
	Membership []int
	// Sizes are the module sizes in decreasing order; Sizes[c] is the size of module c.
	Sizes []int
	// Q is the modularity of Membership with the options the method ran with.
	Q float64
	// Eigenvalues are the leading eigenvalues β of the accepted divisions, in the order made
	// (leading-eigenvector method only).
	Eigenvalues []float64
}

// Count is the number of modules.
func (m *Modules) Count() int { return len(m.Sizes) }

// LeadingEigenvectorModules divides the graph into modules by Newman's leading-eigenvector
// method with repeated bisection (Newman 2006, PNAS 103:8577; Wu et al. 2010; Wang et al. 2013).
//
// It starts, as igraph does, from the connected components. A group G is divided by the signs
// of the eigenvector of the most positive eigenvalue β of
//
//	B^(G)_ij = B_ij − δ_ij Σ_{l∈G} B_il,   B = A − k kᵀ/2m,
//
// found with B^(G) applied implicitly (sparse A·x, a rank-1 and a diagonal term). A division is
// kept only when β > MinEigenvalue and the sign vector s gives ΔQ = sᵀB^(G)s / 4m > 0; both
// halves are then divided in turn until no group can be. Entries |x_i| < 1e-8 count as
// positive and the eigenvector's sign is fixed by its first non-zero entry, as in igraph.
//
// Cancelling ctx stops the work within one product with B^(G); progress counts nodes whose
// module is final.
func LeadingEigenvectorModules(ctx context.Context, g *graph.Graph, opts LeadingEigenvectorOptions, rep progress.Reporter) (*Modules, error) {
	rep = progress.OrDiscard(rep)
	if err := checkGraph(g, opts.Weighted); err != nil {
		return nil, err
	}
	if opts.Tolerance <= 0 {
		opts.Tolerance = 1e-10
	}
	if opts.MaxProducts <= 0 {
		opts.MaxProducts = 50000
	}
	k, twoM := nodeDegrees(g, opts.Weighted)
	if twoM == 0 {
		return nil, ErrNoEdges
	}
	membership, groups := connectedComponents(g)
	communities := len(groups)
	rep.Start("modules: leading eigenvector", int64(g.N))

	op := &groupModularityMatrix{g: g, weighted: opts.Weighted, k: k, twoM: twoM, local: make([]int32, g.N)}
	for i := range op.local {
		op.local[i] = -1
	}
	minDevice := opts.KrylovMinNodes
	if minDevice <= 0 {
		minDevice = 1024
	}
	solve := leadingEigenpairLanczos
	if opts.Solver == PowerIteration {
		solve = leadingEigenpairPower
	}
	// Depth-first over groups still to divide, as igraph's queue (popped from the back).
	stack := make([][]int32, 0, len(groups))
	for _, members := range groups {
		if len(members) > 2 {
			stack = append(stack, members)
		} else {
			rep.Add(int64(len(members)))
		}
	}
	var eigenvalues []float64
	var attempt uint64
	// Solves that hit the product cap are reported once, in words, after the whole division.
	var unconverged, unconvergedNodes int
	var worst float64
	var sv, bs []float64
	for len(stack) > 0 {
		members := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if len(members) <= 2 || (opts.MaxModules > 0 && communities >= opts.MaxModules) {
			rep.Add(int64(len(members)))
			continue
		}
		op.bind(members)
		attempt++
		eo := eigenOptions{tol: opts.Tolerance, maxApply: opts.MaxProducts, seed: opts.Seed ^ (attempt * 0x9e3779b97f4a7c15)}
		if opts.Krylov != nil && len(members) >= minDevice {
			eo.device = func(capacity int) (KrylovBasis, error) { return opts.Krylov.BindGroup(op.groupOperator(), capacity) }
		}
		res, err := solve(ctx, op, eo)
		if err != nil {
			op.unbind()
			return nil, fmt.Errorf("leading-eigenvector modules: %w", err)
		}
		if !res.converged {
			unconverged++
			unconvergedNodes += len(members)
			worst = max(worst, res.residual/math.Max(math.Abs(res.value), 1e-300))
		}
		beta := res.value
		if math.Abs(beta) < 1e-8 {
			beta = 0
		}
		x := res.vector
		sign := 1.0
		for _, xi := range x {
			if math.Abs(xi) >= 1e-8 {
				if xi < 0 {
					sign = -1
				}
				break
			}
		}
		sv = resize(sv, len(members))
		bs = resize(bs, len(members))
		negatives := 0
		for i, xi := range x {
			if math.Abs(xi) < 1e-8 || sign*xi > 0 {
				sv[i] = 1
			} else {
				sv[i] = -1
				negatives++
			}
		}
		divide := beta > opts.MinEigenvalue && negatives > 0 && negatives < len(members)
		if divide {
			if opts.FineTune {
				if err := fineTune(ctx, op, sv); err != nil {
					op.unbind()
					return nil, fmt.Errorf("leading-eigenvector modules: %w", err)
				}
				negatives = 0
				for _, s := range sv {
					if s < 0 {
						negatives++
					}
				}
			}
			op.apply(bs, sv)
			// sᵀB^(G)s = 4m ΔQ; igraph's 1e-8 guard against a rounding-level "increase".
			divide = dot(sv, bs) > 1e-8 && negatives > 0 && negatives < len(members)
		}
		op.unbind()
		if !divide {
			rep.Add(int64(len(members)))
			continue
		}
		eigenvalues = append(eigenvalues, beta)
		newID := communities
		communities++
		pos := make([]int32, 0, len(members)-negatives)
		neg := make([]int32, 0, negatives)
		for i, v := range members {
			if sv[i] < 0 {
				membership[v] = newID
				neg = append(neg, v)
			} else {
				pos = append(pos, v)
			}
		}
		for _, part := range [][]int32{neg, pos} {
			if len(part) > 2 {
				stack = append(stack, part)
			} else {
				rep.Add(int64(len(part)))
			}
		}
	}
	if unconverged > 0 {
		rep.Note(fmt.Sprintf("leading-eigenvector modules: for %d group(s) (%d nodes) the eigenvector did not settle within %d products (worst relative residual %.2g, tolerance %.2g); those groups were divided by the best estimate, so their split is uncertain",
			unconverged, unconvergedNodes, opts.MaxProducts, worst, opts.Tolerance))
	}
	out, err := newModules("leading eigenvector", g, membership, ModularityOptions{Weighted: opts.Weighted})
	if err != nil {
		return nil, err
	}
	out.Eigenvalues = eigenvalues
	return out, nil
}

// fineTune improves a division s of the bound group by Kernighan–Lin-style sweeps (Newman 2006,
// PNAS, "fine-tuning"): in each sweep every node is moved once, always the one whose move
// increases sᵀB^(G)s most (or decreases it least); the best intermediate state is kept, and
// sweeps repeat until one brings no increase. The gain of flipping s_j is
//
//	Δ_j = −4 s_j (B^(G)s)_j + 4 B^(G)_jj,
//
// kept current through a_j = Σ_{l∈G} A_jl s_l (sparse updates) and κ = Σ_l k_l s_l (one scalar).
// Each sweep costs O(|G|² + edges).
func fineTune(ctx context.Context, op *groupModularityMatrix, s []float64) error {
	n := op.dim()
	g := op.g
	a := make([]float64, n)
	moved := make([]bool, n)
	flips := make([]int, 0, n)
	for sweep := 0; sweep < 100; sweep++ {
		var kappa float64
		for i, v := range op.members {
			kappa += op.kG[i] * s[i]
			var ai float64
			for p := g.Offsets[v]; p < g.Offsets[v+1]; p++ {
				if lu := op.local[g.Adj[p]]; lu >= 0 {
					ai += edgeWeight(g, p, op.weighted) * s[lu]
				}
			}
			a[i] = ai
		}
		for i := range moved {
			moved[i] = false
		}
		flips = flips[:0]
		var gain, bestGain float64
		bestLen := 0
		for step := 0; step < n; step++ {
			if step&255 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			best, bestDelta := -1, math.Inf(-1)
			for j := 0; j < n; j++ {
				if moved[j] {
					continue
				}
				kj := op.kG[j]
				// B^(G)_jj = −k_j²/2m − Σ_{l∈G}B_jl (no self-loops), so with
				// (B^(G)s)_j = a_j − k_j κ/2m − (Σ_l B_jl) s_j the row sums cancel:
				delta := -4*s[j]*a[j] + 4*s[j]*kj*kappa/op.twoM - 4*kj*kj/op.twoM
				if delta > bestDelta {
					best, bestDelta = j, delta
				}
			}
			moved[best] = true
			old := s[best]
			s[best] = -old
			kappa -= 2 * old * op.kG[best]
			v := op.members[best]
			for p := g.Offsets[v]; p < g.Offsets[v+1]; p++ {
				if lu := op.local[g.Adj[p]]; lu >= 0 {
					a[lu] -= 2 * old * edgeWeight(g, p, op.weighted)
				}
			}
			flips = append(flips, best)
			gain += bestDelta
			if gain > bestGain+1e-10 {
				bestGain, bestLen = gain, len(flips)
			}
		}
		// Undo the moves after the best intermediate state.
		for _, j := range flips[bestLen:] {
			s[j] = -s[j]
		}
		if bestLen == 0 {
			return nil
		}
	}
	return nil
}

// connectedComponents labels the components of g in order of their lowest node and lists
// their members.
func connectedComponents(g *graph.Graph) ([]int, [][]int32) {
	membership := make([]int, g.N)
	for i := range membership {
		membership[i] = -1
	}
	var groups [][]int32
	queue := make([]int32, 0, g.N)
	for s := 0; s < g.N; s++ {
		if membership[s] >= 0 {
			continue
		}
		c := len(groups)
		membership[s] = c
		queue = append(queue[:0], int32(s))
		for head := 0; head < len(queue); head++ {
			for _, u := range g.Neighbors(int(queue[head])) {
				if membership[u] < 0 {
					membership[u] = c
					queue = append(queue, u)
				}
			}
		}
		groups = append(groups, append([]int32(nil), queue...))
	}
	return membership, groups
}

// newModules canonicalises a membership (0 = largest module) and scores it; g has passed
// checkGraph (every caller checks it first).
func newModules(method string, g *graph.Graph, membership []int, mo ModularityOptions) (*Modules, error) {
	labels := RelabelBySize(membership)
	sizes := make([]int, 0)
	for i := range labels {
		labels[i]--
		for labels[i] >= len(sizes) {
			sizes = append(sizes, 0)
		}
		sizes[labels[i]]++
	}
	q, err := modularity(g, labels, mo) // the callers have checked g
	if err != nil {
		return nil, err
	}
	return &Modules{Method: method, Membership: labels, Sizes: sizes, Q: q}, nil
}
