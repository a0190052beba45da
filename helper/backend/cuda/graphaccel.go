//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/kernels"
	"gorgonia.org/cu"
)

// GraphAccelerator returns the device's graph.Accelerator (docs/algorithms.md, "Graph
// analytics on the GPU"): triangle counts, exact and sampled multi-source BFS with bitset
// frontiers, adjacency products and Maslov–Sneppen rewiring by parallel edge swaps, all on the
// backend's device and context. Graphs stay on the device between calls (the network being
// measured until Close, each random network until graph.Releaser's Release), so a random
// network is rewired, counted and searched where it was made; it crosses the bus once, for
// the host-side measures (Leiden). A graph the device has no room for is handled by the CPU
// with one note through rep saying so.
func (b *backend) GraphAccelerator(rep progress.Reporter) graph.Accelerator {
	if b.ga == nil {
		b.ga = &graphAccel{b: b, graphs: map[*graph.Graph]*devGraph{}, noted: map[string]bool{}}
	}
	b.ga.rep = progress.OrDiscard(rep)
	return b.ga
}

type graphFunctions struct {
	csrProducts, triangleCounts, msbfsSources, msbfsLevel, msbfsFold   cu.Function
	msbfsPush                                                          cu.Function
	rewireTable, rewirePropose, rewireAccept, csrScatter, csrSortRows  cu.Function
	krylovDots, krylovSum, krylovCombine, krylovStore, modularityApply cu.Function
	localEfficiency, eigenMax, eigenScale                              cu.Function
}

// devGraph is a graph's CSR on the device.
type devGraph struct {
	n      int
	off    cu.DevicePtr // n+1 int64
	adj    cu.DevicePtr // 2E int32
	ownOff bool         // false: off belongs to the graph this one was rewired from
	// eu, ev: the edges (i < j) as the rewiring's start, uploaded on first use.
	eu, ev cu.DevicePtr
	maxDeg int
}

func (d *devGraph) free() {
	for _, p := range []cu.DevicePtr{d.adj, d.eu, d.ev} {
		if p != 0 {
			cu.MemFree(p)
		}
	}
	if d.ownOff && d.off != 0 {
		cu.MemFree(d.off)
	}
	*d = devGraph{}
}

type graphAccel struct {
	b      *backend
	rep    progress.Reporter
	mu     sync.Mutex // noted
	noted  map[string]bool
	loaded bool
	fn     graphFunctions
	// rewiring and searching hold the rewiring's and the searches' buffers across several
	// device calls (one per round or batch), so that other work — the leading-eigenvector
	// products of the modules running meanwhile — gets the device between them.
	rewiring, searching sync.Mutex
	// roomLimit, when positive, stands for the device's free memory (tests of the fallback).
	roomLimit int64
	// Everything below is touched on the device thread only.
	graphs map[*graph.Graph]*devGraph
	// The rewiring's buffers, sized for the largest network so far.
	rwEdges            int64
	wu, wv             cu.DevicePtr // working edge list
	keys, vals         cu.DevicePtr // edge table
	tableSlots         int64
	scratch, counter   cu.DevicePtr
	cursor             cu.DevicePtr
	cursorNodes        int
	bfsNodes, bfsWords int
	seen, visit, next  cu.DevicePtr
	full, stats        cu.DevicePtr // the batch's sources' bits (16 words); the level's counters (4)
	active             cu.DevicePtr // two sets of 16 words: this level's active searches and the next's
	srcList            cu.DevicePtr
	srcCap             int
	counts             cu.DevicePtr // 1024 u32
	reached, dist, inv cu.DevicePtr // 1024 each
	// bfsDirection picks every level's step: directionAuto (Beamer et al.'s heuristic with
	// bfsAlpha, bfsBeta), topDownOnly, bottomUpOnly or alternating; fixedMask keeps every search active to
	// the end (the kernel's work before the active mask). Tests and benchmarks set them.
	bfsDirection      int
	bfsAlpha, bfsBeta int64
	fixedMask         bool
	// trace, when set, sees every level's direction and counters (benchmarks).
	trace func(level int, topDown bool, stats []uint64)
}

const (
	directionAuto = iota
	topDownOnly
	bottomUpOnly
	alternating // top-down at odd levels, bottom-up at even ones (tests of every switch)
)

