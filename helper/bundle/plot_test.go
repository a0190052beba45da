package bundle

import (
	"bytes"
	"image"
	"image/draw"
	"image/png"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// countColor counts pixels within a small distance of an RGB colour (reading the pixel bytes
// directly: image.At through an interface is slow under the race detector).
func countColor(img image.Image, r0, g0, b0 uint8) int {
	var pix []uint8
	switch m := img.(type) {
	case *image.RGBA:
		pix = m.Pix
	case *image.NRGBA:
		pix = m.Pix
	default:
		b := img.Bounds()
		rgba := image.NewRGBA(b)
		draw.Draw(rgba, b, img, b.Min, draw.Src)
		pix = rgba.Pix
	}
	n := 0
	for i := 0; i+3 < len(pix); i += 4 {
		if absDiff(uint32(pix[i]), uint32(r0)) < 8 && absDiff(uint32(pix[i+1]), uint32(g0)) < 8 && absDiff(uint32(pix[i+2]), uint32(b0)) < 8 {
			n++
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

	// Rendering is slow under the race detector: two images, one with fits and one without
	// (a single distinct degree, which must still get valid log axes) as the negative control.
	for _, c := range []struct {
		name    string
		degrees []int
		fits    []Curve
		wantFit bool
		markers int
	}{{"with fits", degrees, []Curve{fit, truncated}, true, 100}, {"regular graph", []int{3, 3, 3}, nil, false, 10}} {
		var buf bytes.Buffer
		if err := PlotDegreeDistribution(&buf, c.degrees, c.fits); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("%s: PNG does not decode: %v", c.name, err)
		}
		if b := img.Bounds(); b.Dx() != PlotWidthPx || b.Dy() != PlotHeightPx {
			t.Fatalf("%s: image is %d×%d, want %d×%d", c.name, b.Dx(), b.Dy(), PlotWidthPx, PlotHeightPx)
		}
		if n := countColor(img, 31, 119, 180); n < c.markers {
			t.Errorf("%s: only %d pixels of data markers", c.name, n)
		}
		if n := countColor(img, 214, 39, 40); (n > 50) != c.wantFit {
			t.Errorf("%s: %d pixels of the first fit's colour", c.name, n)
		}
		if n := countColor(img, 44, 160, 44); (n > 50) != c.wantFit {
			t.Errorf("%s: %d pixels of the second fit's colour", c.name, n)
		}
	}
	// Two fits on the same curve both show (the second dashed over the first), and a fit
	// without a function is a legend line, not an error.
	var buf bytes.Buffer
	same := Curve{Label: "same", F: fit.F}
	if err := PlotDegreeDistribution(&buf, degrees, []Curve{fit, same, {Label: "no fit"}}); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if r, g := countColor(img, 214, 39, 40), countColor(img, 44, 160, 44); r < 50 || g < 50 {
		t.Errorf("coinciding fits: %d pixels of the first fit's colour and %d of the second's; both must show", r, g)
	}
	for name, d := range map[string][]int{"empty": nil, "isolated": {0, 0}, "negative": {1, -1}} {
		if err := PlotDegreeDistribution(&bytes.Buffer{}, d, nil); err == nil || !strings.Contains(err.Error(), "degree distribution") {
			t.Errorf("%s: error %v", name, err)
		}
	}
}
