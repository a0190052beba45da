// Package fc computes functional connectivity networks block by block: the measures (Pearson,
// Spearman, Kendall τ-b), the block driver that visits only upper-triangle block pairs, the
// threshold modes (strength, exact density, significance, k nearest neighbours) and the
// incremental assembly of the sparse network. Backends (CPU, CUDA) do the arithmetic of one
// block pair; everything they must agree on is defined here and checked by one conformance
// suite (package fc/fctest) that every backend passes against a float64 reference.
package fc

import (
	"context"
)

// Measure is a functional connectivity measure (ALGORITHMS.md §1).
type Measure uint8

const (
	Pearson  Measure = iota // r = p_i·p_j with p = (d − mean)/‖d − mean‖₂
	Spearman                // Pearson on average ranks: rank = Less + (1 + Equal)/2
	Kendall                 // τ-b = (z_i·z_j)/sqrt(n_i n_j), z = sign vectors over pairs k < q
)

// Block is a block pair: rows [I0,I1) against columns [J0,J1) with J0 ≥ I0. On a diagonal
// block (I0 == J0) only pairs j > i count.
type Block struct{ I0, I1, J0, J1 int }

// Edge is one surviving connection (I < J) with its value.
type Edge struct {
	I, J uint32
	W    float32
}

// OpKind says what a backend does with the values of a block.
type OpKind uint8

const (
	// OpEdges emits every pair whose value v (or |v| when Abs) satisfies v > Threshold,
	// or v ≥ Threshold when Inclusive.
	OpEdges OpKind = iota
	// OpHistogram counts the values (or |v|) of the block's pairs into Bins equal bins over
	// [Lo, Hi]; values below Lo go to bin 0 and above Hi to the last bin.
	OpHistogram
)

// Op is one pass over blocks.
type Op struct {
	Kind      OpKind
	Abs       bool
	Threshold float64 // OpEdges
	Inclusive bool    // OpEdges: v ≥ Threshold instead of v > Threshold
	Lo, Hi    float64 // OpHistogram
	Bins      int     // OpHistogram
}

// BinOf is the histogram bin of value v, the one formula both passes and all backends use
// so that a value lands in the same bin whoever computes it.
func (op *Op) BinOf(v float32) int {
	x := float64(v)
	b := int((x - op.Lo) / (op.Hi - op.Lo) * float64(op.Bins))
	if b < 0 {
		return 0
	}
	if b >= op.Bins {
		return op.Bins - 1
	}
	return b
}

// BlockResult is what a backend hands back for one block: its edges (OpEdges; any order) or
// its histogram counts (OpHistogram; len Bins). The backend may reuse the slices once the
// sink returns.
type BlockResult struct {
	Block Block
	Edges []Edge
	Hist  []uint64
}

// Backend does the arithmetic of block pairs. The driver in this package plans the blocks and
// assembles results; a backend only prepares the series and processes blocks.
type Backend interface {
	// Name is "cpu" or "cuda"; Device describes the hardware ("2 × Intel Xeon …", "NVIDIA H100 80GB HBM3").
	Name() string
	Device() string
	// Prepare takes the N×L series (row-major, no zero-variance rows) and builds the measure's
	// representation (normalized rows, ranks, sign vectors). x is not retained after return.
	Prepare(ctx context.Context, x []float32, n, l int, m Measure) error
	// BlockRows is the block height the backend wants for the prepared data, sized from its
	// memory budget (device memory for CUDA, cache and a host budget for the CPU).
	BlockRows() int
	// Run processes the blocks with op and calls sink once per block, from one goroutine at a
	// time, in any order. It returns the first error from sink or ctx (checked between blocks).
	Run(ctx context.Context, blocks []Block, op Op, sink func(*BlockResult) error) error
	// Close frees the prepared data and any device resources.
	Close() error
}

// KendallTau is the one formula for τ-b from the exact integer dot product of two sign
// vectors and their non-zero counts, so that every backend produces bit-identical values.
func KendallTau(dot int64, ni, nj int64) float32 {
	if ni == 0 || nj == 0 {
		return 0
	}
	return float32(float64(dot) / sqrtf64(float64(ni)*float64(nj)))
}
