package fc

import (
	"math"
	"testing"
)

// benchDriver is a density driver over BenchData without a backend: enough for the host-side
// sampling step.
func benchDriver(n, l int, meas Measure) *driver {
	x := BenchData(n, l, BenchSeed)
	return &driver{x: x, n: n, l: l, cfg: Config{Measure: meas, Mode: Density, Density: 0.01}, rpt: &Report{}}
}

func benchSample(b *testing.B, n, l int, meas Measure) {
	d := benchDriver(n, l, meas)
	m := d.pairs()
	k := int64(math.Round(0.01 * float64(m)))
	b.ResetTimer()
	for b.Loop() {
		if _, ok := d.sampleBounds(k, m); !ok {
			b.Fatal("no bound")
		}
	}
}

func BenchmarkSamplePearson(b *testing.B)  { benchSample(b, 200000, 128, Pearson) }
func BenchmarkSampleSpearman(b *testing.B) { benchSample(b, 200000, 128, Spearman) }
func BenchmarkSampleKendall(b *testing.B)  { benchSample(b, 100000, 128, Kendall) }

func BenchmarkSampleW1(b *testing.B) { benchSample(b, 60000, 200, Pearson) }
