//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/group"
	"github.com/hubscope/hubscope/helper/group/grouptest"
)

// groupUnits are the group mean's product units as Options select them (group_tile.cuh),
// and the other 3×FP16 units by number (force). same: the unit's values must equal the
// default's bit for bit (the same products and fold, other tiles or operand layouts).
var groupUnits = []struct {
	name  string
	opts  Options
	force int
	same  bool
}{
	{"simt", Options{GroupProduct: GroupSIMT}, 0, false},
	{"tf32x3", Options{TF32x3: true}, 0, false},
	{"f16x3", Options{}, 0, true},
	{"f16x3-plain", Options{GroupProduct: GroupTensorCoresPlain}, 0, true},
	{"f16x3-atanhf", Options{GroupProduct: GroupTensorCoresAtanh}, 0, false},
	{"f16x3-128", Options{GroupProduct: GroupTensorCores128}, 0, true},
	{"f16x3-128-plain", Options{}, groupUnitF16x3, true},
	{"f16x3-wide-fold", Options{}, groupUnitWide, true},
}

// forceGroupUnit makes be use unit (groupUnitForce), or skips the test where the device does
// not give the unit's kernels their shared memory.
func forceGroupUnit(t testing.TB, be fc.Backend, unit int) {
	if unit == 0 {
		return
	}
	b := be.(*backend)
	if need, ok := groupWideShared[unit]; ok && need > b.sharedOptin {
		t.Skipf("unit %d needs %d bytes of shared memory, the device gives %d", unit, need, b.sharedOptin)
	}
	b.groupUnitForce = unit
}

