// Package sweepview is the Sweep tab: a threshold sweep's measures against the threshold (one
// small plot each, the bundle's own network's threshold marked), the area under each curve
// (trapezoid rule over the thresholds, as GRETNA integrates over sparsity; docs/algorithms.md)
// and the hub-stability map, an overlay of the Slices tab (the share of the thresholds at which
// each voxel is a hub).
package sweepview

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
	"github.com/hubscope/hubscope/app/slices/lineplot"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Bundle names of a sweep (helper/sweep, written by run --sweep).
const (
	SweepFile       = schema.SweepFile
	VolumeStability = "hub_stability"
)

// Sweep is sweep.json (schema.Sweep) with the curves the tab draws.
type Sweep struct {
	schema.Sweep
	curves map[string][]float64 // measure → value per point (NaN: none)
	x      []float64
}

// Curve is one measure drawn against the threshold.
type Curve struct {
	Key, Title string
	// Always: drawn even without an AUC (the counts are always measured; the path and
	// clustering measures only with full or basic metrics, which their AUC marks).
	Always bool
	// Absent: the measure is left out of sweep.json where not measured or undefined (Q and σ),
	// so a value at any threshold means it was measured.
	Absent bool
}

// Curves are the measures drawn, in order. Q and σ are measured per threshold with full
// metrics (σ with random networks: sweep.json's small_world says how many).
var Curves = []Curve{
	{"clustering_coefficient", "Clustering C_p", false, false},
	{"characteristic_path_length", "Path length L_p", false, false},
	{"global_efficiency", "Global efficiency E_glob", false, false},
	{"modularity", "Modularity Q", false, true},
	{"sigma", "Small-worldness σ", false, true},
	{"hubs", "Hub count", true, false},
	{"mean_degree", "Mean degree", true, false},
	{"largest_component_share", "Largest component (share of nodes)", true, false},
}

// Parse reads sweep.json, its points in increasing threshold order.
func Parse(b []byte) (*Sweep, error) {
	var s Sweep
	if err := json.Unmarshal(b, &s.Sweep); err != nil {
		return nil, fmt.Errorf("%s: %w", SweepFile, err)
	}
	if len(s.Points) == 0 {
		return nil, fmt.Errorf("%s: no thresholds", SweepFile)
	}
	sort.SliceStable(s.Points, func(a, b int) bool { return s.Points[a].Threshold < s.Points[b].Threshold })
	s.curves = map[string][]float64{}
	for i := range s.Points {
		p := &s.Points[i]
		s.x = append(s.x, p.Threshold)
		for _, c := range Curves {
			v, ok := p.Measure(c.Key)
			if !ok {
				v = math.NaN() // null or not measured
			}
			s.curves[c.Key] = append(s.curves[c.Key], v)
		}
	}
	return &s, nil
}

// Shown says whether curve c is drawn: always-measured counts, and the optional measures the
// sweep measured (they have an AUC, or — Q and σ, undefined on an empty network — a value at
// some threshold).
func (s *Sweep) Shown(c Curve) bool {
	if c.Always {
		return true
	}
	if _, ok := s.AUC[c.Key]; ok {
		return true
	}
	return c.Absent && slices.ContainsFunc(s.curves[c.Key], func(v float64) bool { return !math.IsNaN(v) })
}

// Values returns the thresholds and curve c's values.
func (s *Sweep) Values(key string) (x, y []float64) { return s.x, s.curves[key] }

// Unit is the threshold's unit in words.
func (s *Sweep) Unit() string {
	if s.Spec.Kind == "density" {
		return "density"
	}
	return "r"
}

