package fc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// syntheticBlocks generates the OpEdges output of every planned block of an n-node network:
// each pair is an edge with probability p (geometric skips), weights uniform in (0, 1), and
// each block's edges shuffled (the CUDA backend appends from many threads, so a block's
// edges come in no particular order).
func syntheticBlocks(n, rows int, p float64, seed uint64) []BlockResult {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	var out []BlockResult
	lq := math.Log1p(-p)
	for _, b := range PlanBlocks(n, rows) {
		es := make([]Edge, 0, int(float64(b.Pairs())*p*1.01)+16)
		for i := b.I0; i < b.I1; i++ {
			j := max(b.J0, i+1) - 1
			for {
				j += 1 + int(math.Log(1-rng.Float64())/lq)
				if j >= b.J1 {
					break
				}
				es = append(es, Edge{I: uint32(i), J: uint32(j), W: rng.Float32()})
			}
		}
		rng.Shuffle(len(es), func(x, y int) { es[x], es[y] = es[y], es[x] })
		out = append(out, BlockResult{Block: b, Edges: es})
	}
	return out
}

// benchAssemble feeds the blocks to the assembler the way the driver's edge pass does (one
// sink call per block, the block's Edges reused by the backend afterwards) and builds the CSR.
func benchAssemble(b *testing.B, n, rows int, p float64, classify func(Edge) edgeClass) {
	benchAssembleWith(b, n, rows, p, func() *assembler { return newAssembler(n, rows, classify) })
}

func benchAssembleWith(b *testing.B, n, rows int, p float64, mk func() *assembler) {
	blocks := syntheticBlocks(n, rows, p, 1)
	var edges int64
	for _, r := range blocks {
		edges += int64(len(r.Edges))
	}
	scratch := make([]Edge, 0, 1<<20)
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		a := mk()
		for k := range blocks {
			// the backend's reused buffer: the sink sees a slice that is overwritten later
			scratch = append(scratch[:0], blocks[k].Edges...)
			r := BlockResult{Block: blocks[k].Block, Edges: scratch}
			if err := a.add(&r); err != nil {
				b.Fatal(err)
			}
		}
		nw, err := a.finish(nil)
		if err != nil {
			b.Fatal(err)
		}
		if nw.Edges() == 0 {
			b.Fatal("no edges")
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(edges)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
	b.ReportMetric(float64(edges), "edges")
}

// BenchmarkAssembleKeepAll: N = 100,000, blocks of 8192 rows, 0.4 % of the pairs (2·10⁷ edges),
// strength mode (every emitted edge kept).
func BenchmarkAssembleKeepAll(b *testing.B) {
	benchAssemble(b, 100_000, 8192, 0.004, nil)
}

// BenchmarkAssembleClassify: as KeepAll with the density mode's per-edge bin classification
// (90 % kept, 5 % held in the boundary bin).
func BenchmarkAssembleClassify(b *testing.B) {
	benchAssemble(b, 100_000, 8192, 0.004, func(e Edge) edgeClass {
		switch {
		case e.W >= 0.1:
			return keep
		case e.W >= 0.05:
			return hold
		}
		return drop
	})
}

// BenchmarkAssembleKeepAllLarge: as KeepAll with 2 % of the pairs (10⁸ edges, the scale of
// the W2 workload); needs about 4 GB of host memory.
func BenchmarkAssembleKeepAllLarge(b *testing.B) {
	benchAssemble(b, 100_000, 8192, 0.02, nil)
}

// BenchmarkAssembleDensity: as KeepAll with the density mode's bin rule (newAssemblerBins)
// over 2²⁰ bins of [0, 1], the boundary bin at 0.1 (90 % kept).
func BenchmarkAssembleDensity(b *testing.B) {
	op := Op{Lo: 0, Hi: 1, Bins: DefaultBins}
	bin := op.BinOf(0.1)
	benchAssembleWith(b, 100_000, 8192, 0.004, func() *assembler { return newAssemblerBins(100_000, 8192, &op, bin) })
}
