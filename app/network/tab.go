// Package network is the Network tab of a finished analysis: global measures against random
// networks (γ, λ, σ, Q and its z-score), the degree distribution, the modules with their
// colours and sizes, and the hub table (sortable, filterable by region, exported as CSV).
package network

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"io"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/report"
	"github.com/hubscope/hubscope/ipc"
)

// DegreeDistributionFile is the bundle's plot of P(k) with its power-law fits.
const DegreeDistributionFile = "degree_distribution.png"

// Tab holds one result's network view.
type Tab struct {
	Summary ipc.Summary
	Metrics *report.Metrics
	Hubs    *HubTable
	// Degree shows the degree distribution once it has been fetched; DegreePNG holds its bytes
	// (for the report). Both are set on the UI goroutine.
	Degree    *fyne.Container
	DegreePNG []byte
	// Status says what happened to the last export, in words.
	Status *widget.Label

	win    fyne.Window
	loaded chan struct{}
}

// Loaded is closed once the degree-distribution plot has been fetched (or has failed, or the
// bundle has none); DegreePNG is then final.
func (t *Tab) Loaded() <-chan struct{} { return t.loaded }

// NewTab builds the tab for a finished job. The degree-distribution plot is fetched from the
// helper in the background (when the bundle has one). win parents the export dialog.
func NewTab(ctx context.Context, svc ipc.Service, s ipc.Summary, win fyne.Window) (*Tab, error) {
	m, err := report.ParseMetrics(s.Metrics)
	if err != nil {
		return nil, fmt.Errorf("result %s: %w", s.Job.Name, err)
	}
	t := &Tab{Summary: s, Metrics: m, Hubs: NewHubTable(s.Hubs), Status: widget.NewLabel(""), win: win, loaded: make(chan struct{})}
	t.Degree = container.NewStack(widget.NewLabel("Degree distribution: loading…"))
	has := false
	for _, f := range s.Files {
		has = has || f.Name == DegreeDistributionFile
	}
	if !has {
		t.Degree.Objects = []fyne.CanvasObject{widget.NewLabel("No degree distribution plot: it is drawn with full metrics.")}
		close(t.loaded)
	} else {
		go t.loadDegree(ctx, svc)
	}
	return t, nil
}

func (t *Tab) loadDegree(ctx context.Context, svc ipc.Service) {
	b, err := fetch(ctx, svc, t.Summary.Job.ID, DegreeDistributionFile)
	fyne.Do(func() {
		if err != nil {
			t.Degree.Objects = []fyne.CanvasObject{widget.NewLabel("Degree distribution could not be loaded: " + err.Error())}
		} else {
			t.DegreePNG = b
			img := canvas.NewImageFromReader(bytes.NewReader(b), DegreeDistributionFile)
			img.FillMode = canvas.ImageFillContain
			img.SetMinSize(fyne.NewSize(360, 270))
			t.Degree.Objects = []fyne.CanvasObject{img}
		}
		t.Degree.Refresh()
		close(t.loaded)
	})
}

// fetch reads one bundle file (bounded: plots are small).
func fetch(ctx context.Context, svc ipc.Service, job, name string) ([]byte, error) {
	rc, _, err := svc.OpenFile(ctx, job, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, 32<<20))
}

// InputLines are the scan's input checks as the helper's summary hands them over (from
// provenance.json): the TR used and where it came from, then each header oddity the reader
// worked around — level in words, field, problem and fix — the lines the command line prints
// as "header …"; none for a bundle without them.
func (t *Tab) InputLines() []string {
	c := t.Summary.InputChecks
	if c == nil {
		return nil
	}
	var ls []string
	if c.TR != "" {
		ls = append(ls, c.TR)
	}
	for _, w := range c.Warnings {
		ls = append(ls, levelWord(w.Level)+": "+w.String())
	}
	return ls
}

// levelWord names a level of nibabel's header-check scale.
func levelWord(level int) string {
	switch {
	case level >= 40:
		return "Untrustworthy"
	case level >= 35:
		return "Probably wrong"
	case level >= 30:
		return "Warning"
	}
	return "Note"
}

// input is the "Scan header" section: the TR line, and the header's warnings in the warning
// colour; nil without input checks.
func (t *Tab) input() []fyne.CanvasObject {
	ls := t.InputLines()
	if len(ls) == 0 {
		return nil
	}
	objs := []fyne.CanvasObject{widget.NewLabelWithStyle("Scan header", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})}
	for i, line := range ls {
		l := widget.NewLabel(line)
		l.Wrapping = fyne.TextWrapWord
		if i > 0 || t.Summary.InputChecks.TR == "" { // a warning, not the TR line
			l.Importance = widget.WarningImportance
		}
		objs = append(objs, l)
	}
	return objs
}

