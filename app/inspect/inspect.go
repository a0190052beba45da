// Package inspect is HubScope's voxel inspector: what the network says about one voxel of a
// finished job — its grid and world position, atlas region, degree, strength, module and hub
// score, its time series as a plot, and a button that fetches its seed-based connectivity map.
//
//	in := inspect.New(svc)                  // svc: the ipc.Service (a slices.VolumeCache shares volumes with the viewer)
//	in.OnSeedMap = viewer.SetOverlay        // the seed map becomes the slice viewer's overlay
//	viewer.OnSelect = func(v [3]int) { in.Inspect(ctx, jobID, v) }
//
// (The method is Inspect, not Show: an Inspector is a fyne.Widget, whose Show() it keeps.)
// Inspect returns at once: the summary, volumes and series are fetched off the UI goroutine
// (volumes once per job, through a slices.VolumeCache) and applied with fyne.Do; showing
// another voxel cancels what the previous Inspect still fetches. OnShown reports when a voxel's
// details are on screen. Methods are for the UI goroutine.
package inspect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/slices"
	"github.com/hubscope/hubscope/app/slices/lineplot"
	"github.com/hubscope/hubscope/ipc"
)

// The volumes the inspector reads a voxel's measures from; "mask" (1 = node) says whether the
// voxel is in the network, else a finite degree does (quantities are NaN outside the mask).
var measureVolumes = []string{"degree", "strength", "modules", "hub_z", "atlas", "mask"}

// Details is what the inspector found for a voxel.
type Details struct {
	Voxel  [3]int
	World  [3]float64 // mm through the volumes' affine
	MNI    bool       // the world space is MNI (the helper's atlas covers it)
	InMask bool
	// Region is the atlas label's name ("" when no atlas or outside every region).
	Region string
	// Measures at the voxel; NaN when the job has no such volume or the voxel is outside the mask.
	Degree, Strength, HubZ float64
	Module                 int // 0 = none
	Hub                    *ipc.Hub
	Series                 ipc.Series
}

// Inspector shows one voxel's details (a fyne widget).
type Inspector struct {
	widget.BaseWidget

	// OnSeedMap receives the seed map the "Seed map" button fetched (on the UI goroutine).
	OnSeedMap func(vol *ipc.Volume)
	// OnShown is called (on the UI goroutine) when Inspect's details are on screen, with the
	// error that kept any of them away.
	OnShown func(err error)

	svc       *slices.VolumeCache
	summaries map[string]ipc.Summary

	cancel, cancelSeed context.CancelFunc
	ctx                context.Context
	job                string
	details            *Details

	heading, voxel, world, region, degree, strength, module, hubZ, note, seedStatus *widget.Label
	worldName                                                                       *widget.Label
	swatch                                                                          *canvas.Rectangle
	plot                                                                            *lineplot.Plot
	seedButton                                                                      *widget.Button
	content                                                                         fyne.CanvasObject

	pending sync.WaitGroup // fetches not yet applied (tests wait on it)
}

// New returns an empty inspector fetching through svc (wrapped in a slices.VolumeCache unless
// it is one).
func New(svc ipc.Service) *Inspector {
	c, ok := svc.(*slices.VolumeCache)
	if !ok {
		c = slices.NewVolumeCache(svc, 0)
	}
	in := &Inspector{svc: c, summaries: map[string]ipc.Summary{}, ctx: context.Background()}
	in.ExtendBaseWidget(in)
	in.build()
	return in
}

func (in *Inspector) build() {
	l := func() *widget.Label { return widget.NewLabel("—") }
	in.heading = widget.NewLabelWithStyle("Voxel inspector", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	in.voxel, in.world, in.region, in.degree, in.strength, in.module, in.hubZ = l(), l(), l(), l(), l(), l(), l()
	in.worldName = widget.NewLabel("World (mm)")
	in.note = widget.NewLabel("Click a voxel in the slices to inspect it.")
	in.note.Wrapping = fyne.TextWrapWord
	in.seedStatus = widget.NewLabel("")
	in.seedStatus.Wrapping = fyne.TextWrapWord
	in.swatch = canvas.NewRectangle(slices.ModuleColor(0))
	in.swatch.SetMinSize(fyne.NewSize(14, 14))
	in.plot = lineplot.New("Time series (BOLD signal)", "s")
	in.seedButton = widget.NewButton("Seed map", in.fetchSeedMap)
	in.seedButton.Disable()
	form := container.New(layout.NewFormLayout(),
		widget.NewLabel("Voxel (i, j, k)"), in.voxel,
		in.worldName, in.world,
		widget.NewLabel("Region"), in.region,
		widget.NewLabel("Degree"), in.degree,
		widget.NewLabel("Strength"), in.strength,
		widget.NewLabel("Module"), container.NewHBox(container.NewCenter(in.swatch), in.module),
		widget.NewLabel("Hub z"), in.hubZ,
	)
	in.content = container.NewBorder(container.NewVBox(in.heading, form, in.note),
		container.NewVBox(container.NewHBox(in.seedButton), in.seedStatus), nil, nil, in.plot)
}

func (in *Inspector) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(in.content)
}

