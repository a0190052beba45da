// Package fc computes functional connectivity networks block by block: the measures (Pearson,
// Spearman, Kendall τ-b), the block driver that visits only upper-triangle block pairs, the
// threshold modes (strength, exact density, significance, k nearest neighbours) and the
// incremental assembly of the sparse network. Backends (CPU, CUDA) do the arithmetic of one
// block pair; everything they must agree on is defined here and checked by one conformance
// suite (package fc/fctest) that every backend passes against a float64 reference.
//
// What a backend must do besides the Backend interface's methods:
//   - OpTopK (with Op.K) returns each row's and each column's K strongest values of a block,
//     for the k-nearest-neighbour mode, in BlockResult.Edges (the union of the winners).
//   - Edge.W is the op's value: v, or |v| when Op.Abs (so an |r| network stores |r|).
//   - Prepare returns an error (it does not panic) for zero-variance or non-finite rows;
//     fc.CheckSeries does that check for any backend.
//   - Op.Keep, Op.Value and Op.Threshold32 state the comparison exactly, so a backend can
//     compare in float32 and still agree with the float64 definition bit for bit.
//   - The optional interface BlockRowsSetter lets tests force small blocks; Config.BlockRows
//     in the driver does the same without the backend's help.
//   - The optional interface RowEmitter (rows.go): a backend that puts an edge pass's kept
//     edges in CSR order itself hands over row degrees, held edges and rows; the driver copies
//     the rows into place (strength and exact density). ErrRowsUnsupported sends it to the
//     block path.
//   - The optional interface Noter lets a backend say what it did differently from the plan
//     (a block processed in halves because device memory ran out): Build passes the run's
//     note function, and the line reaches the report's notes and the progress reporter.
//   - The optional interface SeriesChecker says that Prepare checks the rows itself, so Build
//     does not scan them on the host first.
package fc

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Measure is a functional connectivity measure (docs/algorithms.md, "Connectivity measures").
type Measure uint8

const (
	Pearson  Measure = iota // r = p_i·p_j with p = (d − mean)/‖d − mean‖₂
	Spearman                // Pearson on average ranks: rank = Less + (1 + Equal)/2
	Kendall                 // τ-b = (z_i·z_j)/sqrt(n_i n_j), z = sign vectors over pairs k < q
)

func (m Measure) String() string {
	switch m {
	case Pearson:
		return "pearson"
	case Spearman:
		return "spearman"
	case Kendall:
		return "kendall"
	}
	return "measure(" + itoa(int(m)) + ")"
}

// Block is a block pair: rows [I0,I1) against columns [J0,J1) with J0 ≥ I0. On a diagonal
// block (I0 == J0) only pairs j > i count.
type Block struct{ I0, I1, J0, J1 int }

// Pairs is the number of node pairs (i, j), i < j, that the block covers.
func (b Block) Pairs() int64 {
	h, w := int64(b.I1-b.I0), int64(b.J1-b.J0)
	if b.I0 == b.J0 {
		return h * (h - 1) / 2
	}
	return h * w
}

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
	// [Lo, Hi]; values below Lo go to bin 0 and above Hi to the last bin (Op.BinOf).
	OpHistogram
	// OpTopK emits, for every row i of the block, its K best pairs (i, j) among the block's
	// columns, and for every column j its K best pairs (i, j) among the block's rows (on a
	// diagonal block only pairs j > i exist). "Best" is the larger value (|v| when Abs), ties
	// going to the smaller partner index. Edges holds the union, each pair once.
	OpTopK
)

