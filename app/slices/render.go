package slices

import (
	"image"
	"image/color"
	"math"
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/hubscope/hubscope/ipc"
)

// Style is how an overlay is drawn over the background.
type Style struct {
	// Colormap is Hot or Viridis for quantities; categorical volumes always use ModuleColor.
	Colormap Colormap
	// Threshold: quantities below it are transparent; the colour scale runs from Threshold
	// (bottom colour) to Max (top colour). Categorical labels below 1 are always transparent.
	Threshold, Max float64
	// Opacity of the overlay, 0 (background only) … 1 (overlay hides the background).
	Opacity float64
	// Signed maps (seed correlations, z, t) are drawn with the diverging ColdHot scale:
	// Threshold and Max then apply to |value|, negative values in the cold half, positive in
	// the hot half, each running from the threshold (black) to Max (white).
	Signed bool
}

// grayMax is the brightest background grey: the background never reaches white, so the top of
// the hot scale and light module colours stay distinguishable from it.
const grayMax = 200

// intensityWindow returns the background's display window: its 1st and 99.5th percentiles over
// finite values (a subsample of at most ~65,000 voxels), so a few bright vessels or a dark
// outside do not wash the brain out.
func intensityWindow(v *ipc.Volume) (lo, hi float32) {
	// A cached volume is shared and never changed: its window is worked out once (the
	// viewer and the report's slice figure both draw the same background when a result opens).
	key := weak.Make(v)
	windowsMu.Lock()
	w, ok := windows[key]
	windowsMu.Unlock()
	if ok {
		return w[0], w[1]
	}
	lo, hi = intensityWindowOf(v)
	windowsMu.Lock()
	if _, again := windows[key]; !again {
		windows[key] = [2]float32{lo, hi}
		// A volume the cache drops takes its entry with it.
		runtime.AddCleanup(v, func(k weak.Pointer[ipc.Volume]) {
			windowsMu.Lock()
			delete(windows, k)
			windowsMu.Unlock()
		}, key)
	}
	windowsMu.Unlock()
	return lo, hi
}

// windows holds intensityWindow's answers by volume (weak keys).
var (
	windowsMu sync.Mutex
	windows   = map[weak.Pointer[ipc.Volume]][2]float32{}
)

func intensityWindowOf(v *ipc.Volume) (lo, hi float32) {
	step := max(1, len(v.Data)/65536)
	s := make([]float32, 0, len(v.Data)/step+1)
	for n := 0; n < len(v.Data); n += step {
		if x := v.Data[n]; !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return 0, 1
	}
	slices.Sort(s) // no NaN here: the same order as a < b
	lo, hi = s[len(s)/100], s[min(len(s)-1, len(s)*995/1000)]
	if hi <= lo {
		lo, hi = s[0], s[len(s)-1]
	}
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

// layer is a volume ready to draw: its data and how values become colours.
type layer struct {
	vol    *ipc.Volume
	lo, hi float32 // background: intensity window
	style  Style
	lut    *lut
}

// renderSlice draws slice s of geometry g into dst (g.nc × g.nr pixels, one per voxel): the
// background in grey, then the overlay blended at its opacity, out = (1 − α)·grey + α·colour.
// Either layer may be nil. NaN background voxels are black; NaN overlay voxels transparent.
func renderSlice(dst *image.RGBA, g sliceGeom, s int, bg, ov *layer) {
	base := s * g.stride[g.fixed]
	cs, rs := g.stride[g.col], g.stride[g.row]
	// off(px, py) = base + c0 + px·cs + r0 + py·rs, with the start and sign set by the flips.
	var c0, r0 int
	if g.colFlip {
		c0, cs = (g.nc-1)*g.stride[g.col], -cs
	}
	if g.rowFlip {
		r0, rs = (g.nr-1)*g.stride[g.row], -rs
	}
	var bgData, ovData []float32
	var scale float32
	if bg != nil {
		bgData = bg.vol.Data
		scale = grayMax / (bg.hi - bg.lo)
	}
	var alpha, thr, span float64
	categorical, signed := false, false
	if ov != nil {
		signed = ov.style.Signed
		ovData = ov.vol.Data
		alpha = math.Max(0, math.Min(1, ov.style.Opacity))
		categorical = ov.vol.Header.Categorical
		thr = ov.style.Threshold
		span = ov.style.Max - thr
	}
	for py := 0; py < g.nr; py++ {
		row := dst.Pix[py*dst.Stride : py*dst.Stride+4*g.nc]
		off := base + c0 + r0 + py*rs
		for px := 0; px < g.nc; px++ {
			var gray float32
			if bgData != nil {
				x := bgData[off]
				switch {
				case math.IsNaN(float64(x)) || x <= bg.lo:
				case x >= bg.hi:
					gray = grayMax
				default:
					gray = (x - bg.lo) * scale
				}
			}
			r, gr, b := gray, gray, gray
			if ovData != nil {
				if x := float64(ovData[off]); !math.IsNaN(x) {
					var c color.NRGBA
					if categorical {
						c = ModuleColor(int(math.Round(x)))
					} else if signed {
						if a := math.Abs(x); a >= thr {
							u := 1.0
							if span > 0 {
								u = math.Min(1, (a-thr)/span)
							}
							// ColdHot's middle (index 127.5) is zero; its ends ±Max.
							c = ov.lut.at(0.5 + math.Copysign(0.5*u, x))
						}
					} else if x >= thr {
						t := 1.0
						if span > 0 {
							t = (x - thr) / span
						}
						c = ov.lut.at(t)
					}
					if c.A != 0 {
						a := float32(alpha)
						r = (1-a)*r + a*float32(c.R)
						gr = (1-a)*gr + a*float32(c.G)
						b = (1-a)*b + a*float32(c.B)
					}
				}
			}
			p := row[4*px : 4*px+4 : 4*px+4]
			p[0], p[1], p[2], p[3] = uint8(r+0.5), uint8(gr+0.5), uint8(b+0.5), 255
			off += cs
		}
	}
}