// Lines are the sweep in words: the thresholds, the marked one, and each measure's AUC.
func (s *Sweep) Lines(chosen float64, ok bool) []string {
	vals := make([]string, len(s.x))
	for i, x := range s.x {
		vals[i] = fmt.Sprintf("%g", x)
	}
	out := []string{fmt.Sprintf("Thresholds (%s): %s; hubs at each: degree > mean + %g SD.", s.Unit(), strings.Join(vals, ", "), s.HubSD)}
	if ok {
		out = append(out, fmt.Sprintf("Marked in red: %s = %g, the threshold of this bundle's own network (the sweep's loosest).", s.Unit(), chosen))
	}
	var keys []string
	for k := range s.AUC {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var auc []string
	for _, k := range keys {
		auc = append(auc, fmt.Sprintf("%s %.4g", k, s.AUC[k]))
	}
	if len(auc) > 0 {
		out = append(out, "Area under each curve (trapezoid rule over the thresholds): "+strings.Join(auc, " · ")+".")
	}
	switch sw := s.SmallWorld; {
	case sw != nil:
		out = append(out, fmt.Sprintf("Small-worldness σ at each threshold against %d degree-preserving random networks of that threshold's network (%g swaps per edge), as in the Network tab.", sw.RandomNetworks, sw.SwapsPerEdge))
	case !s.Shown(Curve{Key: "modularity", Absent: true}):
		out = append(out, "Modularity Q and small-worldness σ were not measured at each threshold (they need full metrics; σ also random networks).")
	default:
		out = append(out, "Small-worldness σ was not measured at each threshold (it needs full metrics and random networks).")
	}
	return out
}

// Has says whether a job's bundle holds a sweep.
func Has(s ipc.Summary) bool {
	return slices.ContainsFunc(s.Files, func(f ipc.FileInfo) bool { return f.Name == SweepFile })
}

// Service is what the tab fetches through.
type Service interface {
	OpenFile(ctx context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error)
}

// Tab is the Sweep tab of one job.
type Tab struct {
	widget.BaseWidget
	Summary *widget.Label
	Plots   map[string]*lineplot.Plot
	// ShowStability shows the hub-stability map in the Slices tab (OnShowStability).
	ShowStability   *widget.Button
	OnShowStability func()
	// Sweep is set once loaded.
	Sweep *Sweep

	grid    *fyne.Container
	content fyne.CanvasObject
	loaded  chan struct{}
}

// NewTab builds the tab and fetches sweep.json of job s through svc once after is closed.
func NewTab(ctx context.Context, svc Service, s ipc.Summary, after <-chan struct{}) *Tab {
	t := &Tab{Summary: widget.NewLabel("Loading the threshold sweep…"), Plots: map[string]*lineplot.Plot{}, loaded: make(chan struct{})}
	t.Summary.Wrapping = fyne.TextWrapWord
	t.ShowStability = widget.NewButton("Show the hub-stability map in the slices", func() {
		if t.OnShowStability != nil {
			t.OnShowStability()
		}
	})
	if !slices.Contains(s.Volumes, VolumeStability) {
		t.ShowStability.Disable()
	}
	t.grid = container.NewGridWithColumns(4)
	t.content = container.NewVBox(t.Summary, container.NewHBox(t.ShowStability), t.grid)
	t.ExtendBaseWidget(t)
	go t.load(ctx, svc, s.Job.ID, after)
	return t
}

// Loaded is closed once the tab shows what it could fetch.
func (t *Tab) Loaded() <-chan struct{} { return t.loaded }

func (t *Tab) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(t.content) }

// Loosest is the sweep's loosest threshold, at which the bundle's own network was built
// (settings: a sweep replaces the threshold): the smallest r, or the largest density.
func (s *Sweep) Loosest() float64 {
	x := s.x[0]
	for _, v := range s.x {
		if s.Spec.Kind == "density" {
			x = max(x, v)
		} else {
			x = min(x, v)
		}
	}
	return x
}

func (t *Tab) load(ctx context.Context, svc Service, job string, after <-chan struct{}) {
	defer close(t.loaded)
	select {
	case <-after:
	case <-ctx.Done():
		return
	}
	var sw *Sweep
	rc, _, err := svc.OpenFile(ctx, job, SweepFile)
	if err == nil {
		var b []byte
		b, err = io.ReadAll(io.LimitReader(rc, 64<<20))
		rc.Close()
		if err == nil {
			sw, err = Parse(b)
		}
	}
	if ctx.Err() != nil {
		return
	}
	fyne.DoAndWait(func() {
		if err != nil {
			t.Summary.SetText("The threshold sweep could not be read: " + err.Error())
			return
		}
		t.Sweep = sw
		chosen, ok := sw.Loosest(), true
		t.Summary.SetText(strings.Join(sw.Lines(chosen, ok), "\n"))
		for _, c := range Curves {
			if !sw.Shown(c) {
				continue
			}
			title := c.Title
			if a, has := sw.AUC[c.Key]; has {
				title += fmt.Sprintf(" · AUC %.4g", a)
			}
			p := lineplot.New(title, "")
			x, y := sw.Values(c.Key)
			p.SetData(x, y)
			if ok {
				p.SetCursor(chosen)
			}
			t.Plots[c.Key] = p
			t.grid.Add(container.NewGridWrap(fyne.NewSize(260, 150), p))
		}
		t.content.(*fyne.Container).Refresh()
	})
}
