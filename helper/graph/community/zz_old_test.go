package community

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/progress"
)

// leidenModulesOld maximises modularity by the Leiden algorithm (Traag, Waltman & van Eck 2019,
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
func leidenModulesOld(ctx context.Context, g *graph.Graph, opts LeidenOptions, rep progress.Reporter) (*Modules, error) {
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
	base := baseLevelOld(g, opts.Weighted)
	if base.twoM == 0 {
		return nil, ErrNoEdges
	}
	mo := ModularityOptions{Weighted: opts.Weighted, Resolution: opts.Resolution}
	l := &leidenOld{gamma: opts.Resolution, theta: opts.Randomness, rng: rand.New(rand.NewPCG(opts.Seed, 0x4c656964656e))}
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
	return newModules("Leiden", g, best, mo)
}

// levelOld is the (aggregated) graph one Leiden levelOld works on: CSR without self-loops, the
// self-loop weight of each aggregate (its internal edges, each counted once) and the node
// weights k (total degree of the original nodes it holds).
type levelOld struct {
	n   int
	off []int64
	adj []int32
	// adj16 is adj in 16 bits on an unweighted base levelOld of at most 2¹⁶ nodes: the local
	// moving streams the adjacency some ten times over, and half the bytes is half the traffic.
	adj16 []uint16
	w     []float64
	k     []float64
	twoM  float64
}

func baseLevelOld(g *graph.Graph, weighted bool) *levelOld {
	lv := &levelOld{n: g.N, off: g.Offsets, adj: g.Adj}
	if weighted && g.Weights != nil {
		lv.w = make([]float64, len(g.Adj))
		for p := range g.Adj {
			lv.w[p] = edgeWeight(g, int64(p), weighted)
		}
	}
	if lv.w == nil && g.N <= 1<<16 {
		lv.adj16 = make([]uint16, len(g.Adj))
		for p, u := range g.Adj {
			lv.adj16[p] = uint16(u)
		}
	}
	lv.k, lv.twoM = nodeDegrees(g, weighted)
	return lv
}

// leidenOld holds the parameters and scratch space shared by the phases.
type leidenOld struct {
	gamma, theta float64
	rng          *rand.Rand
	neighW       []float64 // weight from the current node to each module, indexed by module
	cnt          []int32   // links from the current node to each module (unweighted base levelOld)
	mark         []bool
	touched      []int32
}

func (l *leidenOld) scratch(n int) {
	if len(l.neighW) < n {
		l.neighW = make([]float64, n)
		l.cnt = make([]int32, n)
		l.mark = make([]bool, n)
	}
}

// gather accumulates w(v, C) for the modules C (labels in part) adjacent to v, restricted to
// neighbours u in module c of comm when comm is not nil.
func (l *leidenOld) gather(lv *levelOld, v int32, part []int32, comm []int32, c int32) {
	a, b := lv.off[v], lv.off[v+1]
	if lv.w == nil {
		// The base levelOld of an unweighted graph: every weight is 1. The links are counted in
		// integers (a float64 += 1 per entry chains each count through the adder's latency)
		// and a zero count marks a module not met yet; no weight array (8 bytes per
		// adjacency entry) is streamed.
		cnt := l.cnt
		touched := l.touched
		switch {
		case comm == nil && lv.adj16 != nil:
			// Branch-free: every module is written to the list's end, which only advances
			// when the module is new (whether it is new is a coin toss while most modules
			// are single nodes, and a branch on it mispredicts half the time).
			row := lv.adj16[a:b]
			nt := len(touched)
			touched = slices.Grow(touched, len(row)+1)[:nt+len(row)+1]
			for _, u := range row {
				t := part[u]
				c := cnt[t]
				touched[nt] = t
				if c == 0 {
					nt++
				}
				cnt[t] = c + 1
			}
			touched = touched[:nt]
		case comm == nil:
			for _, u := range lv.adj[a:b] {
				t := part[u]
				if cnt[t] == 0 {
					touched = append(touched, t)
				}
				cnt[t]++
			}
		default:
			for _, u := range lv.adj[a:b] {
				if comm[u] != c {
					continue
				}
				t := part[u]
				if cnt[t] == 0 {
					touched = append(touched, t)
				}
				cnt[t]++
			}
		}
		for _, t := range touched {
			l.neighW[t] = float64(cnt[t])
			cnt[t] = 0
		}
		l.touched = touched
		return
	}
	for p := a; p < b; p++ {
		u := lv.adj[p]
		if comm != nil && comm[u] != c {
			continue
		}
		t := part[u]
		if !l.mark[t] {
			l.mark[t] = true
			l.touched = append(l.touched, t)
		}
		l.neighW[t] += lv.w[p]
	}
}