// Beamer, Asanović & Patterson's direction-optimising BFS (SC 2012, §4): a level runs top-down
// until its frontier's edges m_f exceed the unexplored edges m_u / α, then bottom-up until the
// frontier shrinks below n / β nodes. Their α = 14 and β = 24 (tuned on CPUs) are kept.
const (
	defaultBFSAlpha = 14
	defaultBFSBeta  = 24
)

// errNoRoom says that a graph does not fit in the device's free memory.
var errNoRoom = errors.New("not enough free device memory")

func (a *graphAccel) Name() string { return "cuda" }

// note passes msg once per key.
func (a *graphAccel) note(key, msg string) {
	a.mu.Lock()
	seen := a.noted[key]
	a.noted[key] = true
	a.mu.Unlock()
	if !seen {
		a.rep.Note(msg)
	}
}

// fallback reports that op ran on the CPU because the device had no room for g.
func (a *graphAccel) fallback(op string, g *graph.Graph, err error) {
	a.note("room", fmt.Sprintf("graph analytics: the network (%d nodes, %d edges) does not fit in the GPU's free memory (%v); %s and whatever else does not fit run on the CPU", g.N, g.Edges(), err, op))
}

func (a *graphAccel) load() error {
	if a.loaded {
		return nil
	}
	for _, k := range []struct {
		name string
		dst  *cu.Function
	}{
		{kernels.CSRProducts, &a.fn.csrProducts},
		{kernels.TriangleCounts, &a.fn.triangleCounts},
		{kernels.MSBFSSources, &a.fn.msbfsSources},
		{kernels.MSBFSLevel, &a.fn.msbfsLevel},
		{kernels.MSBFSPush, &a.fn.msbfsPush},
		{kernels.MSBFSFold, &a.fn.msbfsFold},
		{kernels.RewireTable, &a.fn.rewireTable},
		{kernels.RewirePropose, &a.fn.rewirePropose},
		{kernels.RewireAccept, &a.fn.rewireAccept},
		{kernels.CSRScatter, &a.fn.csrScatter},
		{kernels.CSRSortRows, &a.fn.csrSortRows},
		{kernels.KrylovDots, &a.fn.krylovDots},
		{kernels.KrylovSum, &a.fn.krylovSum},
		{kernels.KrylovCombine, &a.fn.krylovCombine},
		{kernels.KrylovStore, &a.fn.krylovStore},
		{kernels.ModularityApply, &a.fn.modularityApply},
		{kernels.LocalEfficiency, &a.fn.localEfficiency},
		{kernels.EigenMax, &a.fn.eigenMax},
		{kernels.EigenScale, &a.fn.eigenScale},
	} {
		fn, err := a.b.mod.Function(k.name)
		if err != nil {
			return fmt.Errorf("cuda backend: kernel %s not in the embedded fatbin: %w", k.name, err)
		}
		*k.dst = fn
	}
	a.loaded = true
	return nil
}

// free releases every device buffer (backend.release, on the device thread).
func (a *graphAccel) free() {
	for g, d := range a.graphs {
		d.free()
		delete(a.graphs, g)
	}
	for _, p := range []*cu.DevicePtr{&a.wu, &a.wv, &a.keys, &a.vals, &a.scratch, &a.counter, &a.cursor,
		&a.seen, &a.visit, &a.next, &a.full, &a.stats, &a.active, &a.srcList, &a.counts, &a.reached, &a.dist, &a.inv} {
		if *p != 0 {
			cu.MemFree(*p)
			*p = 0
		}
	}
	a.rwEdges, a.tableSlots, a.cursorNodes, a.bfsNodes, a.bfsWords, a.srcCap = 0, 0, 0, 0, 0, 0
	a.loaded = false
}

// room fails with errNoRoom unless bytes more fit in free device memory, with 256 MiB to spare
// (or, when a test set roomLimit, in that many bytes).
func (a *graphAccel) room(bytes int64) error {
	free, _, err := cu.MemInfo()
	if err != nil {
		return fmt.Errorf("cuda backend: free device memory: %w", err)
	}
	if a.roomLimit > 0 {
		free = a.roomLimit
	}
	if bytes+256<<20 > free {
		return fmt.Errorf("%w: %.2f GiB needed, %.2f GiB free", errNoRoom, float64(bytes)/(1<<30), float64(free)/(1<<30))
	}
	return nil
}

