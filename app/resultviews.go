package app

import (
	"image/color"
	"strings"

	"github.com/go-gl/mathgl/mgl32"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"

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
)

// NormMarkerID is the first sphere ID of the norm markers (beyond every hub index, so a tap on
// one selects no hub).
const NormMarkerID = 1 << 24

// addNormMarkers draws the hubs lost and gained in the 3D view beside the scan's hubs.
func (r *Result) addNormMarkers() {
	if r.View3D == nil || r.Norm == nil {
		return
	}
	base := r.View3D.Scene()
	if base == nil {
		return
	}
	scene := *base
	scene.Spheres = append([]render.Sphere(nil), base.Spheres...)
	rad := float32(0.6 * render.MaxHubRadius)
	for i, row := range r.Norm.Rows {
		c := LostColor
		switch row.Kind {
		case normview.KindLost:
		case normview.KindGained:
			c = GainedColor
		default:
			continue
		}
		x := slices.World(r.Norm.Affine, row.Voxel)
		scene.Spheres = append(scene.Spheres, render.Sphere{Center: mgl32.Vec3{float32(x[0]), float32(x[1]), float32(x[2])}, Radius: rad, Color: c, ID: NormMarkerID + i})
	}
	r.View3D.SetScene(&scene)
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
