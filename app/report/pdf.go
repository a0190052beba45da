package report

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"codeberg.org/go-fonts/liberation/liberationmonoregular"
	"codeberg.org/go-fonts/liberation/liberationsansbold"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
	"codeberg.org/go-pdf/fpdf"
)

// The PDF is A4 portrait in millimetres. Text is set in Liberation Sans and Mono (SIL Open
// Font License; embedded as subsets with their Unicode maps, so γ, λ, σ, ≥ print and a PDF
// reader's text extraction gives back the numbers as printed).
const (
	pdfMargin = 15.0
	pdfWidth  = 210 - 2*pdfMargin
	// pdfMaxHubs bounds the hub rows of the PDF so that the report stays within three pages;
	// the full table is hubs.tsv.
	pdfMaxHubs = 20
)

// WritePDF writes the report as a PDF of one to three A4 pages: the same reading of the
// analysis as the HTML page (build), laid out for print.
func WritePDF(w io.Writer, r Report) error {
	if r.MaxHubs <= 0 || r.MaxHubs > pdfMaxHubs {
		r.MaxHubs = pdfMaxHubs
	}
	p, err := build(r)
	if err != nil {
		return err
	}
	d := fpdf.New("P", "mm", "A4", "")
	d.SetCompression(true)
	d.SetCatalogSort(true)
	d.SetCreationDate(r.Created)
	d.SetModificationDate(r.Created)
	d.SetProducer("HubScope "+p.Version, true)
	d.SetCreator("HubScope "+p.Version, true)
	d.SetTitle("HubScope report: "+p.Title, true)
	d.AddUTF8FontFromBytes("sans", "", liberationsansregular.TTF)
	d.AddUTF8FontFromBytes("sans", "B", liberationsansbold.TTF)
	d.AddUTF8FontFromBytes("mono", "", liberationmonoregular.TTF)
	d.SetMargins(pdfMargin, pdfMargin, pdfMargin)
	d.SetAutoPageBreak(true, pdfMargin+5)
	d.AliasNbPages("{nb}")
	d.SetFooterFunc(func() {
		d.SetY(-pdfMargin - 2)
		d.SetFont("sans", "", 7)
		d.SetTextColor(100, 100, 100)
		d.CellFormat(pdfWidth/2, 4, "HubScope "+p.Version+" · for research use; not a diagnosis", "", 0, "L", false, 0, "")
		d.CellFormat(pdfWidth/2, 4, fmt.Sprintf("page %d of {nb}", d.PageNo()), "", 0, "R", false, 0, "")
	})
	d.AddPage()
	pw := pdfWriter{d}

	d.SetFont("sans", "B", 15)
	d.SetTextColor(0, 0, 0)
	d.MultiCell(pdfWidth, 7, "HubScope report: "+p.Title, "", "L", false)
	pw.small(fmt.Sprintf("Functional brain network of a resting-state fMRI scan, voxel by voxel. Made %s with HubScope %s (%s). Results folder: %s", p.Created, p.Version, p.Backend, p.Bundle))

	pw.heading("Scan")
	pw.pairs(p.Scan)
	pw.heading("Settings")
	pw.pairs(p.Settings)
	if len(p.QC) > 0 {
		pw.heading("Cleaning and head motion")
		pw.lines(p.QC)
		d.SetTextColor(176, 0, 0)
		d.SetFont("sans", "B", 8.5)
		for _, l := range p.QCWarnings {
			d.MultiCell(pdfWidth, 4.2, l, "", "L", false)
		}
		d.SetTextColor(0, 0, 0)
	}
	if len(p.Figures) > 0 {
		pw.heading("Figures")
		if err := pw.figures(p.Figures); err != nil {
			return err
		}
	}

	pw.heading("Global measures")
	var rows [][]string
	for _, m := range p.Measures {
		rows = append(rows, []string{m.Name, m.Value, m.Meaning})
	}
	pw.table([]string{"Measure", "Value", "Meaning"}, []float64{52, 34, pdfWidth - 86}, []string{"L", "R", "L"}, rows)

	if len(p.Modules) > 0 {
		pw.heading("Modules (" + p.ModuleMethod + ")")
		pw.modules(p.Modules)
	}
	pw.heading("Hubs")
	rows = rows[:0]
	for i, h := range p.Hubs {
		region := h.Region
		if region == "" {
			region = "outside the atlas"
		}
		mod := ""
		if h.Module != 0 {
			mod = strconv.Itoa(h.Module)
		}
		rows = append(rows, []string{strconv.Itoa(i + 1), region, fmt.Sprintf("%.0f, %.0f, %.0f", h.MNI[0], h.MNI[1], h.MNI[2]),
			strconv.Itoa(h.Degree), fmt.Sprintf("%.1f", h.HubZ), mod, h.Role})
	}
	pw.table([]string{"#", "Region", "MNI x, y, z (mm)", "Degree", "Hub z", "Module", "Role"},
		[]float64{8, 62, 32, 17, 15, 15, pdfWidth - 149}, []string{"R", "L", "L", "R", "R", "R", "L"}, rows)
	if p.HubNote != "" {
		pw.small(p.HubNote)
	}
	if len(p.Norm) > 0 {
		pw.heading("Against the normative cohort")
		pw.lines(p.Norm)
		if len(p.NormClusters) > 0 {
			rows = rows[:0]
			for i, c := range p.NormClusters {
				region := c.Region
				if region == "" {
					region = "outside the atlas"
				}
				rows = append(rows, []string{strconv.Itoa(i + 1), c.Direction(), strconv.Itoa(c.Voxels), fmt.Sprintf("%.2f", c.PeakZ),
					fmt.Sprintf("%.0f, %.0f, %.0f", c.PeakMM[0], c.PeakMM[1], c.PeakMM[2]), region})
			}
			pw.table([]string{"#", "Degree", "Voxels", "Peak z", "MNI x, y, z (mm)", "Region"},
				[]float64{8, 32, 16, 16, 32, pdfWidth - 104}, []string{"R", "L", "R", "R", "L", "L"}, rows)
		}
	}
	if p.Command != "" {
		pw.heading("To repeat this analysis")
		d.SetFont("mono", "", 7.5)
		d.SetFillColor(244, 244, 244)
		d.MultiCell(pdfWidth, 3.6, p.Command, "", "L", true)
	}
	foot := "γ, λ, σ against degree-preserving random networks (Maslov & Sneppen 2002; Humphries et al. 2008)."
	if p.AtlasName != "" {
		foot = "Regions: " + p.AtlasName + ". " + p.AtlasCitation + ". " + foot
	}
	d.Ln(2)
	pw.small(foot)
	if err := d.Error(); err != nil {
		return fmt.Errorf("report PDF: %w", err)
	}
	if n := d.PageCount(); n > 3 {
		return fmt.Errorf("report PDF: %d pages, more than the three a record takes", n)
	}
	return d.Output(w)
}

