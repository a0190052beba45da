package sweep

import (
	"fmt"
	"image/color"
	"io"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// TSVHeader is sweep.tsv's header: the threshold, then Measures' keys.
func TSVHeader() []string {
	h := []string{"threshold", "weakest_value"}
	for _, m := range Measures {
		h = append(h, m.Key)
	}
	return h
}

// Rows emits sweep.tsv's rows (one per threshold, then one "auc" row); "n/a" marks a value
// that is undefined or was not measured.
func (r *Result) Rows(emit func(fields ...string) error) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	for i := range r.Points {
		p := &r.Points[i]
		row := []string{f(p.Threshold), "n/a"}
		if p.WeakestValue != nil {
			row[1] = f(*p.WeakestValue)
		}
		for _, m := range Measures {
			if v, ok := m.Get(p); ok && r.measured(m.Key) {
				row = append(row, f(v))
			} else {
				row = append(row, "n/a")
			}
		}
		if err := emit(row...); err != nil {
			return err
		}
	}
	row := []string{"auc", "n/a"}
	for _, m := range Measures {
		if v, ok := r.AUC[m.Key]; ok {
			row = append(row, f(v))
		} else {
			row = append(row, "n/a")
		}
	}
	return emit(row...)
}

// measured is false for the optional measures the sweep skipped (path measures, clustering):
// those are always defined when measured, so their area under the curve is there.
func (r *Result) measured(key string) bool {
	switch key {
	case "characteristic_path_length", "global_efficiency", "clustering_coefficient":
		_, ok := r.AUC[key]
		return ok
	}
	return true
}

// curveKeys are the measures drawn in sweep.png / sweep.svg, one panel each.
var curveKeys = []string{"mean_degree", "hubs", "clustering_coefficient", "characteristic_path_length",
	"global_efficiency", "largest_component_share", "modularity", "sigma"}

// Plot draws every curve measure against the threshold, one panel each (4 × 2), as PNG or SVG.
func (r *Result) Plot(w io.Writer, format string) error {
	const cols, rowsN = 4, 2
	width, height := vg.Length(1500)*vg.Inch/96, vg.Length(700)*vg.Inch/96
	var canvas vg.CanvasWriterTo
	switch format {
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96))}
	case "svg":
		canvas = vgsvg.New(width, height)
	default:
		return fmt.Errorf("sweep plot: unknown format %q", format)
	}
	plots := make([][]*plot.Plot, rowsN)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	get := map[string]func(*Point) (float64, bool){}
	for _, m := range Measures {
		get[m.Key] = m.Get
	}
	for c, key := range curveKeys {
		p := plot.New()
		p.Title.Text = key
		p.X.Label.Text = r.Spec.Kind + " threshold"
		var pts plotter.XYs
		for i := range r.Points {
			if v, ok := get[key](&r.Points[i]); ok && r.measured(key) {
				pts = append(pts, plotter.XY{X: r.Points[i].Threshold, Y: v})
			}
		}
		if len(pts) > 0 {
			lp, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return fmt.Errorf("sweep plot %s: %w", key, err)
			}
			lp.Color = color.RGBA{R: 31, G: 119, B: 180, A: 255}
			sc.Shape = draw.CircleGlyph{}
			sc.Color = lp.Color
			p.Add(lp, sc)
		} else {
			p.Title.Text += " (not measured)"
		}
		plots[c/cols][c%cols] = p
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: rowsN, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	_, err := canvas.WriteTo(w)
	return err
}
