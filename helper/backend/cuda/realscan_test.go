//go:build cuda

package cuda

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/fc/fctest"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/internal/shareddata"
)

// dataDir holds the real scans of the shared test data (internal/shareddata; scripts/gpu-check.sh copies them into
// .gpu/data and sets HUBSCOPE_DATA, since that folder does not travel to the GPU machine).
func dataDir() string {
	return shareddata.Dir()
}

// TestRealScans runs every measure on real BOLD data (int16, so ties are common) against the
// float64 reference, then builds a 1 % density network and checks its invariants.
func TestRealScans(t *testing.T) {
	requireGPU(t)
	cases := []struct{ bold, mask string }{
		{"haxby2001_slice_bold.nii.gz", "haxby2001_slice_mask.nii.gz"},
		{"haxby2001_run001_bold_25mm.nii.gz", "haxby2001_mask_25mm_brain.nii.gz"},
	}
	for _, c := range cases {
		t.Run(c.bold, func(t *testing.T) {
			path := filepath.Join(dataDir(), c.bold)
			if _, err := os.Stat(path); err != nil {
				if os.Getenv("HUBSCOPE_REQUIRE_GPU") == "1" {
					t.Fatalf("real scan missing: %v", err)
				}
				t.Skipf("real scan missing: %v", err)
			}
			opt := scan.Options{}
			if c.mask != "" {
				opt.MaskPath = filepath.Join(dataDir(), c.mask)
			}
			s, err := scan.Load(context.Background(), path, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Every measure on the default units, then Pearson and Spearman on the 3×TF32
			// tensor-core product (Options.TF32x3).
			for _, tc := range []bool{false, true} {
				be := newTestBackend(t, Options{TF32x3: tc})
				defer be.Close()
				measures := []fc.Measure{fc.Pearson, fc.Spearman, fc.Kendall}
				if tc {
					measures = measures[:2]
				}
				for _, m := range measures {
					d := fctest.Dataset{Name: c.bold, N: s.N, L: s.L, X: s.Data}
					if m == fc.Kendall && d.L > 120 {
						// The float64 Kendall reference is O(N²L²): keep its first 120 volumes.
						d.L = 120
						d.X = make([]float32, 0, d.N*d.L)
						for v := 0; v < s.N; v++ {
							d.X = append(d.X, s.Data[v*s.L:v*s.L+d.L]...)
						}
						if fc.CheckSeries(d.X, d.N, d.L) != nil {
							t.Skip("a voxel is constant over the first 120 volumes")
						}
					}
					ref := fctest.NewReference(d, m)
					if err := be.Prepare(context.Background(), d.X, d.N, d.L, m); err != nil {
						t.Fatal(err)
					}
					got, _ := collect(t, be, fc.PlanBlocks(d.N, 160), fc.Op{Kind: fc.OpEdges, Threshold: math.Inf(-1), Inclusive: true}, d.N)
					worst := 0.0
					for i := 0; i < d.N; i++ {
						for j := i + 1; j < d.N; j++ {
							v, want := got[i*d.N+j], ref.At(i, j)
							if m == fc.Kendall && v != float32(want) {
								t.Fatalf("%s τ(%d,%d) = %v, reference %v", c.bold, i, j, v, float32(want))
							}
							worst = max(worst, math.Abs(float64(v)-want))
						}
					}
					if worst > fctest.Tol {
						t.Fatalf("%s %s: largest deviation %.3g from the float64 reference", c.bold, m, worst)
					}
					nw, rpt, err := fc.Build(context.Background(), be, d.X, d.N, d.L, fc.Config{Measure: m, Mode: fc.Density, Density: 0.01, Abs: true}, nil)
					if err != nil {
						t.Fatal(err)
					}
					if err := nw.Validate(); err != nil {
						t.Fatal(err)
					}
					want := int64(math.Round(0.01 * float64(d.N) * float64(d.N-1) / 2))
					if nw.Edges() != want {
						t.Errorf("%s %s density 1 %%: %d edges, want %d", c.bold, m, nw.Edges(), want)
					}
					t.Logf("%s %s (3×TF32 %v): N=%d L=%d, max |Δ| %.2g, density network %d edges, |r| ≥ %.4f", c.bold, m, tc, d.N, d.L, worst, nw.Edges(), rpt.Threshold)
				}
			}
		})
	}
}
