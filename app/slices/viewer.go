package slices

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"sort"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/ipc"
)

// Names of the volumes the viewer treats specially.
const (
	// Background volumes, in order of preference: the MNI152 T1 template on the scan's grid
	// (served when the scan is in MNI space or registered to it), the scan's mean EPI, else
	// the analysis mask.
	VolumeTemplate = "template"
	VolumeMean     = "mean"
	VolumeMask     = "mask"
	// VolumeHubs is drawn as hub voxels coloured by their module when "modules" exists.
	VolumeHubs    = "hubs"
	VolumeModules = "modules"
	// DFCPrefix starts the names of the per-window degree maps ("dfc_degree@3").
	DFCPrefix = "dfc_degree@"
)

// noOverlay is the overlay picker's entry for "background only".
const noOverlay = "none"

// Viewer is the slice viewer: axial, coronal and sagittal views of a job's background with an
// overlay, a crosshair shared by the three views, and the overlay's controls. Its methods are
// for the UI goroutine; fetches run on their own goroutines and are applied with fyne.Do.
type Viewer struct {
	widget.BaseWidget

	// OnSelect is called (on the UI goroutine) when the user picks a voxel by tapping a view
	// or ending a drag. SetCrosshair does not call it.
	OnSelect func(voxel [3]int)
	// OnLoaded is called (on the UI goroutine) when a Load's background and overlay are shown,
	// with the first error met (nil when both arrived).
	OnLoaded func(err error)
	// OnOverlay is called (on the UI goroutine) each time an overlay asked for by Load,
	// ShowVolume or SetOverlay is shown, or failed to arrive (err); never for a fetch the user
	// superseded.
	OnOverlay func(name string, err error)

	svc *VolumeCache

	jobCtx                   context.Context
	cancelJob, cancelOverlay context.CancelFunc
	job                      string
	summary                  ipc.Summary
	bg, ov                   *layer
	ovName                   string
	// grid is the header the views are laid out on: the background's, else the overlay's.
	grid         *ipc.VolumeHeader
	geom         [3]sliceGeom
	cursor       [3]int
	radiological bool
	colormap     Colormap
	scaleMax     float64 // > 0: top of the colour scale for quantities, instead of the overlay's Max
	luts         map[Colormap]*lut
	external     map[string]*ipc.Volume // overlays handed in by SetOverlay, by picker label

	views                  [3]*sliceView
	sliders                [3]*widget.Slider
	picker, colormapPicker *widget.Select
	// bgPicker chooses the anatomy behind the overlay (BackgroundChoices); bgName is the
	// background shown, cancelBg stops its fetch.
	bgPicker           *widget.Select
	bgBox              fyne.CanvasObject
	bgName             string
	cancelBg           context.CancelFunc
	threshold, opacity *widget.Slider
	thresholdLabel     *widget.Label
	convention         *widget.Check
	conventionText     *widget.Label
	position, status   *widget.Label
	// hoverLabel reads the voxel under the mouse pointer (desktop; the browser's pointer
	// events reach it too); hovered is the slice pixel under it while it is over a slice.
	hoverLabel *widget.Label
	hovered    *hoverAt
	// atlas is the job's "atlas" volume (served only for scans in MNI space) and its region
	// names, for the crosshair's label; nil without one.
	atlas       *ipc.Volume
	atlasLabels map[int]string
	bar         *colourBar
	pickerBox   fyne.CanvasObject
	controls    *fyne.Container
	content     fyne.CanvasObject
	quiet       bool // set while the viewer updates its own controls

	// pending counts fetches whose results are not yet applied (tests wait on it).
	pending sync.WaitGroup
}

// New returns an empty viewer fetching through svc (wrapped in a VolumeCache unless it is one).
func New(svc ipc.Service) *Viewer {
	v := &Viewer{svc: cached(svc), radiological: true, colormap: Hot, luts: map[Colormap]*lut{},
		external: map[string]*ipc.Volume{}, jobCtx: context.Background()}
	v.ExtendBaseWidget(v)
	v.build()
	return v
}

