package lineplot

import (
	"image"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

func TestDrawLineAndCursor(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 103, 53))
	// y = x over [0, 100]: a diagonal from the bottom-left to the top-right of the plot area.
	x := []float64{0, 50, 100}
	y := []float64{0, 50, 100}
	c := 80.0
	Draw(img, x, y, 0, 100, 0, 100, &c)
	at := func(px, py int) [3]uint8 {
		p := img.RGBAAt(px, py)
		return [3]uint8{p.R, p.G, p.B}
	}
	line := [3]uint8{LineColor.R, LineColor.G, LineColor.B}
	cursor := [3]uint8{CursorColor.R, CursorColor.G, CursorColor.B}
	// Plot area: x 1 … 101, y 51 (bottom) … 1 (top).
	if at(101, 1) != line || at(51, 26) != line || at(1, 51) != line {
		t.Fatalf("line pixels %v %v %v", at(101, 1), at(51, 26), at(1, 51))
	}
	if at(81, 10) != cursor || at(81, 45) != cursor {
		t.Fatalf("cursor pixels %v %v", at(81, 10), at(81, 45))
	}
	if at(90, 45) != [3]uint8{} {
		t.Fatalf("empty area drawn %v", at(90, 45))
	}
	// A NaN breaks the line.
	img2 := image.NewRGBA(image.Rect(0, 0, 103, 53))
	Draw(img2, x, []float64{0, math.NaN(), 100}, 0, 100, 0, 100, nil)
	if p := img2.RGBAAt(51, 26); p.A != 0 {
		t.Fatalf("line drawn through a NaN: %v", p)
	}
}

func TestRange(t *testing.T) {
	if lo, hi := Range([]float64{3, math.NaN(), -1, math.Inf(1)}); lo != -1 || hi != 3 {
		t.Fatalf("range %v %v", lo, hi)
	}
	if lo, hi := Range([]float64{2, 2}); lo != 1.5 || hi != 2.5 {
		t.Fatalf("flat range %v %v", lo, hi)
	}
	if lo, hi := Range(nil); lo != 0 || hi != 1 {
		t.Fatalf("empty range %v %v", lo, hi)
	}
}

func TestPlotWidget(t *testing.T) {
	test.NewTempApp(t)
	p := New("density", "s")
	w := test.NewTempWindow(t, p)
	w.Resize(fyne.NewSize(300, 120))
	p.SetData([]float64{0, 10, 20}, []float64{0.01, 0.02, 0.015})
	p.SetCursor(10)
	if c, ok := p.Cursor(); !ok || c != 10 {
		t.Fatalf("cursor %v %v", c, ok)
	}
	if p.yHi.Text != "0.02" || p.yLo.Text != "0.01" || p.xHi.Text != "20 s" || p.titleText.Text != "density" {
		t.Fatalf("labels %q %q %q %q", p.yHi.Text, p.yLo.Text, p.xHi.Text, p.titleText.Text)
	}
	p.SetData([]float64{1}, []float64{1, 2}) // mismatched: refused, the old data stays
	if x, _ := p.Data(); len(x) != 3 {
		t.Fatalf("%d points after a mismatched SetData", len(x))
	}
	p.ClearCursor()
	if _, ok := p.Cursor(); ok {
		t.Fatal("cursor after ClearCursor")
	}
}

// A level line (a threshold) above the data widens the y range to hold it and is drawn
// dashed at its height.
func TestLevelLine(t *testing.T) {
	test.NewTempApp(t)
	p := New("DVARS", "s")
	p.SetData([]float64{0, 1, 2}, []float64{0, 1, 0.5})
	p.SetLevel(2)
	if lv, ok := p.Level(); !ok || lv != 2 {
		t.Fatalf("level %v %v", lv, ok)
	}
	img := p.Image(103, 53)
	// y range [0, 2]: y = 2 is the top row of the plot area (y = 1).
	red := 0
	for x := 0; x < 103; x++ {
		c := img.RGBAAt(x, 1)
		if c.R == CursorColor.R && c.G == CursorColor.G && c.B == CursorColor.B {
			red++
		}
	}
	if red < 30 || red > 70 {
		t.Fatalf("%d red pixels on the level's row, want a dashed line", red)
	}
	if lo, hi := p.yRange(); lo != 0 || hi != 2 {
		t.Fatalf("y range %g…%g", lo, hi)
	}
}
