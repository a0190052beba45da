package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/dynamics"
	"github.com/hubscope/hubscope/app/inspect"
	"github.com/hubscope/hubscope/app/network"
	"github.com/hubscope/hubscope/app/normview"
	"github.com/hubscope/hubscope/app/quality"
	"github.com/hubscope/hubscope/app/report"
	"github.com/hubscope/hubscope/app/slices"
	"github.com/hubscope/hubscope/app/sweepview"
	"github.com/hubscope/hubscope/app/view3d"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/render"
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
	// Links is the 3D view's slider over the share of the network's links drawn (the
	// connectome, connectome.go), nil when the bundle has none to draw.
	Links *widget.Slider
	// NormLegend says under the 3D view which marker colour is which (hubs lost, gained, the
	// cohort's hubs); empty without a norm comparison.
	NormLegend *fyne.Container
	tab3D      *fyne.Container
	// Slices is the Slices tab's viewer and Inspector the voxel inspector beside it; a voxel
	// tapped in the slices, a hub tapped in the 3D view or the hub table is selected in all of
	// them (SelectHub).
	Slices    *slices.Viewer
	Inspector *inspect.Inspector
	// Dynamics is the Dynamics tab, nil when the job has no dynamic analysis (Summary.DFC).
	Dynamics *dynamics.Tab
	// Quality is the Quality tab (cleaning, motion, FD trace, carpet), nil when the bundle has
	// no cleaning report (the series were not cleaned).
	Quality *quality.Tab
	// Norm is the Norm tab (hubs lost and gained against a normative cohort), nil when the job
	// was not compared with one.
	Norm *normview.Tab
	// Sweep is the Sweep tab (measures against the threshold), nil without a sweep.
	Sweep *sweepview.Tab
	// SlicesReady is closed once the Slices tab shows the job, the report's slice figure is
	// made (or has failed) and the Dynamics tab, if any, shows its first window.
	SlicesReady chan struct{}
	// OnSlicesChanged is called on the UI goroutine when a background fetch has changed the
	// Slices or Dynamics tab (ChangedInspector, ChangedOverlay, ChangedWindow), with the error
	// that kept it from showing what was asked. Set it once SlicesReady is closed.
	OnSlicesChanged func(what string, err error)
	// ExportStatus says what happened to the last export, in words.
	ExportStatus *widget.Label

	svc      ipc.Service
	volumes  *slices.VolumeCache // shared by the 3D surface, the slices, the inspector and Dynamics
	win      fyne.Window
	selected *widget.Label
	ctx      context.Context
	cancel   context.CancelFunc
	shown    chan struct{} // closed by start

	showInSlices, backToHubs *widget.Button
	afterFirstOverlay        func()
	sliceFigMu               sync.Mutex  // guards sliceFig, encoded by whoever asks first
	sliceFig                 []byte      // sliceFigImg as PNG, encoded on first use
	sliceFigImg              image.Image // the report's slice figure, once made
	sliceFigTitle            string
	sliceFigErr              error
}

// newResult builds a result's tabs. svc is the helper; a *slices.VolumeCache is used as it is,
// so that results opened one after another share fetched volumes.
func newResult(ctx context.Context, svc ipc.Service, s ipc.Summary, win fyne.Window) (*Result, error) {
	volumes, ok := svc.(*slices.VolumeCache)
	if !ok {
		volumes = slices.NewVolumeCache(svc, 0)
	}
	// The Network tab fetches its plot as soon as it is built; the gate holds the fetch until
	// the result is on show, so that the plot is applied after the result's widgets are (one
	// background update at a time, see start).
	shown := make(chan struct{})
	nt, err := network.NewTab(ctx, gatedFiles{volumes, shown}, s, win)
	if err != nil {
		return nil, err
	}
	r := &Result{Summary: s, Network: nt, svc: volumes, volumes: volumes, win: win, ExportStatus: widget.NewLabel(""),
		Ready3D: make(chan struct{}), SlicesReady: make(chan struct{}), selected: widget.NewLabel("Tap a hub to see its region.")}
	r.ctx, r.cancel = context.WithCancel(ctx)
	r.shown = shown
	r.ExportStatus.Wrapping = fyne.TextWrapWord
	r.tab3D = container.NewStack(widget.NewLabel("Building the 3D brain…"))
	r.showInSlices = widget.NewButtonWithIcon("Show in slices", theme.NavigateNextIcon(), func() { r.SelectTab(TabSlices) })
	r.showInSlices.Disable()
	r.newSlicesTab()
	nt.Hubs.OnSelect = func(h ipc.Hub) {
		if n := r.hubAt(h.Voxel); n >= 0 {
			r.SelectHub(n)
		}
	}
	// The Slices and Dynamics tabs are wider than the result's half of the window while the
	// scan list is shown (selecting them folds it away): in scroll containers they do not make
	// the window itself grow past the screen.
	items := []*container.TabItem{
		container.NewTabItemWithIcon(Tab3D, theme.VisibilityIcon(), r.tab3D),
		container.NewTabItemWithIcon(TabSlices, theme.ViewFullScreenIcon(), container.NewScroll(r.slicesContent())),
		container.NewTabItemWithIcon(TabNetwork, theme.GridIcon(), nt.Content()),
	}
	if quality.HasQC(s) {
		// Its files wait until the Slices tab has loaded, the last of the result's background
		// updates (one at a time: see loadSlices).
		var tr float64
		if m, err := report.ParseMetrics(s.Metrics); err == nil {
			tr = m.Scan.TR
		}
		r.Quality = quality.NewTab(r.ctx, gatedFiles{volumes, r.SlicesReady}, s, tr)
		items = append(items, container.NewTabItemWithIcon(TabQuality, theme.WarningIcon(), container.NewScroll(r.Quality)))
	}
	items = append(items, r.moreTabs(s)...)
	if r.Dynamics != nil {
		items = append(items, container.NewTabItemWithIcon(TabDynamics, theme.MediaPlayIcon(), container.NewScroll(r.Dynamics)))
	}
	items = append(items, container.NewTabItemWithIcon(TabExport, theme.DocumentSaveIcon(), r.exportTab()))
	r.Tabs = container.NewAppTabs(items...)
	return r, nil
}

