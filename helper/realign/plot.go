package realign

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot draws the motion as a PNG: translations (mm), rotations (degrees) and framewise
// displacement (mm) against the volume, one panel each, stacked.
func (r *Result) Plot(w io.Writer) error {
	width, height := vg.Length(1000)*vg.Inch/96, vg.Length(720)*vg.Inch/96
	canvas := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96))}
	colors := []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}}
	panel := func(title, unit string, series [][]float64, names []string) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "volume"
		p.Y.Label.Text = unit
		for i, s := range series {
			pts := make(plotter.XYs, len(s))
			for t, v := range s {
				pts[t] = plotter.XY{X: float64(t), Y: v}
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			l.Color = colors[i%len(colors)]
			p.Add(l)
			p.Legend.Add(names[i], l)
		}
		p.Legend.Top = true
		return p, nil
	}
	col := func(k int, scale float64) []float64 {
		out := make([]float64, len(r.Params))
		for t, q := range r.Params {
			out[t] = q[k] * scale
		}
		return out
	}
	deg := 180 / math.Pi
	pt, err := panel("translation", "mm", [][]float64{col(0, 1), col(1, 1), col(2, 1)}, Names[:3])
	if err != nil {
		return fmt.Errorf("motion plot: %w", err)
	}
	pr, err := panel("rotation", "degrees", [][]float64{col(3, deg), col(4, deg), col(5, deg)}, Names[3:])
	if err != nil {
		return fmt.Errorf("motion plot: %w", err)
	}
	pf, err := panel("framewise displacement (Power et al. 2012)", "mm", [][]float64{r.FD}, []string{"FD"})
	if err != nil {
		return fmt.Errorf("motion plot: %w", err)
	}
	plots := [][]*plot.Plot{{pt}, {pr}, {pf}}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: 3, Cols: 1, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	_, err = canvas.WriteTo(w)
	return err
}
