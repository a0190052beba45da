package graph

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/hubscope/hubscope/helper/internal/trace"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/ipc/schema"
)

// SmallWorldOptions sets up the comparison with random networks; the zero value asks for the
// defaults of Wang et al. (2013): 15 random networks, 10 swaps per edge.
type SmallWorldOptions struct {
	Random       int     // K, number of random networks (default 15)
	SwapsPerEdge float64 // accepted Maslov–Sneppen swaps per edge (default 10)
	Seed         uint64  // random network k uses PCG stream (Seed, k): reproducible, order-free
	// PerRandom, when set, is called with each random network (k = 0..K−1) after its C_p and
	// L_p are measured (with a device Accelerator: while they are measured there) — the hook
	// for measures computed elsewhere on the same random networks (modularity Q for its
	// z-score). It runs on worker goroutines, possibly concurrently for different k, and must
	// not keep r after returning: each random network is discarded right after, so memory
	// stays at one network per core, never K × E. An error stops the run.
	PerRandom func(k int, r *Graph) error
	// PathSources is the number of BFS sources sampled in each random network's largest
	// component to estimate its L_p (SampledShortestPaths; 0: DefaultPathSources). A negative
	// value, or one at least the component's size, searches from every node: exact. The
	// observed network's L_p is always exact.
	PathSources int
	// Accelerator runs the rewiring, triangle counts and searches (nil: CPU).
	Accelerator Accelerator
}

// DefaultPathSources is the sample of BFS sources per random network: 8 MS-BFS sweeps of 128.
// On the C5 network (28,652 nodes) it costs 1/28 of the exact search, and a random network's
// L_p carries a standard error of about 1.6·10⁻³ of its value (4·10⁻⁴ for the mean of 15),
// which is stated beside λ and σ (docs/algorithms.md, "Sampled path lengths").
const DefaultPathSources = 1024

// SmallWorldResult is schema.SmallWorldResult (the bundle's file schemas live in package schema).
type SmallWorldResult = schema.SmallWorldResult

// SmallWorld measures C_p and L_p of g and of K Maslov–Sneppen random networks with the same
// degree sequence, generated, measured and discarded one per core at a time. Progress counts
// random networks; cancellation reaches every rewiring and BFS sweep.
func SmallWorld(ctx context.Context, g *Graph, opt SmallWorldOptions, rep progress.Reporter) (SmallWorldResult, error) {
	return smallWorld(ctx, g, opt, rep, nil)
}

// SmallWorldOf is SmallWorld for a graph whose C_p (mean clustering) and exact L_p the caller
// has measured already, as a threshold sweep has: only the random networks are generated and
// measured.
func SmallWorldOf(ctx context.Context, g *Graph, cp, lp float64, opt SmallWorldOptions, rep progress.Reporter) (SmallWorldResult, error) {
	return smallWorld(ctx, g, opt, rep, &measured{cp, func() (float64, error) { return lp, nil }})
}

// measured carries C_p and L_p of the graph when the caller already has them (GlobalMeasures),
// so the costly all-pairs sweep is not run twice. lp may still be computing: smallWorld asks
// for it only once the random networks are done.
type measured struct {
	cp float64
	lp func() (float64, error)
}

