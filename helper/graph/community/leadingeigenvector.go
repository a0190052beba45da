package community

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

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
	// Workers divides up to this many groups at once (default 1, or deviceWorkers with a
	// Krylov device; 1 with MaxModules, whose cap depends on the order of the divisions).
	// Groups are independent once their parent is divided, and every group's random start is
	// drawn from its place in the division tree, so the result does not depend on Workers or
	// on scheduling. On the host alone more workers do not pay: a large group's products are
	// already split over the cores, and on a loaded desktop two groups' split products wait on
	// each other's cores (W7's network on 2 shared cores, before the fused sums: 5.4–6.8
	// CPU-s with one worker, 6.6–8.2 with two). A device's steps are latency-bound, so there
	// several groups' steps interleave.
	Workers int
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
	// Eigenvalues are the leading eigenvalues β of the accepted divisions, in the order one
	// worker makes them: depth first, the positive side of a division before the negative one
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
// Groups whose parents are divided are independent, so up to Workers of them are divided at
// once (docs/algorithms.md, "Leading eigenvector: groups divided at once").
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
	rep.Start("modules: leading eigenvector", int64(g.N))

	minDevice := opts.KrylovMinNodes
	if minDevice <= 0 {
		minDevice = 1024
	}
	solve := leadingEigenpairLanczos
	if opts.Solver == PowerIteration {
		solve = leadingEigenpairPower
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = 1
		if opts.Krylov != nil {
			workers = deviceWorkers
		}
	}
	if opts.MaxModules > 0 {
		workers = 1 // the cap counts modules in the depth-first order of the divisions
	}
	d := &bisection{
		g: g, opts: opts, solve: solve, minDevice: minDevice, rep: rep,
		newOp: func() *groupModularityMatrix {
			op := &groupModularityMatrix{g: g, weighted: opts.Weighted, k: k, twoM: twoM, local: make([]int32, g.N)}
			for i := range op.local {
				op.local[i] = -1
			}
			return op
		},
		membership: membership, communities: len(groups),
	}
	d.cond = sync.NewCond(&d.mu)
	// The components are the tree's roots; the stack is popped from the back, as igraph's
	// queue, so one worker divides depth-first in igraph's order.
	for i, members := range groups {
		d.push(bisectionTask{members: members, path: []uint32{uint32(len(groups) - 1 - i)},
			seed: splitMix64(opts.Seed ^ splitMix64(uint64(i)+1))})
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.work(ctx)
		}()
	}
	wg.Wait()
	if d.err != nil {
		return nil, d.err
	}
	if d.unconverged > 0 {
		rep.Note(fmt.Sprintf("leading-eigenvector modules: for %d group(s) (%d nodes) the eigenvector did not settle within %d products (worst relative residual %.2g, tolerance %.2g); those groups were divided by the best estimate, so their split is uncertain",
			d.unconverged, d.unconvergedNodes, opts.MaxProducts, d.worst, opts.Tolerance))
	}
	// Eigenvalues in the order one worker makes the divisions: depth first, positive side
	// first, which is the lexicographic order of the divisions' tree paths.
	sort.Slice(d.divisions, func(a, b int) bool { return slices.Compare(d.divisions[a].path, d.divisions[b].path) < 0 })
	eigenvalues := make([]float64, len(d.divisions))
	for i, dv := range d.divisions {
		eigenvalues[i] = dv.beta
	}
	out, err := newModules("leading eigenvector", g, membership, ModularityOptions{Weighted: opts.Weighted})
	if err != nil {
		return nil, err
	}
	out.Eigenvalues = eigenvalues
	return out, nil
}

// deviceWorkers is Workers' default with a Krylov device: enough groups in flight to keep the
// device thread busy while each waits for its step (W7's tree peels 7 modules off a chain).
const deviceWorkers = 8

// bisectionTask is a group still to divide: its members, its place in the division tree
// (root component, then 0 for the positive and 1 for the negative side of each division
// above it) and the seed of its random start vector, drawn from its parent's seed and side,
// so that every group's solve, hence the result, is the same whichever worker takes it when.
type bisectionTask struct {
	members []int32
	path    []uint32
	seed    uint64
}

type bisectionDivision struct {
	path []uint32
	beta float64
}

// bisection is the shared state of LeadingEigenvectorModules' workers. Groups are
// independent once their parent is divided, so the workers take them from one stack; each
// worker binds its groups to its own modularity operator.
type bisection struct {
	g         *graph.Graph
	opts      LeadingEigenvectorOptions
	solve     func(context.Context, operator, eigenOptions) (eigenResult, error)
	minDevice int
	rep       progress.Reporter
	newOp     func() *groupModularityMatrix

	mu          sync.Mutex
	cond        *sync.Cond
	stack       []bisectionTask
	busy        int // tasks taken and not yet finished
	err         error
	membership  []int // written for disjoint groups, read after the workers end
	communities int
	divisions   []bisectionDivision
	// Solves that hit the product cap are reported once, in words, after the whole division.
	unconverged, unconvergedNodes int
	worst                         float64
}

// push queues a group of more than two nodes, or counts a smaller one as final. Called with
// mu held (or before the workers start).
func (d *bisection) push(t bisectionTask) {
	if len(t.members) > 2 {
		d.stack = append(d.stack, t)
	} else {
		d.rep.Add(int64(len(t.members)))
	}
}

