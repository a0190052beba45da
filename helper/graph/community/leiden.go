package community

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"unsafe"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/progress"
)

// LeidenOptions configures LeidenModules.
type LeidenOptions struct {
	// Weighted uses connection strengths (non-negative) instead of counting edges.
	Weighted bool
	// Resolution γ of the modularity being maximised; 0 means 1 (Newman's Q).
	Resolution float64
	// Randomness θ of the refinement phase: a node joins a sub-module with probability
	// ∝ exp(ΔH/θ), ΔH in units of edge weight (Traag et al. 2019; igraph's β). 0 means 0.01.
	Randomness float64
	// MaxIterations caps the repetitions of the whole algorithm, each starting from the
	// previous partition; it stops earlier when an iteration no longer raises Q. 0 means 20.
	MaxIterations int
	// Seed fixes the random node orders and refinement choices: equal seeds, equal results.
	Seed uint64
}

// LeidenModules maximises modularity by the Leiden algorithm (Traag, Waltman & van Eck 2019,
// Sci Rep 9:5233), Louvain's local moving and aggregation with a refinement phase that
// guarantees well-connected modules:
//
//  1. fast local moving: visit nodes from a queue in random order, move each to the
//     neighbouring module (or an empty one) of largest gain
//     ΔH = w(v, C) − γ k_v K_C / 2m, re-queuing the neighbours that left its new module;
//  2. refinement: inside every module C, start from singletons and merge well-connected
//     nodes (w(v, C−v) ≥ γ k_v (K_C − k_v)/2m) into well-connected sub-modules, chosen at random
//     with probability ∝ exp(ΔH/θ) among those with ΔH ≥ 0;
//  3. aggregation: one node per refined sub-module, initially placed in the module (of step 1)
//     that holds it;
//
// repeated until every module is a single aggregate node. The whole algorithm is iterated from
// its own result until Q stops rising. Cancelling ctx stops it within a few milliseconds.
func LeidenModules(ctx context.Context, g *graph.Graph, opts LeidenOptions, rep progress.Reporter) (*Modules, error) {
	rep = progress.OrDiscard(rep)
	if err := checkGraph(g, opts.Weighted); err != nil {
		return nil, err
	}
	if opts.Resolution == 0 {
		opts.Resolution = 1
	}
	if err := (ModularityOptions{Resolution: opts.Resolution}).check(); err != nil {
		return nil, err
	}
	if opts.Randomness <= 0 {
		opts.Randomness = 0.01
	}
	if opts.MaxIterations <= 0 {
		opts.MaxIterations = 20
	}
	l := getLeiden(g.N)
	base := l.baseLevel(g, opts.Weighted)
	if base.twoM == 0 {
		return nil, ErrNoEdges
	}
	mo := ModularityOptions{Weighted: opts.Weighted, Resolution: opts.Resolution}
	l.gamma, l.theta, l.rng = opts.Resolution, opts.Randomness, rand.New(rand.NewPCG(opts.Seed, 0x4c656964656e))
	l.countLinks = base.w == nil && base.twoM <= maxCountedTwoM
	rep.Start("modules: Leiden", int64(opts.MaxIterations))
	membership := make([]int32, g.N)
	for i := range membership {
		membership[i] = int32(i)
	}
	bestQ := math.Inf(-1)
	var best []int
	for iter := 0; iter < opts.MaxIterations; iter++ {
		next, err := l.pass(ctx, base, membership)
		if err != nil {
			return nil, fmt.Errorf("community: Leiden modules: %w", err)
		}
		part := make([]int, g.N)
		for i, c := range next {
			part[i] = int(c)
		}
		q, err := modularity(g, part, mo)
		if err != nil {
			return nil, err
		}
		if q <= bestQ+1e-12 {
			break
		}
		bestQ, best, membership = q, part, next
	}
	rep.Add(int64(opts.MaxIterations)) // the bar completes even when Q settled early
	leidenPool.Put(l)                  // only after a complete run: every scratch array is back to zero
	return newModules("Leiden", g, best, mo)
}

