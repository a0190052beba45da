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
}

type naiveRowEdges struct {
	deg    []uint32
	held   []Edge
	keys   []uint64
	chunk  int
	spoil  func(keys []uint64)
	closed bool
}

func (b *naiveRows) EmitRows(ctx context.Context, blocks []Block, op Op, split float32, done func(int)) (RowEdges, error) {
	r := &naiveRowEdges{deg: make([]uint32, b.n), chunk: b.chunk, spoil: b.corrupt}
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
				want, _, err := Build(context.Background(), &naive{}, x, n, l, cfg, nil)
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
