// Package lineplot draws small line plots for HubScope's panels — a voxel's time series, a
// dynamic-connectivity measure over windows — straight into an image.RGBA (Draw), and wraps
// that as a Fyne widget (Plot) with a title, axis-range labels and an optional vertical cursor.
//
//	p := lineplot.New("Degree over windows", "s")
//	p.SetData(times, values) // on the UI goroutine
//	p.SetCursor(36)          // a vertical line at x = 36 s
//
// The widget draws at the size it is given (a canvas.Raster), so it stays sharp at any scale;
// it holds no per-point Fyne objects.
package lineplot

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Colours of the plot, fixed rather than themed so that exported figures look the same in
// both themes.
var (
	LineColor   = color.NRGBA{0x1f, 0x77, 0xb4, 255} // tab10 blue
	CursorColor = color.NRGBA{0xd6, 0x27, 0x28, 255} // tab10 red
	AxisColor   = color.NRGBA{0x80, 0x80, 0x80, 255}
)

// Range returns the smallest and largest finite values of v (0, 1 when there are none), widened
// to a span of at least 1e-12 so that a flat series is drawn as a line through the middle.
func Range(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if lo > hi {
		return 0, 1
	}
	if hi-lo < 1e-12 {
		lo, hi = lo-0.5, hi+0.5
	}
	return lo, hi
}

// Draw plots y against x into dst (left and bottom axis lines, the polyline, and a vertical
// cursor at x = *cursor when cursor is not nil) within dst's bounds, mapping [xlo, xhi] and
// [ylo, yhi] onto the bounds less a one-pixel margin. Points with a non-finite value break the
// line. x must be increasing.
func Draw(dst *image.RGBA, x, y []float64, xlo, xhi, ylo, yhi float64, cursor *float64) {
	b := dst.Bounds()
	if b.Dx() < 4 || b.Dy() < 4 || len(x) != len(y) {
		return
	}
	x0, x1 := float64(b.Min.X)+1, float64(b.Max.X)-2
	y0, y1 := float64(b.Max.Y)-2, float64(b.Min.Y)+1 // y grows downwards
	if xhi <= xlo {
		xhi = xlo + 1
	}
	if yhi <= ylo {
		yhi = ylo + 1
	}
	sx := func(v float64) float64 { return x0 + (v-xlo)/(xhi-xlo)*(x1-x0) }
	sy := func(v float64) float64 { return y0 + (v-ylo)/(yhi-ylo)*(y1-y0) }
	line(dst, x0, y0, x1, y0, AxisColor)
	line(dst, x0, y0, x0, y1, AxisColor)
	for n := 1; n < len(x); n++ {
		if finite(y[n-1]) && finite(y[n]) {
			line(dst, sx(x[n-1]), sy(y[n-1]), sx(x[n]), sy(y[n]), LineColor)
		}
	}
	if len(x) == 1 && finite(y[0]) {
		dst.Set(int(sx(x[0])), int(sy(y[0])), LineColor)
	}
	if cursor != nil && *cursor >= xlo && *cursor <= xhi {
		c := sx(*cursor)
		line(dst, c, y0, c, y1, CursorColor)
		line(dst, c+1, y0, c+1, y1, CursorColor)
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// line draws a one-pixel line by stepping along its longer axis (a DDA).
func line(dst *image.RGBA, xa, ya, xb, yb float64, c color.NRGBA) {
	n := int(math.Ceil(math.Max(math.Abs(xb-xa), math.Abs(yb-ya))))
	for s := 0; s <= n; s++ {
		t := 0.0
		if n > 0 {
			t = float64(s) / float64(n)
		}
		dst.Set(int(math.Round(xa+t*(xb-xa))), int(math.Round(ya+t*(yb-ya))), c)
	}
}

// Plot is a small line-plot widget. Its methods are for the UI goroutine.
type Plot struct {
	widget.BaseWidget
	title, xUnit string
	x, y         []float64
	cursor       *float64
	level        *float64 // a horizontal reference line (a censoring threshold)
	raster       *canvas.Raster
	titleText    *canvas.Text
	yHi, yLo     *canvas.Text
	xLo, xHi     *canvas.Text
}

// New returns an empty plot titled title whose x values are in xUnit (shown on the axis labels).
func New(title, xUnit string) *Plot {
	p := &Plot{title: title, xUnit: xUnit}
	p.ExtendBaseWidget(p)
	return p
}

// SetData replaces the plotted points (x increasing, the same length as y; copied).
func (p *Plot) SetData(x, y []float64) {
	if len(x) != len(y) {
		fyne.LogError(fmt.Sprintf("lineplot %q", p.title), fmt.Errorf("%d x values for %d y values", len(x), len(y)))
		return
	}
	p.x, p.y = append([]float64(nil), x...), append([]float64(nil), y...)
	p.Refresh()
}

// Data returns the plotted points (shared; do not modify).
func (p *Plot) Data() (x, y []float64) { return p.x, p.y }

// SetTitle changes the title.
func (p *Plot) SetTitle(title string) { p.title = title; p.Refresh() }

// SetCursor draws a vertical cursor at x.
func (p *Plot) SetCursor(x float64) { p.cursor = &x; p.Refresh() }

// SetLevel draws a dashed horizontal line at y (a threshold), inside the y range shown.
func (p *Plot) SetLevel(y float64) { p.level = &y; p.Refresh() }

// Level returns the horizontal line's value, and whether there is one.
func (p *Plot) Level() (float64, bool) {
	if p.level == nil {
		return 0, false
	}
	return *p.level, true
}

// yRange is the y range shown: the data's, widened to hold the level line.
func (p *Plot) yRange() (lo, hi float64) {
	lo, hi = Range(p.y)
	if p.level != nil && finite(*p.level) {
		lo, hi = math.Min(lo, *p.level), math.Max(hi, *p.level)
	}
	return lo, hi
}

// ClearCursor removes the cursor.
func (p *Plot) ClearCursor() { p.cursor = nil; p.Refresh() }

// Cursor returns the cursor's position, and whether there is one.
func (p *Plot) Cursor() (float64, bool) {
	if p.cursor == nil {
		return 0, false
	}
	return *p.cursor, true
}

// Image draws the plot area at w × h pixels (what the widget shows, without its labels).
func (p *Plot) Image(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, max(w, 1), max(h, 1)))
	draw.Draw(img, img.Bounds(), image.Transparent, image.Point{}, draw.Src)
	if len(p.x) == 0 {
		return img
	}
	ylo, yhi := p.yRange()
	Draw(img, p.x, p.y, p.x[0], p.x[len(p.x)-1], ylo, yhi, p.cursor)
	if p.level != nil && finite(*p.level) && img.Bounds().Dx() >= 4 && img.Bounds().Dy() >= 4 {
		// The same mapping as Draw's: [ylo, yhi] onto the bounds less a one-pixel margin.
		y0, y1 := float64(img.Bounds().Max.Y)-2, 1.0
		if yhi <= ylo {
			yhi = ylo + 1
		}
		y := int(math.Round(y0 + (*p.level-ylo)/(yhi-ylo)*(y1-y0)))
		for x := 1; x < img.Bounds().Dx()-2; x++ {
			if x/4%2 == 0 {
				img.Set(x, y, CursorColor)
			}
		}
	}
	return img
}