func (v *Viewer) build() {
	v.quiet = true
	defer func() { v.quiet = false }()
	for p := range v.views {
		plane := Plane(p)
		v.views[p] = newSliceView(v, plane)
		s := widget.NewSlider(0, 1)
		s.OnChanged = func(x float64) {
			if !v.quiet {
				v.setSliceFromSlider(plane, x)
			}
		}
		v.sliders[p] = s
	}
	v.picker = widget.NewSelect([]string{noOverlay}, func(name string) {
		if !v.quiet {
			v.ShowVolume(name)
		}
	})
	v.colormapPicker = widget.NewSelect([]string{string(Hot), string(Viridis)}, func(c string) {
		if !v.quiet {
			v.colormap = Colormap(c)
			v.restyle()
		}
	})
	v.colormapPicker.SetSelected(string(Hot))
	v.bgPicker = widget.NewSelect(nil, func(label string) {
		if !v.quiet {
			v.ShowBackground(backgroundOf(label))
		}
	})
	v.threshold = widget.NewSlider(0, 1)
	v.threshold.OnChanged = func(float64) {
		if !v.quiet {
			v.restyle()
		}
	}
	v.thresholdLabel = widget.NewLabel("Threshold")
	v.opacity = widget.NewSlider(0, 1)
	v.opacity.Step = 0.05
	v.opacity.Value = 0.8
	v.opacity.OnChanged = func(float64) {
		if !v.quiet {
			v.restyle()
		}
	}
	v.conventionText = widget.NewLabel("")
	v.convention = widget.NewCheck("Radiological", func(on bool) { v.SetRadiological(on) })
	v.convention.Checked = v.radiological
	v.position = widget.NewLabel("")
	v.hoverLabel = widget.NewLabel(hoverIdle)
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.bar = newColourBar()
	v.updateConvention()

	v.pickerBox = container.NewBorder(nil, nil, widget.NewLabel("Overlay"), nil, v.picker)
	// Shown only when there is a choice of anatomy (a job with the MNI template).
	v.bgBox = container.NewBorder(nil, nil, widget.NewLabel("Anatomy"), nil, v.bgPicker)
	v.bgBox.Hide()
	v.controls = container.NewGridWithColumns(4,
		v.pickerBox,
		container.NewBorder(nil, nil, widget.NewLabel("Colours"), nil, v.colormapPicker),
		container.NewBorder(nil, nil, v.thresholdLabel, nil, v.threshold),
		container.NewBorder(nil, nil, widget.NewLabel("Opacity"), nil, v.opacity),
		v.bgBox,
	)
	var cols []fyne.CanvasObject
	for p := range v.views {
		cols = append(cols, container.NewBorder(nil, v.sliders[p], nil, nil, v.views[p]))
	}
	v.content = container.NewBorder(v.controls,
		container.NewVBox(v.bar.box, v.position, v.hoverLabel, container.NewBorder(nil, nil, v.convention, nil, v.conventionText), v.status),
		nil, nil, container.NewGridWithColumns(3, cols...))
}

func (v *Viewer) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.content) }

// SetControlColumns lays the overlay's controls (overlay, colours, threshold, opacity) out in
// n columns, 1 to 4 (default 4: one row). Each column is as wide as the widest control (the
// overlay picker, sized by its longest volume name), so a viewer sharing the window's width
// with another panel asks for about half the width with 2.
func (v *Viewer) SetControlColumns(n int) {
	v.controls.Layout = layout.NewGridLayoutWithColumns(min(max(n, 1), 4))
	v.controls.Refresh()
	v.Refresh()
}

// BackgroundName is the volume a job's slices are drawn on first: the MNI152 T1 template (a
// clinician reads the overlay against anatomy), else the mean EPI, else the mask, else "" (the
// overlay alone).
func BackgroundName(s ipc.Summary) string {
	if c := BackgroundChoices(s); len(c) > 0 {
		return c[0]
	}
	return ""
}

// BackgroundChoices lists the job's backgrounds in order of preference: the template and the
// mean EPI, or the mask when the job has neither (the flat mask is only a fallback).
func BackgroundChoices(s ipc.Summary) []string {
	var out []string
	for _, n := range []string{VolumeTemplate, VolumeMean} {
		if hasVolume(s, n) {
			out = append(out, n)
		}
	}
	if len(out) == 0 && hasVolume(s, VolumeMask) {
		out = append(out, VolumeMask)
	}
	return out
}

// Labels of the backgrounds in the Anatomy picker.
var backgroundLabels = map[string]string{
	VolumeTemplate: "MNI152 T1 template",
	VolumeMean:     "Mean EPI of the scan",
	VolumeMask:     "Analysis mask",
}

func backgroundOf(label string) string {
	for n, l := range backgroundLabels {
		if l == label {
			return n
		}
	}
	return label
}

// Background returns the name of the background shown (or being fetched).
func (v *Viewer) Background() string { return v.bgName }

