package report

import (
	"image/color"

	"github.com/hubscope/hubscope/render"
)

// ModuleColor is the display colour of module m (1-based), the colour render.ModuleColors gives
// it in the 3D view; 0 (no module) is grey.
func ModuleColor(m int) color.NRGBA {
	if m <= 0 {
		return color.NRGBA{0x99, 0x99, 0x99, 0xFF}
	}
	return render.ModuleColor(m)
}