// realloc makes *p hold at least bytes (contents lost).
func realloc(p *cu.DevicePtr, what string, bytes int64) error {
	if *p != 0 {
		cu.MemFree(*p)
		*p = 0
	}
	q, err := alloc(what, int(bytes))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

func upload[T any](dst cu.DevicePtr, src []T, what string) error {
	if len(src) == 0 {
		return nil
	}
	if err := cu.MemcpyHtoD(dst, unsafe.Pointer(&src[0]), int64(len(src))*int64(unsafe.Sizeof(src[0]))); err != nil {
		return fmt.Errorf("cuda backend: uploading %s: %w", what, err)
	}
	return nil
}

func download[T any](dst []T, src cu.DevicePtr, what string) error {
	if len(dst) == 0 {
		return nil
	}
	if err := cu.MemcpyDtoH(unsafe.Pointer(&dst[0]), src, int64(len(dst))*int64(unsafe.Sizeof(dst[0]))); err != nil {
		return fmt.Errorf("cuda backend: copying %s from the device: %w", what, err)
	}
	return nil
}

// device returns g's CSR on the device, uploading it on first use (device thread).
func (a *graphAccel) device(g *graph.Graph) (*devGraph, error) {
	if err := a.load(); err != nil {
		return nil, err
	}
	if d, ok := a.graphs[g]; ok {
		return d, nil
	}
	if g.N >= 1<<31-1 || int64(len(g.Adj)) >= 1<<32 {
		return nil, fmt.Errorf("%w: %d nodes, %d adjacency entries exceed the kernels' 32-bit indices", errNoRoom, g.N, len(g.Adj))
	}
	if err := a.room(8*int64(g.N+1) + 4*int64(len(g.Adj))); err != nil {
		return nil, err
	}
	d := &devGraph{n: g.N, ownOff: true}
	var err error
	if d.off, err = alloc("CSR offsets", 8*(g.N+1)); err != nil {
		return nil, err
	}
	if d.adj, err = alloc("CSR adjacency", 4*len(g.Adj)); err != nil {
		d.free()
		return nil, err
	}
	if err = upload(d.off, g.Offsets, "CSR offsets"); err == nil {
		err = upload(d.adj, g.Adj, "CSR adjacency")
	}
	if err != nil {
		d.free()
		return nil, err
	}
	for i := 0; i < g.N; i++ {
		d.maxDeg = max(d.maxDeg, g.Degree(i))
	}
	a.graphs[g] = d
	return d, nil
}

// Release frees the device copy of g (graph.Releaser).
func (a *graphAccel) Release(g *graph.Graph) {
	_ = a.b.do(func() error {
		if d, ok := a.graphs[g]; ok {
			d.free()
			delete(a.graphs, g)
		}
		return nil
	})
}

// Products sets y = A x on the device (csr_products: the host's summation order, so the same
// bits as graph.CPU).
func (a *graphAccel) Products(ctx context.Context, g *graph.Graph, x, y []float64) error {
	if len(x) != g.N || len(y) != g.N {
		return fmt.Errorf("graph products: %d nodes, vectors of %d and %d", g.N, len(x), len(y))
	}
	if g.N == 0 {
		return nil
	}
	err := a.b.do(func() error {
		d, err := a.device(g)
		if err != nil {
			return err
		}
		if err := a.room(16 * int64(g.N)); err != nil {
			return err
		}
		xy, err := alloc("product vectors", 16*g.N)
		if err != nil {
			return err
		}
		defer cu.MemFree(xy)
		dy := xy + cu.DevicePtr(8*g.N)
		if err := upload(xy, x, "product vector"); err != nil {
			return err
		}
		if err := launch(kernels.CSRProducts, a.fn.csrProducts, ceilDiv(g.N, 256), 1, 256, 0, cu.Stream{},
			ptr(d.off), ptr(d.adj), ptr(xy), ptr(dy), i64(g.N), 0); err != nil {
			return err
		}
		return download(y, dy, "products")
	})
	if errors.Is(err, errNoRoom) {
		a.fallback("adjacency products", g, err)
		return graph.CPU{}.Products(ctx, g, x, y)
	}
	return err
}

// Triangles counts every node's triangles on the device (triangle_counts: the same integers
// as graph.Triangles).
func (a *graphAccel) Triangles(ctx context.Context, g *graph.Graph) ([]int64, error) {
	t := make([]int64, g.N)
	if g.N == 0 {
		return t, nil
	}
	err := a.b.do(func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := a.device(g)
		if err != nil {
			return err
		}
		if err := a.room(8 * int64(g.N)); err != nil {
			return err
		}
		dt, err := alloc("triangle counts", 8*g.N)
		if err != nil {
			return err
		}
		defer cu.MemFree(dt)
		if err := cu.MemsetD32(dt, 0, int64(2*g.N)); err != nil {
			return fmt.Errorf("cuda backend: clearing triangle counts: %w", err)
		}
		if err := launch(kernels.TriangleCounts, a.fn.triangleCounts, ceilDiv(g.N, 8), 1, 256, 0, cu.Stream{},
			ptr(d.off), ptr(d.adj), i64(g.N), ptr(dt)); err != nil {
			return err
		}
		return download(t, dt, "triangle counts")
	})
	if errors.Is(err, errNoRoom) {
		a.fallback("triangle counts", g, err)
		return graph.Triangles(ctx, g)
	}
	return t, err
}