func (l *leidenOld) clear() {
	for _, c := range l.touched {
		l.neighW[c] = 0
		l.mark[c] = false
	}
	l.touched = l.touched[:0]
}

// pass runs one Leiden optimisation from the initial membership of the base graph's nodes.
func (l *leidenOld) pass(ctx context.Context, base *levelOld, initial []int32) ([]int32, error) {
	lv := base
	comm := compact32Old(initial)
	nodeOf := make([]int32, base.n) // aggregate node holding each original node
	for i := range nodeOf {
		nodeOf[i] = int32(i)
	}
	for {
		if err := l.moveNodesFast(ctx, lv, comm); err != nil {
			return nil, err
		}
		comm = compact32Old(comm)
		if countLabelsOld(comm) == lv.n {
			break
		}
		refined, err := l.refine(ctx, lv, comm)
		if err != nil {
			return nil, err
		}
		refined = compact32Old(refined)
		if countLabelsOld(refined) == lv.n {
			// The refinement merged nothing: aggregate by the modules themselves (a Louvain
			// step) so that every levelOld shrinks the graph.
			refined = comm
		}
		agg, aggComm := l.aggregate(lv, refined, comm)
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
func (l *leidenOld) moveNodesFast(ctx context.Context, lv *levelOld, comm []int32) error {
	n := lv.n
	l.scratch(n)
	total := make([]float64, n) // K_C
	size := make([]int32, n)
	for v := 0; v < n; v++ {
		total[comm[v]] += lv.k[v]
		size[comm[v]]++
	}
	var empty []int32
	for c := n - 1; c >= 0; c-- {
		if size[c] == 0 {
			empty = append(empty, int32(c))
		}
	}
	queue := make([]int32, n)
	for i, v := range l.rng.Perm(n) {
		queue[i] = int32(v)
	}
	inQueue := make([]bool, n)
	for i := range inQueue {
		inQueue[i] = true
	}
	head, count := 0, n
	scale := l.gamma / lv.twoM
	for popped := 0; count > 0; popped++ {
		if popped&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		v := queue[head]
		head = (head + 1) % n
		count--
		inQueue[v] = false
		a := comm[v]
		kv := lv.k[v]
		l.gather(lv, v, comm, nil, 0)
		total[a] -= kv
		best, bestGain := a, l.neighW[a]-scale*kv*total[a]
		// A tolerance keeps rounding noise from moving a node back and forth forever.
		eps := 1e-12 * math.Max(1, kv)
		for _, c := range l.touched {
			if gain := l.neighW[c] - scale*kv*total[c]; gain > bestGain+eps {
				best, bestGain = c, gain
			}
		}
		if bestGain < -eps && size[a] > 1 && len(empty) > 0 {
			best = empty[len(empty)-1]
			empty = empty[:len(empty)-1]
		}
		l.clear()
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
		for p := lv.off[v]; p < lv.off[v+1]; p++ {
			u := lv.adj[p]
			if !inQueue[u] && comm[u] != best {
				inQueue[u] = true
				queue[(head+count)%n] = u
				count++
			}
		}
	}
	return nil
}

// refine is the Leiden paper's RefinePartition/MergeNodesSubset: inside each module C, nodes
// start as singletons; visiting C's well-connected nodes in random order, a node still alone
// joins a well-connected sub-module S ⊆ C (w(S, C−S) ≥ γ K_S (K_C − K_S)/2m) chosen with
// probability ∝ exp(ΔH/θ) among those with ΔH = w(v, S) − γ k_v K_S/2m ≥ 0 (staying alone has
// ΔH = 0).
func (l *leidenOld) refine(ctx context.Context, lv *levelOld, comm []int32) ([]int32, error) {
	n := lv.n
	l.scratch(n)
	refined := make([]int32, n)
	kRef := make([]float64, n)   // K_S of each sub-module
	extRef := make([]float64, n) // w(S, C − S)
	sizeRef := make([]int32, n)
	extNode := make([]float64, n) // w(v, C − v)
	kComm := make([]float64, n)
	for v := 0; v < n; v++ {
		refined[v] = int32(v)
		kRef[v] = lv.k[v]
		sizeRef[v] = 1
		kComm[comm[v]] += lv.k[v]
	}
	for v := 0; v < n; v++ {
		var inside float64
		if lv.w == nil { // unweighted base levelOld: a count
			var same int64
			for _, u := range lv.adj[lv.off[v]:lv.off[v+1]] {
				if comm[u] == comm[v] {
					same++
				}
			}
			inside = float64(same)
		} else {
			for p := lv.off[v]; p < lv.off[v+1]; p++ {
				if comm[lv.adj[p]] == comm[v] {
					inside += lv.w[p]
				}
			}
		}
		extNode[v] = inside
		extRef[v] = inside
	}
	scale := l.gamma / lv.twoM
	// Visit modules' nodes together, in random order within each module.
	order := l.rng.Perm(n)
	start := make([]int, n+1)
	for _, v := range order {
		start[comm[v]+1]++
	}
	for c := 1; c <= n; c++ {
		start[c] += start[c-1]
	}
	byModule := make([]int32, n)
	fill := append([]int(nil), start[:n]...)
	for _, v := range order {
		byModule[fill[comm[v]]] = int32(v)
		fill[comm[v]]++
	}
	var cands []int32
	var probs []float64
	for idx, v := range byModule {
		if idx&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		c := comm[v]
		kv := lv.k[v]
		own := refined[v]
		if sizeRef[own] != 1 || extNode[v] < scale*kv*(kComm[c]-kv) {
			continue
		}
		l.gather(lv, v, refined, comm, c)
		cands = append(cands[:0], own)
		probs = append(probs[:0], 0)
		maxGain := 0.0
		for _, s := range l.touched {
			if s == own || extRef[s] < scale*kRef[s]*(kComm[c]-kRef[s]) {
				continue
			}
			gain := l.neighW[s] - scale*kv*kRef[s]
			if gain < 0 {
				continue
			}
			cands = append(cands, s)
			probs = append(probs, gain)
			maxGain = math.Max(maxGain, gain)
		}
		chosen := own
		if len(cands) > 1 {
			// Pr(S) ∝ exp(ΔH_S/θ), shifted by the largest ΔH so that nothing overflows.
			var sum float64
			for i, gain := range probs {
				probs[i] = math.Exp((gain - maxGain) / l.theta)
				sum += probs[i]
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
			wvs := l.neighW[chosen]
			extRef[chosen] += extNode[v] - 2*wvs
			kRef[chosen] += kv
			sizeRef[chosen]++
			kRef[own], sizeRef[own], extRef[own] = 0, 0, 0
			refined[v] = chosen
		}
		l.clear()
	}
	return refined, nil
}

// aggregate collapses each label of part (0..R−1) into one node: edge weights between
// aggregates are summed, internal edges become self-loop weight (not stored: modularity gains
// never involve a node's own self-loop), node weights are summed. The aggregate of label r
// starts in the module comm holds its members in.
func (l *leidenOld) aggregate(lv *levelOld, part, comm []int32) (*levelOld, []int32) {
	r := countLabelsOld(part)
	l.scratch(r)
	members := make([]int32, lv.n)
	start := make([]int, r+1)
	for _, p := range part {
		start[p+1]++
	}
	for i := 1; i <= r; i++ {
		start[i] += start[i-1]
	}
	fill := append([]int(nil), start[:r]...)
	for v, p := range part {
		members[fill[p]] = int32(v)
		fill[p]++
	}
	agg := &levelOld{n: r, off: make([]int64, r+1), k: make([]float64, r), twoM: lv.twoM,
		adj: make([]int32, 0, len(lv.adj)), w: make([]float64, 0, len(lv.adj))}
	aggComm := make([]int32, r)
	for s := 0; s < r; s++ {
		if lv.w == nil {
			// Unweighted base levelOld: links counted in integers, as in gather (the same
			// values: whole numbers).
			cnt := l.cnt
			for _, v := range members[start[s]:start[s+1]] {
				agg.k[s] += lv.k[v]
				aggComm[s] = comm[v]
				for _, u := range lv.adj[lv.off[v]:lv.off[v+1]] {
					t := part[u]
					if t == int32(s) {
						continue
					}
					if cnt[t] == 0 {
						l.touched = append(l.touched, t)
					}
					cnt[t]++
				}
			}
			for _, t := range l.touched {
				agg.adj = append(agg.adj, t)
				agg.w = append(agg.w, float64(cnt[t]))
				cnt[t] = 0
			}
			l.touched = l.touched[:0]
			agg.off[s+1] = int64(len(agg.adj))
			continue
		}
		for _, v := range members[start[s]:start[s+1]] {
			agg.k[s] += lv.k[v]
			aggComm[s] = comm[v]
			for p := lv.off[v]; p < lv.off[v+1]; p++ {
				t := part[lv.adj[p]]
				if t == int32(s) {
					continue
				}
				if !l.mark[t] {
					l.mark[t] = true
					l.touched = append(l.touched, t)
				}
				l.neighW[t] += lv.w[p]
			}
		}
		for _, t := range l.touched {
			agg.adj = append(agg.adj, t)
			agg.w = append(agg.w, l.neighW[t])
		}
		agg.off[s+1] = int64(len(agg.adj))
		l.clear()
	}
	return agg, compact32Old(aggComm)
}

// compact32Old renumbers labels to 0..k−1 in order of first appearance.
func compact32Old(labels []int32) []int32 {
	index := make([]int32, countLabelsOld(labels))
	for i := range index {
		index[i] = -1
	}
	out := make([]int32, len(labels))
	next := int32(0)
	for i, c := range labels {
		if index[c] < 0 {
			index[c] = next
			next++
		}
		out[i] = index[c]
	}
	return out
}

func countLabelsOld(labels []int32) int {
	mx := int32(-1)
	for _, c := range labels {
		mx = max(mx, c)
	}
	return int(mx) + 1
}

func BenchmarkZZAB(b *testing.B) {
	g, r := w7(b)
	res := map[string][]float64{}
	for rep := 0; rep < b.N; rep++ {
		for _, gg := range []*graph.Graph{g, r} {
			for _, old := range []bool{true, false} {
				c0 := processCPUSeconds()
				var err error
				var mm *Modules
				if old {
					mm, err = leidenModulesOld(context.Background(), gg, LeidenOptions{Seed: 1, MaxIterations: 2}, nil)
				} else {
					if os.Getenv("COLD") != "" {
						leidenPool = sync.Pool{}
					}
					mm, err = LeidenModules(context.Background(), gg, LeidenOptions{Seed: 1, MaxIterations: 2}, nil)
				}
				if err != nil {
					b.Fatal(err)
				}
				key := fmt.Sprintf("random=%v old=%v", gg == r, old)
				if rep == 0 {
					fmt.Printf("QQ %s Q=%.15f modules=%d\n", key, mm.Q, mm.Count())
				}
				res[key] = append(res[key], processCPUSeconds()-c0)
			}
		}
	}
	keys := []string{}
	for k := range res {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := res[k]
		sort.Float64s(v)
		fmt.Printf("AB %s n=%d min %.3f median %.3f all %.3f\n", k, len(v), v[0], v[len(v)/2], v)
	}
}
