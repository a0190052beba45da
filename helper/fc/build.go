package fc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/progress"
)

// Mode is how the driver turns connectivity values into edges (docs/algorithms.md, "Thresholds").
type Mode uint8

const (
	// Strength keeps r > Threshold (|r| > Threshold with Abs).
	Strength Mode = iota
	// Density keeps exactly round(Density·N(N−1)/2) strongest pairs; equal values are broken
	// by (i, j), the lexicographically smaller pair winning.
	Density
	// Significance keeps the pairs whose two-sided p passes Alpha after Bonferroni or
	// Benjamini–Hochberg correction over the N(N−1)/2 tests.
	Significance
	// NearestNeighbours keeps, for every node, its K strongest links (union over nodes), so no
	// node is isolated. Strongest is the largest value (|v| with Abs); equal values go to the
	// smaller neighbour index.
	NearestNeighbours
)

func (m Mode) String() string {
	switch m {
	case Strength:
		return "strength"
	case Density:
		return "density"
	case Significance:
		return "significance"
	case NearestNeighbours:
		return "knn"
	}
	return "mode(" + itoa(int(m)) + ")"
}

// Correction is the multiple-comparison correction of the significance mode.
type Correction uint8

const (
	Bonferroni Correction = iota // p ≤ α/m
	FDR                          // Benjamini–Hochberg: p_(k) ≤ k·α/m, largest such k
)

func (c Correction) String() string {
	if c == FDR {
		return "fdr-bh"
	}
	return "bonferroni"
}

// DefaultBins is the histogram resolution of the density and FDR modes: 2²⁰ ≥ 10⁶ bins
// (Zhao et al. use 10⁶; the exact selection makes the resolution a speed knob only).
const DefaultBins = 1 << 20

// Config says which network to build.
type Config struct {
	Measure Measure
	// Abs makes |v| the connection value: thresholds compare |v| and weights store |v|.
	// Without Abs negative values never pass a positive threshold.
	Abs  bool
	Mode Mode

	Threshold  float64    // Strength: r (or |r|, τ) threshold
	Density    float64    // Density: fraction of the N(N−1)/2 pairs, in [0, 1]
	Alpha      float64    // Significance: family-wise (Bonferroni) or false-discovery (FDR) level
	Correction Correction // Significance
	K          int        // NearestNeighbours: links per node (capped at N−1)

	// BlockRows overrides the backend's block height (0: Backend.BlockRows()).
	BlockRows int
	// Bins is the histogram resolution of Density and FDR (0: DefaultBins).
	Bins int
	// DensityMethod chooses among the density mode's exact algorithms (all give the same
	// network; they differ in passes and memory).
	DensityMethod DensityMethod
}

// DensityMethod is how the density mode finds its exact k strongest pairs.
type DensityMethod uint8

const (
	// DensityAuto uses DensitySinglePass on the CPU backend when its candidate buffer is
	// expected to fit SinglePassBudget, else DensityTwoPass. The single pass saves one block
	// product pass, which dominates on the CPU; on a GPU a pass costs milliseconds while the
	// single pass's host-side selection of k among ~2k candidates costs far more (W1 on an
	// H200: 1.6 s single pass), so other backends take two passes — except a RowSelector
	// (the CUDA backend), which keeps the pairs above the sampled bound on the device and
	// selects among them there: one pass (densityOnePass), falling back to two passes.
	DensityAuto DensityMethod = iota
	// DensityTwoPass: a value range [lo, 1] estimated from a sample of pairs, a histogram
	// pass over it (falling back to the full range if lo was too high), an emit pass.
	DensityTwoPass
	// DensityHistogram is Zhao et al.'s algorithm made exact: histogram pass over the whole
	// range [−1, 1] ([0, 1] with Abs), then the emit pass.
	DensityHistogram
	// DensitySinglePass emits every value ≥ a sampled lower bound in one pass and selects the
	// k strongest on the host; if fewer than k values pass the bound it falls back to
	// DensityHistogram.
	DensitySinglePass
)

// SinglePassBudget bounds the expected candidate buffer of DensityAuto's single pass (bytes).
const SinglePassBudget = 1 << 30

// PassTiming is one pass over the blocks (or a host step) and its wall time.
type PassTiming struct {
	Stage   string
	Blocks  int
	Seconds float64
}