// bfsWordsFor is the number of 64-bit mask words per node for a batch of s sources: a power
// of two dividing 32 (msbfs_level's lane layout), at most 16.
func bfsWordsFor(s int) int {
	w := 1
	for w < 16 && 64*w < s {
		w *= 2
	}
	return w
}

// bfsState sizes the MS-BFS masks for n nodes of w words and the per-source buffers.
func (a *graphAccel) bfsState(n, w, sources int) error {
	if n > a.bfsNodes || w > a.bfsWords {
		nn, ww := max(n, a.bfsNodes), max(w, a.bfsWords)
		bytes := 3 * 8 * int64(nn) * int64(ww)
		if err := a.room(bytes); err != nil {
			return err
		}
		for _, p := range []*cu.DevicePtr{&a.seen, &a.visit, &a.next} {
			if err := realloc(p, "BFS masks", 8*int64(nn)*int64(ww)); err != nil {
				return err
			}
		}
		a.bfsNodes, a.bfsWords = nn, ww
	}
	if a.full == 0 {
		for _, q := range []struct {
			p     *cu.DevicePtr
			bytes int64
		}{{&a.full, 8 * 16}, {&a.stats, 8 * 4}, {&a.active, 8 * 32}, {&a.counts, 4 * 1024}, {&a.reached, 8 * 1024}, {&a.dist, 8 * 1024}, {&a.inv, 8 * 1024}} {
			if err := realloc(q.p, "BFS counters", q.bytes); err != nil {
				return err
			}
		}
	}
	if sources > a.srcCap {
		if err := realloc(&a.srcList, "BFS sources", 4*int64(sources)); err != nil {
			return err
		}
		a.srcCap = sources
	}
	return nil
}