// level is the (aggregated) graph one Leiden level works on: CSR without self-loops, the
// self-loop weight of each aggregate (its internal edges, each counted once) and the node
// weights k (total degree of the original nodes it holds).
type level struct {
	n   int
	off []int64
	adj []int32
	// adj16 is adj in 16 bits on an unweighted base level of at most 2¹⁶ nodes: the local
	// moving streams the adjacency some ten times over, and half the bytes is half the traffic.
	adj16 []uint16
	// links is the weight of each adjacency entry of an aggregated level of an unweighted
	// graph: the number of original edges between the two aggregates, a whole number kept in
	// 32 bits (half a float64's bytes; sums of counts need no floating-point adder). nil on the
	// base level (every weight 1) and wherever w is used.
	links []int32
	// w holds the weights of a weighted graph's levels (and of an unweighted graph's
	// aggregates when 2m does not fit 32 bits); nil on levels whose weights are counts.
	w    []float64
	k    []float64
	twoM float64
}

// counted tells whether the level's weights are whole numbers gathered in integers (cnt),
// not float64 sums (neighW).
func (lv *level) counted() bool { return lv.w == nil }

// leiden holds the parameters and the scratch space of one run. The arrays are sized once
// for the base level and reused by every level and repetition, and runs take them from
// leidenPool, so that the random networks' runs on one core reuse the same memory instead of
// allocating and clearing tens of megabytes per level.
type leiden struct {
	gamma, theta float64
	rng          *rand.Rand
	countLinks   bool // aggregates of an unweighted graph keep their links as int32 counts

	// gather's result: the modules met, in the order first met, and the links to each.
	touched []int32
	cnt     []int32   // counted levels; all zero outside gather and its consumer
	neighW  []float64 // float64 levels (and refine's copy of the counts); zero outside
	mark    []bool

	// Per-level scratch, indexed by node or label (< n of the base level).
	total, kRef, extRef, extNode, kComm []float64
	size, sizeRef, queue, refined       []int32
	start, byModule, members, index     []int32
	baseComm, nodeOf                    []int32
	inQueue, well                       []bool
	empty, cands                        []int32
	probs                               []float64
	adj16                               []uint16
	baseW                               []float64
	// Aggregated levels alternate between two sets of buffers: level i+1 is built from level
	// i, which is no longer needed once i+2 is built.
	bufs [2]levelBuf
	lvls [2]level
	// The refinement's graph: each node's links inside its own module.
	inner                level
	innerAdj, innerLinks []int32
	innerW               []float64
}

type levelBuf struct {
	off        []int64
	adj, links []int32
	w, k       []float64
	comm       []int32
}

var leidenPool sync.Pool

// maxCountedTwoM is the largest 2m whose aggregates keep their links as int32 counts: no sum
// of links can exceed 2m. Larger graphs aggregate into float64 weights (a test lowers it).
var maxCountedTwoM float64 = math.MaxInt32

// getLeiden returns a run's scratch space for graphs of n nodes, reused when the pool holds one.
func getLeiden(n int) *leiden {
	l, _ := leidenPool.Get().(*leiden)
	if l == nil {
		l = &leiden{}
	}
	if cap(l.total) < n {
		f := func() []float64 { return make([]float64, n) }
		i := func() []int32 { return make([]int32, n) }
		l.total, l.kRef, l.extRef, l.extNode, l.kComm = f(), f(), f(), f(), f()
		l.size, l.sizeRef, l.queue, l.refined = i(), i(), i(), i()
		l.start, l.byModule, l.members, l.index = make([]int32, n+1), i(), i(), i()
		l.baseComm, l.nodeOf = i(), i()
		l.inQueue, l.well = make([]bool, n), make([]bool, n)
		l.cnt, l.neighW, l.mark = i(), f(), make([]bool, n)
	}
	return l
}

func (l *leiden) baseLevel(g *graph.Graph, weighted bool) *level {
	lv := &level{n: g.N, off: g.Offsets, adj: g.Adj}
	if weighted && g.Weights != nil {
		lv.w = slices.Grow(l.baseW[:0], len(g.Adj))[:len(g.Adj)]
		l.baseW = lv.w
		for p := range g.Adj {
			lv.w[p] = edgeWeight(g, int64(p), weighted)
		}
	}
	if lv.w == nil && g.N <= 1<<16 {
		lv.adj16 = slices.Grow(l.adj16[:0], len(g.Adj))[:len(g.Adj)]
		l.adj16 = lv.adj16
		for p, u := range g.Adj {
			lv.adj16[p] = uint16(u)
		}
	}
	lv.k, lv.twoM = nodeDegrees(g, weighted)
	return lv
}