// Report describes the network that Build produced (docs/algorithms.md, "Thresholds": every run reports it).
type Report struct {
	Backend, Device string
	Measure         Measure
	Mode            Mode
	Correction      Correction // Significance only
	Abs             bool
	N, L            int
	// Threshold is the value cut actually used: the Strength threshold, the value of the
	// weakest kept pair (Density, FDR, NearestNeighbours) or the r/τ equivalent of α/m
	// (Bonferroni). ThresholdInclusive says whether pairs equal to it are kept.
	Threshold          float64
	ThresholdInclusive bool
	Edges              int64
	Density            float64
	Isolated           int // nodes with no edge
	LargestComponent   int // nodes in the largest connected component
	BlockRows          int
	Passes             []PassTiming
	Notes              []string
}

func (c *Config) validate(n int) error {
	if c.Measure > Kendall {
		return fmt.Errorf("fc: unknown measure %d", c.Measure)
	}
	if c.BlockRows < 0 || c.Bins < 0 {
		return fmt.Errorf("fc: negative block height %d or bin count %d", c.BlockRows, c.Bins)
	}
	switch c.Mode {
	case Strength:
		if math.IsNaN(c.Threshold) {
			return fmt.Errorf("fc: strength threshold is NaN")
		}
	case Density:
		if !(c.Density >= 0 && c.Density <= 1) {
			return fmt.Errorf("fc: density %g outside [0, 1]", c.Density)
		}
	case Significance:
		if !(c.Alpha > 0 && c.Alpha < 1) {
			return fmt.Errorf("fc: significance level α = %g outside (0, 1)", c.Alpha)
		}
		if c.Correction > FDR {
			return fmt.Errorf("fc: unknown correction %d", c.Correction)
		}
	case NearestNeighbours:
		if c.K < 1 {
			return fmt.Errorf("fc: k nearest neighbours needs K ≥ 1, got %d", c.K)
		}
	default:
		return fmt.Errorf("fc: unknown threshold mode %d", c.Mode)
	}
	return nil
}

// PlanBlocks partitions N nodes into row panels of height rows and lists the upper-triangle
// block pairs (I, J ≥ I), panel by panel.
func PlanBlocks(n, rows int) []Block {
	var bs []Block
	for i0 := 0; i0 < n; i0 += rows {
		i1 := min(i0+rows, n)
		for j0 := i0; j0 < n; j0 += rows {
			bs = append(bs, Block{I0: i0, I1: i1, J0: j0, J1: min(j0+rows, n)})
		}
	}
	return bs
}

// Build computes the functional network of the N×L series x (row-major) on backend b:
// prepare, one or two passes over the upper-triangle blocks, exact thresholding, CSR assembly.
// The caller owns b and closes it. Rows must be finite and non-constant (CheckSeries; checked
// here, or by Prepare for a SeriesChecker).
func Build(ctx context.Context, b Backend, x []float32, n, l int, cfg Config, rep progress.Reporter) (*network.Network, *Report, error) {
	rep = progress.OrDiscard(rep)
	if err := cfg.validate(n); err != nil {
		return nil, nil, err
	}
	check := CheckSeries
	if sc, ok := b.(SeriesChecker); ok && sc.ChecksSeries() {
		check = checkShape // Prepare checks the rows
	}
	if err := check(x, n, l); err != nil {
		return nil, nil, err
	}
	d := &driver{ctx: ctx, x: x, b: b, n: n, l: l, cfg: cfg, rep: rep,
		rpt: &Report{Backend: b.Name(), Device: b.Device(), Measure: cfg.Measure, Mode: cfg.Mode,
			Correction: cfg.Correction, Abs: cfg.Abs, N: n, L: l}}
	if nb, ok := b.(Noter); ok {
		nb.SetNote(d.note)
		defer nb.SetNote(nil)
	}
	// The density mode's sample needs only x: it runs on the host while the backend prepares
	// (on a GPU, upload and normalisation), and density() waits for it.
	if k, m := d.densityK(); cfg.Mode == Density && cfg.DensityMethod != DensityHistogram && k > 0 && k < m {
		ch := make(chan sampleResult, 1)
		d.sampled = ch
		go func() {
			sb, ok := d.sampleBounds(k, m)
			ch <- sampleResult{sb, ok}
		}()
		// On an early return the caller may reuse x at once: wait for the sample's reads.
		defer func() {
			if d.sampled != nil {
				<-d.sampled
			}
		}()
	}
	t0 := time.Now()
	rep.Start("prepare", 0)
	if err := b.Prepare(ctx, x, n, l, cfg.Measure); err != nil {
		if se := (*SeriesError)(nil); errors.As(err, &se) {
			return nil, nil, err // bad rows say so themselves, as the host check's error does
		}
		return nil, nil, fmt.Errorf("fc: preparing %s series on %s: %w", cfg.Measure, b.Name(), err)
	}
	d.timing("prepare", 0, t0)
	d.rows = cfg.BlockRows
	if d.rows == 0 {
		d.rows = b.BlockRows()
	}
	if d.rows < 1 {
		return nil, nil, fmt.Errorf("fc: backend %s asks for block height %d", b.Name(), d.rows)
	}
	d.rows = min(d.rows, n)
	d.rpt.BlockRows = d.rows
	d.blocks = PlanBlocks(n, d.rows)

	var nw *network.Network
	var err error
	switch cfg.Mode {
	case Strength:
		nw, err = d.strength()
	case Density:
		nw, err = d.density()
	case Significance:
		if cfg.Correction == FDR {
			nw, err = d.fdr()
		} else {
			nw, err = d.bonferroni()
		}
	case NearestNeighbours:
		nw, err = d.knn()
	}
	if err != nil {
		return nil, nil, err
	}
	t1 := time.Now()
	d.rpt.Edges = nw.Edges()
	d.rpt.Density = nw.Density()
	if !d.componentsDone { // else the backend labelled them (RowComponents)
		d.rpt.Isolated, d.rpt.LargestComponent = Components(nw)
		d.timing("components", 0, t1)
	}
	if !cfg.Abs && (cfg.Mode == Significance || cfg.Mode == Density) {
		d.note("negative correlations are not kept as links; ask for absolute values (--abs) to rank pairs by |r| instead")
	}
	return nw, d.rpt, nil
}