func smallWorld(ctx context.Context, g *Graph, opt SmallWorldOptions, rep progress.Reporter, known *measured) (SmallWorldResult, error) {
	rep = progress.OrDiscard(rep)
	var res SmallWorldResult
	if g == nil {
		return res, errors.New("graph: small-world analysis of a nil graph")
	}
	if g.Edges() < 2 {
		return res, fmt.Errorf("graph: small-world analysis needs at least 2 edges, the graph has %d", g.Edges())
	}
	if opt.Random <= 0 {
		opt.Random = 15
	}
	if opt.SwapsPerEdge <= 0 {
		opt.SwapsPerEdge = 10
	}
	if opt.PathSources == 0 {
		opt.PathSources = DefaultPathSources
	}
	acc := accelOr(opt.Accelerator)
	k := opt.Random
	res.RandomNetworks, res.SwapsPerEdge = k, opt.SwapsPerEdge
	if known == nil {
		cp, err := MeanClustering(ctx, g)
		if err != nil {
			return res, err
		}
		ps, err := acc.ShortestPaths(ctx, g)
		if err != nil {
			return res, err
		}
		known = &measured{cp, func() (float64, error) { return ps.CharacteristicPathLength, nil }}
	}
	cp := known.cp
	res.ClusteringCoefficient = cp

	res.RandomClustering = make([]float64, k)
	res.RandomPathLength = make([]float64, k)
	swapFrac := make([]float64, k)
	res.RandomPathLengthSE = make([]float64, k)
	estimated := make([]int, k) // sources searched where the L_p is an estimate, else 0
	rep.Start("small-world: random networks", int64(k))
	// With a device, PerRandom (Leiden for Q's z-score, on host cores) starts as soon as the
	// network is made and runs while its triangles and searches wait for and run on the
	// device, instead of after them; on the CPU both would compete for the same cores, so
	// they keep their order.
	_, onHost := acc.(CPU)
	rewire := func(ctx context.Context, lo int) (*Graph, RewireStats, error) {
		end := trace.Span("random network %d: rewiring", lo)
		defer end()
		return acc.Rewire(ctx, g, RewireOptions{SwapsPerEdge: opt.SwapsPerEdge, Seed: opt.Seed, Stream: uint64(lo)})
	}
	measure := func(ctx context.Context, lo int, r *Graph, st RewireStats) error {
		defer release(acc, r)
		var perRandom func() error
		if opt.PerRandom != nil {
			perRandom = func() error {
				defer trace.Span("random network %d: PerRandom (host)", lo)()
				return opt.PerRandom(lo, r)
			}
		}
		if perRandom != nil && !onHost {
			done := make(chan error, 1)
			hook := perRandom
			go func() { done <- hook() }()
			var hookErr error
			waited := false
			perRandom = func() error {
				if !waited {
					hookErr, waited = <-done, true
				}
				return hookErr
			}
			defer func() { _ = perRandom() }() // also on an early return: the hook never outlives r
		}
		swapFrac[lo] = float64(st.Swaps) / (opt.SwapsPerEdge * float64(g.Edges()))
		endMeasures := trace.Span("random network %d: triangles and searches", lo)
		t, err := acc.Triangles(ctx, r)
		if err != nil {
			return err
		}
		c := meanClusteringFromTriangles(r, t)
		// The sample's stream is the network's, offset so that it never equals a rewiring's.
		p, err := acc.SampledShortestPaths(ctx, r, opt.PathSources, opt.Seed, 1<<32+uint64(lo))
		if err != nil {
			return err
		}
		endMeasures()
		res.RandomClustering[lo], res.RandomPathLength[lo] = c, p.CharacteristicPathLength
		res.RandomPathLengthSE[lo] = p.CharacteristicPathLengthSE
		if !p.Exact {
			estimated[lo] = p.Sources
		}
		if perRandom != nil {
			if err := perRandom(); err != nil {
				return fmt.Errorf("graph: random network %d: %w", lo, err)
			}
		}
		rep.Add(1)
		return nil
	}
	var err error
	if onHost {
		err = forEachChunk(ctx, k, 1, workerCount(k), false, func(_, lo, _ int) error {
			r, st, err := rewire(ctx, lo)
			if err != nil {
				return err
			}
			return measure(ctx, lo, r, st)
		})
	} else {
		err = rewireAhead(ctx, k, workerCount(k)+1, acc, rewire, measure)
	}
	if err != nil {
		return res, err
	}
	if res.CharacteristicPathLength, err = known.lp(); err != nil {
		return res, err
	}
	res.MinSwapsFrac = 1
	for _, f := range swapFrac {
		res.MinSwapsFrac = min(res.MinSwapsFrac, f)
	}
	if res.MinSwapsFrac < 1 {
		rep.Note(fmt.Sprintf("small-world: only %.0f %% of the asked swaps were possible in some random network; it stays close to the original", 100*res.MinSwapsFrac))
	}
	res.RandomClusteringMean, res.RandomClusteringSD = meanSD(res.RandomClustering)
	res.RandomPathLengthMean, res.RandomPathLengthSD = meanSD(res.RandomPathLength)
	if res.RandomClusteringMean > 0 {
		res.Gamma = cp / res.RandomClusteringMean
	}
	if res.RandomPathLengthMean > 0 {
		res.Lambda = res.CharacteristicPathLength / res.RandomPathLengthMean
	}
	if res.Lambda > 0 {
		res.Sigma = res.Gamma / res.Lambda
	}
	for _, e := range estimated {
		if e > 0 {
			res.RandomPathLengthEstimated = true
			res.RandomPathSources = max(res.RandomPathSources, e)
		}
	}
	if res.RandomPathLengthEstimated {
		// The networks' samples are independent: the mean's variance is Σ SE_k² / K².
		var v float64
		for _, se := range res.RandomPathLengthSE {
			v += se * se
		}
		res.RandomPathLengthMeanSE = math.Sqrt(v) / float64(k)
		if res.RandomPathLengthMean > 0 {
			rel := res.RandomPathLengthMeanSE / res.RandomPathLengthMean // λ and σ ∝ ⟨L_rand⟩^±1
			res.LambdaSE, res.SigmaSE = res.Lambda*rel, res.Sigma*rel
		}
	}
	var sig []float64
	for i := range k {
		if res.RandomClustering[i] > 0 && res.CharacteristicPathLength > 0 {
			sig = append(sig, (cp/res.RandomClustering[i])/(res.CharacteristicPathLength/res.RandomPathLength[i]))
		}
	}
	_, res.SigmaSD = meanSD(sig)
	return res, nil
}

