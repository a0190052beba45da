package app

import (
	"fmt"
	"image/color"
	"strings"

	"github.com/go-gl/mathgl/mgl32"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/normview"
	"github.com/hubscope/hubscope/app/slices"
	"github.com/hubscope/hubscope/app/sweepview"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/render"
)

// Names of the tabs of a scan compared with a normative cohort, and of a threshold sweep.
const (
	TabNorm  = "Norm"
	TabSweep = "Sweep"
)

// lastLoaded is closed when the result's last background update so far has applied its
// widgets: a tab added after it waits for it (one update at a time, see loadSlices).
func (r *Result) lastLoaded() <-chan struct{} {
	switch {
	case r.Norm != nil:
		return r.Norm.Loaded()
	case r.Quality != nil:
		return r.Quality.Loaded()
	}
	return r.SlicesReady
}

// moreTabs adds the tabs of what the bundle holds beyond one network: the comparison with a
// normative cohort (Norm) and a threshold sweep (Sweep).
func (r *Result) moreTabs(s ipc.Summary) []*container.TabItem {
	var items []*container.TabItem
	if normview.Has(s) {
		r.Norm = normview.NewTab(r.ctx, r.volumes, s, r.lastLoaded())
		r.Norm.OnSelect = r.showFinding
		r.Norm.OnLoaded = r.addNormMarkers
		r.Norm.OnShowZ = func() {
			r.SelectTab(TabSlices)
			r.Slices.ShowVolume(normview.VolumeZDegree)
		}
		items = append(items, container.NewTabItemWithIcon(TabNorm, theme.ErrorIcon(), r.Norm))
	}
	if sweepview.Has(s) {
		r.Sweep = sweepview.NewTab(r.ctx, r.volumes, s, r.lastLoaded())
		r.Sweep.OnShowStability = func() {
			r.SelectTab(TabSlices)
			r.Slices.ShowVolume(sweepview.VolumeStability)
		}
		items = append(items, container.NewTabItemWithIcon(TabSweep, theme.GridIcon(), container.NewScroll(r.Sweep)))
	}
	return items
}

// Colours of the 3D view's markers of the norm comparison: hubs lost cyan, hubs gained magenta
// (neither is a module colour).
var (
	LostColor   = color.NRGBA{0x00, 0xd8, 0xff, 255}
	GainedColor = color.NRGBA{0xff, 0x00, 0xd0, 255}
	// CohortHubColor marks the normative cohort's own hubs (white: no module colour either),
	// drawn smaller than the markers of hubs lost and gained.
	CohortHubColor = color.NRGBA{0xf4, 0xf4, 0xf4, 255}
)

// MaxCohortMarkers bounds the cohort's hubs drawn in 3D: a cohort's hub rule (mean + 1 SD)
// marks about a sixth of the nodes, thousands at 3 mm, and each sphere costs frame time (the
// 3D frame is budgeted for the scan's own hubs). Beyond it an even sample is drawn, in grid
// order, and the legend says how many.
const MaxCohortMarkers = 2000

// NormMarkerID is the first sphere ID of the norm markers (beyond every hub index, so a tap on
// one selects no hub).
const NormMarkerID = 1 << 24

// addNormMarkers draws the hubs lost and gained, and the cohort's own hubs, in the 3D view
// beside the scan's hubs, and says in the legend under it which colour is which.
func (r *Result) addNormMarkers() {
	if r.View3D == nil || r.Norm == nil {
		return
	}
	base := r.View3D.Scene()
	if base == nil {
		return
	}
	scene := *base
	scene.Spheres = nil
	for _, sp := range base.Spheres {
		if sp.ID < NormMarkerID { // markers of an earlier call are replaced
			scene.Spheres = append(scene.Spheres, sp)
		}
	}
	rad := float32(0.6 * render.MaxHubRadius)
	at := func(v [3]int) mgl32.Vec3 {
		x := slices.World(r.Norm.Affine, v)
		return mgl32.Vec3{float32(x[0]), float32(x[1]), float32(x[2])}
	}
	// The cohort's hubs first, so that a lost hub's marker is drawn over its cohort marker.
	id := NormMarkerID
	cohort := r.Norm.CohortHubs
	drawn := min(len(cohort), MaxCohortMarkers)
	for i := range drawn {
		v := cohort[i*len(cohort)/drawn] // every hub, or an even sample of MaxCohortMarkers
		scene.Spheres = append(scene.Spheres, render.Sphere{Center: at(v), Radius: 0.35 * float32(render.MaxHubRadius), Color: CohortHubColor, ID: id})
		id++
	}
	var lost, gained int
	for _, row := range r.Norm.Rows {
		c := LostColor
		switch row.Kind {
		case normview.KindLost:
			lost++
		case normview.KindGained:
			c = GainedColor
			gained++
		default:
			continue
		}
		scene.Spheres = append(scene.Spheres, render.Sphere{Center: at(row.Voxel), Radius: rad, Color: c, ID: id})
		id++
	}
	r.View3D.SetScene(&scene)
	if r.NormLegend != nil {
		r.NormLegend.Objects = []fyne.CanvasObject{
			legendItem(LostColor, fmt.Sprintf("hubs lost (%d)", lost)),
			legendItem(GainedColor, fmt.Sprintf("hubs gained (%d)", gained)),
			legendItem(CohortHubColor, fmt.Sprintf("the cohort's hubs (%d)", len(cohort))),
		}
		if drawn < len(cohort) {
			r.NormLegend.Objects[2] = legendItem(CohortHubColor, fmt.Sprintf("the cohort's hubs (%d; %d of them drawn, evenly spread)", len(cohort), drawn))
		}
		if len(r.Norm.CohortHubs) == 0 {
			r.NormLegend.Objects = r.NormLegend.Objects[:2]
		}
		r.NormLegend.Refresh()
	}
}

// legendItem is a colour swatch with its meaning.
func legendItem(c color.NRGBA, text string) fyne.CanvasObject {
	sw := canvas.NewCircle(c)
	sw.StrokeColor = color.NRGBA{0x40, 0x40, 0x40, 0xff}
	sw.StrokeWidth = 1
	box := container.NewGridWrap(fyne.NewSize(14, 14), sw)
	return container.NewHBox(container.NewCenter(box), widget.NewLabel(text))
}

// showFinding puts the crosshair of every view on a row of the Norm tab and shows it over the
// degree z-map in the Slices tab (unless a z-map is on show already). The voxel is selected
// once the z-map is shown: one background update at a time (see loadSlices).
func (r *Result) showFinding(voxel [3]int) {
	r.SelectTab(TabSlices)
	if _, name := r.Slices.Overlay(); strings.HasPrefix(name, "z_") {
		r.selectVoxel(voxel)
		return
	}
	r.afterFirstOverlay = func() { r.selectVoxel(voxel) }
	r.Slices.ShowVolume(normview.VolumeZDegree)
}