// gather accumulates w(v, C) for the modules C (labels in part) adjacent to v: on counted
// levels in cnt, else in neighW; the modules met are listed in touched. The caller reads them
// and clears them.
func (l *leiden) gather(lv *level, v int32, part []int32) {
	a, b := lv.off[v], lv.off[v+1]
	if lv.w == nil {
		// Counted levels: the links are summed in integers (a float64 += 1 per entry chains
		// each count through the adder's latency) and a zero count marks a module not met
		// yet; no weight array (8 bytes per adjacency entry) is streamed. Branch-free: every
		// module is written to the list's end, which only advances when the module is new
		// (whether it is new is a coin toss while most modules are single nodes, and a branch
		// on it mispredicts half the time).
		cnt := l.cnt
		touched := l.touched
		nt := len(touched)
		touched = slices.Grow(touched, int(b-a)+1)[:nt+int(b-a)+1]
		switch {
		case lv.adj16 != nil:
			for _, u := range lv.adj16[a:b] {
				t := part[u]
				x := cnt[t]
				touched[nt] = t
				if x == 0 {
					nt++
				}
				cnt[t] = x + 1
			}
		case lv.links == nil:
			for _, u := range lv.adj[a:b] {
				t := part[u]
				x := cnt[t]
				touched[nt] = t
				if x == 0 {
					nt++
				}
				cnt[t] = x + 1
			}
		default:
			links := lv.links[a:b]
			for i, u := range lv.adj[a:b] {
				t := part[u]
				x := cnt[t]
				touched[nt] = t
				if x == 0 {
					nt++
				}
				cnt[t] = x + links[i]
			}
		}
		l.touched = touched[:nt]
		return
	}
	for p := a; p < b; p++ {
		t := part[lv.adj[p]]
		if !l.mark[t] {
			l.mark[t] = true
			l.touched = append(l.touched, t)
		}
		l.neighW[t] += lv.w[p]
	}
}

// clear resets what gather left in neighW and mark on a float64 level.
func (l *leiden) clear() {
	for _, c := range l.touched {
		l.neighW[c] = 0
		l.mark[c] = false
	}
	l.touched = l.touched[:0]
}

// pass runs one Leiden optimisation from the initial membership of the base graph's nodes.
func (l *leiden) pass(ctx context.Context, base *level, initial []int32) ([]int32, error) {
	lv := base
	comm := l.baseComm[:base.n]
	copy(comm, initial)
	l.compact(comm)
	nodeOf := l.nodeOf[:base.n] // aggregate node holding each original node
	for i := range nodeOf {
		nodeOf[i] = int32(i)
	}
	for next := 0; ; next ^= 1 {
		if err := l.moveNodesFast(ctx, lv, comm); err != nil {
			return nil, err
		}
		if l.compact(comm) == lv.n {
			break
		}
		refined, err := l.refine(ctx, lv, comm)
		if err != nil {
			return nil, err
		}
		if l.compact(refined) == lv.n {
			// The refinement merged nothing: aggregate by the modules themselves (a Louvain
			// step) so that every level shrinks the graph.
			refined = comm
		}
		agg, aggComm := l.aggregate(lv, refined, comm, next)
		for i, v := range nodeOf {
			nodeOf[i] = refined[v]
		}
		lv, comm = agg, aggComm
	}
	out := make([]int32, base.n)
	for i, v := range nodeOf {
		out[i] = comm[v]
	}
	return out, nil
}