// ShowBackground draws the slices on the job's volume name (BackgroundChoices), fetched in the
// background; OnLoaded is not called, a failure shows in the status line.
func (v *Viewer) ShowBackground(name string) {
	if v.cancelBg != nil {
		v.cancelBg()
	}
	v.setBackgroundPicker(name)
	if v.job == "" || name == v.bgName && v.bg != nil {
		return
	}
	v.bgName = name
	ctx, cancel := context.WithCancel(v.jobCtx)
	v.cancelBg = cancel
	job := v.job
	v.pending.Add(1)
	go func() {
		defer v.pending.Done()
		bg, err := v.svc.Volume(ctx, job, name)
		fyne.Do(func() {
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				v.status.SetText(fmt.Sprintf("background %q of job %s: %v", name, job, err))
				return
			}
			if v.grid != nil && !sameGrid(v.grid, &bg.Header) {
				v.status.SetText(fmt.Sprintf("Background %q lies on a %v grid, the overlay on %v: not shown", name, bg.Header.Dims, v.grid.Dims))
				return
			}
			v.setBackground(bg)
			v.refreshAll()
		})
	}()
}

func (v *Viewer) setBackgroundPicker(name string) {
	var labels []string
	for _, n := range BackgroundChoices(v.summary) {
		labels = append(labels, backgroundLabels[n])
	}
	v.quiet = true
	v.bgPicker.SetOptions(labels)
	if l, ok := backgroundLabels[name]; ok {
		v.bgPicker.SetSelected(l)
	} else {
		v.bgPicker.ClearSelected()
	}
	v.quiet = false
	if (len(labels) > 1) != v.bgBox.Visible() {
		if len(labels) > 1 {
			v.bgBox.Show()
		} else {
			v.bgBox.Hide()
		}
		v.controls.Refresh()
	}
}

// DefaultOverlay is what a job opens with: hub voxels in module colours, else the degree map.
func DefaultOverlay(s ipc.Summary) string {
	for _, n := range []string{VolumeHubs, "degree"} {
		if hasVolume(s, n) {
			return n
		}
	}
	return noOverlay
}