// GroupLines describe a group-mean network (hubscope-helper group; the summary's Group): how
// many subjects were averaged and how, the mask rule and its nodes, and who; none for one
// scan's network.
func (t *Tab) GroupLines() []string {
	g := t.Summary.Group
	if g == nil {
		return nil
	}
	mean := "the mean of their Fisher z (atanh r), taken back to r"
	if g.Mean == "r" {
		mean = "the mean of their correlations r"
	}
	ls := []string{
		fmt.Sprintf("Group-mean network of %d subjects (%d volumes each): %s, then thresholded and measured as one scan's network.", len(g.Subjects), g.Volumes, mean),
		fmt.Sprintf("Mask rule: %s, %d nodes.", g.MaskRule, g.Nodes),
	}
	ls = append(ls, g.MaskNotes...)
	const shown = 12
	var names []string
	for i, s := range g.Subjects {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(g.Subjects)-shown))
			break
		}
		names = append(names, s.Label)
	}
	return append(ls, "Subjects: "+strings.Join(names, ", ")+".")
}

// group is the "Group" section: GroupLines; nil for one scan's network.
func (t *Tab) group() []fyne.CanvasObject {
	ls := t.GroupLines()
	if len(ls) == 0 {
		return nil
	}
	objs := []fyne.CanvasObject{widget.NewLabelWithStyle("Group", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})}
	for _, line := range ls {
		l := widget.NewLabel(line)
		l.Wrapping = fyne.TextWrapWord
		objs = append(objs, l)
	}
	return objs
}

// Content lays the tab out: a group's subjects and mask rule, the scan header's checks,
// measures, modules and degree plot on the left, hubs on the right.
func (t *Tab) Content() fyne.CanvasObject {
	left := container.NewVBox(append(append(t.group(), t.input()...),
		widget.NewLabelWithStyle("Global measures", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		t.measures(),
		widget.NewLabelWithStyle("Modules", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		t.modules(),
		widget.NewLabelWithStyle("Degree distribution", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		t.Degree,
	)...)
	export := widget.NewButton("Export CSV…", t.exportDialog)
	top := container.NewVBox(
		container.NewBorder(nil, nil, widget.NewLabelWithStyle("Hubs", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), export, t.Hubs.Count),
		t.Hubs.Filter)
	right := container.NewBorder(top, t.Status, nil, nil, t.Hubs.Table)
	split := container.NewHSplit(container.NewScroll(left), right)
	split.Offset = 0.5
	return split
}

func (t *Tab) measures() fyne.CanvasObject {
	g := container.New(layout.NewFormLayout())
	for _, m := range t.Metrics.GlobalMeasures() {
		v := widget.NewLabel(m.Value)
		v.Importance = widget.HighImportance
		g.Add(widget.NewLabel(m.Name))
		g.Add(container.NewHBox(v, widget.NewLabelWithStyle(m.Meaning, fyne.TextAlignLeading, fyne.TextStyle{Italic: true})))
	}
	return g
}

// ModuleRows describes each module: its colour (as in the 3D view) and size.
func (t *Tab) ModuleRows() []ModuleRow {
	sizes := t.Metrics.ModuleSizes()
	total := 0
	for _, s := range sizes {
		total += s
	}
	hubs := map[int]int{}
	for _, h := range t.Summary.Hubs {
		hubs[h.Module]++
	}
	rows := make([]ModuleRow, len(sizes))
	for i, s := range sizes {
		rows[i] = ModuleRow{Module: i + 1, Size: s, Share: float64(s) / float64(max(total, 1)), Hubs: hubs[i+1], Colour: report.ModuleColor(i + 1)}
	}
	return rows
}

// ModuleRow is one module of the module list.
type ModuleRow struct {
	Module, Size, Hubs int
	Share              float64
	Colour             color.NRGBA
}

// Text is the row's words.
func (r ModuleRow) Text() string {
	return fmt.Sprintf("Module %d: %d voxels (%.1f %%), %d hubs", r.Module, r.Size, 100*r.Share, r.Hubs)
}

func (t *Tab) modules() fyne.CanvasObject {
	rows := t.ModuleRows()
	if len(rows) == 0 {
		return widget.NewLabel("No modules: they are found with basic or full metrics.")
	}
	method := t.Metrics.Modules[0].Method
	box := container.NewVBox(widget.NewLabel(fmt.Sprintf("%d modules (%s), largest first:", len(rows), method)))
	for _, r := range rows {
		sw := canvas.NewRectangle(r.Colour)
		sw.SetMinSize(fyne.NewSize(14, 14))
		sw.StrokeColor = color.NRGBA{0x40, 0x40, 0x40, 0xFF}
		sw.StrokeWidth = 1
		box.Add(container.NewHBox(container.NewCenter(sw), widget.NewLabel(r.Text())))
	}
	return box
}

func (t *Tab) exportDialog() {
	if t.win == nil {
		return
	}
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			t.Status.SetText("Export failed: " + err.Error())
			return
		}
		if w == nil {
			return // cancelled
		}
		defer w.Close()
		if err := t.Hubs.Write(w, ','); err != nil {
			t.Status.SetText(fmt.Sprintf("Export to %s failed: %v", w.URI().Path(), err))
			return
		}
		t.Status.SetText(fmt.Sprintf("Hub table saved to %s.", w.URI().Path()))
	}, t.win)
	d.SetFileName(t.Summary.Job.Name + "-hubs.csv")
	d.SetFilter(storage.NewExtensionFileFilter([]string{".csv"}))
	d.Show()
}
