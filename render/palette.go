package render

import (
	"image/color"
	"math"
)

// modulePalette is a qualitative palette ordered so that every prefix stays as distinct as
// possible: Okabe & Ito's colour-blind-safe set (2008) without its black, then Paul Tol's
// "muted" scheme (2021), three of Tol's "light" colours and two darker extras. Every pair of the
// first 8 differs by ΔE*ab ≥ 26, of the first 20 by ≥ 14 (CIE 1976 in CIELAB, D65); that the
// first 7 stay distinguishable with red–green colour blindness is Okabe and Ito's design.
var modulePalette = [...]color.NRGBA{
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xF0, 0xE4, 0x42, 0xFF}, // yellow
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0x33, 0x22, 0x88, 0xFF}, // indigo
	{0x88, 0xCC, 0xEE, 0xFF}, // cyan
	{0x44, 0xAA, 0x99, 0xFF}, // teal
	{0x11, 0x77, 0x33, 0xFF}, // green
	{0x99, 0x99, 0x33, 0xFF}, // olive
	{0xDD, 0xCC, 0x77, 0xFF}, // sand
	{0xCC, 0x66, 0x77, 0xFF}, // rose
	{0x88, 0x22, 0x55, 0xFF}, // wine
	{0xAA, 0x44, 0x99, 0xFF}, // purple
	{0xEE, 0x88, 0x66, 0xFF}, // light orange
	{0xBB, 0xCC, 0x33, 0xFF}, // pear
	{0xFF, 0xAA, 0xBB, 0xFF}, // pink
	{0x8C, 0x61, 0x3C, 0xFF}, // brown
	{0x00, 0x44, 0x88, 0xFF}, // dark blue
}

// ModuleColors returns n colours for modules 1…n (module m gets element m−1): see ModuleColor.
func ModuleColors(n int) []color.NRGBA {
	if n <= 0 {
		return nil
	}
	out := make([]color.NRGBA, n)
	for i := range out {
		out[i] = ModuleColor(i + 1)
	}
	return out
}

// ModuleColor is the colour of module m (m ≥ 1; 1 = the largest module). The first 21 are the
// fixed palette above; beyond it colours continue deterministically around the CIELCh hue circle
// in golden-angle steps (137.5°, so each new hue falls in the largest gap left) at three
// alternating lightnesses, which keeps neighbours in the sequence apart but can no longer
// promise any minimum difference. m < 1 is treated as 1: callers decide what "no module" looks
// like.
func ModuleColor(m int) color.NRGBA {
	i := max(m, 1) - 1
	if i < len(moduleColorTable) {
		return moduleColorTable[i]
	}
	return moduleColorAt(i)
}

// moduleColorTable holds the first 256 colours, so that per-pixel lookups (slice overlays of
// modules or atlas labels) never convert colours.
var moduleColorTable = func() (t [256]color.NRGBA) {
	for i := range t {
		t[i] = moduleColorAt(i)
	}
	return t
}()

func moduleColorAt(i int) color.NRGBA {
	if i < len(modulePalette) {
		return modulePalette[i]
	}
	k := i - len(modulePalette)
	hue := math.Mod(20+137.50776405*float64(k), 360) * math.Pi / 180
	light := [3]float64{62, 78, 46}[k%3]
	return labToSRGB(light, 42*math.Cos(hue), 42*math.Sin(hue))
}

// labToSRGB converts CIELAB (D65 white) to 8-bit sRGB, clipping out-of-gamut channels.
func labToSRGB(l, a, b float64) color.NRGBA {
	fy := (l + 16) / 116
	fx, fz := fy+a/500, fy-b/200
	inv := func(t float64) float64 {
		if t*t*t > 216.0/24389 {
			return t * t * t
		}
		return (116*t - 16) * 27 / 24389
	}
	x, y, z := 0.95047*inv(fx), inv(fy), 1.08883*inv(fz)
	// XYZ → linear sRGB (IEC 61966-2-1), then the sRGB transfer curve.
	lin := [3]float64{
		3.2404542*x - 1.5371385*y - 0.4985314*z,
		-0.9692660*x + 1.8760108*y + 0.0415560*z,
		0.0556434*x - 0.2040259*y + 1.0572252*z,
	}
	var c [3]uint8
	for k, v := range lin {
		v = min(max(v, 0), 1)
		if v <= 0.0031308 {
			v *= 12.92
		} else {
			v = 1.055*math.Pow(v, 1/2.4) - 0.055
		}
		c[k] = uint8(math.Round(v * 255))
	}
	return color.NRGBA{c[0], c[1], c[2], 0xFF}
}

// srgbToLab converts 8-bit sRGB to CIELAB (D65), the inverse of labToSRGB within rounding.
func srgbToLab(c color.NRGBA) (l, a, b float64) {
	var lin [3]float64
	for k, v := range [3]uint8{c.R, c.G, c.B} {
		s := float64(v) / 255
		if s <= 0.04045 {
			lin[k] = s / 12.92
		} else {
			lin[k] = math.Pow((s+0.055)/1.055, 2.4)
		}
	}
	x := (0.4124564*lin[0] + 0.3575761*lin[1] + 0.1804375*lin[2]) / 0.95047
	y := 0.2126729*lin[0] + 0.7151522*lin[1] + 0.0721750*lin[2]
	z := (0.0193339*lin[0] + 0.1191920*lin[1] + 0.9503041*lin[2]) / 1.08883
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return (24389.0/27*t + 16) / 116
	}
	fx, fy, fz := f(x), f(y), f(z)
	return 116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)
}
