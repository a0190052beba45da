package bundle

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Curve is a fitted degree distribution drawn over the data: F(k) must be in the plot's units,
// the probability P(k) that a node has degree k (a probability mass, so a continuous density
// fitted to the degrees is evaluated as is, and a discrete one as its mass at k).
//
// A Curve without F is a legend line only: a fit that failed is named ("no fit") rather than
// drawn.
type Curve struct {
	Label string // legend, e.g. "power law, γ = 2.31"
	F     func(k float64) float64
}

// textOnly is the legend thumbnail of a Curve without F: nothing beside its label.
type textOnly struct{}

func (textOnly) Thumbnail(*draw.Canvas) {}

// Size of degree_distribution.png in pixels.
const (
	PlotWidthPx  = 800
	PlotHeightPx = 600
	plotDPI      = 96
)

// PlotDegreeDistribution draws the degree distribution as a PNG of PlotWidthPx × PlotHeightPx:
// P(k) = (nodes of degree k) / N for every degree k ≥ 1 that occurs, on log–log axes
// (docs/algorithms.md, "Network measures"; Wang et al. fit power laws to it), with each fit drawn as a line over the
// observed degree range. Nodes of degree 0 cannot appear on a log axis; the title counts them.
func PlotDegreeDistribution(w io.Writer, degrees []int, fits []Curve) error {
	if len(degrees) == 0 {
		return errors.New("degree distribution plot: no nodes")
	}
	count := map[int]int{}
	isolated := 0
	for v, k := range degrees {
		switch {
		case k < 0:
			return fmt.Errorf("degree distribution plot: node %d has degree %d", v, k)
		case k == 0:
			isolated++
		default:
			count[k]++
		}
	}
	if len(count) == 0 {
		return fmt.Errorf("degree distribution plot: all %d nodes are isolated (degree 0); nothing to draw on log axes", len(degrees))
	}
	n := float64(len(degrees))
	pts := make(plotter.XYs, 0, len(count))
	for k, c := range count {
		pts = append(pts, plotter.XY{X: float64(k), Y: float64(c) / n})
	}
	sort.Slice(pts, func(a, b int) bool { return pts[a].X < pts[b].X })
	kmin, kmax := pts[0].X, pts[len(pts)-1].X
	pmin, pmax := math.Inf(1), 0.0
	for _, p := range pts {
		pmin, pmax = math.Min(pmin, p.Y), math.Max(pmax, p.Y)
	}

	p := plot.New()
	p.Title.Text = fmt.Sprintf("Degree distribution (%d nodes", len(degrees))
	if isolated > 0 {
		p.Title.Text += fmt.Sprintf(", %d isolated not shown", isolated)
	}
	p.Title.Text += ")"
	p.X.Label.Text = "degree k"
	p.Y.Label.Text = "P(k)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	// Fixed ranges: a factor of 1.5 around the data in k and of 3 in P(k) (at least a decade
	// overall), so a single distinct degree still gets a valid log axis and a fit that plunges
	// in the tail does not squash the data into a corner.
	p.X.Min, p.X.Max = kmin/1.5, kmax*1.5
	p.Y.Min, p.Y.Max = pmin/3, math.Min(1, pmax*3)
	if p.Y.Max/p.Y.Min < 10 {
		p.Y.Min = p.Y.Max / 10
	}

	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("degree distribution plot: %w", err)
	}
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Radius = vg.Points(2.5)
	sc.GlyphStyle.Color = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	p.Add(sc)
	p.Legend.Add("data", sc)
	p.Legend.Top = true

	palette := []color.RGBA{{R: 214, G: 39, B: 40, A: 255}, {R: 44, G: 160, B: 44, A: 255}, {R: 148, G: 103, B: 189, A: 255}, {R: 255, G: 127, B: 14, A: 255}}
	for c, fit := range fits {
		if fit.F == nil {
			p.Legend.Add(fit.Label, textOnly{})
			continue
		}
		// Sample evenly in log k; a log axis cannot show values ≤ 0, and values below the axis
		// would only be clipped, so a line is broken where the fit leaves the visible range.
		const samples = 200
		var seg plotter.XYs
		legended := false
		flush := func() error {
			if len(seg) >= 2 {
				l, err := plotter.NewLine(seg)
				if err != nil {
					return err
				}
				// The first fit solid and wide, the others dashed and narrower on top of it,
				// so that two fits that nearly coincide still both show.
				l.LineStyle.Width = vg.Points(2.5)
				l.LineStyle.Color = palette[c%len(palette)]
				if c > 0 {
					l.LineStyle.Width = vg.Points(1.5)
					l.LineStyle.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
				}
				p.Add(l)
				if !legended {
					p.Legend.Add(fit.Label, l)
					legended = true
				}
			}
			seg = nil
			return nil
		}
		for s := 0; s < samples; s++ {
			k := kmin * math.Pow(kmax/kmin, float64(s)/(samples-1))
			y := fit.F(k)
			if math.IsNaN(y) || y < p.Y.Min || y > p.Y.Max {
				if err := flush(); err != nil {
					return fmt.Errorf("degree distribution plot: fit %q: %w", fit.Label, err)
				}
				continue
			}
			seg = append(seg, plotter.XY{X: k, Y: y})
		}
		if err := flush(); err != nil {
			return fmt.Errorf("degree distribution plot: fit %q: %w", fit.Label, err)
		}
	}

	cv := vgimg.NewWith(vgimg.UseWH(vg.Length(PlotWidthPx)*vg.Inch/plotDPI, vg.Length(PlotHeightPx)*vg.Inch/plotDPI), vgimg.UseDPI(plotDPI))
	p.Draw(draw.New(cv))
	if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(w); err != nil {
		return fmt.Errorf("degree distribution plot: %w", err)
	}
	return nil
}