// moveNodesFast is the Leiden paper's MoveNodesFast: a queue of nodes in random order; each
// node moves to the module of largest ΔH = w(v, C) − γ k_v K_C / 2m (K_C without v), or to an
// empty module when every ΔH is negative; after a move, neighbours outside the new module that
// are not queued are appended.
func (l *leiden) moveNodesFast(ctx context.Context, lv *level, comm []int32) error {
	n := lv.n
	total := l.total[:n] // K_C
	size := l.size[:n]
	clear(total)
	clear(size)
	for v := 0; v < n; v++ {
		total[comm[v]] += lv.k[v]
		size[comm[v]]++
	}
	empty := l.empty[:0]
	for c := n - 1; c >= 0; c-- {
		if size[c] == 0 {
			empty = append(empty, int32(c))
		}
	}
	queue := l.shuffled(n)
	inQueue := l.inQueue[:n]
	for i := range inQueue {
		inQueue[i] = true
	}
	head, count := 0, n
	scale := l.gamma / lv.twoM
	cnt := l.cnt
	unit := lv.counted() && lv.links == nil // the base level of an unweighted graph: k_v is v's degree
	for popped := 0; count > 0; popped++ {
		if popped&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		v := queue[head]
		if head++; head == n {
			head = 0
		}
		count--
		if count >= 2 && lv.adj16 != nil {
			// The next node's row and the one after's offsets, module and flag are fetched
			// while v is gathered (on W7 the node data alone are ~1 MB, read in random order).
			h2 := head + 1
			if h2 == n {
				h2 = 0
			}
			w1, w2 := queue[head], queue[h2]
			row := min(lv.off[w1], int64(len(lv.adj16)-1)) // an isolated last node has no row
			prefetch4(unsafe.Pointer(&lv.adj16[row]), unsafe.Pointer(&lv.off[w2]),
				unsafe.Pointer(&comm[w2]), unsafe.Pointer(&inQueue[w2]))
		}
		inQueue[v] = false
		a := comm[v]
		var kv float64
		if unit {
			kv = float64(lv.off[v+1] - lv.off[v]) // = k_v, one random read fewer
		} else {
			kv = lv.k[v]
		}
		l.gather(lv, v, comm)
		total[a] -= kv
		sk := scale * kv
		// A tolerance keeps rounding noise from moving a node back and forth forever.
		eps := 1e-12 * kv
		if kv < 1 {
			eps = 1e-12
		}
		var best int32
		var bestGain float64
		if lv.counted() {
			// The counts are read and cleared in the same sweep.
			best, bestGain = a, float64(cnt[a])-sk*total[a]
			for _, c := range l.touched {
				gain := float64(cnt[c]) - sk*total[c]
				cnt[c] = 0
				if gain > bestGain+eps {
					best, bestGain = c, gain
				}
			}
			l.touched = l.touched[:0]
		} else {
			best, bestGain = a, l.neighW[a]-sk*total[a]
			for _, c := range l.touched {
				if gain := l.neighW[c] - sk*total[c]; gain > bestGain+eps {
					best, bestGain = c, gain
				}
			}
			l.clear()
		}
		if bestGain < -eps && size[a] > 1 && len(empty) > 0 {
			best = empty[len(empty)-1]
			empty = empty[:len(empty)-1]
		}
		total[best] += kv
		if best == a {
			continue
		}
		size[a]--
		if size[a] == 0 {
			empty = append(empty, a)
		}
		size[best]++
		comm[v] = best
		requeue := func(u int32) {
			if !inQueue[u] && comm[u] != best {
				inQueue[u] = true
				tail := head + count
				if tail >= n {
					tail -= n
				}
				queue[tail] = u
				count++
			}
		}
		if lv.adj16 != nil {
			for _, u := range lv.adj16[lv.off[v]:lv.off[v+1]] {
				requeue(int32(u))
			}
		} else {
			for _, u := range lv.adj[lv.off[v]:lv.off[v+1]] {
				requeue(u)
			}
		}
	}
	l.empty = empty[:0]
	return nil
}

