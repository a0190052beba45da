package bundle

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// countColor counts pixels within a small distance of an RGB colour.
func countColor(img image.Image, r0, g0, b0 uint8) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if absDiff(r>>8, uint32(r0)) < 8 && absDiff(g>>8, uint32(g0)) < 8 && absDiff(bl>>8, uint32(b0)) < 8 {
				n++
			}
		}
	}
	return n
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func TestPlotDegreeDistribution(t *testing.T) {
	// Degrees drawn from a discrete power law P(k) ∝ k^−2.5, k ≥ 1, by inversion.
	rng := rand.New(rand.NewPCG(3, 4))
	degrees := make([]int, 5000)
	for v := range degrees {
		degrees[v] = int(math.Floor(math.Pow(1-rng.Float64(), -1/1.5)))
	}
	degrees[0], degrees[1] = 0, 0
	fit := Curve{Label: "power law, γ = 2.5", F: func(k float64) float64 { return 1.5 * math.Pow(k, -2.5) / 1.2 }}
	truncated := Curve{Label: "truncated", F: func(k float64) float64 { return math.Pow(k, -2) * math.Exp(-k/20) }}

	for _, c := range []struct {
		name    string
		fits    []Curve
		wantFit bool
	}{{"data only", nil, false}, {"with fits", []Curve{fit, truncated}, true}} {
		var buf bytes.Buffer
		if err := PlotDegreeDistribution(&buf, degrees, c.fits); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("%s: PNG does not decode: %v", c.name, err)
		}
		if b := img.Bounds(); b.Dx() != PlotWidthPx || b.Dy() != PlotHeightPx {
			t.Fatalf("%s: image is %d×%d, want %d×%d", c.name, b.Dx(), b.Dy(), PlotWidthPx, PlotHeightPx)
		}
		if n := countColor(img, 31, 119, 180); n < 100 {
			t.Errorf("%s: only %d pixels of data markers", c.name, n)
		}
		if n := countColor(img, 214, 39, 40); (n > 50) != c.wantFit {
			t.Errorf("%s: %d pixels of the first fit's colour", c.name, n)
		}
	}

	// A single distinct degree still gets valid log axes.
	var buf bytes.Buffer
	if err := PlotDegreeDistribution(&buf, []int{3, 3, 3}, []Curve{fit}); err != nil {
		t.Fatalf("regular graph: %v", err)
	}
	if _, err := png.Decode(&buf); err != nil {
		t.Fatalf("regular graph: %v", err)
	}
	for name, d := range map[string][]int{"empty": nil, "isolated": {0, 0}, "negative": {1, -1}} {
		if err := PlotDegreeDistribution(&bytes.Buffer{}, d, nil); err == nil || !strings.Contains(err.Error(), "degree distribution") {
			t.Errorf("%s: error %v", name, err)
		}
	}
}