type pdfWriter struct{ d *fpdf.Fpdf }

func (w pdfWriter) heading(s string) {
	d := w.d
	// A heading never ends a page: it needs room for itself and two lines under it.
	_, ph := d.GetPageSize()
	if d.GetY()+16 > ph-pdfMargin-5 {
		d.AddPage()
	}
	d.Ln(2)
	d.SetFont("sans", "B", 11)
	d.SetTextColor(0, 0, 0)
	d.CellFormat(pdfWidth, 6, s, "B", 1, "L", false, 0, "")
	d.Ln(1)
}

func (w pdfWriter) small(s string) {
	w.d.SetFont("sans", "", 7.5)
	w.d.SetTextColor(85, 85, 85)
	w.d.MultiCell(pdfWidth, 3.6, s, "", "L", false)
	w.d.SetTextColor(0, 0, 0)
}

func (w pdfWriter) lines(ls []string) {
	w.d.SetFont("sans", "", 8.5)
	for _, l := range ls {
		w.d.MultiCell(pdfWidth, 4.2, "• "+l, "", "L", false)
	}
}

func (w pdfWriter) pairs(ps []Setting) {
	var rows [][]string
	for _, s := range ps {
		rows = append(rows, []string{s.Name, s.Value})
	}
	w.table(nil, []float64{40, pdfWidth - 40}, []string{"L", "L"}, rows)
}

