//go:build cuda

package group

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/hubscope/hubscope/helper/backend/cuda"
	"github.com/hubscope/hubscope/helper/fc"
)

// TestNetworkOnTheDevice: with the CUDA backend as the run's backend, the mean Fisher z runs
// on its device engine (the report names it) and equals the float64 reference.
func TestNetworkOnTheDevice(t *testing.T) {
	plain, err := cuda.New(cuda.Options{})
	if err != nil {
		if os.Getenv("HUBSCOPE_REQUIRE_GPU") == "1" {
			t.Fatalf("no usable GPU: %v", err)
		}
		t.Skipf("no usable GPU: %v", err)
	}
	defer plain.Close()
	n, s, l := 300, 4, 40
	ref := reference(cohortOf(n, s, l, 2), true)
	for _, cfg := range []fc.Config{
		{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.15},
		{Measure: fc.Pearson, Mode: fc.Density, Density: 0.05},
	} {
		nw, rpt, err := Network(context.Background(), cohortOf(n, s, l, 2), MeanFisherZ, cfg, plain, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rpt.Backend != "cuda" {
			t.Fatalf("the mean Fisher z ran on %q (%s), want the device engine", rpt.Backend, rpt.Device)
		}
		cut := cfg.Threshold
		if cfg.Mode == fc.Density {
			k := int(math.Round(cfg.Density * float64(n*(n-1)/2)))
			cut = (kth(ref, k) + kth(ref, k+1)) / 2
		}
		checkAgainst(t, nw, ref, cut)
	}
}