// close stops what the result still fetches (another result replaces it).
func (r *Result) close() { r.cancel() }

// start builds the 3D scene once the result is on show, then loads the Slices and Dynamics
// tabs (loadSlices). Its widgets are applied after the degree plot's (one background update
// of the result at a time: Fyne's test driver runs fyne.Do on the calling goroutine, so
// overlapping updates would race in its caches).
func (r *Result) start() {
	close(r.shown)
	go r.build3D(r.ctx)
}

// gatedFiles holds a Service's bundle file fetches until open is closed.
type gatedFiles struct {
	ipc.Service
	open <-chan struct{}
}

func (g gatedFiles) OpenFile(ctx context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error) {
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ipc.FileInfo{}, fmt.Errorf("file %s of job %s: %w", name, id, ctx.Err())
	}
	return g.Service.OpenFile(ctx, id, name)
}

func (r *Result) build3D(ctx context.Context) {
	scene, err := BrainScene(ctx, r.svc, r.Summary)
	// The Slices tab is not on screen when a result opens (the 3D tab is): its volumes are
	// fetched once the brain surface no longer needs the cores, while the 3D view is built and
	// drawn, and the 3D view does not wait for them.
	go prefetchSlices(ctx, r.volumes, r.Summary)
	if err != nil && regionsOnly(r.Summary) {
		// A region network's bundle has no volumes, so no brain surface: its regions and
		// links are drawn on their own (the regions replace the hub spheres below).
		scene, err = &render.Scene{Glass: true, Spheres: HubSpheres(r.Summary.Hubs)}, nil
	}
	var conn *Connectome
	var connErr error
	if err == nil {
		conn, connErr = LoadConnectome(ctx, r.svc, r.Summary, scene.Spheres)
		if conn != nil && conn.Spheres != nil && scene.Surface == nil {
			scene.Spheres = conn.Spheres // the camera frames the regions
		}
	}
	<-r.Network.Loaded()
	fyne.Do(func() {
		defer close(r.Ready3D)
		if err != nil {
			r.tab3D.Objects = []fyne.CanvasObject{widget.NewLabel("The 3D view is not available: " + err.Error())}
		} else {
			v := view3d.New(scene)
			v.OnSelect = r.SelectHub
			r.View3D = v
			var links fyne.CanvasObject // the connectome's edge control (connectome.go)
			switch {
			case connErr != nil:
				links = widget.NewLabel("Links not drawn: " + connErr.Error())
			case conn != nil:
				r.Links, links = ConnectomeBar(v, conn)
			}
			r.NormLegend = container.NewHBox()
			bottom := container.NewVBox(r.NormLegend, container.NewBorder(nil, nil, nil, r.showInSlices, r.selected))
			r.tab3D.Objects = []fyne.CanvasObject{container.NewBorder(links, bottom, nil, nil, v)}
		}
		r.tab3D.Refresh()
		r.loadSlices() // last: its fetch applies its widgets on another goroutine in tests
	})
}

// regionsOnly reports whether a result is a region (ROI-to-ROI) network without volumes: its
// nodes are an atlas's regions (BrainNet's network.node and .edge), and the helper serves no
// mask to draw a brain surface from.
func regionsOnly(s ipc.Summary) bool {
	for _, v := range s.Volumes {
		if v == "mask" {
			return false
		}
	}
	var node, edge bool
	for _, f := range s.Files {
		node = node || f.Name == "network.node"
		edge = edge || f.Name == "network.edge"
	}
	return node && edge
}

func regionName(h ipc.Hub) string {
	if h.Region == "" {
		return "outside the atlas"
	}
	return h.Region
}

// Title is the result's title line: the job's name, a group-mean network's with its subjects.
func (r *Result) Title() string {
	if g := r.Summary.Group; g != nil {
		return fmt.Sprintf("Group mean of %d subjects: %s", len(g.Subjects), r.Summary.Job.Name)
	}
	return r.Summary.Job.Name
}

