package app

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/network"
	"github.com/hubscope/hubscope/app/report"
	"github.com/hubscope/hubscope/app/view3d"
	"github.com/hubscope/hubscope/ipc"
)

// Result is one finished analysis on show: its tabs and what the Export tab needs.
type Result struct {
	Summary ipc.Summary
	Network *network.Tab
	Tabs    *container.AppTabs
	// View3D is the 3D brain with hub spheres, once its scene is built (nil before, or when
	// the helper has no mask volume for the job); Ready3D is closed then.
	View3D  *view3d.View
	Ready3D chan struct{}
	tab3D   *fyne.Container
	// ExportStatus says what happened to the last export, in words.
	ExportStatus *widget.Label

	svc      ipc.Service
	win      fyne.Window
	selected *widget.Label
	ctx      context.Context
}

func newResult(ctx context.Context, svc ipc.Service, s ipc.Summary, win fyne.Window) (*Result, error) {
	nt, err := network.NewTab(ctx, svc, s, win)
	if err != nil {
		return nil, err
	}
	r := &Result{Summary: s, Network: nt, svc: svc, win: win, ExportStatus: widget.NewLabel(""), Ready3D: make(chan struct{}), selected: widget.NewLabel("Tap a hub to see its region.")}
	r.ExportStatus.Wrapping = fyne.TextWrapWord
	r.tab3D = container.NewStack(widget.NewLabel("Building the 3D brain…"))
	r.ctx = ctx
	r.Tabs = container.NewAppTabs(
		container.NewTabItemWithIcon("3D", theme.VisibilityIcon(), r.tab3D),
		container.NewTabItemWithIcon("Network", theme.GridIcon(), nt.Content()),
		container.NewTabItemWithIcon("Export", theme.DocumentSaveIcon(), r.exportTab()),
	)
	return r, nil
}

// start builds the 3D scene once the result is on show. Its widgets are applied after the
// degree plot's (one background update of the result at a time: Fyne's test driver runs
// fyne.Do on the calling goroutine, so overlapping updates would race in its caches).
func (r *Result) start() { go r.build3D(r.ctx) }

func (r *Result) build3D(ctx context.Context) {
	scene, err := BrainScene(ctx, r.svc, r.Summary)
	<-r.Network.Loaded()
	fyne.Do(func() {
		defer close(r.Ready3D)
		if err != nil {
			r.tab3D.Objects = []fyne.CanvasObject{widget.NewLabel("The 3D view is not available: " + err.Error())}
			r.tab3D.Refresh()
			return
		}
		v := view3d.New(scene)
		v.OnSelect = func(id int) {
			if id >= 0 && id < len(r.Summary.Hubs) {
				h := r.Summary.Hubs[id]
				r.ExportStatus.SetText("")
				r.selected.SetText(fmt.Sprintf("Hub %d: %s, degree %d, module %d, MNI %.0f, %.0f, %.0f mm", id+1, regionName(h), h.Degree, h.Module, h.MNI[0], h.MNI[1], h.MNI[2]))
			}
		}
		r.View3D = v
		r.tab3D.Objects = []fyne.CanvasObject{container.NewBorder(nil, r.selected, nil, nil, v)}
		r.tab3D.Refresh()
	})
}

func regionName(h ipc.Hub) string {
	if h.Region == "" {
		return "outside the atlas"
	}
	return h.Region
}

// Content is the result's title line and tabs.
func (r *Result) Content() fyne.CanvasObject {
	title := widget.NewLabelWithStyle(r.Summary.Job.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	return container.NewBorder(title, nil, nil, nil, r.Tabs)
}

// Figures are the images of the views for the report: the degree distribution (once loaded).
func (r *Result) Figures() []report.Figure {
	var figs []report.Figure
	if r.View3D != nil {
		if img := r.View3D.Image(); img != nil {
			var b bytes.Buffer
			if png.Encode(&b, img) == nil {
				figs = append(figs, report.Figure{Title: "Hubs in 3D, coloured by module", PNG: b.Bytes()})
			}
		}
	}
	if b := r.Network.DegreePNG; b != nil {
		figs = append(figs, report.Figure{Title: "Degree distribution", PNG: b})
	}
	return figs
}

// WriteReport writes the one-page HTML report of the result.
func (r *Result) WriteReport(w io.Writer) error {
	return report.Write(w, report.Report{Summary: r.Summary, Metrics: r.Network.Metrics, Figures: r.Figures()})
}

// SaveReport writes the report to path (through a temporary file, so a failed write never
// leaves half a report behind).
func (r *Result) SaveReport(path string) error {
	var b bytes.Buffer
	if err := r.WriteReport(&b); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("save report: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save report: %w", err)
	}
	return nil
}

// exportTab shows where the bundle is (with a copy button) and saves the report.
func (r *Result) exportTab() fyne.CanvasObject {
	loc := widget.NewLabel(r.Summary.Bundle)
	loc.Wrapping = fyne.TextWrapBreak
	loc.TextStyle = fyne.TextStyle{Monospace: true}
	cp := widget.NewButtonWithIcon("Copy location", theme.ContentCopyIcon(), func() {
		fyne.CurrentApp().Clipboard().SetContent(r.Summary.Bundle)
		r.ExportStatus.SetText("The results folder's location is on the clipboard.")
	})
	save := widget.NewButtonWithIcon("Save report…", theme.DocumentSaveIcon(), r.reportDialog)
	save.Importance = widget.HighImportance
	files := widget.NewLabel(fmt.Sprintf("%d files: network (network.npz), maps (degree, hubs, modules … as NIfTI), hubs.tsv, metrics.json, provenance.json.", len(r.Summary.Files)))
	files.Wrapping = fyne.TextWrapWord
	return container.NewVBox(
		widget.NewLabelWithStyle("Results folder", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewBorder(nil, nil, nil, cp, loc), files, widget.NewSeparator(),
		widget.NewLabelWithStyle("Report", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		widget.NewLabel("One HTML page with the figures, settings, global measures, modules and hubs, to attach to a record."),
		container.NewHBox(save), r.ExportStatus)
}

func (r *Result) reportDialog() {
	if r.win == nil {
		return
	}
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			r.ExportStatus.SetText("Could not save the report: " + err.Error())
			return
		}
		if w == nil {
			return
		}
		defer w.Close()
		if err := r.WriteReport(w); err != nil {
			r.ExportStatus.SetText(fmt.Sprintf("Could not save the report to %s: %v", w.URI().Path(), err))
			return
		}
		r.ExportStatus.SetText("Report saved to " + w.URI().Path() + ".")
	}, r.win)
	name := r.Summary.Job.Name
	d.SetFileName(trimScanExt(name) + "-report.html")
	d.SetFilter(storage.NewExtensionFileFilter([]string{".html"}))
	d.Show()
}

// trimScanExt drops .nii or .nii.gz from a scan's name.
func trimScanExt(name string) string {
	base := filepath.Base(name)
	for _, ext := range []string{".nii.gz", ".NII.GZ", ".nii", ".NII"} {
		if len(base) > len(ext) && base[len(base)-len(ext):] == ext {
			return base[:len(base)-len(ext)]
		}
	}
	return base
}