// sweep runs one batch of up to 1024 breadth-first searches from the sources at
// a.srcList[lo:lo+s], whose degrees sum to sourceEdges, and adds the (source, node) pairs per
// distance to hist; with perSource it also folds each source's sums (msbfs_fold) into
// a.reached/dist/inv (cleared here).
//
// Each level is one step of direction-optimising MS-BFS (docs/algorithms.md, "Graph analytics
// on the GPU"): top-down (msbfs_push scatters the frontier's searches into its neighbours'
// next masks, then msbfs_level settles them) while the frontier is small, bottom-up
// (msbfs_level gathers) while it is large, chosen by Beamer et al.'s heuristic on the counts
// msbfs_level returns with each level. Both steps find the same new pairs, so the counts do
// not depend on the choice.
func (a *graphAccel) sweep(ctx context.Context, g *graph.Graph, d *devGraph, lo, s int, sourceEdges int64, hist *[]int64, perSource bool) error {
	n := d.n
	w := bfsWordsFor(s)
	words := int64(n) * int64(w)
	if err := cu.MemsetD32(a.seen, 0, 2*words); err != nil {
		return fmt.Errorf("cuda backend: clearing BFS masks: %w", err)
	}
	if err := cu.MemsetD32(a.visit, 0, 2*words); err != nil {
		return fmt.Errorf("cuda backend: clearing BFS masks: %w", err)
	}
	full := make([]uint64, w)
	for k := range full {
		if left := s - 64*k; left >= 64 {
			full[k] = ^uint64(0)
		} else if left > 0 {
			full[k] = 1<<uint(left) - 1
		}
	}
	if err := upload(a.full, full, "BFS batch masks"); err != nil {
		return err
	}
	if err := upload(a.active, full, "BFS batch masks"); err != nil {
		return err
	}
	if perSource {
		for _, p := range []cu.DevicePtr{a.reached, a.dist, a.inv} {
			if err := cu.MemsetD32(p, 0, 2*1024); err != nil {
				return fmt.Errorf("cuda backend: clearing BFS sums: %w", err)
			}
		}
		if err := cu.MemsetD32(a.counts, 0, 1024); err != nil {
			return fmt.Errorf("cuda backend: clearing BFS counts: %w", err)
		}
	}
	if err := launch(kernels.MSBFSSources, a.fn.msbfsSources, ceilDiv(s, 256), 1, 256, 0, cu.Stream{},
		ptr(a.srcList+cu.DevicePtr(4*lo)), i64(s), i64(w), ptr(a.seen), ptr(a.visit)); err != nil {
		return err
	}
	grid := min(ceilDiv(n, 8), 8192)
	visit, next := a.visit, a.next
	active, activeNext := a.active, a.active+8*16
	var counts cu.DevicePtr
	if perSource {
		counts = a.counts
	}
	alpha, beta := a.bfsAlpha, a.bfsBeta
	if alpha <= 0 {
		alpha = defaultBFSAlpha
	}
	if beta <= 0 {
		beta = defaultBFSBeta
	}
	// The first frontier is the sources; every edge is unexplored.
	nf, mf, mu := int64(s), sourceEdges, g.Offsets[g.N]
	topDown, prevNF := true, int64(0)
	st := make([]uint64, 4)
	for level := 1; ; level++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch a.bfsDirection {
		case topDownOnly:
			topDown = true
		case bottomUpOnly:
			topDown = false
		case alternating:
			topDown = level%2 == 1
		default:
			if topDown && mf*alpha > mu {
				topDown = false
			} else if !topDown && nf*beta < int64(n) && nf < prevNF {
				topDown = true
			}
		}
		if err := cu.MemsetD32(a.stats, 0, 8); err != nil {
			return fmt.Errorf("cuda backend: clearing the BFS counters: %w", err)
		}
		if err := cu.MemsetD32(activeNext, 0, 2*16); err != nil {
			return fmt.Errorf("cuda backend: clearing the BFS counters: %w", err)
		}
		act := active
		if a.fixedMask {
			act = a.full
		}
		pushed := 0
		if topDown {
			pushed = 1
			if err := cu.MemsetD32(next, 0, 2*words); err != nil {
				return fmt.Errorf("cuda backend: clearing BFS masks: %w", err)
			}
			if err := launch(kernels.MSBFSPush, a.fn.msbfsPush, grid, 1, 256, 0, cu.Stream{},
				ptr(d.off), ptr(d.adj), i64(n), i64(w), ptr(visit), ptr(a.seen), ptr(next)); err != nil {
				return err
			}
		}
		if err := launch(kernels.MSBFSLevel, a.fn.msbfsLevel, grid, 1, 256, 0, cu.Stream{},
			ptr(d.off), ptr(d.adj), i64(n), i64(w), ptr(visit), ptr(next), ptr(a.seen), ptr(act), ptr(activeNext),
			ptr(a.stats), ptr(counts), i64(pushed)); err != nil {
			return err
		}
		if perSource {
			if err := launch(kernels.MSBFSFold, a.fn.msbfsFold, ceilDiv(64*w, 256), 1, 256, 0, cu.Stream{},
				ptr(a.counts), i64(64*w), i64(level), ptr(a.reached), ptr(a.dist), ptr(a.inv)); err != nil {
				return err
			}
		}
		if err := download(st, a.stats, "BFS counters"); err != nil {
			return err
		}
		if a.trace != nil {
			a.trace(level, topDown, st)
		}
		found := st[0]
		if found == 0 {
			return nil
		}
		for len(*hist) <= level {
			*hist = append(*hist, 0)
		}
		(*hist)[level] += int64(found)
		prevNF = nf
		nf, mf, mu = int64(st[1]), int64(st[2]), int64(st[3])
		visit, next = next, visit
		active, activeNext = activeNext, active
	}
}

