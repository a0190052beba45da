package main

import (
	"image"
	"image/color"
	"math"
	"testing"
)

// TestDrawnShare: the share counts pixels that differ visibly from the most common colour of
// the part looked at, whatever that colour is, and ignores faint anti-aliasing.
func TestDrawnShare(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 100, 50))
	bg := color.RGBA{30, 30, 36, 255} // a dark theme's background
	for y := 0; y < 50; y++ {
		for x := 0; x < 100; x++ {
			img.Set(x, y, bg)
		}
	}
	// 10×10 of text-coloured pixels in the left half, a faint fringe beside them.
	for y := 10; y < 20; y++ {
		for x := 10; x < 20; x++ {
			img.Set(x, y, color.RGBA{230, 230, 230, 255})
		}
		img.Set(20, y, color.RGBA{50, 50, 56, 255})
	}
	left := area{0, 0, 0.5, 1}.in(img.Bounds())
	if left != image.Rect(0, 0, 50, 50) {
		t.Fatalf("left half %v", left)
	}
	if got, want := drawnShare(img, left), 100.0/(50*50); math.Abs(got-want) > 1e-12 {
		t.Errorf("left half: share %g, want %g", got, want)
	}
	if got := drawnShare(img, area{0.5, 0, 1, 1}.in(img.Bounds())); got != 0 {
		t.Errorf("empty right half: share %g, want 0", got)
	}
	if got := drawnShare(img, image.Rect(200, 200, 300, 300)); got != 0 {
		t.Errorf("outside the image: share %g, want 0", got)
	}
}