// format prints an axis value with 3 significant digits.
func format(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

func (p *Plot) CreateRenderer() fyne.WidgetRenderer {
	size := theme.CaptionTextSize()
	fg := theme.Color(theme.ColorNameForeground)
	p.raster = canvas.NewRaster(func(w, h int) image.Image { return p.Image(w, h) })
	p.raster.ScaleMode = canvas.ImageScalePixels
	p.titleText = canvas.NewText("", fg)
	p.titleText.TextSize = size
	p.titleText.TextStyle.Bold = true
	mk := func(align fyne.TextAlign) *canvas.Text {
		t := canvas.NewText("", fg)
		t.TextSize, t.Alignment = size, align
		return t
	}
	p.yHi, p.yLo, p.xLo, p.xHi = mk(fyne.TextAlignTrailing), mk(fyne.TextAlignTrailing), mk(fyne.TextAlignLeading), mk(fyne.TextAlignTrailing)
	r := &plotRenderer{p: p, objects: []fyne.CanvasObject{p.raster, p.titleText, p.yHi, p.yLo, p.xLo, p.xHi}}
	r.update()
	return r
}

type plotRenderer struct {
	p       *Plot
	objects []fyne.CanvasObject
}

// labelWidth is the room kept left of the plot for the y-axis labels.
const labelWidth = 44

func (r *plotRenderer) update() {
	p := r.p
	p.titleText.Text = p.title
	if len(p.x) > 0 {
		lo, hi := p.yRange()
		p.yHi.Text, p.yLo.Text = format(hi), format(lo)
		p.xLo.Text = format(p.x[0]) + " " + p.xUnit
		p.xHi.Text = format(p.x[len(p.x)-1]) + " " + p.xUnit
	} else {
		p.yHi.Text, p.yLo.Text, p.xLo.Text, p.xHi.Text = "", "", "", "no data"
	}
	fg := theme.Color(theme.ColorNameForeground)
	for _, t := range []*canvas.Text{p.titleText, p.yHi, p.yLo, p.xLo, p.xHi} {
		t.Color = fg
		t.Refresh()
	}
	p.raster.Refresh()
}

func (r *plotRenderer) Layout(s fyne.Size) {
	p := r.p
	th := p.titleText.MinSize().Height
	lh := p.xLo.MinSize().Height
	p.titleText.Move(fyne.NewPos(labelWidth, 0))
	p.titleText.Resize(fyne.NewSize(s.Width-labelWidth, th))
	plotH := max(s.Height-th-lh, 1)
	p.raster.Move(fyne.NewPos(labelWidth, th))
	p.raster.Resize(fyne.NewSize(max(s.Width-labelWidth, 1), plotH))
	p.yHi.Move(fyne.NewPos(0, th))
	p.yHi.Resize(fyne.NewSize(labelWidth-4, lh))
	p.yLo.Move(fyne.NewPos(0, th+plotH-lh))
	p.yLo.Resize(fyne.NewSize(labelWidth-4, lh))
	p.xLo.Move(fyne.NewPos(labelWidth, th+plotH))
	p.xLo.Resize(fyne.NewSize((s.Width-labelWidth)/2, lh))
	p.xHi.Move(fyne.NewPos(labelWidth+(s.Width-labelWidth)/2, th+plotH))
	p.xHi.Resize(fyne.NewSize((s.Width-labelWidth)/2, lh))
}

func (r *plotRenderer) MinSize() fyne.Size {
	th := r.p.titleText.MinSize().Height
	return fyne.NewSize(labelWidth+120, th+r.p.xLo.MinSize().Height+64)
}

func (r *plotRenderer) Refresh()                     { r.update() }
func (r *plotRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *plotRenderer) Destroy()                     {}