// ShortestPaths computes L_p, E_glob and the distance distribution exactly by MS-BFS from
// every node on the device, 512 or 1024 sources a batch: the same pair counts per distance
// as graph.ShortestPaths, turned into PathStats by the same code.
func (a *graphAccel) ShortestPaths(ctx context.Context, g *graph.Graph) (graph.PathStats, error) {
	var hist []int64
	const batch = 1024
	a.searching.Lock()
	defer a.searching.Unlock()
	var d *devGraph
	err := a.b.do(func() error {
		var err error
		if d, err = a.device(g); err != nil {
			return err
		}
		if err := a.bfsState(g.N, bfsWordsFor(min(batch, g.N)), g.N); err != nil {
			return err
		}
		iota := make([]int32, g.N)
		for i := range iota {
			iota[i] = int32(i)
		}
		return upload(a.srcList, iota, "BFS sources")
	})
	for lo := 0; lo < g.N && err == nil; lo += batch {
		s := min(batch, g.N-lo)
		err = a.b.do(func() error { return a.sweep(ctx, g, d, lo, s, g.Offsets[lo+s]-g.Offsets[lo], &hist, false) })
	}
	if errors.Is(err, errNoRoom) {
		a.fallback("shortest paths", g, err)
		return graph.ShortestPaths(ctx, g, nil)
	}
	if err != nil {
		return graph.PathStats{}, err
	}
	return graph.PathStatsFromHistogram(g, hist), nil
}

// SampledShortestPaths is graph.SampledShortestPaths (the same sample and estimators) with the
// searches on the device.
func (a *graphAccel) SampledShortestPaths(ctx context.Context, g *graph.Graph, sources int, seed, stream uint64) (graph.PathEstimate, error) {
	est, err := graph.SampledShortestPathsWith(ctx, g, sources, seed, stream, a.sourceSums, a.ShortestPaths)
	if errors.Is(err, errNoRoom) {
		a.fallback("sampled shortest paths", g, err)
		return graph.SampledShortestPaths(ctx, g, sources, seed, stream)
	}
	return est, err
}

// sourceSums runs MS-BFS from every listed source and returns each one's sums.
func (a *graphAccel) sourceSums(ctx context.Context, g *graph.Graph, list []int32) ([]graph.SourceSums, error) {
	out := make([]graph.SourceSums, len(list))
	const batch = 1024
	a.searching.Lock()
	defer a.searching.Unlock()
	var d *devGraph
	err := a.b.do(func() error {
		var err error
		if d, err = a.device(g); err != nil {
			return err
		}
		if err := a.bfsState(g.N, bfsWordsFor(min(batch, len(list))), len(list)); err != nil {
			return err
		}
		return upload(a.srcList, list, "BFS sources")
	})
	var hist []int64
	reached := make([]uint64, batch)
	dist := make([]uint64, batch)
	inv := make([]float64, batch)
	for lo := 0; lo < len(list) && err == nil; lo += batch {
		err = a.b.do(func() error {
			s := min(batch, len(list)-lo)
			var edges int64
			for _, v := range list[lo : lo+s] {
				edges += int64(g.Degree(int(v)))
			}
			if err := a.sweep(ctx, g, d, lo, s, edges, &hist, true); err != nil {
				return err
			}
			if err := download(reached[:s], a.reached, "BFS sums"); err != nil {
				return err
			}
			if err := download(dist[:s], a.dist, "BFS sums"); err != nil {
				return err
			}
			if err := download(inv[:s], a.inv, "BFS sums"); err != nil {
				return err
			}
			for k := 0; k < s; k++ {
				out[lo+k] = graph.SourceSums{Reached: int64(reached[k]), Dist: int64(dist[k]), Inv: inv[k]}
			}
			return nil
		})
	}
	return out, err
}

// maxSortedDegree is the longest row csr_sort_rows sorts (its shared-memory buffer).
const maxSortedDegree = 8192