// TestGroupFisherZ checks every pair's group-mean value (an edge pass keeping all pairs)
// against the float64 reference, on every product unit, with blocks that split tiles and
// a node count that is no multiple of the tile. The 200-row blocks start at rows 0 and 400
// (the default unit reads its fragment-ordered planes) and 200 and 600 (it reads the plain
// planes). Every 3×FP16 unit with the lg2 fold must give the default's values bit for bit,
// whatever its tile, stages or operand layout.
func TestGroupFisherZ(t *testing.T) {
	const n, s, l = 613, 5, 37
	ctx := context.Background()
	for _, m := range []fc.Measure{fc.Pearson, fc.Spearman} {
		x := grouptest.Series(n, s, l, 3, m == fc.Spearman)
		ref := grouptest.Reference(x, n, s, l, m, group.ZClamp)
		values := map[string][]float32{}
		for _, u := range groupUnits {
			t.Run(fmt.Sprintf("%v/%s", m, u.name), func(t *testing.T) {
				o := u.opts
				o.Subjects = s
				be := newTestBackend(t, o)
				forceGroupUnit(t, be, u.force)
				if err := be.Prepare(ctx, x, n, s*l, m); err != nil {
					t.Fatal(err)
				}
				be.(fc.BlockRowsSetter).SetBlockRows(200)
				seen := make([]bool, n*n)
				w := make([]float32, n*n)
				values[u.name] = w
				var worst float64
				err := be.Run(ctx, fc.PlanBlocks(n, 200), fc.Op{Kind: fc.OpEdges, Threshold: -2}, func(r *fc.BlockResult) error {
					for _, e := range r.Edges {
						k := int(e.I)*n + int(e.J)
						if e.J <= e.I || seen[k] {
							return fmt.Errorf("pair (%d,%d) out of order or twice", e.I, e.J)
						}
						seen[k] = true
						w[k] = e.W
						worst = math.Max(worst, math.Abs(float64(e.W)-ref[k]))
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < n; i++ {
					for j := i + 1; j < n; j++ {
						if !seen[i*n+j] {
							t.Fatalf("pair (%d,%d) missing", i, j)
						}
					}
				}
				t.Logf("max |r̄ − float64 reference| = %.3g", worst)
				if worst > 2e-6 {
					t.Errorf("max deviation %.3g from the float64 reference", worst)
				}
			})
		}
		for _, u := range groupUnits {
			a, b := values["f16x3"], values[u.name]
			if !u.same || a == nil || b == nil {
				continue
			}
			differ := 0
			for k := range a {
				if math.Float32bits(a[k]) != math.Float32bits(b[k]) {
					differ++
				}
			}
			if differ > 0 {
				t.Errorf("%v: %d pairs differ between the default unit and %s", m, differ, u.name)
			}
		}
	}
}

// TestGroupPlanesFallBack: short of device memory for the fragment-ordered copies the group
// mean reads the plain fp16 planes, and without room for those it takes the fp32 SIMT
// product; a note says so each time and the values stay within 2e-6 of the reference.
func TestGroupPlanesFallBack(t *testing.T) {
	const n, s, l = 300, 3, 40
	ctx := context.Background()
	x := grouptest.Series(n, s, l, 7, false)
	ref := grouptest.Reference(x, n, s, l, fc.Pearson, group.ZClamp)
	plane := (roundUp(n, sgemmTile) + groupWideRows) * s * roundUp(l, 16) * 2 // bytes of one plane
	probe := newTestBackend(t, Options{Subjects: s})
	frag := probe.(*backend).chooseGroupUnit() // the default unit on this device
	probe.Close()
	for _, c := range []struct{ limit, unit int }{{0, frag}, {2 * plane, groupPlain(frag)}, {plane, 0}} {
		t.Run(fmt.Sprintf("limit%d", c.limit), func(t *testing.T) {
			be := newTestBackend(t, Options{Subjects: s})
			var notes []string
			be.(fc.Noter).SetNote(func(m string) { notes = append(notes, m) })
			be.(*backend).groupPlaneLimit = c.limit
			if err := be.Prepare(ctx, x, n, s*l, fc.Pearson); err != nil {
				t.Fatal(err)
			}
			if got := be.(*backend).groupUnit; got != c.unit {
				t.Fatalf("unit %d, want %d", got, c.unit)
			}
			if (c.unit != frag) != (len(notes) == 1) {
				t.Errorf("notes %q", notes)
			}
			var worst float64
			pairs := 0
			err := be.Run(ctx, fc.PlanBlocks(n, be.BlockRows()), fc.Op{Kind: fc.OpEdges, Threshold: -2}, func(r *fc.BlockResult) error {
				for _, e := range r.Edges {
					pairs++
					worst = math.Max(worst, math.Abs(float64(e.W)-ref[int(e.I)*n+int(e.J)]))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("notes %q; %d pairs, max |r̄ − float64 reference| = %.3g", notes, pairs, worst)
			if pairs != n*(n-1)/2 || worst > 2e-6 {
				t.Errorf("%d pairs (want %d), max deviation %.3g", pairs, n*(n-1)/2, worst)
			}
		})
	}
}

// TestGroupMatchesCPU builds the group-mean network with the CUDA backend and with
// helper/group's CPU backend through fc.Build in every threshold mode: the same edges
// (pairs within 1e-5 of the cut may go either way) and weights within 2e-6.
func TestGroupMatchesCPU(t *testing.T) {
	const n, s, l = 700, 4, 50
	ctx := context.Background()
	x := grouptest.Series(n, s, l, 5, false)
	ref := grouptest.Reference(x, n, s, l, fc.Pearson, group.ZClamp)
	for _, cfg := range []fc.Config{
		{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.3},
		{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.25, Abs: true, BlockRows: 256},
		{Measure: fc.Pearson, Mode: fc.Density, Density: 0.02},
		{Measure: fc.Pearson, Mode: fc.Density, Density: 0.05, BlockRows: 384},
		{Measure: fc.Spearman, Mode: fc.Density, Density: 0.03},
		{Measure: fc.Pearson, Mode: fc.NearestNeighbours, K: 4, BlockRows: 256},
	} {
		t.Run(fmt.Sprintf("%v/%v/%d", cfg.Measure, cfg.Mode, cfg.BlockRows), func(t *testing.T) {
			gpu := newTestBackend(t, Options{Subjects: s})
			cpu := group.NewFisherZ(s)
			defer cpu.Close()
			g, grpt, err := fc.Build(ctx, gpu, x, n, s*l, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, _, err := fc.Build(ctx, cpu, x, n, s*l, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Validate(); err != nil {
				t.Fatal(err)
			}
			edges := func(i int, nw interface {
				Row(int) ([]uint32, []float32)
			}) map[int]float32 {
				out := map[int]float32{}
				cols, ws := nw.Row(i)
				for p, j := range cols {
					out[int(j)] = ws[p]
				}
				return out
			}
			cut := grpt.Threshold
			differ := 0
			for i := 0; i < n; i++ {
				ge, ce := edges(i, g), edges(i, c)
				for j, w := range ge {
					cw, ok := ce[j]
					r := ref[min(i, j)*n+max(i, j)]
					if cfg.Measure == fc.Spearman {
						r = float64(cw)
					}
					if !ok {
						if math.Abs(math.Abs(r)-cut) > 1e-5 && cfg.Mode != fc.NearestNeighbours {
							t.Fatalf("pair (%d,%d) w %.7f only on the GPU (reference %.7f, cut %.7f)", i, j, w, r, cut)
						}
						differ++
						continue
					}
					if math.Abs(float64(w-cw)) > 2e-6 {
						t.Fatalf("pair (%d,%d): GPU %.8f, CPU %.8f", i, j, w, cw)
					}
				}
				for j := range ce {
					if _, ok := ge[j]; !ok {
						differ++
					}
				}
			}
			t.Logf("%d edges on the GPU, %d on the CPU, %d pairs at the cut differ", g.Edges(), c.Edges(), differ)
			if differ > 4 {
				t.Errorf("%d pairs differ", differ)
			}
		})
	}
}

func TestGroupRefusals(t *testing.T) {
	ctx := context.Background()
	const n, s, l = 50, 3, 20
	for _, c := range []struct {
		name string
		m    fc.Measure
		l    int
		edit func([]float32)
		want string
	}{
		{"kendall", fc.Kendall, s * l, nil, "Kendall"},
		{"split", fc.Pearson, s*l - 1, nil, "do not split into 3 subjects"},
		{"constant", fc.Pearson, s * l, func(x []float32) {
			d := x[7*s*l+2*l : 7*s*l+3*l]
			for t := range d {
				d[t] = 4
			}
		}, "node 7 of subject 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			be := newTestBackend(t, Options{Subjects: s})
			x := grouptest.Series(n, s, l, 9, false)
			if c.edit != nil {
				c.edit(x)
			}
			err := be.Prepare(ctx, x[:n*c.l], n, c.l, c.m)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %q", err, c.want)
			}
		})
	}
}
