package slices

import (
	"image/color"
	"math"

	"github.com/hubscope/hubscope/render"
)

// Colormap names a continuous colour scale for quantitative overlays.
type Colormap string

const (
	// Hot is matplotlib's "hot": black → red → yellow → white, the usual scale for
	// statistical and degree maps (low values stay dark, so the background shows through).
	Hot Colormap = "hot"
	// Viridis is matplotlib's perceptually uniform, colour-blind-safe scale (van der Walt &
	// Smith 2015).
	Viridis Colormap = "viridis"
	// ColdHot is the diverging scale for signed maps (seed correlations, z, t), nilearn's
	// "cold_hot": hot for positive values and hot with red and blue swapped (black → blue →
	// cyan → white) for negative ones, black at zero on both sides, so a negative value is as
	// visible as a positive one of the same size. Index 0 is the most negative, 255 the most
	// positive.
	ColdHot Colormap = "cold_hot"
	// Modules colours labels (modules, hubs by module, atlas regions) with ModuleColor.
	Modules Colormap = "modules"
)

// Colormaps lists the continuous scales offered for quantitative overlays.
var Colormaps = []Colormap{Hot, Viridis}

// lut is a colour scale sampled at 256 points, so that a slice is coloured by table look-up.
type lut [256]color.NRGBA

func newLUT(c Colormap) *lut {
	var l lut
	for n := range l {
		t := float64(n) / 255
		switch c {
		case Viridis:
			d := viridisData[n]
			ch := func(v float64) uint8 { return uint8(math.Round(255 * v)) }
			l[n] = color.NRGBA{ch(d[0]), ch(d[1]), ch(d[2]), 255}
		case ColdHot:
			s := 2*t - 1 // −1 … 1
			c := hot(math.Abs(s))
			if s < 0 {
				c.R, c.B = c.B, c.R
			}
			l[n] = c
		default:
			l[n] = hot(t)
		}
	}
	return &l
}

// hot is matplotlib's "hot" at t in [0, 1]: r = 3t, g = 3t − 1, b = 3t − 2, each clipped to [0, 1].
func hot(t float64) color.NRGBA {
	ch := func(v float64) uint8 { return uint8(math.Round(255 * math.Max(0, math.Min(1, v)))) }
	return color.NRGBA{ch(3 * t), ch(3*t - 1), ch(3*t - 2), 255}
}

// at returns the colour for t in [0, 1] (clipped).
func (l *lut) at(t float64) color.NRGBA {
	if !(t > 0) { // also NaN
		return l[0]
	}
	if t >= 1 {
		return l[255]
	}
	return l[int(t*255+0.5)]
}

// ModuleColor is the colour of module (or label) m, m ≥ 1, as the 3D view draws it
// (render.ModuleColor), so that the slices, the inspector and the 3D view agree. Label 0 and
// below (no module) is transparent.
func ModuleColor(m int) color.NRGBA {
	if m < 1 {
		return color.NRGBA{}
	}
	return render.ModuleColor(m)
}
