package pipeline

import (
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Quality control of the cleaning, in the bundle's qc/ folder (what a clinician checks first:
// Power et al. 2014; the carpet plot of Power 2017, NeuroImage 154:150):
//
//	qc/denoise.json  the cleaning report (metrics.json's denoise) with the per-volume traces:
//	                 framewise displacement and standardised DVARS from the confounds table
//	                 (when it has them) and DVARS of the series before and after cleaning
//	qc/carpet.png    voxels × time, before (top) and after (bottom) cleaning; each row z-scored,
//	                 grey from −2.5 to 2.5 SD; censored volumes red in the lower panel
//	qc/fd.png        the framewise displacement trace with the censoring threshold
const (
	QCDenoiseFile = schema.DenoiseQCFile
	QCCarpetFile  = "qc/carpet.png"
	QCFDFile      = "qc/fd.png"
)

func nullable(v []float64) []*float64 {
	if v == nil {
		return nil
	}
	out := make([]*float64, len(v))
	for i := range v {
		if !math.IsNaN(v[i]) {
			out[i] = &v[i]
		}
	}
	return out
}

// dvars is the RMS over the n series (row-major, t columns) of the change from each volume to
// the next, each series scaled by scale(i) (0 for the first volume).
func dvars(x []float32, n, t int, scale func(i int) float64) []float64 {
	d := make([]float64, t)
	for i := 0; i < n; i++ {
		row := x[i*t : (i+1)*t]
		s := scale(i)
		for k := 1; k < t; k++ {
			v := float64(row[k]-row[k-1]) * s
			d[k] += v * v
		}
	}
	for k := range d {
		d[k] = math.Sqrt(d[k] / float64(n))
	}
	return d
}

// carpetRows is the carpet's sample of voxels: up to 400, evenly spaced (row r is voxel
// r·n/rows).
func carpetRows(x []float32, n, t int) []float32 {
	rows := min(n, 400)
	out := make([]float32, 0, rows*t)
	for r := 0; r < rows; r++ {
		i := r * n / rows
		out = append(out, x[i*t:(i+1)*t]...)
	}
	return out
}

// dvarsPercent is DVARS in % of each voxel's mean (the series before cleaning).
func dvarsPercent(x []float32, n, t int) []float64 {
	return dvars(x, n, t, func(i int) float64 {
		m := 0.0
		for _, v := range x[i*t : (i+1)*t] {
			m += float64(v)
		}
		m /= float64(t)
		if m == 0 {
			return 0
		}
		return 100 / math.Abs(m)
	})
}

// writeCleanQC writes qc/ for a cleaning; cleaned is the cleaned series (n×c.VolumesKept).
func writeCleanQC(w *bundle.Writer, c *CleanReport, cleaned []float32, n int) error {
	tIn, tOut := c.VolumesIn, c.VolumesKept
	q := schema.DenoiseQC{Denoise: c.Denoise, FD: nullable(c.fd), StdDVARS: nullable(c.stdDVARS), DVARSBefore: c.dvarsBefore}
	q.DVARSAfter = dvars(cleaned, n, tOut, func(int) float64 { return 1 })
	raw := c.carpetRaw
	cleanedRows := carpetRows(cleaned, n, tOut)
	n = min(n, 400)
	if err := w.WriteJSON(QCDenoiseFile, q); err != nil {
		return err
	}
	if err := w.WriteFile(QCCarpetFile, func(out io.Writer) error {
		return png.Encode(out, carpet(raw, cleanedRows, n, tIn, c))
	}); err != nil {
		return err
	}
	if c.fd != nil {
		return w.WriteFile(QCFDFile, func(out io.Writer) error { return plotFD(out, c.fd, c.fdThreshold) })
	}
	return nil
}

// carpet draws the sampled voxels (rows) × time, before over after, 2 pixels a volume.
func carpet(raw, cleaned []float32, rows, tIn int, c *CleanReport) image.Image {
	const px, gap = 2, 6
	img := image.NewRGBA(image.Rect(0, 0, tIn*px, 2*rows+gap))
	for y := rows; y < rows+gap; y++ {
		for x := 0; x < tIn*px; x++ {
			img.Set(x, y, color.White)
		}
	}
	kept := make([]int, tIn) // output column of each input volume, −1 if censored
	for k := range kept {
		kept[k] = -1
	}
	for j, k := range c.kept {
		kept[k] = j
	}
	draw := func(y0 int, x []float32, t int, col func(k int) int) {
		for r := 0; r < rows; r++ {
			row := x[r*t : (r+1)*t]
			m, ss := 0.0, 0.0
			for _, v := range row {
				m += float64(v)
			}
			m /= float64(t)
			for _, v := range row {
				ss += (float64(v) - m) * (float64(v) - m)
			}
			sd := math.Sqrt(ss / float64(t))
			for k := 0; k < tIn; k++ {
				j := col(k)
				var cl color.Color = color.RGBA{200, 30, 30, 255}
				if j >= 0 {
					z := 0.0
					if sd > 0 {
						z = (float64(row[j]) - m) / sd
					}
					g := uint8(math.Round(255 * (math.Max(-2.5, math.Min(2.5, z)) + 2.5) / 5))
					cl = color.Gray{Y: g}
				}
				for dx := 0; dx < px; dx++ {
					img.Set(k*px+dx, y0+r, cl)
				}
			}
		}
	}
	draw(0, raw, tIn, func(k int) int { return k })
	draw(rows+gap, cleaned, c.VolumesKept, func(k int) int { return kept[k] })
	return img
}

// plotFD draws the framewise displacement per volume with the censoring threshold.
func plotFD(out io.Writer, fd []float64, threshold float64) error {
	p := plot.New()
	p.Title.Text = "Framewise displacement"
	p.X.Label.Text = "volume"
	p.Y.Label.Text = "FD (mm)"
	var pts plotter.XYs
	for k, v := range fd {
		if !math.IsNaN(v) {
			pts = append(pts, plotter.XY{X: float64(k), Y: v})
		}
	}
	if len(pts) > 0 {
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		p.Add(l)
	}
	if threshold > 0 {
		t := plotter.NewFunction(func(float64) float64 { return threshold })
		t.Color = color.RGBA{200, 30, 30, 255}
		t.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(t)
		p.Legend.Add("censoring threshold", t)
	}
	c := vgimg.New(8*vg.Inch, 2.5*vg.Inch)
	p.Draw(draw.New(c))
	_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(out)
	return err
}