// table prints rows under an optional header, each cell wrapped to its column; a row that
// would cross the page's end starts the next page (with the header again).
func (w pdfWriter) table(head []string, widths []float64, align []string, rows [][]string) {
	d := w.d
	const lh = 3.9
	_, ph := d.GetPageSize()
	header := func() {
		if head == nil {
			return
		}
		d.SetFont("sans", "B", 8)
		d.SetFillColor(235, 235, 235)
		for i, h := range head {
			d.CellFormat(widths[i], 5, h, "", 0, align[i], true, 0, "")
		}
		d.Ln(5)
	}
	header()
	for _, row := range rows {
		d.SetFont("sans", "", 8)
		n := 1
		split := make([][]string, len(row))
		for i, c := range row {
			split[i] = d.SplitText(c, widths[i]-2)
			n = max(n, len(split[i]))
		}
		h := float64(n)*lh + 0.8
		if d.GetY()+h > ph-pdfMargin-5 {
			d.AddPage()
			header()
			d.SetFont("sans", "", 8)
		}
		x, y := d.GetX(), d.GetY()
		for i := range row {
			if head == nil && i == 0 {
				d.SetFont("sans", "B", 8)
			} else {
				d.SetFont("sans", "", 8)
			}
			for j, l := range split[i] {
				d.SetXY(x, y+0.4+float64(j)*lh)
				d.CellFormat(widths[i], lh, l, "", 0, align[i], false, 0, "")
			}
			x += widths[i]
		}
		d.SetDrawColor(220, 220, 220)
		d.Line(pdfMargin, y+h, pdfMargin+pdfWidth, y+h)
		d.SetXY(pdfMargin, y+h)
	}
}

// figures lays the figures out side by side (at most three a row), each scaled to its share of
// the width and at most 62 mm high, with its title under it.
func (w pdfWriter) figures(figs []pageFigure) error {
	d := w.d
	const gap, maxH, capH = 4.0, 62.0, 7.5
	for start := 0; start < len(figs); start += 3 {
		row := figs[start:min(start+3, len(figs))]
		cw := (pdfWidth - gap*float64(len(row)-1)) / float64(len(row))
		type placed struct {
			name string
			w, h float64
		}
		var ps []placed
		rowH := 0.0
		for i, f := range row {
			name := fmt.Sprintf("fig%d", start+i)
			info := d.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(f.PNG))
			if info == nil || d.Err() {
				return fmt.Errorf("report figure %q: %v", f.Title, d.Error())
			}
			iw, ih := info.Extent()
			s := min(cw/iw, maxH/ih)
			ps = append(ps, placed{name, iw * s, ih * s})
			rowH = max(rowH, ih*s)
		}
		_, ph := d.GetPageSize()
		if d.GetY()+rowH+capH > ph-pdfMargin-5 {
			d.AddPage()
		}
		y := d.GetY()
		for i, f := range row {
			x := pdfMargin + float64(i)*(cw+gap)
			d.ImageOptions(ps[i].name, x+(cw-ps[i].w)/2, y+(rowH-ps[i].h)/2, ps[i].w, ps[i].h, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
			d.SetXY(x, y+rowH+0.8)
			d.SetFont("sans", "", 7.5)
			d.MultiCell(cw, 3.4, f.Title, "", "C", false)
		}
		d.SetXY(pdfMargin, y+rowH+capH)
	}
	return nil
}

// modules prints the modules four to a row: a colour swatch (the 3D view's and the modules
// map's colour), the number, the voxels and their share.
func (w pdfWriter) modules(ms []pageModule) {
	d := w.d
	const perRow, lh = 4, 4.6
	cw := pdfWidth / perRow
	d.SetFont("sans", "", 8)
	single := 0
	for _, m := range ms {
		if m.Size < 2 {
			single++
		}
	}
	ms = ms[:len(ms)-single] // largest first: the single voxels are last
	for i, m := range ms {
		if i%perRow == 0 && i > 0 {
			d.Ln(lh)
		}
		x, y := pdfMargin+float64(i%perRow)*cw, d.GetY()
		var r, g, b int
		fmt.Sscanf(m.Colour, "#%02x%02x%02x", &r, &g, &b)
		d.SetFillColor(r, g, b)
		d.SetDrawColor(80, 80, 80)
		d.Rect(x, y+0.9, 2.8, 2.8, "FD")
		d.SetXY(x+4, y)
		d.CellFormat(cw-4, lh, fmt.Sprintf("Module %d: %d voxels (%s)", m.Number, m.Size, m.Share), "", 0, "L", false, 0, "")
	}
	d.Ln(lh)
	d.SetX(pdfMargin)
	if single > 0 {
		d.CellFormat(pdfWidth, lh, fmt.Sprintf("and %d voxels in modules of their own (isolated voxels, mostly)", single), "", 1, "L", false, 0, "")
	}
}
