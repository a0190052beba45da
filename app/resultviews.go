package app

import (
	"strings"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"

	"github.com/hubscope/hubscope/app/normview"
	"github.com/hubscope/hubscope/app/sweepview"
	"github.com/hubscope/hubscope/ipc"
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
