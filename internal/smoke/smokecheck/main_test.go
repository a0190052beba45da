package main

import (
	"image"
	"image/color"
	"testing"
)

// countOverlaid finds a module colour blended over any background grey at the viewer's
// opacity, and nothing else: not the colour blended at another opacity, not plain greys, not
// another module's colour.
func TestCountOverlaid(t *testing.T) {
	c := color.NRGBA{0xe6, 0x9f, 0x00, 0xff}
	other := color.NRGBA{0x56, 0xb4, 0xe9, 0xff}
	blend := func(grey float64, c color.NRGBA, a float64) color.RGBA {
		mix := func(p uint8) uint8 { return uint8((1-a)*grey + a*float64(p) + 0.5) }
		return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 255}
	}
	img := image.NewRGBA(image.Rect(0, 0, 6, 2))
	for x, grey := range []float64{0, 40, 80, 120, 160, 200} {
		img.SetRGBA(x, 0, blend(grey, c, 0.8))
	}
	img.SetRGBA(0, 1, blend(100, c, 0.4))
	img.SetRGBA(1, 1, color.RGBA{150, 150, 150, 255})
	img.SetRGBA(2, 1, blend(100, other, 0.8))
	img.SetRGBA(3, 1, color.RGBA{0, 0, 0, 255})
	img.SetRGBA(4, 1, color.RGBA{255, 255, 255, 255})
	img.SetRGBA(5, 1, blend(255, c, 0.8)) // a background brighter than the viewer draws
	if n := countOverlaid(img, img.Bounds(), c, 0.8, 3); n != 6 {
		t.Errorf("counted %d pixels, want the 6 of the first row", n)
	}
	if n := countOverlaid(img, image.Rect(0, 0, 3, 1), c, 0.8, 3); n != 3 {
		t.Errorf("counted %d pixels in a 3-pixel area", n)
	}
}