// shuffled returns 0..n−1 in the order of l.rng.Perm(n) (the same draws), in reused memory.
func (l *leiden) shuffled(n int) []int32 {
	p := l.queue[:n]
	for i := range p {
		p[i] = int32(i)
	}
	l.rng.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// refine is the Leiden paper's RefinePartition/MergeNodesSubset: inside each module C, nodes
// start as singletons; visiting C's well-connected nodes in random order, a node still alone
// joins a well-connected sub-module S ⊆ C (w(S, C−S) ≥ γ K_S (K_C − K_S)/2m) chosen with
// probability ∝ exp(ΔH/θ) among those with ΔH = w(v, S) − γ k_v K_S/2m ≥ 0 (staying alone has
// ΔH = 0). The labels returned live in l's scratch until the next refinement.
func (l *leiden) refine(ctx context.Context, lv *level, comm []int32) ([]int32, error) {
	n := lv.n
	refined := l.refined[:n]
	kRef := l.kRef[:n]     // K_S of each sub-module
	extRef := l.extRef[:n] // w(S, C − S)
	sizeRef := l.sizeRef[:n]
	extNode := l.extNode[:n] // w(v, C − v)
	kComm := l.kComm[:n]
	clear(kComm)
	for v := 0; v < n; v++ {
		refined[v] = int32(v)
		kRef[v] = lv.k[v]
		sizeRef[v] = 1
		kComm[comm[v]] += lv.k[v]
	}
	// The links inside each node's own module, the only ones the refinement gathers, are
	// copied out once (on the phantom most links, on random networks a tenth), so that its
	// gathers neither stream the others nor test each neighbour's module; their sum is
	// w(v, C − v).
	in := &l.inner
	*in = level{n: n, off: slices.Grow(in.off[:0], n+1)[:n+1], twoM: lv.twoM}
	in.off[0] = 0
	// Every link is written at the end of its row's kept part, which advances only when the
	// neighbour is in the module (branch-free: whether it is is a coin toss on many levels).
	adj, links, w := reserve(l.innerAdj, len(lv.adj))[:len(lv.adj)], l.innerLinks[:0], l.innerW[:0]
	switch {
	case lv.w != nil:
		w = reserve(w, len(lv.adj))[:len(lv.adj)]
	case lv.links != nil:
		links = reserve(links, len(lv.adj))[:len(lv.adj)]
	}
	m := 0
	for v := 0; v < n; v++ {
		var inside float64
		cv := comm[v]
		a, b := lv.off[v], lv.off[v+1]
		m0 := m
		switch {
		case lv.adj16 != nil: // unweighted base level: a count
			for _, u := range lv.adj16[a:b] {
				adj[m] = int32(u)
				if comm[u] == cv {
					m++
				}
			}
			inside = float64(m - m0)
		case lv.w == nil && lv.links == nil:
			for _, u := range lv.adj[a:b] {
				adj[m] = u
				if comm[u] == cv {
					m++
				}
			}
			inside = float64(m - m0)
		case lv.w == nil:
			var same int64
			lk := lv.links[a:b]
			for i, u := range lv.adj[a:b] {
				adj[m], links[m] = u, lk[i]
				d := 0
				if comm[u] == cv {
					d = 1
				}
				m += d
				same += int64(lk[i]) * int64(d)
			}
			inside = float64(same)
		default:
			for p := a; p < b; p++ {
				if u := lv.adj[p]; comm[u] == cv {
					adj[m], w[m] = u, lv.w[p]
					m++
					inside += lv.w[p]
				}
			}
		}
		in.off[v+1] = int64(m)
		extNode[v] = inside
		extRef[v] = inside
	}
	adj = adj[:m]
	switch {
	case lv.w != nil:
		w = w[:m]
	case lv.links != nil:
		links = links[:m]
	}
	l.innerAdj, l.innerLinks, l.innerW = adj, links, w
	in.adj = adj
	switch {
	case lv.w != nil:
		in.w = w
	case lv.links != nil:
		in.links = links
	}
	scale := l.gamma / lv.twoM
	// Visit modules' nodes together, in random order within each module (a counting sort of
	// a random permutation by module).
	order := l.shuffled(n)
	start := l.start[:n+1]
	clear(start)
	for _, v := range order {
		start[comm[v]+1]++
	}
	for c := 1; c <= n; c++ {
		start[c] += start[c-1]
	}
	byModule := l.byModule[:n]
	for _, v := range order {
		byModule[start[comm[v]]] = v
		start[comm[v]]++
	}
	// Whether each sub-module S is well connected, w(S, C − S) ≥ γ K_S (K_C − K_S)/2m: kept
	// up to date as nodes join, instead of tested for every neighbour met.
	well := l.well[:n]
	for s := range well {
		well[s] = !(extRef[s] < scale*kRef[s]*(kComm[comm[s]]-kRef[s]))
	}
	cut := negligibleGain * l.theta
	counted, cnt := in.counted(), l.cnt
	cands, probs := l.cands[:0], l.probs[:0]
	for idx, v := range byModule {
		if idx&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if idx+2 < n && len(in.adj) > 0 {
			// As in the local moving: the next node's links and the one after's data are
			// fetched while v is handled (the visiting order is random within each module).
			w1, w2 := byModule[idx+1], byModule[idx+2]
			prefetch4(unsafe.Pointer(&in.adj[min(in.off[w1], int64(len(in.adj)-1))]), unsafe.Pointer(&in.off[w2]),
				unsafe.Pointer(&extNode[w2]), unsafe.Pointer(&lv.k[w2]))
		}
		c := comm[v]
		kv := lv.k[v]
		own := refined[v]
		if sizeRef[own] != 1 || extNode[v] < scale*kv*(kComm[c]-kv) {
			continue
		}
		l.gather(in, v, refined)
		// w(v, S): the gathered counts themselves on counted levels, else the weights.
		link := func(s int32) float64 {
			if counted {
				return float64(cnt[s])
			}
			return l.neighW[s]
		}
		cands = append(cands[:0], own)
		probs = append(probs[:0], 0)
		maxGain := 0.0
		for _, s := range l.touched {
			if s == own || !well[s] {
				continue
			}
			// A sub-module whose ΔH is more than negligibleGain·θ below the best seen so far
			// (hence below the largest) has a probability under e⁻⁵⁰ ≈ 2·10⁻²² of the largest's:
			// it is left out (Pr(S) rounds to 0 against a sum ≥ 1 in float64, whose uniform
			// draws are multiples of 2⁻⁵³), which spares most of the exponentials.
			gain := link(s) - scale*kv*kRef[s]
			if gain < 0 || gain < maxGain-cut {
				continue
			}
			cands = append(cands, s)
			probs = append(probs, gain)
			if gain > maxGain {
				maxGain = gain
			}
		}
		chosen := own
		if len(cands) > 1 {
			// Pr(S) ∝ exp(ΔH_S/θ), shifted by the largest ΔH so that nothing overflows.
			var sum float64
			for i, gain := range probs {
				p := 0.0
				if d := gain - maxGain; d >= -cut {
					p = math.Exp(d / l.theta)
				}
				probs[i] = p
				sum += p
			}
			x := l.rng.Float64() * sum
			chosen = cands[len(cands)-1]
			for i, p := range probs {
				if x < p {
					chosen = cands[i]
					break
				}
				x -= p
			}
		}
		if chosen != own {
			wvs := link(chosen)
			extRef[chosen] += extNode[v] - 2*wvs
			kRef[chosen] += kv
			sizeRef[chosen]++
			kRef[own], sizeRef[own], extRef[own] = 0, 0, 0
			refined[v] = chosen
			well[chosen] = !(extRef[chosen] < scale*kRef[chosen]*(kComm[c]-kRef[chosen]))
		}
		if counted {
			for _, t := range l.touched {
				cnt[t] = 0
			}
			l.touched = l.touched[:0]
		} else {
			l.clear()
		}
	}
	l.cands, l.probs = cands[:0], probs[:0]
	return refined, nil
}

// negligibleGain: a sub-module whose ΔH/θ is this far below the largest is never chosen.
const negligibleGain = 50

// aggregate collapses each label of part (0..R−1) into one node: edge weights between
// aggregates are summed, internal edges become self-loop weight (not stored: modularity gains
// never involve a node's own self-loop), node weights are summed. The aggregate of label r
// starts in the module comm holds its members in. The new level lives in l.bufs[into].
func (l *leiden) aggregate(lv *level, part, comm []int32, into int) (*level, []int32) {
	r := countLabels(part)
	buf := &l.bufs[into]
	// Members of each label in increasing node order (a counting sort): after it, start[s]
	// is the end of label s's members and start[s−1] (0 for s = 0) their beginning.
	members := l.members[:lv.n]
	start := l.start[:r+1]
	clear(start)
	for _, p := range part {
		start[p+1]++
	}
	for i := 1; i <= r; i++ {
		start[i] += start[i-1]
	}
	for v, p := range part {
		members[start[p]] = int32(v)
		start[p]++
	}
	buf.off = slices.Grow(buf.off[:0], r+1)[:r+1]
	buf.k = slices.Grow(buf.k[:0], r)[:r]
	buf.comm = slices.Grow(buf.comm[:0], r)[:r]
	off, k, aggComm := buf.off, buf.k, buf.comm
	clear(k)
	off[0] = 0
	// The aggregate has at most as many links as the level: the arrays are sized once, never
	// grown (and copied) link by link.
	adj, links, w := reserve(buf.adj, len(lv.adj)), buf.links[:0], buf.w[:0]
	counted := lv.counted()
	if counted && l.countLinks {
		links = reserve(links, len(lv.adj))
	} else {
		w = reserve(w, len(lv.adj))
	}
	cnt := l.cnt
	from := int32(0)
	for s := int32(0); s < int32(r); s++ {
		for i := from; i < start[s]; i++ {
			v := members[i]
			if int(i)+2 < len(members) && len(lv.adj) > 0 {
				// The next member's row and the one after's data, fetched while v is gathered
				// (an aggregate's members are scattered over the level).
				w1, w2 := members[i+1], members[i+2]
				row := unsafe.Pointer(&lv.adj[min(lv.off[w1], int64(len(lv.adj)-1))])
				if lv.adj16 != nil {
					row = unsafe.Pointer(&lv.adj16[min(lv.off[w1], int64(len(lv.adj16)-1))])
				}
				prefetch4(row, unsafe.Pointer(&lv.off[w2]), unsafe.Pointer(&lv.k[w2]), unsafe.Pointer(&comm[w2]))
			}
			k[s] += lv.k[v]
			aggComm[s] = comm[v]
			// The aggregate's own label is gathered too (its internal links, dropped below):
			// one test per label met instead of one per link.
			l.gather(lv, v, part)
		}
		from = start[s]
		switch {
		case counted && l.countLinks:
			// Written at the end, which advances except for the aggregate's own label.
			m := len(adj)
			adj, links = adj[:m+len(l.touched)], links[:m+len(l.touched)]
			for _, t := range l.touched {
				adj[m], links[m] = t, cnt[t]
				cnt[t] = 0
				if t != s {
					m++
				}
			}
			adj, links = adj[:m], links[:m]
		case counted:
			for _, t := range l.touched {
				if t != s {
					adj = append(adj, t)
					w = append(w, float64(cnt[t]))
				}
				cnt[t] = 0
			}
		default:
			for _, t := range l.touched {
				if t != s {
					adj = append(adj, t)
					w = append(w, l.neighW[t])
				}
			}
			l.clear()
		}
		l.touched = l.touched[:0]
		off[s+1] = int64(len(adj))
	}
	buf.adj, buf.links, buf.w = adj, links, w
	agg := &l.lvls[into]
	*agg = level{n: r, off: off, adj: adj, k: k, twoM: lv.twoM}
	if counted && l.countLinks {
		agg.links = links
	} else {
		agg.w = w
	}
	l.compact(aggComm)
	return agg, aggComm
}

// reserve returns s emptied, with room for n elements: a new array when s has less, whose
// contents need not be copied.
func reserve[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}

// compact renumbers labels (each below len(labels)) to 0..k−1 in order of first appearance,
// in place, and returns k.
func (l *leiden) compact(labels []int32) int {
	index := l.index[:len(labels)]
	for i := range index {
		index[i] = -1
	}
	next := int32(0)
	for i, c := range labels {
		if index[c] < 0 {
			index[c] = next
			next++
		}
		labels[i] = index[c]
	}
	return int(next)
}

func countLabels(labels []int32) int {
	mx := int32(-1)
	for _, c := range labels {
		mx = max(mx, c)
	}
	return int(mx) + 1
}