// Op is one pass over blocks.
type Op struct {
	Kind      OpKind
	Abs       bool
	Threshold float64 // OpEdges
	Inclusive bool    // OpEdges: v ≥ Threshold instead of v > Threshold
	Lo, Hi    float64 // OpHistogram
	Bins      int     // OpHistogram
	K         int     // OpTopK
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

// BinLower is the lower edge of bin b, Lo + b·(Hi−Lo)/Bins. A value v ≥ BinLower(b) may still
// land in bin b−1 through rounding, so callers that need "bin ≥ b" compare bins, not values.
func (op *Op) BinLower(b int) float64 {
	return op.Lo + float64(b)*(op.Hi-op.Lo)/float64(op.Bins)
}

// Value is what the op compares and stores for a pair value v: v, or |v| when Abs.
func (op *Op) Value(v float32) float32 {
	if op.Abs && v < 0 {
		return -v
	}
	return v
}

// Keep reports whether OpEdges keeps value v (after Value): v > Threshold, or ≥ when Inclusive,
// compared in float64.
func (op *Op) Keep(v float32) bool {
	if op.Inclusive {
		return float64(v) >= op.Threshold
	}
	return float64(v) > op.Threshold
}

// Threshold32 is the smallest float32 t with Keep(t): for every float32 v, Keep(v) ⇔ v ≥ t.
// Backends compare in float32 against it and agree exactly with the float64 definition.
// It is +Inf when no finite value is kept.
func (op *Op) Threshold32() float32 {
	t := op.Threshold
	if math.IsNaN(t) {
		return float32(math.Inf(1))
	}
	if math.IsInf(t, -1) {
		return float32(math.Inf(-1))
	}
	if t > math.MaxFloat32 {
		return float32(math.Inf(1))
	}
	if t < -math.MaxFloat32 {
		return -math.MaxFloat32
	}
	f := float32(t) // nearest; step to the right side of t
	if float64(f) < t {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	if float64(f) > t {
		if g := math.Nextafter32(f, float32(math.Inf(-1))); float64(g) >= t {
			f = g
		}
	}
	if !op.Inclusive && float64(f) == t {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// BlockResult is what a backend hands back for one block: its edges (OpEdges, OpTopK; any
// order) or its histogram counts (OpHistogram; len Bins). The backend may reuse the slices
// once the sink returns.
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
	// Prepare takes the N×L series (row-major) and builds the measure's representation
	// (normalized rows, ranks, sign vectors). x is not retained after return. Rows with zero
	// variance or non-finite values are an error (see CheckSeries), never a panic.
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

// BlockRowsSetter is implemented by backends whose block height can be forced (tests force
// small blocks to exercise block boundaries).
type BlockRowsSetter interface{ SetBlockRows(int) }

// Noter is implemented by backends that report a change of plan in a line of their own
// (issue 17: out of device memory mid-run, a block is processed in smaller pieces "with a
// line saying so"). Build sets the function before Prepare and clears it (nil) on return;
// the backend calls it from the goroutine that runs the sink, or while Build waits for it.
type Noter interface{ SetNote(func(msg string)) }

// SeriesChecker is implemented by backends whose Prepare rejects every row CheckSeries would
// (with an error that wraps the same *SeriesError, or names the subject's row of a group),
// so Build checks only the matrix's shape on the host. The CUDA backend checks the uploaded
// copy on the device: a host pass over W8's 9.2 GB of series was ~0.3 s of a 2.8 s build.
type SeriesChecker interface{ ChecksSeries() bool }

// KendallTau is the one formula for τ-b from the exact integer dot product of two sign
// vectors and their non-zero counts, so that every backend produces bit-identical values.
func KendallTau(dot int64, ni, nj int64) float32 {
	if ni == 0 || nj == 0 {
		return 0
	}
	return float32(float64(dot) / sqrtf64(float64(ni)*float64(nj)))
}

// Validate reports an Op a backend cannot run: an unknown kind, a NaN edge threshold, an
// empty or inverted histogram range, K < 1. Backends call it first in Run.
func (op *Op) Validate() error {
	switch op.Kind {
	case OpEdges:
		if math.IsNaN(op.Threshold) {
			return errors.New("edge threshold is NaN")
		}
	case OpHistogram:
		if op.Bins < 1 || !(op.Hi > op.Lo) {
			return fmt.Errorf("histogram needs Bins ≥ 1 and Hi > Lo, got %d bins over [%g, %g]", op.Bins, op.Lo, op.Hi)
		}
	case OpTopK:
		if op.K < 1 {
			return fmt.Errorf("top-K needs K ≥ 1, got %d", op.K)
		}
	default:
		return fmt.Errorf("unknown op kind %d", op.Kind)
	}
	return nil
}

// Check reports a block that is not an upper-triangle block pair of n nodes as PlanBlocks
// makes them: rows and columns inside [0, n), a diagonal block square, an off-diagonal block
// entirely right of its rows.
func (b Block) Check(n int) error {
	if b.I0 < 0 || b.I1 > n || b.J1 > n || b.I0 >= b.I1 || b.J0 >= b.J1 || b.J0 < b.I0 ||
		(b.J0 == b.I0 && b.J1 != b.I1) || (b.J0 > b.I0 && b.J0 < b.I1) {
		return fmt.Errorf("block rows [%d,%d) × columns [%d,%d) is not an upper-triangle block pair of %d nodes", b.I0, b.I1, b.J0, b.J1, n)
	}
	return nil
}