// Rewire returns a degree-preserving random network of g made on the device by rounds of
// parallel double edge swaps (rewire_table, rewire_propose, rewire_accept; docs/algorithms.md,
// "Random networks on the GPU"): each round pairs the edges by a keyed random permutation,
// every pair proposes one swap, and a swap is kept when neither new edge exists and it holds
// the claim of both, so every degree is kept exactly and the result is a simple graph.
// Rounds continue until opt.SwapsPerEdge·E swaps were accepted (the last rounds propose only
// as many as are missing) or opt.MaxAttemptsPerSwap times as many attempts were made. The
// network's CSR is built and sorted on the device (csr_scatter, csr_sort_rows) and stays there
// for Triangles and SampledShortestPaths until Release; the host gets a copy. The same seed,
// stream and graph give the same network (claims are decided by proposal index, not timing),
// though not the CPU's chain: the two agree in distribution.
func (a *graphAccel) Rewire(ctx context.Context, g *graph.Graph, opt graph.RewireOptions) (*graph.Graph, graph.RewireStats, error) {
	var st graph.RewireStats
	if g == nil {
		return nil, st, errors.New("graph: rewiring a nil graph")
	}
	if opt.SwapsPerEdge <= 0 {
		opt.SwapsPerEdge = 10
	}
	if opt.MaxAttemptsPerSwap <= 0 {
		opt.MaxAttemptsPerSwap = 100
	}
	m := g.Edges()
	want := int64(opt.SwapsPerEdge * float64(m))
	maxAttempts := int64(opt.MaxAttemptsPerSwap * float64(want))
	if m < 2 || want == 0 {
		return graph.CPU{}.Rewire(ctx, g, opt)
	}
	if m >= 1<<31 {
		a.fallback("rewiring", g, fmt.Errorf("%w: %d edges exceed the rewiring's 31-bit edge indices", errNoRoom, m))
		return graph.CPU{}.Rewire(ctx, g, opt)
	}
	r := &graph.Graph{N: g.N, Offsets: append([]int64(nil), g.Offsets...), Adj: make([]int32, len(g.Adj))}
	// The rewiring goes before the device's other work (queue), also while this call waits
	// for another network's rewiring to finish.
	hold := a.b.holdFirst()
	defer hold()
	a.rewiring.Lock()
	defer a.rewiring.Unlock()
	var d *devGraph
	err := a.b.doFirst(func() error {
		var err error
		if d, err = a.device(g); err != nil {
			return err
		}
		if d.maxDeg > maxSortedDegree {
			return fmt.Errorf("%w: a node of degree %d (the device sorts rows of up to %d)", errNoRoom, d.maxDeg, maxSortedDegree)
		}
		if err := a.rewireState(g, d); err != nil {
			return err
		}
		if err := cu.MemcpyDtoD(a.wu, d.eu, 4*m); err != nil {
			return fmt.Errorf("cuda backend: copying the edge list: %w", err)
		}
		if err := cu.MemcpyDtoD(a.wv, d.ev, 4*m); err != nil {
			return fmt.Errorf("cuda backend: copying the edge list: %w", err)
		}
		if err := cu.MemsetD32(a.counter, 0, 2); err != nil {
			return fmt.Errorf("cuda backend: clearing the swap counter: %w", err)
		}
		return nil
	})
	mask := a.tableSlots - 1
	half := (bits.Len64(uint64(m-1)) + 1) / 2
	acc := make([]uint64, 1)
	key := splitmix(opt.Seed ^ splitmix(opt.Stream^0x6a09e667f3bcc909))
	// One device call per round, so that the Lanczos steps get the device between rounds.
	for round := uint64(0); err == nil && st.Swaps < want && st.Attempts < maxAttempts; round++ {
		if err = ctx.Err(); err != nil {
			break
		}
		pairs := min(m/2, want-st.Swaps, maxAttempts-st.Attempts)
		rk := splitmix(key + round*0x9e3779b97f4a7c15)
		err = a.b.doFirst(func() error {
			if err := cu.MemsetD32(a.keys, 0xffffffff, 2*a.tableSlots); err != nil {
				return fmt.Errorf("cuda backend: clearing the edge table: %w", err)
			}
			if err := cu.MemsetD32(a.vals, 0xffffffff, a.tableSlots); err != nil {
				return fmt.Errorf("cuda backend: clearing the edge table: %w", err)
			}
			if err := launch(kernels.RewireTable, a.fn.rewireTable, ceilDiv(int(m), 256), 1, 256, 0, cu.Stream{},
				ptr(a.wu), ptr(a.wv), uint64(m), ptr(a.keys), ptr(a.vals), uint64(mask)); err != nil {
				return err
			}
			if err := launch(kernels.RewirePropose, a.fn.rewirePropose, ceilDiv(int(pairs), 256), 1, 256, 0, cu.Stream{},
				ptr(a.wu), ptr(a.wv), uint64(m), uint64(pairs), ptr(a.keys), ptr(a.vals), uint64(mask), i64(half), rk, ptr(a.scratch)); err != nil {
				return err
			}
			if err := launch(kernels.RewireAccept, a.fn.rewireAccept, ceilDiv(int(pairs), 256), 1, 256, 0, cu.Stream{},
				ptr(a.wu), ptr(a.wv), uint64(pairs), ptr(a.vals), ptr(a.scratch), ptr(a.counter)); err != nil {
				return err
			}
			return download(acc, a.counter, "swap count")
		})
		st.Attempts += pairs
		st.Swaps = int64(acc[0])
	}
	if err == nil {
		err = a.b.doFirst(func() error {
			// The network's CSR: the offsets are g's (every degree kept), rows filled and sorted.
			adj, err := alloc("random network adjacency", 4*len(g.Adj))
			if err != nil {
				return err
			}
			if err := cu.MemcpyDtoD(a.cursor, d.off, 8*int64(g.N)); err != nil {
				cu.MemFree(adj)
				return fmt.Errorf("cuda backend: copying offsets: %w", err)
			}
			err = launch(kernels.CSRScatter, a.fn.csrScatter, ceilDiv(int(m), 256), 1, 256, 0, cu.Stream{},
				ptr(a.wu), ptr(a.wv), uint64(m), ptr(a.cursor), ptr(adj))
			if err == nil {
				err = launch(kernels.CSRSortRows, a.fn.csrSortRows, min(g.N, 16384), 1, 512, 0, cu.Stream{},
					ptr(d.off), ptr(adj), i64(g.N))
			}
			if err == nil {
				err = download(r.Adj, adj, "random network adjacency")
			}
			if err != nil {
				cu.MemFree(adj)
				return err
			}
			a.graphs[r] = &devGraph{n: g.N, off: d.off, adj: adj, maxDeg: d.maxDeg}
			return nil
		})
	}
	if errors.Is(err, errNoRoom) {
		hold() // the host's rewiring leaves the device to the other work
		a.fallback("rewiring", g, err)
		return graph.CPU{}.Rewire(ctx, g, opt)
	}
	if err != nil {
		return nil, st, err
	}
	return r, st, nil
}

