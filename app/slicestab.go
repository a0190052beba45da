package app

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"io"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/dynamics"
	"github.com/hubscope/hubscope/app/inspect"
	"github.com/hubscope/hubscope/app/slices"
	"github.com/hubscope/hubscope/ipc"
)

// Names of the result's tabs (SelectTab).
const (
	Tab3D       = "3D"
	TabSlices   = "Slices"
	TabNetwork  = "Network"
	TabQuality  = "Quality"
	TabDynamics = "Dynamics"
	TabExport   = "Export"
)

// What OnSlicesChanged reports.
const (
	ChangedInspector = "inspector" // the inspector shows a voxel (or why it cannot)
	ChangedOverlay   = "overlay"   // the slice viewer shows another overlay
	ChangedWindow    = "window"    // the Dynamics tab shows another window
)

// newSlicesTab builds the Slices tab's widgets (and the Dynamics tab's, when the job has a
// dynamic analysis) and wires the shared selection; nothing is fetched until loadSlices.
func (r *Result) newSlicesTab() {
	r.Slices = slices.New(r.volumes)
	// Two rows of controls: the overlay picker is as wide as the job's longest volume name,
	// and four such columns would leave the inspector no room beside the slices.
	r.Slices.SetControlColumns(2)
	r.Inspector = inspect.New(r.volumes)
	r.backToHubs = widget.NewButtonWithIcon(backLabel(r.Summary), theme.ViewRestoreIcon(), func() {
		r.Slices.ShowVolume(slices.DefaultOverlay(r.Summary))
	})
	r.backToHubs.Disable()
	r.Slices.OnSelect = r.selectVoxel
	r.Slices.OnOverlay = r.overlayShown
	r.Inspector.OnShown = func(err error) { r.changed(ChangedInspector, err) }
	// The seed map replaces the overlay; the button below the inspector brings the hubs back.
	r.Inspector.OnSeedMap = r.Slices.SetOverlay
	if d := r.Summary.DFC; d != nil && len(d.Windows) > 0 {
		r.Dynamics = dynamics.New(r.volumes)
		r.Dynamics.Viewer.OnSelect = r.selectVoxel
	}
}

// backLabel names the button that restores the job's own overlay after a seed map.
func backLabel(s ipc.Summary) string {
	switch slices.DefaultOverlay(s) {
	case slices.VolumeHubs:
		return "Back to hubs and modules"
	case "none":
		return "Back to the plain slices"
	default:
		return "Back to the " + slices.DefaultOverlay(s) + " map"
	}
}

// slicesContent is the Slices tab: the viewer, and beside it the inspector with the button
// back to the hub/module overlay.
func (r *Result) slicesContent() fyne.CanvasObject {
	side := container.NewBorder(nil, container.NewVBox(widget.NewSeparator(), r.backToHubs), nil, nil, r.Inspector)
	split := container.NewHSplit(r.Slices, side)
	split.Offset = 0.66
	return split
}

// SelectTab shows the tab with this name (Tab3D, TabSlices …) and reports whether it exists.
func (r *Result) SelectTab(name string) bool {
	for _, it := range r.Tabs.Items {
		if it.Text == name {
			r.Tabs.Select(it)
			return true
		}
	}
	return false
}

// changed tells OnSlicesChanged.
func (r *Result) changed(what string, err error) {
	if r.OnSlicesChanged != nil {
		r.OnSlicesChanged(what, err)
	}
}

// overlayShown keeps the button back to the hubs in step with the viewer's overlay, and
// continues the first load (see loadSlices) once the viewer has shown its first overlay.
func (r *Result) overlayShown(name string, err error) {
	if name == slices.DefaultOverlay(r.Summary) && err == nil {
		r.backToHubs.Disable()
	} else {
		r.backToHubs.Enable()
	}
	r.changed(ChangedOverlay, err)
	if r.afterFirstOverlay != nil {
		next := r.afterFirstOverlay
		r.afterFirstOverlay = nil
		next() // last: it may close SlicesReady, after which tests own the result
	}
}

// hubAt returns the index in Summary.Hubs of the hub at voxel, or −1.
func (r *Result) hubAt(voxel [3]int) int {
	for n, h := range r.Summary.Hubs {
		if h.Voxel == voxel {
			return n
		}
	}
	return -1
}

// selectVoxel makes voxel the selection of every view: the crosshair of the Slices (and
// Dynamics) viewer, the inspector, and, when it is a hub, the 3D view's highlight and caption.
func (r *Result) selectVoxel(voxel [3]int) {
	r.Slices.SetCrosshair(voxel)
	if r.Dynamics != nil {
		r.Dynamics.Viewer.SetCrosshair(voxel)
	}
	hub := r.hubAt(voxel)
	if r.View3D != nil {
		r.View3D.Highlight(hub)
	}
	if hub >= 0 {
		r.selected.SetText(describeHub(hub, r.Summary.Hubs[hub]))
	} else {
		r.selected.SetText(fmt.Sprintf("Voxel %d, %d, %d is selected in the slices; it is not a hub.", voxel[0], voxel[1], voxel[2]))
	}
	r.showInSlices.Enable()
	r.Inspector.Inspect(r.ctx, r.Summary.Job.ID, voxel)
}

// SelectHub selects hub id (an index into Summary.Hubs), as a tap on its sphere in the 3D
// view or its row in the hub table does. The tab on show stays: a clinician going through the
// hubs in 3D keeps the brain in view, the caption names the hub, and "Show in slices" (or the
// Slices tab, already at the hub) gives its voxel's details.
func (r *Result) SelectHub(id int) {
	if id < 0 || id >= len(r.Summary.Hubs) {
		return
	}
	r.ExportStatus.SetText("")
	r.selectVoxel(r.Summary.Hubs[id].Voxel)
}

