// Package dynamics is HubScope's Dynamics tab: the sliding-window (dynamic functional
// connectivity) analysis of a job — each window's degree map in the slice viewer, a time
// scrubber over the windows, and one small timeline per global measure with a cursor at the
// window shown.
//
//	tab := dynamics.New(svc)  // svc: the ipc.Service (a slices.VolumeCache shares volumes with the other tabs)
//	tab.Load(ctx, jobID, summary)
//	tab.Viewer.OnSelect = …   // the embedded *slices.Viewer, for sharing the selected voxel
//
// A job without Summary.DFC shows a sentence saying so. Moving the scrubber fetches window w's
// map ("dfc_degree@w") off the UI goroutine, cancelling the fetch of a window scrubbed past;
// windows already seen come from the cache. Methods are for the UI goroutine.
package dynamics

import (
	"context"
	"fmt"
	"math"
	"sort"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/slices"
	"github.com/hubscope/hubscope/app/slices/lineplot"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Tab is the Dynamics tab (a fyne widget).
type Tab struct {
	widget.BaseWidget

	// Viewer shows the current window's degree map over the job's background.
	Viewer *slices.Viewer
	// OnWindowShown is called (on the UI goroutine) when window w's map is on screen, or
	// failed to arrive (err); never for a window the user scrubbed past.
	OnWindowShown func(w int, err error)

	summary ipc.Summary
	window  int
	// scaleMax is the highest degree of the windows shown so far: the top of the colour scale.
	scaleMax float64
	measures []string
	plots    []*lineplot.Plot

	scrubber    *widget.Slider
	windowLabel *widget.Label
	plotBox     *fyne.Container
	empty       *widget.Label
	body        fyne.CanvasObject
	content     fyne.CanvasObject
	quiet       bool
}

// New returns an empty tab fetching through svc (wrapped in a slices.VolumeCache unless it is
// one).
func New(svc ipc.Service) *Tab {
	t := &Tab{Viewer: slices.New(svc)}
	t.ExtendBaseWidget(t)
	t.Viewer.SetOverlayPickerVisible(false)
	t.Viewer.OnOverlay = t.overlayShown
	t.scrubber = widget.NewSlider(0, 1)
	t.scrubber.OnChanged = func(x float64) {
		if !t.quiet {
			t.SetWindow(int(math.Round(x)))
		}
	}
	t.windowLabel = widget.NewLabel("")
	t.empty = widget.NewLabel("Open a finished job to see its dynamic connectivity.")
	t.empty.Wrapping = fyne.TextWrapWord
	t.plotBox = container.NewVBox()
	split := container.NewHSplit(t.Viewer, container.NewVScroll(t.plotBox))
	split.Offset = 0.68
	t.body = container.NewBorder(container.NewVBox(t.windowLabel, t.scrubber), nil, nil, nil, split)
	t.body.Hide()
	t.content = container.NewStack(container.NewVBox(t.empty), t.body)
	return t
}

func (t *Tab) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(t.content) }

// Load shows job jobID's dynamic analysis from window 0, or says that it has none.
func (t *Tab) Load(ctx context.Context, jobID string, summary ipc.Summary) {
	t.summary = summary
	d := summary.DFC
	if d == nil || len(d.Windows) == 0 {
		t.body.Hide()
		t.empty.SetText(fmt.Sprintf("No dynamic connectivity for %s: choose a sliding window (DFC window) in the analysis settings and run the scan again.", displayName(summary, jobID)))
		t.empty.Show()
		return
	}
	t.empty.Hide()
	t.body.Show()
	t.measures = measureNames(d.Windows)
	t.plots = t.plots[:0]
	t.plotBox.RemoveAll()
	times := make([]float64, len(d.Windows))
	for w, win := range d.Windows {
		times[w] = float64(win.Start) * d.TR
	}
	for _, m := range t.measures {
		y := make([]float64, len(d.Windows))
		for w, win := range d.Windows {
			y[w] = math.NaN()
			if v, ok := win.Measures[m]; ok {
				y[w] = v
			}
		}
		p := lineplot.New(m, "s")
		p.SetData(times, y)
		t.plots = append(t.plots, p)
		t.plotBox.Add(p)
	}
	t.quiet = true
	t.scrubber.Min, t.scrubber.Max, t.scrubber.Step = 0, float64(max(len(d.Windows)-1, 1)), 1
	t.scrubber.SetValue(0)
	t.scrubber.Refresh()
	if len(d.Windows) == 1 {
		t.scrubber.Disable()
	} else {
		t.scrubber.Enable()
	}
	t.quiet = false
	t.window = 0
	t.scaleMax = 0
	t.Viewer.SetScaleMax(0)
	t.showCursor()
	t.Viewer.LoadWithOverlay(ctx, jobID, summary, WindowVolume(0))
}

func displayName(s ipc.Summary, id string) string {
	if s.Job.Name != "" {
		return s.Job.Name
	}
	return id
}

// WindowVolume is the name of window w's degree map.
func WindowVolume(w int) string { return fmt.Sprintf("%s%d", slices.DFCPrefix, w) }

// measureNames is the union of the windows' measure names, sorted.
func measureNames(ws []schema.DFCWindow) []string {
	seen := map[string]bool{}
	var names []string
	for _, w := range ws {
		for m := range w.Measures {
			if !seen[m] {
				seen[m] = true
				names = append(names, m)
			}
		}
	}
	sort.Strings(names)
	return names
}

// Window returns the window shown.
func (t *Tab) Window() int { return t.window }

// SetWindow shows window w (clamped to the analysis's windows), as the scrubber does.
func (t *Tab) SetWindow(w int) {
	d := t.summary.DFC
	if d == nil || len(d.Windows) == 0 {
		return
	}
	w = min(max(w, 0), len(d.Windows)-1)
	if float64(w) != t.scrubber.Value {
		t.quiet = true
		t.scrubber.SetValue(float64(w))
		t.quiet = false
	}
	if w == t.window {
		return
	}
	t.window = w
	t.showCursor()
	t.Viewer.ShowVolume(WindowVolume(w))
}

// showCursor labels the current window and moves every timeline's cursor to its start.
func (t *Tab) showCursor() {
	d := t.summary.DFC
	win := d.Windows[t.window]
	start := float64(win.Start) * d.TR
	t.windowLabel.SetText(fmt.Sprintf("Window %d of %d · starts at %.1f s (volume %d) · %d volumes (%.1f s) · %d links",
		t.window+1, len(d.Windows), start, win.Start, d.Window, float64(d.Window)*d.TR, win.Edges))
	for _, p := range t.plots {
		p.SetCursor(start)
	}
}

func (t *Tab) overlayShown(name string, err error) {
	var w int
	if _, e := fmt.Sscanf(name, slices.DFCPrefix+"%d", &w); e != nil {
		return
	}
	// One colour scale for every window, so that a window with fewer links looks darker: the
	// top is the highest degree seen in any window shown so far (the maps arrive one by one,
	// and fetching all of them up front would cost every window's download).
	if vol, _ := t.Viewer.Overlay(); err == nil && vol != nil && float64(vol.Header.Max) > t.scaleMax {
		t.scaleMax = float64(vol.Header.Max)
		t.Viewer.SetScaleMax(t.scaleMax)
	}
	if t.OnWindowShown != nil {
		t.OnWindowShown(w, err)
	}
}