// Content is the result's title line and tabs.
func (r *Result) Content() fyne.CanvasObject {
	title := widget.NewLabelWithStyle(r.Title(), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	return container.NewBorder(title, nil, nil, nil, r.Tabs)
}

// Figures are the images of the views for the report: the 3D view as shown, beside it an
// axial slice through the strongest hub (once SlicesReady), and the degree distribution (once
// loaded).
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
	if b, title, err := r.SliceFigure(); err == nil {
		figs = append(figs, report.Figure{Title: title, PNG: b})
	}
	if b := r.Network.DegreePNG; b != nil {
		figs = append(figs, report.Figure{Title: "Degree distribution", PNG: b})
	}
	return figs
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

// exportTab shows where the bundle is (with a copy button), saves the views as PNG and the
// report.
func (r *Result) exportTab() fyne.CanvasObject {
	loc := widget.NewLabel(r.Summary.Bundle)
	loc.Wrapping = fyne.TextWrapBreak
	loc.TextStyle = fyne.TextStyle{Monospace: true}
	cp := widget.NewButtonWithIcon("Copy location", theme.ContentCopyIcon(), func() {
		fyne.CurrentApp().Clipboard().SetContent(r.Summary.Bundle)
		r.ExportStatus.SetText("The results folder's location is on the clipboard.")
	})
	base := trimScanExt(r.Summary.Job.Name)
	save3D := widget.NewButtonWithIcon("Save 3D view PNG…", theme.FileImageIcon(), func() {
		r.saveDialog("the 3D view", base+"-3d.png", ".png", r.write3DPNG)
	})
	saveSlices := widget.NewButtonWithIcon("Save slices PNG…", theme.FileImageIcon(), func() {
		r.saveDialog("the slices", base+"-slices.png", ".png", r.writeSlicesPNG)
	})
	save := widget.NewButtonWithIcon("Save report…", theme.DocumentSaveIcon(), func() {
		r.saveDialog("the report", base+"-report.html", ".html", r.WriteReport)
	})
	save.Importance = widget.HighImportance
	savePDF := widget.NewButtonWithIcon("Save PDF report…", theme.DocumentSaveIcon(), func() {
		r.saveDialog("the PDF report", base+"-report.pdf", ".pdf", r.WritePDFReport)
	})
	savePDF.Importance = widget.HighImportance
	files := widget.NewLabel(fmt.Sprintf("%d files: network (network.npz), maps (degree, hubs, modules … as NIfTI), hubs.tsv, metrics.json, provenance.json.", len(r.Summary.Files)))
	files.Wrapping = fyne.TextWrapWord
	what := widget.NewLabel("A PDF of one to three pages (or one HTML page) with the scan, settings, cleaning and motion, figures, global measures, modules, hubs, the norm comparison and the command that repeats the analysis, to attach to a record.")
	what.Wrapping = fyne.TextWrapWord
	views := widget.NewLabel("The 3D view and the three slices as they are shown now (overlay, crosshair, orientation letters).")
	views.Wrapping = fyne.TextWrapWord
	box := container.NewVBox(
		widget.NewLabelWithStyle("Results folder", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewBorder(nil, nil, nil, cp, loc), files, widget.NewSeparator(),
		widget.NewLabelWithStyle("Pictures", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		views, container.NewHBox(save3D, saveSlices), widget.NewSeparator(),
		widget.NewLabelWithStyle("Report", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		what, container.NewHBox(savePDF, save), r.ExportStatus)
	if d := r.downloads(); d != nil {
		box.Add(widget.NewSeparator())
		box.Add(d)
	}
	return box
}

// write3DPNG writes the 3D view as shown, as PNG.
func (r *Result) write3DPNG(w io.Writer) error {
	if r.View3D == nil {
		return errors.New("the 3D view is not available")
	}
	return png.Encode(w, r.View3D.Image())
}

// saveDialog asks where to save what (a file named name, filtered to ext), writes it with
// write and says in ExportStatus what happened.
func (r *Result) saveDialog(what, name, ext string, write func(io.Writer) error) {
	if saveFile != nil {
		// The browser: no save dialog, the file comes as a download named name.
		msg, err := saveFile(name, write)
		if err != nil {
			msg = fmt.Sprintf("Could not save %s: %v", what, err)
		}
		r.ExportStatus.SetText(msg)
		return
	}
	if r.win == nil {
		return
	}
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			r.ExportStatus.SetText(fmt.Sprintf("Could not save %s: %v", what, err))
			return
		}
		if w == nil {
			return // cancelled
		}
		err = write(w)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			r.ExportStatus.SetText(fmt.Sprintf("Could not save %s to %s: %v", what, w.URI().Path(), err))
			return
		}
		r.ExportStatus.SetText(fmt.Sprintf("Saved %s to %s.", what, w.URI().Path()))
	}, r.win)
	d.SetFileName(name)
	d.SetFilter(storage.NewExtensionFileFilter([]string{ext}))
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
