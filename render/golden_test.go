package render

import (
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// Golden images: go test ./render -run Golden -update rewrites testdata/*.png (or set
// HUBSCOPE_UPDATE_GOLDEN=1); a failing comparison writes the frame it got to
// testdata/failed/ (git-ignored) for a side-by-side look.
var update = flag.Bool("update", false, "rewrite the golden images in testdata/")

func updating() bool { return *update || os.Getenv("HUBSCOPE_UPDATE_GOLDEN") == "1" }

// Tolerance: floating-point results differ slightly across architectures (FMA contraction
// on arm64, for instance), which moves a few edge pixels and shifts shading by a level or two.
const (
	goldenChannelTolerance = 3     // per channel, 0…255
	goldenMaxBadFraction   = 0.002 // of pixels beyond that
)

func TestGoldenPhantom(t *testing.T) {
	s := phantomScene(t)
	cases := []struct {
		name  string
		view  string
		glass bool
	}{
		{"phantom_left_opaque", "left", false},
		{"phantom_superior_opaque", "superior", false},
		{"phantom_anterior_glass", "anterior", true},
		{"phantom_right_glass", "right", true},
	}
	r := NewRenderer(320, 240)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.Glass = c.glass
			cam, err := StandardView(c.view)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, c.name, r.Render(s, cam))
		})
	}
	// a turned, zoomed camera exercises the general case
	s.Glass = false
	cam := Camera{Azimuth: 135, Elevation: 30, Zoom: 1.6}
	t.Run("phantom_oblique_zoom", func(t *testing.T) { compareGolden(t, "phantom_oblique_zoom", r.Render(s, cam)) })
}

func compareGolden(t *testing.T, name string, got *image.RGBA) {
	t.Helper()
	path := filepath.Join("testdata", name+".png")
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := SavePNG(path, got); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	defer f.Close()
	want, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	bad, total, worst := diffImages(got, want)
	if bad < 0 || float64(bad) > goldenMaxBadFraction*float64(total) {
		failed := filepath.Join("testdata", "failed", name+".png")
		if err := os.MkdirAll(filepath.Dir(failed), 0o755); err == nil {
			if err := SavePNG(failed, got); err != nil {
				t.Log(err)
			}
		}
		if bad < 0 {
			t.Fatalf("%s: frame is %v, golden is %v; got written to %s", path, got.Bounds(), want.Bounds(), failed)
		}
		t.Fatalf("%s: %d of %d pixels differ by more than %d (worst %d); got written to %s", path, bad, total, goldenChannelTolerance, worst, failed)
	}
}

// diffImages counts pixels whose channels differ by more than the tolerance; −1 for a size
// mismatch.
func diffImages(got *image.RGBA, want image.Image) (bad, total, worst int) {
	if got.Bounds() != want.Bounds() {
		return -1, 0, 0
	}
	b := got.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			g := got.RGBAAt(x, y)
			wr, wg, wb, wa := want.At(x, y).RGBA()
			d := max(absDiff(g.R, uint8(wr>>8)), absDiff(g.G, uint8(wg>>8)), absDiff(g.B, uint8(wb>>8)), absDiff(g.A, uint8(wa>>8)))
			worst = max(worst, d)
			if d > goldenChannelTolerance {
				bad++
			}
			total++
		}
	}
	return bad, total, worst
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// TestGoldenDetectsChange guards the comparison itself: a frame from another view must fail it.
func TestGoldenDetectsChange(t *testing.T) {
	s := phantomScene(t)
	r := NewRenderer(320, 240)
	a := r.Render(s, StandardViewOrFail(t, "left"))
	a2 := image.NewRGBA(a.Bounds())
	copy(a2.Pix, a.Pix)
	b := r.Render(s, StandardViewOrFail(t, "right"))
	if bad, total, _ := diffImages(b, a2); float64(bad) <= goldenMaxBadFraction*float64(total) {
		t.Fatalf("left and right views pass as equal (%d of %d pixels differ)", bad, total)
	}
	if bad, _, _ := diffImages(a2, a2); bad != 0 {
		t.Fatal(fmt.Sprint("a frame differs from itself in ", bad, " pixels"))
	}
}