// HoldForRewiring keeps the device's other work, besides the Lanczos steps, waiting until
// release is called (graph.RewireFirst; queue).
func (a *graphAccel) HoldForRewiring() (release func()) { return a.b.holdFirst() }

// rewireState uploads g's edge list (i < j) once and sizes the rewiring's buffers for it: the
// working list, the edge table (a power of two ≥ 4E slots: the E edges and at most 2 new ones
// per pair fill at most half of it), one record per pair and the CSR cursor.
func (a *graphAccel) rewireState(g *graph.Graph, d *devGraph) error {
	m := g.Edges()
	if d.eu == 0 {
		if err := a.room(8 * m); err != nil {
			return err
		}
		eu := make([]uint32, 0, m)
		ev := make([]uint32, 0, m)
		for i := 0; i < g.N; i++ {
			for _, j := range g.Neighbors(i) {
				if int(j) > i {
					eu = append(eu, uint32(i))
					ev = append(ev, uint32(j))
				}
			}
		}
		var err error
		if d.eu, err = alloc("edge list", int(4*m)); err != nil {
			return err
		}
		if d.ev, err = alloc("edge list", int(4*m)); err != nil {
			return err
		}
		if err := upload(d.eu, eu, "edge list"); err != nil {
			return err
		}
		if err := upload(d.ev, ev, "edge list"); err != nil {
			return err
		}
	}
	if m > a.rwEdges {
		slots := int64(1) << bits.Len64(uint64(4*m-1))
		need := 8*m + 12*slots + 16*(m/2+1) + 4*int64(len(g.Adj))
		if err := a.room(need); err != nil {
			return err
		}
		for _, q := range []struct {
			p     *cu.DevicePtr
			bytes int64
		}{{&a.wu, 4 * m}, {&a.wv, 4 * m}, {&a.keys, 8 * slots}, {&a.vals, 4 * slots}, {&a.scratch, 16 * (m/2 + 1)}, {&a.counter, 8}} {
			if err := realloc(q.p, "rewiring buffers", q.bytes); err != nil {
				return err
			}
		}
		a.rwEdges, a.tableSlots = m, slots
	}
	if g.N > a.cursorNodes {
		if err := realloc(&a.cursor, "CSR cursor", 8*int64(g.N)); err != nil {
			return err
		}
		a.cursorNodes = g.N
	}
	return nil
}

// splitmix is SplitMix64's step and finaliser, the host twin of the kernels' mix64 (seeds).
func splitmix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