// Details returns what is shown (nil before the first Inspect completes).
func (in *Inspector) Details() *Details { return in.details }

// Inspect shows voxel of job jobID. It returns at once (see the package comment).
func (in *Inspector) Inspect(ctx context.Context, jobID string, voxel [3]int) {
	if in.cancel != nil {
		in.cancel()
	}
	if in.cancelSeed != nil {
		in.cancelSeed()
	}
	sctx, cancel := context.WithCancel(ctx)
	in.ctx, in.cancel, in.job = sctx, cancel, jobID
	in.voxel.SetText(fmt.Sprintf("%d, %d, %d", voxel[0], voxel[1], voxel[2]))
	in.note.SetText("Loading…")
	in.seedButton.Disable()
	in.seedStatus.SetText("")
	summary, known := in.summaries[jobID]
	in.pending.Add(1)
	go func() {
		defer in.pending.Done()
		var err error
		if !known {
			summary, err = in.svc.Summary(sctx, jobID)
		}
		var d *Details
		if err == nil {
			d, err = in.gather(sctx, jobID, summary, voxel)
		}
		fyne.Do(func() {
			if sctx.Err() != nil {
				return // another voxel was chosen meanwhile
			}
			if err == nil && !known {
				in.summaries[jobID] = summary
			}
			in.apply(d, err)
			if in.OnShown != nil {
				in.OnShown(err)
			}
		})
	}()
}

// gather reads the voxel's measures from the job's volumes and fetches its series.
func (in *Inspector) gather(ctx context.Context, job string, s ipc.Summary, v [3]int) (*Details, error) {
	d := &Details{Voxel: v, MNI: s.Atlas != nil, Degree: math.NaN(), Strength: math.NaN(), HubZ: math.NaN()}
	var errs []error
	var grid *ipc.VolumeHeader
	values := map[string]float64{}
	for _, name := range measureVolumes {
		if !has(s.Volumes, name) {
			continue
		}
		vol, err := in.svc.Volume(ctx, job, name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			errs = append(errs, fmt.Errorf("volume %q: %w", name, err))
			continue
		}
		if grid == nil {
			grid = &vol.Header
		}
		values[name] = float64(vol.At(v[0], v[1], v[2]))
	}
	if grid == nil {
		return nil, errors.Join(append(errs, fmt.Errorf("job %s has none of the volumes %v", job, measureVolumes))...)
	}
	d.World = slices.World(grid.Affine, v)
	for a := range 3 {
		if v[a] < 0 || v[a] >= grid.Dims[a] {
			return nil, fmt.Errorf("voxel %v lies outside the %d×%d×%d grid", v, grid.Dims[0], grid.Dims[1], grid.Dims[2])
		}
	}
	if x, ok := values["degree"]; ok {
		d.Degree = x
		d.InMask = !math.IsNaN(x)
	}
	if m, ok := values["mask"]; ok {
		d.InMask = m > 0.5
	}
	if d.InMask {
		d.Strength, d.HubZ = nanOr(values, "strength"), nanOr(values, "hub_z")
		if m := nanOr(values, "modules"); !math.IsNaN(m) {
			d.Module = int(math.Round(m))
		}
	}
	if a := nanOr(values, "atlas"); s.Atlas != nil && !math.IsNaN(a) {
		d.Region = s.Atlas.Labels[int(math.Round(a))]
	}
	for n := range s.Hubs {
		if s.Hubs[n].Voxel == v {
			d.Hub = &s.Hubs[n]
		}
	}
	if d.InMask {
		ser, err := in.svc.Series(ctx, job, v)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			errs = append(errs, fmt.Errorf("time series: %w", err))
		}
		d.Series = ser
	}
	return d, errors.Join(errs...)
}

