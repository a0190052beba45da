package fc

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// naiveRows is the naive backend with a host RowEmitter: each panel's pairs are computed
// directly and kept as row-ordered keys, and Rows hands them out in ranges of chunk rows, so
// the driver's row path can be compared with its block path on the same values.
type naiveRows struct {
	naive
	chunk int
	// corrupt, when set, alters the keys of the first delivered range (error tests).
	corrupt func(keys []uint64)
	// badLabels: component labels that are not roots (error tests).
	badLabels bool
}

type naiveRowEdges struct {
	deg    []uint32
	held   []Edge
	keys   []uint64
	chunk  int
	spoil  func(keys []uint64)
	closed bool
	// trimmed counts Trim calls (naiveSelect's edges only)
	trimmed *int
	// spoilLabels makes ComponentLabels return labels that are not roots.
	spoilLabels bool
}

func (b *naiveRows) EmitRows(ctx context.Context, blocks []Block, op Op, split float32, done func(int)) (RowEdges, error) {
	r := &naiveRowEdges{deg: make([]uint32, b.n), chunk: b.chunk, spoil: b.corrupt, spoilLabels: b.badLabels}
	for i0 := 0; i0 < b.n; {
		// the panel's blocks: consecutive, same rows
		i1, nb := 0, 0
		for _, blk := range blocks {
			if blk.I0 == i0 {
				i1 = blk.I1
				nb++
			}
		}
		if nb == 0 {
			return nil, fmt.Errorf("no block starts at row %d", i0)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for i := i0; i < i1; i++ {
			for j := i + 1; j < b.n; j++ {
				v := op.Value(b.value(i, j))
				switch {
				case !op.Keep(v):
				case v >= split:
					r.keys = append(r.keys, uint64(j)<<32|uint64(math.Float32bits(v)))
					r.deg[i]++
				default:
					r.held = append(r.held, Edge{uint32(i), uint32(j), v})
				}
			}
		}
		done(nb)
		i0 = i1
	}
	return r, nil
}

// naiveSelect adds RowSelector to naiveRows: the one-pass density mode on the host.
type naiveSelect struct {
	naiveRows
	// emitted counts EmitSelectableRows calls; trimmed the Trim calls.
	emitted, trimmed int
}

func (b *naiveSelect) EmitSelectableRows(ctx context.Context, blocks []Block, op Op, done func(int)) (SelectableRows, error) {
	b.emitted++
	r, err := b.EmitRows(ctx, blocks, op, float32(math.Inf(-1)), done)
	if err != nil {
		return nil, err
	}
	nr := r.(*naiveRowEdges)
	nr.trimmed = &b.trimmed
	return nr, nil
}

func (r *naiveRowEdges) Histogram(op Op) ([]uint64, error) {
	h := make([]uint64, op.Bins)
	for _, k := range r.keys {
		h[op.BinOf(math.Float32frombits(uint32(k)))]++
	}
	return h, nil
}

func (r *naiveRowEdges) Trim(hold, keep float32) error {
	*r.trimmed++
	var keys []uint64
	var held []Edge
	at := 0
	for i, d := range r.deg {
		c := 0
		for _, k := range r.keys[at : at+int(d)] {
			switch v := math.Float32frombits(uint32(k)); {
			case v >= keep:
				keys = append(keys, k)
				c++
			case v >= hold:
				held = append(held, Edge{uint32(i), uint32(k >> 32), v})
			}
		}
		at += int(d)
		r.deg[i] = uint32(c)
	}
	r.keys, r.held = keys, held
	return nil
}

// ComponentLabels: a sequential union–find over the kept keys, roots the smallest node.
func (r *naiveRowEdges) ComponentLabels() ([]uint32, error) {
	p := make([]uint32, len(r.deg))
	for v := range p {
		p[v] = uint32(v)
	}
	find := func(x uint32) uint32 {
		for p[x] != x {
			x = p[x]
		}
		return x
	}
	at := 0
	for i, d := range r.deg {
		for _, k := range r.keys[at : at+int(d)] {
			if a, b := find(uint32(i)), find(uint32(k>>32)); a != b {
				p[max(a, b)] = min(a, b)
			}
		}
		at += int(d)
	}
	for v := range p {
		p[v] = find(uint32(v))
	}
	if r.spoilLabels {
		p[len(p)-1] = uint32(len(p) - 2) // not a root when node n−2 is connected
		p[len(p)-2] = uint32(len(p) - 1)
	}
	return p, nil
}

func (r *naiveRowEdges) Degrees() []uint32 { return r.deg }
func (r *naiveRowEdges) Held() []Edge      { return r.held }
func (r *naiveRowEdges) Close() error      { r.closed = true; return nil }

func (r *naiveRowEdges) Rows(ctx context.Context, f func(i0, i1 int, keys []uint64) error) error {
	at := 0
	for i0 := 0; i0 < len(r.deg); i0 += r.chunk {
		i1 := min(i0+r.chunk, len(r.deg))
		c := 0
		for _, d := range r.deg[i0:i1] {
			c += int(d)
		}
		keys := slices.Clone(r.keys[at : at+c])
		if r.spoil != nil && c > 0 {
			r.spoil(keys)
			r.spoil = nil
		}
		if err := f(i0, i1, keys); err != nil {
			return err
		}
		at += c
	}
	return nil
}

// TestRowPathMatchesBlockPath builds the same networks through RowEmitter and through the
// block assembler: strength and exact density (boundary bin with held values merged into
// the rows), with and without Abs, every measure, tie-heavy Kendall data, and ranges that
// split rows among the unpack workers or cover one row. Networks must be identical bit for bit.
func TestRowPathMatchesBlockPath(t *testing.T) {
	n, l := 97, 12
	x := randomSeries(n, l, 5)
	cfgs := []Config{
		{Measure: Pearson, Mode: Strength, Threshold: 0.3},
		{Measure: Pearson, Mode: Strength, Threshold: 0.3, Abs: true},
		{Measure: Spearman, Mode: Density, Density: 0.05},
		{Measure: Pearson, Mode: Density, Density: 0.2, Abs: true, Bins: 16},
		{Measure: Kendall, Mode: Density, Density: 0.1, Bins: 8},
		{Measure: Pearson, Mode: Density, Density: 1},
		{Measure: Pearson, Mode: Strength, Threshold: 2},
	}
	for _, cfg := range cfgs {
		for _, chunk := range []int{1, 13, n} {
			t.Run(fmt.Sprintf("%s-%s-abs%v-chunk%d", cfg.Measure, cfg.Mode, cfg.Abs, chunk), func(t *testing.T) {
				want, wrpt, err := Build(context.Background(), &naive{}, x, n, l, cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				be := &naiveRows{chunk: chunk}
				got, rpt, err := Build(context.Background(), be, x, n, l, cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				stages := ""
				for _, p := range rpt.Passes {
					stages += p.Stage + " "
				}
				if !strings.Contains(stages, "assemble") {
					t.Fatalf("the row path was not taken (stages %s)", stages)
				}
				if !slices.Equal(got.Indptr, want.Indptr) || !slices.Equal(got.Indices, want.Indices) ||
					!slices.Equal(got.Weights, want.Weights) {
					t.Fatalf("row path: %d edges, block path: %d edges, networks differ", got.Edges(), want.Edges())
				}
				// components from the backend's labels plus the held selection
				if rpt.Isolated != wrpt.Isolated || rpt.LargestComponent != wrpt.LargestComponent {
					t.Fatalf("row path: %d isolated, largest component %d; block path %d, %d",
						rpt.Isolated, rpt.LargestComponent, wrpt.Isolated, wrpt.LargestComponent)
				}
			})
		}
	}
}

// TestRowPathRejectsBadRows: a row delivered out of column order, with a column beyond N or
// with j ≤ i must fail the build, never produce a network.
func TestRowPathRejectsBadRows(t *testing.T) {
	n, l := 40, 10
	x := randomSeries(n, l, 6)
	for name, spoil := range map[string]func([]uint64){
		"swapped":  func(k []uint64) { k[0], k[1] = k[1], k[0] },
		"beyond-n": func(k []uint64) { k[0] = uint64(n+3)<<32 | k[0]&math.MaxUint32 },
		"below-i":  func(k []uint64) { k[0] = k[0] & math.MaxUint32 },
	} {
		be := &naiveRows{chunk: n, corrupt: spoil}
		_, _, err := Build(context.Background(), be, x, n, l, Config{Measure: Pearson, Mode: Strength, Threshold: -0.5}, nil)
		if err == nil || !strings.Contains(err.Error(), "row") {
			t.Errorf("%s: got %v, want an error naming the row", name, err)
		}
	}
}

// TestDensityOnePass: a RowSelector's one-pass density (keep every pair ≥ the sampled bound,
// histogram and trim the kept edges) must give the network of the full-range histogram
// method bit for bit — with and without Abs, every measure, coarse bins (a crowded boundary
// bin) — and must fall back to the histogram passes, with the same result, when the sampled
// bound is above the k-th largest value.
func TestDensityOnePass(t *testing.T) {
	n, l := 110, 16
	x := randomSeries(n, l, 9)
	cfgs := []Config{
		{Measure: Pearson, Mode: Density, Density: 0.05},
		{Measure: Pearson, Mode: Density, Density: 0.2, Abs: true, Bins: 16},
		{Measure: Spearman, Mode: Density, Density: 0.01, Bins: 1 << 12},
		{Measure: Kendall, Mode: Density, Density: 0.1, Bins: 8},
	}
	for _, cfg := range cfgs {
		for _, force := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s-abs%v-bins%d-force%v", cfg.Measure, cfg.Abs, cfg.Bins, force), func(t *testing.T) {
				ref := cfg
				ref.DensityMethod = DensityHistogram
				want, _, err := Build(context.Background(), &naive{}, x, n, l, ref, nil)
				if err != nil {
					t.Fatal(err)
				}
				if force {
					sampleOverride = func(sampleBounds) sampleBounds { return sampleBounds{tight: 0.95, wide: 0.95, wideOK: true} }
					defer func() { sampleOverride = nil }()
				}
				be := &naiveSelect{naiveRows: naiveRows{chunk: 7}}
				got, rpt, err := Build(context.Background(), be, x, n, l, cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				if be.emitted != 1 {
					t.Fatalf("one-pass emission ran %d times, want 1", be.emitted)
				}
				stages := ""
				for _, p := range rpt.Passes {
					stages += p.Stage + " "
				}
				if force == strings.Contains(stages, "trim") || !strings.Contains(stages, "histogram") {
					t.Fatalf("force=%v, stages %s", force, stages)
				}
				if !force && be.trimmed != 1 {
					t.Fatalf("Trim ran %d times", be.trimmed)
				}
				if !slices.Equal(got.Indptr, want.Indptr) || !slices.Equal(got.Indices, want.Indices) ||
					!slices.Equal(got.Weights, want.Weights) {
					t.Fatalf("one pass: %d edges, histogram method: %d edges, networks differ", got.Edges(), want.Edges())
				}
				if rpt.Threshold == 0 || math.IsInf(rpt.Threshold, 0) {
					t.Fatalf("threshold %g", rpt.Threshold)
				}
			})
		}
	}
}

// TestDensityOnePassChecksBackend: a selector whose histogram disagrees with its kept edges
// must fail the build with an error, not select from a wrong count.
func TestDensityOnePassChecksBackend(t *testing.T) {
	n, l := 60, 12
	x := randomSeries(n, l, 10)
	be := &badSelect{naiveSelect{naiveRows: naiveRows{chunk: n}}}
	_, _, err := Build(context.Background(), be, x, n, l, Config{Measure: Pearson, Mode: Density, Density: 0.1}, nil)
	if err == nil || !strings.Contains(err.Error(), "histogram") {
		t.Fatalf("got %v, want an error about the histogram", err)
	}
}

type badSelect struct{ naiveSelect }

type badHistRows struct{ *naiveRowEdges }

func (r badHistRows) Histogram(op Op) ([]uint64, error) {
	h, err := r.naiveRowEdges.Histogram(op)
	h[len(h)-1]++
	return h, err
}

func (b *badSelect) EmitSelectableRows(ctx context.Context, blocks []Block, op Op, done func(int)) (SelectableRows, error) {
	r, err := b.naiveSelect.EmitSelectableRows(ctx, blocks, op, done)
	if err != nil {
		return nil, err
	}
	return badHistRows{r.(*naiveRowEdges)}, nil
}

// TestComponentLabels: a backend's component labels plus extra edges must give Components'
// figures on networks with isolated nodes and several components; labels that are not
// roots must fail the build.
func TestComponentLabels(t *testing.T) {
	n, l := 80, 10
	x := randomSeries(n, l, 12)
	for _, thr := range []float64{0.5, 0.7, 0.9} {
		for _, cfg := range []Config{
			{Measure: Pearson, Mode: Strength, Threshold: thr},
			{Measure: Pearson, Mode: Density, Density: (1 - thr) / 10, Bins: 4},
		} {
			_, want, err := Build(context.Background(), &naive{}, x, n, l, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, got, err := Build(context.Background(), &naiveRows{chunk: 9}, x, n, l, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Isolated != want.Isolated || got.LargestComponent != want.LargestComponent {
				t.Fatalf("%+v: labels give %d isolated, largest %d; Components %d, %d", cfg, got.Isolated, got.LargestComponent, want.Isolated, want.LargestComponent)
			}
			if want.Isolated == 0 && thr == 0.9 {
				t.Fatalf("%+v: no isolated node, the test does not reach them", cfg)
			}
		}
	}
	_, _, err := Build(context.Background(), &naiveRows{chunk: n, badLabels: true}, x, n, l, Config{Measure: Pearson, Mode: Strength, Threshold: -1}, nil)
	if err == nil || !strings.Contains(err.Error(), "not a root") {
		t.Fatalf("got %v, want an error about labels that are not roots", err)
	}
}