// meanSD returns the mean and the sample standard deviation (n − 1; 0 for n < 2).
func meanSD(x []float64) (m, sd float64) {
	if len(x) == 0 {
		return 0, 0
	}
	m = mean(x)
	if len(x) < 2 {
		return m, 0
	}
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return m, math.Sqrt(ss / float64(len(x)-1))
}

// rewireAhead makes the K random networks of a device accelerator one after another, in order,
// and measures each (measure: its triangles and searches on the device, PerRandom on the host)
// on a goroutine of its own, with at most ahead networks alive at once: network i+1 is rewired
// while the host works on network i. The device's rewiring is serial, and each network's host
// work (Leiden), the longest chain, starts only once its network is made, so the accelerator
// is asked (RewireFirst) to run the rewiring before its other work: every network is made as
// early as the device allows, and the other work fills the device while the host runs Leiden
// (docs/algorithms.md, "The device thread's order"). The first error cancels the rest.
func rewireAhead(ctx context.Context, k, ahead int, acc Accelerator,
	rewire func(context.Context, int) (*Graph, RewireStats, error),
	measure func(context.Context, int, *Graph, RewireStats) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	fail := func(err error) {
		errOnce.Do(func() { first = err })
		cancel()
	}
	hold := func() func() { return func() {} }
	if rf, ok := acc.(RewireFirst); ok {
		hold = rf.HoldForRewiring
	}
	slots := make(chan struct{}, max(ahead, 1))
	release := hold()
	for lo := 0; lo < k && ctx.Err() == nil; lo++ {
		select {
		case slots <- struct{}{}:
		default:
			// Every slot is taken: the host works on the networks made. The hold would keep
			// their device work (which frees the slots) waiting: let it go meanwhile.
			release()
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
			}
			release = hold()
		}
		if ctx.Err() != nil {
			break
		}
		r, st, err := rewire(ctx, lo)
		if err != nil {
			fail(err)
			break
		}
		wg.Add(1)
		go func(lo int) {
			defer wg.Done()
			defer func() { <-slots }()
			if err := measure(ctx, lo, r, st); err != nil {
				fail(err)
			}
		}(lo)
	}
	release()
	trace.Printf("random networks: rewiring done")
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