func nanOr(m map[string]float64, k string) float64 {
	if x, ok := m[k]; ok {
		return x
	}
	return math.NaN()
}

func has(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// apply shows d (which may be nil when err says why).
func (in *Inspector) apply(d *Details, err error) {
	in.details = d
	if d == nil {
		for _, l := range []*widget.Label{in.world, in.region, in.degree, in.strength, in.module, in.hubZ} {
			l.SetText("—")
		}
		in.swatch.FillColor = slices.ModuleColor(0)
		in.swatch.Refresh()
		in.plot.SetData(nil, nil)
		in.note.SetText(fmt.Sprintf("Could not inspect this voxel: %v", err))
		return
	}
	if d.MNI {
		in.worldName.SetText("MNI (mm)")
	} else {
		in.worldName.SetText("World (mm)")
	}
	in.world.SetText(fmt.Sprintf("%.1f, %.1f, %.1f", d.World[0], d.World[1], d.World[2]))
	switch {
	case d.Region != "":
		in.region.SetText(d.Region)
	case in.summaries[in.job].Atlas == nil:
		in.region.SetText("no atlas for this scan's space")
	default:
		in.region.SetText("outside the atlas regions")
	}
	num := func(x float64, f string) string {
		if math.IsNaN(x) {
			return "—"
		}
		return fmt.Sprintf(f, x)
	}
	in.degree.SetText(num(d.Degree, "%.0f"))
	in.strength.SetText(num(d.Strength, "%.2f"))
	if d.Module > 0 {
		in.module.SetText(fmt.Sprint(d.Module))
	} else {
		in.module.SetText("—")
	}
	in.swatch.FillColor = slices.ModuleColor(d.Module)
	in.swatch.Refresh()
	hz := num(d.HubZ, "%.2f")
	if d.Hub != nil {
		hz += " — hub"
		if d.Hub.Role != "" {
			hz += " (" + d.Hub.Role + ")"
		}
	}
	in.hubZ.SetText(hz)
	note := ""
	if !d.InMask {
		note = "This voxel lies outside the analysis mask: it is not a node of the network, so it has no degree, module or time series."
	}
	if err != nil {
		note = fmt.Sprintf("%s Some details are missing: %v", note, err)
	}
	in.note.SetText(note)
	if len(d.Series.Values) > 0 {
		x := make([]float64, len(d.Series.Values))
		y := make([]float64, len(d.Series.Values))
		for t, val := range d.Series.Values {
			x[t], y[t] = float64(t)*d.Series.TR, float64(val)
		}
		in.plot.SetData(x, y)
	} else {
		in.plot.SetData(nil, nil)
	}
	if d.InMask {
		in.seedButton.Enable()
	}
}

// fetchSeedMap asks the helper for the shown voxel's seed map and hands it to OnSeedMap.
func (in *Inspector) fetchSeedMap() {
	d := in.details
	if d == nil || !d.InMask {
		return
	}
	if in.cancelSeed != nil {
		in.cancelSeed()
	}
	ctx, cancel := context.WithCancel(in.ctx)
	in.cancelSeed = cancel
	job, v := in.job, d.Voxel
	in.seedButton.Disable()
	in.seedStatus.SetText(fmt.Sprintf("Computing the seed map of voxel %d, %d, %d…", v[0], v[1], v[2]))
	in.pending.Add(1)
	go func() {
		defer in.pending.Done()
		vol, err := in.svc.SeedMap(ctx, job, v)
		fyne.Do(func() {
			if ctx.Err() != nil {
				return
			}
			in.seedButton.Enable()
			if err != nil {
				in.seedStatus.SetText(fmt.Sprintf("Seed map of voxel %d, %d, %d failed: %v", v[0], v[1], v[2], err))
				return
			}
			in.seedStatus.SetText(fmt.Sprintf("Seed map of voxel %d, %d, %d: correlation with every voxel, computed by the helper in %.1f ms.", v[0], v[1], v[2], vol.Header.Millis))
			if in.OnSeedMap != nil {
				in.OnSeedMap(vol)
			}
		})
	}()
}
