package slices

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// snapshotSide is the longest side of one view in a snapshot, in pixels.
const snapshotSide = 320

// Snapshot draws the three views side by side as they are shown (background, overlay,
// crosshair, orientation letters), each scaled to its physical aspect, with a caption naming
// the overlay and the display convention.
func (v *Viewer) Snapshot() (*image.RGBA, error) {
	return v.SnapshotPlanes(Axial, Coronal, Sagittal)
}

// SnapshotPlanes is Snapshot of the given views only, in that order (a report's figure shows
// one axial slice, say). The views keep the scale they have in Snapshot, and the image is at
// least as wide as its caption.
func (v *Viewer) SnapshotPlanes(planes ...Plane) (*image.RGBA, error) {
	if v.grid == nil {
		return nil, errors.New("slice viewer: nothing loaded to save")
	}
	if len(planes) == 0 {
		return nil, errors.New("slice viewer: no view asked for")
	}
	for _, p := range planes {
		if p < Axial || p > Sagittal {
			return nil, fmt.Errorf("slice viewer: no view %v", p)
		}
	}
	extent := 0.0
	for _, g := range v.geom {
		extent = math.Max(extent, math.Max(float64(g.nc)*g.dc, float64(g.nr)*g.dr))
	}
	k := snapshotSide / extent
	const gap, caption = 8, 20
	conv := "neurological (L on the left)"
	if v.radiological {
		conv = "radiological (L on the right)"
	}
	text := fmt.Sprintf("%s  overlay: %s  convention: %s", v.job, v.ovName, conv)
	sizes := make([]image.Point, len(planes))
	w, h := gap, 0
	for n, p := range planes {
		g := v.geom[p]
		sizes[n] = image.Pt(max(1, int(math.Round(float64(g.nc)*g.dc*k))), max(1, int(math.Round(float64(g.nr)*g.dr*k))))
		w += sizes[n].X + gap
		h = max(h, sizes[n].Y)
	}
	w = max(w, 2*gap+font.MeasureString(basicfont.Face7x13, text).Ceil())
	// The overlay's colour bar under the caption (quantities only), as the viewer shows it.
	barH := 0
	var barTitle, barLo, barMid, barHi string
	if ov := v.ov; ov != nil && !ov.vol.Header.Categorical && ov.lut != nil {
		barTitle, barLo, barMid, barHi = barText(v.ovName, ov)
		barTitle = asciiText(barTitle)
		barH = 3*caption + 4
		w = max(w, 2*gap+font.MeasureString(basicfont.Face7x13, barTitle).Ceil())
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h+2*gap+caption+barH))
	draw.Draw(out, out.Bounds(), image.NewUniform(color.Black), image.Point{}, draw.Src)
	x0 := gap
	for n, p := range planes {
		g := v.geom[p]
		src := v.sliceImage(p)
		sz := sizes[n]
		dst := image.Rect(x0, gap, x0+sz.X, gap+sz.Y)
		for y := 0; y < sz.Y; y++ {
			py := min(g.nr-1, y*g.nr/sz.Y)
			for x := 0; x < sz.X; x++ {
				px := min(g.nc-1, x*g.nc/sz.X)
				out.SetRGBA(x0+x, gap+y, src.RGBAAt(px, py))
			}
		}
		// Crosshair through the centre of the cursor's voxel.
		cx, cy := g.pixel(v.cursor)
		lx := x0 + int((float64(cx)+0.5)/float64(g.nc)*float64(sz.X))
		ly := gap + int((float64(cy)+0.5)/float64(g.nr)*float64(sz.Y))
		for x := dst.Min.X; x < dst.Max.X; x++ {
			blend(out, x, ly, CrosshairColor)
		}
		for y := dst.Min.Y; y < dst.Max.Y; y++ {
			if y != ly {
				blend(out, lx, y, CrosshairColor)
			}
		}
		label(out, dst.Min.X+2, dst.Min.Y+(sz.Y+10)/2, g.left)
		label(out, dst.Max.X-9, dst.Min.Y+(sz.Y+10)/2, g.right)
		label(out, dst.Min.X+(sz.X-7)/2, dst.Min.Y+12, g.top)
		label(out, dst.Min.X+(sz.X-7)/2, dst.Max.Y-3, g.bottom)
		label(out, dst.Min.X+12, dst.Min.Y+12, fmt.Sprintf("%s %s=%d", p, [3]string{"i", "j", "k"}[g.fixed], v.cursor[g.fixed]))
		x0 += sz.X + gap
	}
	label(out, gap, h+gap+caption-4, text)
	if barH > 0 {
		y0 := h + gap + caption
		label(out, gap, y0+caption-4, barTitle)
		bar := barImage(v.ov.lut, w-2*gap)
		for y := y0 + caption; y < y0+caption+10; y++ {
			for x := 0; x < w-2*gap; x++ {
				out.SetRGBA(gap+x, y, bar.RGBAAt(x, 0))
			}
		}
		yl := y0 + 2*caption + 12
		label(out, gap, yl, asciiText(barLo))
		if barMid != "" {
			m := asciiText(barMid)
			label(out, (w-font.MeasureString(basicfont.Face7x13, m).Ceil())/2, yl, m)
		}
		hi := asciiText(barHi)
		label(out, w-gap-font.MeasureString(basicfont.Face7x13, hi).Ceil(), yl, hi)
	}
	return out, nil
}

// SavePNG writes Snapshot to path as PNG.
func (v *Viewer) SavePNG(path string) error {
	img, err := v.Snapshot()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("save slices: %w", err)
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("save slices to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save slices to %s: %w", path, err)
	}
	return nil
}

// asciiText spells the colour bar's symbols in ASCII for the snapshot's bitmap font.
func asciiText(s string) string {
	return strings.NewReplacer("≥", ">=", "−", "-", "·", "-").Replace(s)
}

// blend draws c over the pixel at (x, y) by its alpha.
func blend(img *image.RGBA, x, y int, c color.NRGBA) {
	if !(image.Point{x, y}.In(img.Bounds())) {
		return
	}
	o := img.RGBAAt(x, y)
	a := float64(c.A) / 255
	mix := func(d, s uint8) uint8 { return uint8(math.Round(float64(d)*(1-a) + float64(s)*a)) }
	img.SetRGBA(x, y, color.RGBA{mix(o.R, c.R), mix(o.G, c.G), mix(o.B, c.B), 255})
}

// label writes ASCII text with its baseline at (x, y) in light grey (7×13 bitmap font).
func label(img *image.RGBA, x, y int, text string) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(color.NRGBA{0xf0, 0xf0, 0xf0, 0xff}), Face: basicfont.Face7x13,
		Dot: fixed.P(x, y)}
	d.DrawString(text)
}