// work takes groups until none is left and none is being divided (which could add more), or
// an error stops every worker.
func (d *bisection) work(ctx context.Context) {
	op := d.newOp()
	var sv, bs []float64
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		for len(d.stack) == 0 && d.busy > 0 && d.err == nil {
			d.cond.Wait()
		}
		if d.err != nil || len(d.stack) == 0 {
			d.cond.Broadcast()
			return
		}
		t := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		if d.opts.MaxModules > 0 && d.communities >= d.opts.MaxModules {
			d.rep.Add(int64(len(t.members)))
			continue
		}
		d.busy++
		d.mu.Unlock()
		sv, bs = resize(sv, len(t.members)), resize(bs, len(t.members))
		res, divide, apart, err := d.divide(ctx, op, t, sv, bs)
		d.mu.Lock()
		d.busy--
		if err != nil {
			if d.err == nil {
				d.err = fmt.Errorf("leading-eigenvector modules: %w", err)
			}
			d.cond.Broadcast()
			return
		}
		if apart {
			for _, v := range t.members[1:] {
				d.membership[v] = d.communities
				d.communities++
			}
			d.rep.Add(int64(len(t.members)))
			d.cond.Broadcast()
			continue
		}
		if !res.converged {
			d.unconverged++
			d.unconvergedNodes += len(t.members)
			d.worst = max(d.worst, res.residual/math.Max(math.Abs(res.value), 1e-300))
		}
		if !divide {
			d.rep.Add(int64(len(t.members)))
			d.cond.Broadcast()
			continue
		}
		d.divisions = append(d.divisions, bisectionDivision{t.path, res.value})
		newID := d.communities
		d.communities++
		var negatives int
		for _, s := range sv {
			if s < 0 {
				negatives++
			}
		}
		pos := make([]int32, 0, len(t.members)-negatives)
		neg := make([]int32, 0, negatives)
		for i, v := range t.members {
			if sv[i] < 0 {
				d.membership[v] = newID
				neg = append(neg, v)
			} else {
				pos = append(pos, v)
			}
		}
		// Pushed negative side first, so that one worker divides the positive side next.
		d.push(bisectionTask{members: neg, path: append(slices.Clip(t.path), 1), seed: splitMix64(t.seed ^ 2)})
		d.push(bisectionTask{members: pos, path: append(slices.Clip(t.path), 0), seed: splitMix64(t.seed ^ 1)})
		d.cond.Broadcast()
	}
}

// divide finds the leading eigenpair of the group's B^(G) and the division s (sv, ±1) it
// gives; divide is false when the group is indivisible. res.value is β, rounded to 0 below
// 1e-8 as igraph does.
//
// apart is true instead for a group without an internal link (with the default MinEigenvalue
// and MaxModules): its members become modules of their own. Every division of such a group
// raises Q (sᵀB^(G)s = (K_G² − (kᵀs)²)/2m > 0, K_G = Σ_{i∈G} k_i), so the bisections go on
// to single nodes but for the pairs they stop at, and singles are its highest-Q partition
// (Σ_c K_c² is least). Which pairs would be left is not a property of the network: B^(G) =
// (K_G diag(k) − k kᵀ)/2m has one eigenvalue for all vectors orthogonal to 1 when the degrees
// tie, so the split followed the random start and the rounding (docs/algorithms.md,
// "Leading eigenvector: groups divided at once").
func (d *bisection) divide(ctx context.Context, op *groupModularityMatrix, t bisectionTask, sv, bs []float64) (res eigenResult, divide, apart bool, err error) {
	members := t.members
	op.bind(members)
	defer op.unbind()
	if len(op.subAdj) == 0 && d.opts.MaxModules == 0 && d.opts.MinEigenvalue <= 0 {
		return res, false, true, nil
	}
	res, divide, err = d.solveAndSplit(ctx, op, t, sv, bs)
	return res, divide, false, err
}

// solveAndSplit is divide for a group with internal links.
func (d *bisection) solveAndSplit(ctx context.Context, op *groupModularityMatrix, t bisectionTask, sv, bs []float64) (res eigenResult, divide bool, err error) {
	members := t.members
	eo := eigenOptions{tol: d.opts.Tolerance, maxApply: d.opts.MaxProducts, seed: t.seed}
	if kd := d.opts.Krylov; kd != nil && len(members) >= d.minDevice {
		eo.device = func(capacity int) (KrylovBasis, error) { return kd.BindGroup(op.groupOperator(), capacity) }
	}
	res, err = d.solve(ctx, op, eo)
	if err != nil {
		return res, false, err
	}
	if math.Abs(res.value) < 1e-8 {
		res.value = 0
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
	negatives := 0
	for i, xi := range x {
		if math.Abs(xi) < 1e-8 || sign*xi > 0 {
			sv[i] = 1
		} else {
			sv[i] = -1
			negatives++
		}
	}
	divide = res.value > d.opts.MinEigenvalue && negatives > 0 && negatives < len(members)
	if !divide {
		return res, false, nil
	}
	if d.opts.FineTune {
		if err := fineTune(ctx, op, sv); err != nil {
			return res, false, err
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
	return res, dot(sv, bs) > 1e-8 && negatives > 0 && negatives < len(members), nil
}

// splitMix64 is SplitMix64's output function (Steele et al. 2014), which draws the groups'
// seeds from their parents'.
func splitMix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
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