func describeHub(id int, h ipc.Hub) string {
	return fmt.Sprintf("Hub %d: %s, degree %d, module %d, MNI %.0f, %.0f, %.0f mm", id+1, regionName(h), h.Degree, h.Module, h.MNI[0], h.MNI[1], h.MNI[2])
}

// loadSlices loads the Slices tab, then (once its first overlay is on screen) the report's
// slice figure, then the Dynamics tab's first window, and closes SlicesReady when all are done.
// Each step starts when the previous one has applied its widgets, as the last thing it does:
// Fyne's test driver runs fyne.Do on the fetching goroutine, and steps applied at once would
// race there, in Fyne's own caches (text metrics) as well as in the result's widgets.
func (r *Result) loadSlices() {
	ready := func() { close(r.SlicesReady) }
	dyn := ready
	if r.Dynamics != nil {
		dyn = func() {
			first := true
			r.Dynamics.OnWindowShown = func(w int, err error) {
				r.changed(ChangedWindow, err)
				if first {
					first = false
					ready()
				}
			}
			r.Dynamics.Load(r.ctx, r.Summary.Job.ID, r.Summary)
		}
	}
	r.afterFirstOverlay = func() { r.makeSliceFigure(dyn) }
	r.Slices.Load(r.ctx, r.Summary.Job.ID, r.Summary)
}

// figureOverlay is the report figure's overlay: hub voxels in module colours, else the modules.
func figureOverlay(s ipc.Summary) string {
	for _, n := range []string{slices.VolumeHubs, slices.VolumeModules} {
		for _, v := range s.Volumes {
			if v == n {
				return n
			}
		}
	}
	return slices.DefaultOverlay(s)
}

// StrongestHub returns the index in s.Hubs of the hub with the highest degree (the first of
// equals), or −1 when there are no hubs.
func StrongestHub(s ipc.Summary) int {
	best := -1
	for n, h := range s.Hubs {
		if best < 0 || h.Degree > s.Hubs[best].Degree {
			best = n
		}
	}
	return best
}

// makeSliceFigure draws the report's slice figure, an axial slice through the strongest hub with
// the hub/module overlay, in a viewer of its own: what the user does in the Slices tab (another
// overlay, a seed map, another slice) does not change the report. next is called, last, when
// the figure is made or has failed (SliceFigure says which).
func (r *Result) makeSliceFigure(next func()) {
	fig := slices.New(r.volumes)
	hub := StrongestHub(r.Summary)
	fig.OnLoaded = func(err error) {
		defer next()
		if err != nil {
			r.sliceFigErr = fmt.Errorf("slice figure of %s: %w", r.Summary.Job.Name, err)
			return
		}
		title := "Axial slice through the middle of the grid (no hubs)"
		if hub >= 0 {
			h := r.Summary.Hubs[hub]
			fig.SetCrosshair(h.Voxel)
			title = fmt.Sprintf("Axial slice through the strongest hub (%s, MNI z = %.0f mm), hub voxels in their modules' colours", regionName(h), h.MNI[2])
		}
		// The picture is kept; its PNG is encoded when a report asks for it (SliceFigure).
		img, err := fig.SnapshotPlanes(slices.Axial)
		if err != nil {
			r.sliceFigErr = fmt.Errorf("slice figure of %s: %w", r.Summary.Job.Name, err)
			return
		}
		r.sliceFigImg, r.sliceFigTitle = img, title
	}
	fig.LoadWithOverlay(r.ctx, r.Summary.Job.ID, r.Summary, figureOverlay(r.Summary))
}

// SliceFigure returns the report's slice figure (PNG) and its title, or why there is none.
// It is final once SlicesReady is closed.
func (r *Result) SliceFigure() ([]byte, string, error) {
	if r.sliceFigErr != nil {
		return nil, "", r.sliceFigErr
	}
	if r.sliceFig == nil && r.sliceFigImg == nil {
		return nil, "", fmt.Errorf("slice figure of %s: not made yet", r.Summary.Job.Name)
	}
	r.sliceFigMu.Lock()
	defer r.sliceFigMu.Unlock()
	if r.sliceFig == nil {
		var b bytes.Buffer
		if err := png.Encode(&b, r.sliceFigImg); err != nil {
			return nil, "", fmt.Errorf("slice figure of %s: %w", r.Summary.Job.Name, err)
		}
		r.sliceFig = b.Bytes()
	}
	return r.sliceFig, r.sliceFigTitle, nil
}

// prefetchSlices fetches the volumes the Slices tab shows first (background, hubs, modules) into
// the shared cache while the 3D view is built and drawn; the viewer then finds them there (or
// joins their fetch). Errors are
// left to the viewer, which fetches again and reports them in words.
func prefetchSlices(ctx context.Context, volumes *slices.VolumeCache, s ipc.Summary) {
	var wg sync.WaitGroup
	for _, name := range []string{slices.BackgroundName(s), slices.VolumeHubs, slices.VolumeModules} {
		has := false
		for _, v := range s.Volumes {
			has = has || v == name
		}
		if !has {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			volumes.Volume(ctx, s.Job.ID, name)
		}()
	}
	wg.Wait()
}

// writeSlicesPNG writes the slice viewer's three views as PNG.
func (r *Result) writeSlicesPNG(w io.Writer) error {
	img, err := r.Slices.Snapshot()
	if err != nil {
		return err
	}
	return png.Encode(w, img)
}

// SaveSlicesPNG writes the slice viewer's three views, as shown, to path as PNG.
func (r *Result) SaveSlicesPNG(path string) error { return r.Slices.SavePNG(path) }
