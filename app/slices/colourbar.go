package slices

import (
	"fmt"
	"image"
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// colourBar is the overlay's scale under the views: the map's name and what its values are
// (the volume's description, which carries the unit), the colours as drawn, and the values at
// the scale's ends and threshold, so a reader can turn a colour back into a number.
type colourBar struct {
	title, lo, mid, hi *widget.Label
	img                *canvas.Image
	box                *fyne.Container
}

func newColourBar() *colourBar {
	b := &colourBar{title: widget.NewLabel(""), lo: widget.NewLabel(""), mid: widget.NewLabel(""), hi: widget.NewLabel("")}
	b.title.Truncation = fyne.TextTruncateEllipsis
	b.mid.Alignment = fyne.TextAlignCenter
	b.img = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 256, 1)))
	b.img.FillMode = canvas.ImageFillStretch
	b.img.ScaleMode = canvas.ImageScalePixels
	b.img.SetMinSize(fyne.NewSize(160, 12))
	b.box = container.NewVBox(b.title, container.NewBorder(nil, nil, b.lo, b.hi, container.NewVBox(b.img, b.mid)))
	b.box.Hide()
	return b
}

// barText is what the colour bar says about overlay ov named name: its title, and the labels
// at its left end, middle and right end. Unsigned maps run from the threshold (left) to the top
// of the scale; signed ones from −top through ±threshold (the middle, where |value| below it is
// not drawn) to +top.
func barText(name string, ov *layer) (title, lo, mid, hi string) {
	h := ov.vol.Header
	title = name
	if d := strings.TrimSpace(h.Description); d != "" && d != name {
		title += ": " + d
	}
	st := ov.style
	if st.Signed {
		title += fmt.Sprintf(" · drawn where |value| >= %.3g", st.Threshold)
		return title, fmt.Sprintf("%.3g", -st.Max), fmt.Sprintf("-%.3g | +%.3g", st.Threshold, st.Threshold), fmt.Sprintf("%.3g", st.Max)
	}
	title += fmt.Sprintf(" · drawn where value >= %.3g", st.Threshold)
	return title, fmt.Sprintf("%.3g", st.Threshold), "", fmt.Sprintf("%.3g", st.Max)
}

// barImage samples the overlay's colour scale across w pixels (one row), as renderSlice maps
// values to it: left to right the lut from 0 to 1 (for a signed map the cold half is
// −top … −threshold and the hot half +threshold … +top).
func barImage(l *lut, w int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, 1))
	for x := range w {
		img.SetRGBA(x, 0, color.RGBA(l.at(float64(x)/float64(max(w-1, 1)))))
	}
	return img
}

// update shows the bar for overlay ov named name, or hides it (no overlay, or a labelled volume
// whose colours are the modules' own). It reports whether the bar appeared or went, so that the
// viewer lays its panel out again.
func (b *colourBar) update(name string, ov *layer) (changed bool) {
	was := b.box.Visible()
	if ov == nil || ov.vol.Header.Categorical || ov.lut == nil {
		b.box.Hide()
		return was
	}
	title, lo, mid, hi := barText(name, ov)
	b.title.SetText(title)
	b.lo.SetText(lo)
	b.mid.SetText(mid)
	if mid == "" {
		b.mid.Hide()
	} else {
		b.mid.Show()
	}
	b.hi.SetText(hi)
	b.img.Image = barImage(ov.lut, 256)
	b.img.Refresh()
	b.box.Show()
	return !was
}