// OverlayChoices lists the job's volumes offered as overlays: every volume except the
// backgrounds and the per-window maps (the Dynamics tab shows those), sorted, after "none".
func OverlayChoices(s ipc.Summary) []string {
	var names []string
	for _, n := range s.Volumes {
		if n == VolumeMean || n == VolumeMask || n == VolumeTemplate || strings.HasPrefix(n, DFCPrefix) {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return append([]string{noOverlay}, names...)
}

func hasVolume(s ipc.Summary, name string) bool {
	for _, n := range s.Volumes {
		if n == name {
			return true
		}
	}
	return false
}

// Load shows job's slices with its default overlay (DefaultOverlay). It returns at once; the
// volumes arrive in the background and OnLoaded reports when they are shown. A later Load, or
// ctx ending, cancels what this one still fetches.
func (v *Viewer) Load(ctx context.Context, jobID string, summary ipc.Summary) {
	v.LoadWithOverlay(ctx, jobID, summary, DefaultOverlay(summary))
}

// LoadWithOverlay is Load with the named overlay ("" or "none": background only).
func (v *Viewer) LoadWithOverlay(ctx context.Context, jobID string, summary ipc.Summary, overlay string) {
	if v.cancelJob != nil {
		v.cancelJob()
	}
	jctx, cancel := context.WithCancel(ctx)
	v.jobCtx, v.cancelJob = jctx, cancel
	if jobID != v.job {
		v.bg, v.ov, v.ovName, v.grid = nil, nil, "", nil
		v.external = map[string]*ipc.Volume{}
		v.atlas, v.atlasLabels = nil, nil
		v.cursor = [3]int{-1, -1, -1} // placed when the grid is known
		if len(summary.Hubs) > 0 {
			v.cursor = summary.Hubs[0].Voxel
		}
	}
	v.job, v.summary = jobID, summary
	v.setPickerOptions(overlay)
	octx := v.overlayContext()
	bgName := BackgroundName(summary)
	if v.cancelBg != nil {
		v.cancelBg()
	}
	if hasVolume(summary, v.bgName) {
		bgName = v.bgName // the user's choice of anatomy stays from job to job
	}
	v.bgName = bgName
	v.setBackgroundPicker(bgName)
	withModules := hasVolume(summary, VolumeModules)
	withAtlas := summary.Atlas != nil && hasVolume(summary, "atlas")
	v.status.SetText(fmt.Sprintf("Loading %s…", jobID))
	v.pending.Add(1)
	go func() {
		defer v.pending.Done()
		var bg *ipc.Volume
		var bgErr error
		if bgName != "" {
			bg, bgErr = v.svc.Volume(jctx, jobID, bgName)
		}
		ov, ovErr := v.fetchOverlay(octx, jobID, overlay, withModules)
		// The atlas names the crosshair's region; without it the position line just has no
		// label, so its error is not the load's.
		var atlas *ipc.Volume
		if withAtlas {
			atlas, _ = v.svc.Volume(jctx, jobID, "atlas")
		}
		fyne.Do(func() {
			if jctx.Err() != nil {
				return // superseded by a later Load
			}
			if atlas != nil && (bg == nil || sameGrid(&bg.Header, &atlas.Header)) {
				v.atlas, v.atlasLabels = atlas, summary.Atlas.Labels
			}
			err := bgErr
			if bgErr != nil {
				err = fmt.Errorf("background %q of job %s: %w", bgName, jobID, bgErr)
			} else {
				v.setBackground(bg)
			}
			if octx.Err() == nil {
				if ovErr != nil {
					ovErr = fmt.Errorf("overlay %q of job %s: %w", overlay, jobID, ovErr)
					err = errors.Join(err, ovErr)
				}
				v.applyOverlay(overlay, ov, ovErr)
				defer v.overlayShown(overlay, ovErr)
			}
			v.refreshAll()
			if err != nil {
				v.status.SetText(err.Error())
			} else {
				v.status.SetText("")
			}
			if v.OnLoaded != nil {
				v.OnLoaded(err)
			}
		})
	}()
}

// overlayContext cancels the overlay fetch in flight and returns the next one's context.
func (v *Viewer) overlayContext() context.Context {
	if v.cancelOverlay != nil {
		v.cancelOverlay()
	}
	ctx, cancel := context.WithCancel(v.jobCtx)
	v.cancelOverlay = cancel
	return ctx
}

// fetchOverlay fetches the named overlay; "hubs" becomes the hub voxels labelled by module
// when the job has modules. It runs off the UI goroutine, so it is told what it needs.
func (v *Viewer) fetchOverlay(ctx context.Context, job, name string, withModules bool) (*ipc.Volume, error) {
	if name == "" || name == noOverlay {
		return nil, nil
	}
	vol, err := v.svc.Volume(ctx, job, name)
	if err != nil || name != VolumeHubs || !withModules {
		return vol, err
	}
	mods, err := v.svc.Volume(ctx, job, VolumeModules)
	if err != nil {
		return nil, err
	}
	return HubsByModule(vol, mods)
}

// HubsByModule labels each hub voxel (hubs > 0) with its module and leaves the rest NaN, so
// that the overlay shows hubs in their modules' colours.
func HubsByModule(hubs, modules *ipc.Volume) (*ipc.Volume, error) {
	if !sameGrid(&hubs.Header, &modules.Header) {
		return nil, fmt.Errorf("volumes %q and %q lie on different grids", hubs.Header.Name, modules.Header.Name)
	}
	out := &ipc.Volume{Header: hubs.Header, Data: make([]float32, len(hubs.Data))}
	out.Header.Categorical = true
	out.Header.Description = "hub voxels coloured by module"
	nan := float32(math.NaN())
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for n, h := range hubs.Data {
		out.Data[n] = nan
		if h > 0.5 && !math.IsNaN(float64(modules.Data[n])) {
			m := modules.Data[n]
			out.Data[n] = m
			lo, hi = min(lo, m), max(hi, m)
		}
	}
	if lo <= hi {
		out.Header.Min, out.Header.Max = lo, hi
	}
	return out, nil
}

// ShowVolume switches the overlay to the job's volume name ("none": background only), fetching
// it in the background and cancelling the previous overlay fetch.
func (v *Viewer) ShowVolume(name string) {
	if v.picker.Selected != name {
		v.quiet = true
		v.picker.SetSelected(name)
		v.quiet = false
	}
	if vol, ok := v.external[name]; ok {
		v.overlayContext()
		v.applyOverlay(name, vol, nil)
		v.refreshAll()
		v.overlayShown(name, nil)
		return
	}
	ctx := v.overlayContext()
	job := v.job
	if name == "" || name == noOverlay || job == "" {
		v.applyOverlay(noOverlay, nil, nil)
		v.refreshAll()
		v.overlayShown(noOverlay, nil)
		return
	}
	v.status.SetText(fmt.Sprintf("Loading %s…", name))
	withModules := hasVolume(v.summary, VolumeModules)
	v.pending.Add(1)
	go func() {
		defer v.pending.Done()
		vol, err := v.fetchOverlay(ctx, job, name, withModules)
		fyne.Do(func() {
			if ctx.Err() != nil {
				return // the user moved on
			}
			if err != nil {
				err = fmt.Errorf("overlay %q of job %s: %w", name, job, err)
				v.status.SetText(err.Error())
			} else {
				v.status.SetText("")
			}
			v.applyOverlay(name, vol, err)
			v.refreshAll()
			v.overlayShown(name, err)
		})
	}()
}

func (v *Viewer) overlayShown(name string, err error) {
	if v.OnOverlay != nil {
		v.OnOverlay(name, err)
	}
}

// SetOverlayPickerVisible shows or hides the overlay picker, for a host that chooses the
// overlay itself (the Dynamics tab shows one window's map at a time).
func (v *Viewer) SetOverlayPickerVisible(on bool) {
	if on {
		v.pickerBox.Show()
	} else {
		v.pickerBox.Hide()
	}
}

// SetOverlay shows vol (a seed map, say) as the overlay; it joins the overlay picker under a
// name of its own until the next job is loaded.
func (v *Viewer) SetOverlay(vol *ipc.Volume) {
	if vol == nil {
		v.ShowVolume(noOverlay)
		return
	}
	name := vol.Header.Name
	if vol.Header.Seed != nil {
		s := vol.Header.Seed
		name = fmt.Sprintf("seed map %d,%d,%d", s[0], s[1], s[2])
	}
	if name == "" {
		name = "overlay"
	}
	v.external[name] = vol
	v.overlayContext()
	v.setPickerOptions(name)
	v.applyOverlay(name, vol, nil)
	v.refreshAll()
	v.overlayShown(name, nil)
}

// Overlay returns the overlay shown now (nil for none) and its picker name.
func (v *Viewer) Overlay() (*ipc.Volume, string) {
	if v.ov == nil {
		return nil, v.ovName
	}
	return v.ov.vol, v.ovName
}

func (v *Viewer) setPickerOptions(selected string) {
	opts := OverlayChoices(v.summary)
	for name := range v.external {
		opts = append(opts, name)
	}
	if selected != "" && selected != noOverlay && !strings.HasPrefix(selected, DFCPrefix) {
		found := false
		for _, o := range opts {
			found = found || o == selected
		}
		if !found {
			opts = append(opts, selected)
		}
	}
	v.quiet = true
	v.picker.SetOptions(opts)
	if selected == "" {
		selected = noOverlay
	}
	v.picker.SetSelected(selected)
	v.quiet = false
}

// setBackground installs the background and lays the views out on its grid.
func (v *Viewer) setBackground(bg *ipc.Volume) {
	if bg == nil {
		v.bg = nil
		return
	}
	lo, hi := intensityWindow(bg)
	v.bg = &layer{vol: bg, lo: lo, hi: hi}
	v.setGrid(&bg.Header)
}

func (v *Viewer) setGrid(h *ipc.VolumeHeader) {
	v.grid = h
	o := OrientationOf(h.Affine)
	for p := range v.geom {
		v.geom[p] = newSliceGeom(Plane(p), h.Dims, o, v.radiological)
	}
	for a := range 3 {
		if v.cursor[a] < 0 || v.cursor[a] >= h.Dims[a] {
			v.cursor[a] = h.Dims[a] / 2
		}
	}
	v.quiet = true
	for p, s := range v.sliders {
		s.Min, s.Max, s.Step = 0, float64(max(v.geom[p].nf-1, 1)), 1
		s.SetValue(v.sliderValue(Plane(p)))
		s.Refresh()
	}
	v.quiet = false
}

// applyOverlay installs vol as the overlay named name and sets its controls: categorical
// volumes take module colours; quantities the chosen colour scale over [Min, Max], keeping the
// threshold when the new volume is another window of the same map (DFC scrubbing).
func (v *Viewer) applyOverlay(name string, vol *ipc.Volume, err error) {
	prev := v.ov
	prevName := v.ovName
	v.ovName = name
	if err != nil || vol == nil {
		v.ov = nil
		v.showBar(name, nil)
		v.thresholdLabel.SetText("Threshold")
		v.threshold.Disable()
		return
	}
	if v.grid == nil {
		v.setGrid(&vol.Header)
	} else if !sameGrid(v.grid, &vol.Header) {
		v.ov = nil
		v.showBar(name, nil)
		v.status.SetText(fmt.Sprintf("Overlay %q lies on a %v grid, the background on %v: not shown", name, vol.Header.Dims, v.grid.Dims))
		return
	}
	st := Style{Colormap: v.colormap, Opacity: v.opacity.Value, Max: v.topOfScale(vol), Signed: isSigned(vol)}
	lo, hi := float64(vol.Header.Min), float64(vol.Header.Max)
	if st.Signed {
		// The threshold is on |value|: from 0 to the largest magnitude.
		lo, hi = 0, st.Max
		st.Colormap = ColdHot
	}
	v.quiet = true
	defer func() { v.quiet = false }()
	if vol.Header.Categorical {
		st.Colormap = Modules
		v.threshold.Disable()
		v.colormapPicker.Disable()
	} else {
		v.threshold.Enable()
		if st.Signed {
			v.colormapPicker.Disable() // one diverging scale for signed maps
		} else {
			v.colormapPicker.Enable()
		}
		keep := prev != nil && !prev.vol.Header.Categorical && prev.style.Signed == st.Signed && family(prevName) == family(name)
		t := lo
		switch {
		case keep:
			t = prev.style.Threshold
		case vol.Header.Seed != nil:
			t = 0.3 // a seed map's positive correlations above a conventional 0.3
		case st.Signed && strings.HasPrefix(name, "z_"):
			t = 2 // a z-map against a normative cohort: |z| > 2, the comparison's own cut
		}
		if hi <= lo {
			hi = lo + 1
		}
		v.threshold.Min, v.threshold.Max, v.threshold.Step = lo, hi, 0
		v.threshold.Value = min(max(t, lo), hi)
		v.threshold.Refresh()
		st.Threshold = v.threshold.Value
	}
	v.ov = &layer{vol: vol, style: st, lut: v.lut(st.Colormap)}
	v.updateThresholdLabel()
}

func (v *Viewer) topOfScale(vol *ipc.Volume) float64 {
	if v.scaleMax > 0 {
		return v.scaleMax
	}
	if isSigned(vol) {
		return math.Max(-float64(vol.Header.Min), float64(vol.Header.Max))
	}
	return float64(vol.Header.Max)
}

// isSigned says whether vol is a quantity with negative values (a seed correlation, z or t
// map), drawn with the diverging scale so that its negative values show.
func isSigned(vol *ipc.Volume) bool {
	return !vol.Header.Categorical && vol.Header.Min < 0
}

// SetScaleMax pins the top of the colour scale for quantities at hi (hi ≤ 0: each overlay's
// own maximum), so that maps of one family — the windows of a dynamic analysis — are drawn on
// one scale and can be compared by eye.
func (v *Viewer) SetScaleMax(hi float64) {
	v.scaleMax = max(hi, 0)
	if v.ov != nil && !v.ov.vol.Header.Categorical {
		v.ov.style.Max = v.topOfScale(v.ov.vol)
		v.showBar(v.ovName, v.ov)
		v.refreshViews()
	}
}

// family is a map's name without its window suffix: every dfc_degree@w is one family.
func family(name string) string {
	if i := strings.IndexByte(name, '@'); i >= 0 {
		return name[:i]
	}
	return name
}

func (v *Viewer) lut(c Colormap) *lut {
	if c == Modules {
		return nil
	}
	l, ok := v.luts[c]
	if !ok {
		l = newLUT(c)
		v.luts[c] = l
	}
	return l
}

// restyle applies the controls to the overlay and redraws.
func (v *Viewer) restyle() {
	if v.ov != nil {
		st := &v.ov.style
		st.Opacity = v.opacity.Value
		if !v.ov.vol.Header.Categorical {
			st.Threshold = v.threshold.Value
			if !st.Signed {
				st.Colormap = v.colormap
			}
			v.ov.lut = v.lut(st.Colormap)
		}
	}
	v.updateThresholdLabel()
	v.refreshViews()
}

// SetStyle sets the overlay's colour scale, threshold and opacity (as the controls would).
func (v *Viewer) SetStyle(c Colormap, threshold, opacity float64) {
	v.quiet = true
	if c == Hot || c == Viridis {
		v.colormap = c
		v.colormapPicker.SetSelected(string(c))
	}
	v.threshold.SetValue(threshold)
	v.opacity.SetValue(opacity)
	v.quiet = false
	v.restyle()
}

// Style returns the overlay's style (zero without an overlay).
func (v *Viewer) Style() Style {
	if v.ov == nil {
		return Style{}
	}
	return v.ov.style
}

func (v *Viewer) updateThresholdLabel() {
	v.showBar(v.ovName, v.ov)
	if v.ov == nil || v.ov.vol.Header.Categorical {
		v.thresholdLabel.SetText("Threshold")
		return
	}
	if v.ov.style.Signed {
		v.thresholdLabel.SetText(fmt.Sprintf("|x| >= %.3g", v.ov.style.Threshold))
		return
	}
	v.thresholdLabel.SetText(fmt.Sprintf(">= %.3g", v.ov.style.Threshold))
}

// showBar updates the colour bar for overlay ov and lays the viewer out again when the bar
// appeared or went.
func (v *Viewer) showBar(name string, ov *layer) {
	if v.bar.update(name, ov) {
		if c, ok := v.content.(*fyne.Container); ok {
			c.Refresh()
		}
	}
}

// SetRadiological chooses the display convention: radiological (patient's left on the screen's
// right) or neurological (left on the left). The views' edge letters and the caption say which.
func (v *Viewer) SetRadiological(on bool) {
	v.radiological = on
	if v.convention.Checked != on {
		v.convention.SetChecked(on)
	}
	if v.grid != nil {
		v.setGrid(v.grid)
	}
	v.updateConvention()
	v.refreshViews()
}

func (v *Viewer) updateConvention() {
	if v.radiological {
		v.conventionText.SetText("Radiological convention: the patient's left (L) is on the right of the screen.")
	} else {
		v.conventionText.SetText("Neurological convention: the patient's left (L) is on the left of the screen.")
	}
}

// geometry returns plane p's layout, and whether a grid is loaded.
func (v *Viewer) geometry(p Plane) (sliceGeom, bool) {
	if v.grid == nil {
		return sliceGeom{}, false
	}
	return v.geom[p], true
}

// sliceImage renders plane p through the cursor, one pixel per voxel.
func (v *Viewer) sliceImage(p Plane) *image.RGBA {
	g := v.geom[p]
	img := image.NewRGBA(image.Rect(0, 0, g.nc, g.nr))
	renderSlice(img, g, v.cursor[g.fixed], v.bg, v.ov)
	return img
}

// Crosshair returns the voxel under the crosshair.
func (v *Viewer) Crosshair() [3]int { return v.cursor }

// SetCrosshair moves the crosshair (and the three slices) to voxel, clamped to the grid.
func (v *Viewer) SetCrosshair(voxel [3]int) {
	v.cursor = voxel
	if v.grid != nil {
		for a := range 3 {
			v.cursor[a] = min(max(v.cursor[a], 0), v.grid.Dims[a]-1)
		}
	}
	v.syncSliders()
	v.refreshViews()
}

// pick moves the crosshair to pixel (px, py) of plane p's view, and selects it when final.
func (v *Viewer) pick(p Plane, px, py int, final bool) {
	g, ok := v.geometry(p)
	if !ok {
		return
	}
	v.SetCrosshair(g.voxel(px, py, v.cursor[g.fixed]))
	if final {
		v.selectCursor()
	}
}

func (v *Viewer) selectCursor() {
	if v.grid != nil && v.OnSelect != nil {
		v.OnSelect(v.cursor)
	}
}

// step moves plane p's slice by d towards +world (superior, anterior, right).
func (v *Viewer) step(p Plane, d int) {
	g, ok := v.geometry(p)
	if !ok {
		return
	}
	o := OrientationOf(v.grid.Affine)
	c := v.cursor
	c[g.fixed] += d * o.Sign[[3]int{2, 1, 0}[p]]
	v.SetCrosshair(c)
}

// sliderValue maps plane p's slice index to its slider, so that sliding right always moves
// towards +world (superior, anterior, right) whatever the grid's storage order.
func (v *Viewer) sliderValue(p Plane) float64 {
	g := v.geom[p]
	s := v.cursor[g.fixed]
	if OrientationOf(v.grid.Affine).Sign[[3]int{2, 1, 0}[p]] < 0 {
		s = g.nf - 1 - s
	}
	return float64(s)
}

func (v *Viewer) setSliceFromSlider(p Plane, x float64) {
	g, ok := v.geometry(p)
	if !ok {
		return
	}
	s := int(math.Round(x))
	if OrientationOf(v.grid.Affine).Sign[[3]int{2, 1, 0}[p]] < 0 {
		s = g.nf - 1 - s
	}
	c := v.cursor
	c[g.fixed] = s
	v.SetCrosshair(c)
}

func (v *Viewer) syncSliders() {
	if v.grid == nil {
		return
	}
	v.quiet = true
	for p, s := range v.sliders {
		s.SetValue(v.sliderValue(Plane(p)))
	}
	v.quiet = false
}

func (v *Viewer) refreshAll() {
	v.syncSliders()
	v.refreshViews()
}

func (v *Viewer) refreshViews() {
	for _, s := range v.views {
		s.Refresh()
	}
	v.updatePosition()
}

// regionAt names the atlas region at voxel c.
func (v *Viewer) regionAt(c [3]int) string {
	l := int(math.Round(float64(v.atlas.At(c[0], c[1], c[2]))))
	if name, ok := v.atlasLabels[l]; ok && l > 0 {
		return name
	}
	return "outside the atlas"
}

// updatePosition writes the crosshair's voxel, world position and overlay value, and the
// pointer's (the overlay or the anatomy under it may have changed).
func (v *Viewer) updatePosition() {
	if v.grid == nil {
		v.position.SetText("")
		v.hovered = nil
		v.hoverLabel.SetText(hoverIdle)
		return
	}
	v.position.SetText("Crosshair: " + v.describe(v.cursor))
	v.updateHover()
}

// hoverIdle is the pointer line while the pointer is off the slices.
const hoverIdle = "Pointer: over a slice, this line reads the voxel under it."

// hoverAt is the slice pixel under the mouse pointer: the voxel follows the crosshair's
// slice, so scrolling under a still pointer reads the new slice.
type hoverAt struct {
	plane  Plane
	px, py int
}

// Hover returns the voxel under the mouse pointer, and whether the pointer is over a slice.
func (v *Viewer) Hover() ([3]int, bool) {
	if v.hovered == nil || v.grid == nil {
		return [3]int{}, false
	}
	g, h := v.geom[v.hovered.plane], v.hovered
	if h.px >= g.nc || h.py >= g.nr {
		return [3]int{}, false // another job's grid since the pointer last moved
	}
	return g.voxel(h.px, h.py, v.cursor[g.fixed]), true
}

// HoverText is the pointer line: the voxel under the mouse pointer in the crosshair line's
// words, or how to use it.
func (v *Viewer) HoverText() string { return v.hoverLabel.Text }

// PositionText is the crosshair line.
func (v *Viewer) PositionText() string { return v.position.Text }

// hover moves the pointer line to pixel h of a slice, or off the slices (nil). Hovering never
// moves the crosshair or selects anything: a click does.
func (v *Viewer) hover(h *hoverAt) {
	if h == nil && v.hovered == nil || h != nil && v.hovered != nil && *h == *v.hovered {
		return // the pointer moved within a pixel: nothing to redraw
	}
	v.hovered = h
	v.updateHover()
}

func (v *Viewer) updateHover() {
	c, ok := v.Hover()
	if !ok {
		v.hoverLabel.SetText(hoverIdle)
		return
	}
	v.hoverLabel.SetText("Pointer: " + v.describe(c))
}

// describe is voxel c in words: its indices, world (and MNI) position, atlas region and the
// overlay's value there.
func (v *Viewer) describe(c [3]int) string {
	x := World(v.grid.Affine, c)
	text := fmt.Sprintf("Voxel (i, j, k) = (%d, %d, %d) · (x, y, z) = (%.1f, %.1f, %.1f) mm", c[0], c[1], c[2], x[0], x[1], x[2])
	if to := v.summary.ScanToMNI; to != nil {
		// A registered scan: its MNI position through the registration (the helper's atlas
		// grid was looked up the same way).
		m := World(*to, [3]int{})
		for r := range 3 {
			m[r] += to[r][0]*x[0] + to[r][1]*x[1] + to[r][2]*x[2]
		}
		text = fmt.Sprintf("Voxel (i, j, k) = (%d, %d, %d) · scan (%.1f, %.1f, %.1f) mm · MNI (x, y, z) = (%.1f, %.1f, %.1f) mm", c[0], c[1], c[2], x[0], x[1], x[2], m[0], m[1], m[2])
		if v.atlas != nil {
			text += " · " + v.regionAt(c)
		}
	} else if v.atlas != nil {
		// Without a registration the helper serves the atlas only for a scan in MNI space,
		// so its world coordinates are MNI coordinates.
		text = fmt.Sprintf("Voxel (i, j, k) = (%d, %d, %d) · MNI (x, y, z) = (%.1f, %.1f, %.1f) mm · %s", c[0], c[1], c[2], x[0], x[1], x[2], v.regionAt(c))
	}
	if v.ov != nil {
		val := v.ov.vol.At(c[0], c[1], c[2])
		switch {
		case math.IsNaN(float64(val)):
			text += fmt.Sprintf(" · %s: —", v.ovName)
		case v.ov.vol.Header.Categorical:
			text += fmt.Sprintf(" · %s: %d", v.ovName, int(math.Round(float64(val))))
		default:
			text += fmt.Sprintf(" · %s: %.4g", v.ovName, val)
		}
	}
	return text
}

// Wait blocks until the fetches started so far (Load, ShowVolume, ShowBackground) have been
// applied or dropped; for tests and smoke drivers, off the UI goroutine.
func (v *Viewer) Wait() { v.pending.Wait() }