type driver struct {
	ctx    context.Context
	x      []float32
	b      Backend
	n, l   int
	cfg    Config
	rep    progress.Reporter
	rpt    *Report
	rows   int
	blocks []Block
	// sampled delivers the density sample started beside Prepare (nil: none started).
	sampled chan sampleResult
	// componentsDone: the report's Isolated and LargestComponent came from the backend's
	// component labels (finishRows).
	componentsDone bool
	// pre: the density mode's network arrays, touched while the device works (prefault).
	pre *csrArrays
}

func (d *driver) timing(stage string, blocks int, since time.Time) {
	d.rpt.Passes = append(d.rpt.Passes, PassTiming{Stage: stage, Blocks: blocks, Seconds: time.Since(since).Seconds()})
}

func (d *driver) note(msg string) {
	d.rpt.Notes = append(d.rpt.Notes, msg)
	d.rep.Note(msg)
}

// pass runs op over every block, reporting progress per block.
func (d *driver) pass(stage string, op Op, sink func(*BlockResult) error) error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	t0 := time.Now()
	d.rep.Start(stage, int64(len(d.blocks)))
	err := d.b.Run(d.ctx, d.blocks, op, func(r *BlockResult) error {
		if err := sink(r); err != nil {
			return err
		}
		d.rep.Add(1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("fc: %s pass on %s: %w", stage, d.b.Name(), err)
	}
	d.timing(stage, len(d.blocks), t0)
	return nil
}

// emitAll is emit with every edge of the pass given class c (keep or hold), which spares
// the assembler a classification call per edge.
func (d *driver) emitAll(op Op, c edgeClass) (*assembler, error) {
	return d.assemble(op, newAssemblerAll(d.n, d.rows, c))
}

// emitBins is emit with the density mode's rule: keep bin > b, hold bin b, drop the rest.
func (d *driver) emitBins(op Op, hop *Op, b int) (*assembler, error) {
	return d.assemble(op, newAssemblerBins(d.n, d.rows, hop, b))
}

// assemble runs the edge pass into a and waits for a's workers, also when the pass failed.
func (d *driver) assemble(op Op, a *assembler) (*assembler, error) {
	err := d.pass("edges", op, a.add)
	if werr := a.wait(); err == nil && werr != nil {
		err = fmt.Errorf("fc: edges pass on %s: %w", d.b.Name(), werr)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

func (d *driver) strength() (*network.Network, error) {
	op := Op{Kind: OpEdges, Abs: d.cfg.Abs, Threshold: d.cfg.Threshold}
	if rows, err := d.emitRows(op, float32(math.Inf(-1))); err != nil {
		return nil, err
	} else if rows != nil {
		d.rpt.Threshold = d.cfg.Threshold
		return d.finishRows(rows, nil, nil)
	}
	a, err := d.emitAll(op, keep)
	if err != nil {
		return nil, err
	}
	d.rpt.Threshold = d.cfg.Threshold
	return a.finish(nil)
}
