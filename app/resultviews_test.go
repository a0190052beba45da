//go:build !js

package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/normview"
	"github.com/hubscope/hubscope/app/slices"
	"github.com/hubscope/hubscope/app/slices/slicestest"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/render"
)

// normHelper serves the phantom job compared with a normative cohort: the strongest hub was
// lost (z −3), the second gained (z 2.5), one cluster below the cohort at the first.
type normHelper struct{ *phantomHelper }

const normJSON = `{"z_cut":2,"nodes_compared":5000,"hubs_lost":1,"hubs_gained":1,"cohort_hubs":40,
"clusters":[{"sign":-1,"voxels":12,"peak_z":-3,"peak_ijk":[20,25,14],"peak_mm":[-10,14,0]}]}`

func (h normHelper) Summary(ctx context.Context, id string) (ipc.Summary, error) {
	s, err := h.phantomHelper.Summary(ctx, id)
	s.Volumes = append(s.Volumes, normview.VolumeZDegree, normview.VolumeLost, normview.VolumeGained, normview.VolumeCohortHubs)
	s.Files = append(s.Files, ipc.FileInfo{Name: normview.NormFile})
	return s, err
}

func (h normHelper) Volume(ctx context.Context, id, name string) (*ipc.Volume, error) {
	mark := func(at [3]int, x, other float64) func([3]int) float64 {
		return func(v [3]int) float64 {
			switch {
			case !slicestest.InMask(v):
				return math.NaN()
			case v == at:
				return x
			}
			return other
		}
	}
	var f func([3]int) float64
	switch name {
	case normview.VolumeLost:
		f = mark(slicestest.Hubs[0], 1, 0)
	case normview.VolumeGained:
		f = mark(slicestest.Hubs[1], 1, 0)
	case normview.VolumeCohortHubs: // the hub lost and the third hub
		f = func(v [3]int) float64 { return mark(slicestest.Hubs[2], 1, 0)(v) + mark(slicestest.Hubs[0], 1, 0)(v) }
	case normview.VolumeZDegree:
		f = func(v [3]int) float64 {
			if v == slicestest.Hubs[1] {
				return 2.5
			}
			return mark(slicestest.Hubs[0], -3, 0.5)(v)
		}
	default:
		return h.phantomHelper.Volume(ctx, id, name)
	}
	d := slicestest.Dims
	vol := &ipc.Volume{Header: ipc.VolumeHeader{Name: name, Dims: d, Affine: slicestest.Affine, Categorical: name != normview.VolumeZDegree,
		Description: "z against the normative cohort: degree", Min: -3, Max: 2.5}, Data: make([]float32, d[0]*d[1]*d[2])}
	for k := range d[2] {
		for j := range d[1] {
			for i := range d[0] {
				vol.Data[i+d[0]*(j+d[1]*k)] = float32(f([3]int{i, j, k}))
			}
		}
	}
	return vol, nil
}

func (h normHelper) OpenFile(ctx context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error) {
	if name == normview.NormFile {
		return io.NopCloser(bytes.NewReader([]byte(normJSON))), ipc.FileInfo{Name: name}, nil
	}
	return h.phantomHelper.OpenFile(ctx, id, name)
}

// A job compared with a normative cohort gets a Norm tab: the counts in words, the cluster,
// the hub lost, the hub gained and the cluster as rows with their z, MNI position and atlas region; a tapped
// row puts the crosshair there over the degree z-map (|z| ≥ 2) in the Slices tab.
func TestNormTab(t *testing.T) {
	test.NewTempApp(t)
	h := normHelper{&phantomHelper{Service: slicestest.NewService()}}
	s, err := h.Summary(context.Background(), slicestest.JobID)
	if err != nil {
		t.Fatal(err)
	}
	r := openShown(t, h, s, 1100, 700)
	defer fyne.DoAndWait(r.close)
	<-r.SlicesReady
	if r.Norm == nil {
		t.Fatal("no Norm tab")
	}
	<-r.Norm.Loaded()
	var rows []normview.Row
	var summary string
	var selected bool
	fyne.DoAndWait(func() {
		rows, summary, selected = r.Norm.Rows, r.Norm.Summary.Text, r.SelectTab(TabNorm)
	})
	if !selected || len(rows) != 3 {
		t.Fatalf("Norm tab selectable %v, rows %+v (%s)", selected, rows, summary)
	}
	hub := slicestest.Hubs[0]
	region := slicestest.AtlasLabels[slicestest.Region(hub)]
	if rows[2].Kind != normview.KindClusterBelow || rows[0].Kind != normview.KindLost || rows[0].Voxel != hub || rows[0].Z != -3 || rows[0].Region != region || rows[1].Kind != normview.KindGained || rows[1].Z != 2.5 {
		t.Fatalf("rows %+v", rows)
	}
	if want := "Hubs lost: 1 of the cohort's 40 hubs have a degree z below -2."; !bytes.Contains([]byte(summary), []byte(want)) {
		t.Fatalf("summary %q", summary)
	}
	// The 3D view draws the cohort's hubs (the third hub, then the hub lost, in grid order)
	// small and white, the hub lost cyan and the hub gained
	// magenta beside the hubs, and its legend says so with the counts.
	<-r.Ready3D
	var markers []render.Sphere
	var legend []string
	fyne.DoAndWait(func() {
		for _, sp := range r.View3D.Scene().Spheres {
			if sp.ID >= NormMarkerID {
				markers = append(markers, sp)
			}
		}
		for _, o := range r.NormLegend.Objects {
			legend = append(legend, o.(*fyne.Container).Objects[1].(*widget.Label).Text)
		}
	})
	lostAt := slices.World(slicestest.Affine, slicestest.Hubs[0])
	thirdAt := slices.World(slicestest.Affine, slicestest.Hubs[2])
	if len(markers) != 4 || markers[0].Color != CohortHubColor || markers[1].Color != CohortHubColor || markers[0].Radius >= markers[2].Radius ||
		markers[2].Color != LostColor || markers[3].Color != GainedColor ||
		markers[2].Center[0] != float32(lostAt[0]) || markers[2].Center[2] != float32(lostAt[2]) ||
		markers[1].Center != markers[2].Center || markers[0].Center[0] != float32(thirdAt[0]) || markers[0].Center[1] != float32(thirdAt[1]) {
		t.Fatalf("3D markers %+v", markers)
	}
	if strings.Join(legend, "; ") != "hubs lost (1); hubs gained (1); the cohort's hubs (2)" {
		t.Fatalf("3D legend %q", legend)
	}
	// A cohort with more hubs than MaxCohortMarkers: an even sample is drawn, the legend says so.
	var many [][3]int
	for f := range 5 * MaxCohortMarkers / 2 {
		many = append(many, [3]int{f % 30, f / 30 % 36, f / (30 * 36)})
	}
	var cohortMarkers, lostMarkers int
	var last string
	fyne.DoAndWait(func() {
		r.Norm.CohortHubs = many
		r.addNormMarkers()
		for _, sp := range r.View3D.Scene().Spheres {
			switch {
			case sp.ID >= NormMarkerID && sp.Color == CohortHubColor:
				cohortMarkers++
			case sp.ID >= NormMarkerID && sp.Color == LostColor:
				lostMarkers++
			}
		}
		last = r.NormLegend.Objects[2].(*fyne.Container).Objects[1].(*widget.Label).Text
	})
	if cohortMarkers != MaxCohortMarkers || lostMarkers != 1 || last != fmt.Sprintf("the cohort's hubs (%d; %d of them drawn, evenly spread)", len(many), MaxCohortMarkers) {
		t.Fatalf("%d cohort hubs: %d drawn, %d hubs lost drawn, legend %q", len(many), cohortMarkers, lostMarkers, last)
	}
	c := make(changes, 16)
	fyne.DoAndWait(func() {
		r.OnSlicesChanged = func(what string, err error) { c <- [2]any{what, err} }
		r.Norm.Table.OnSelect(1) // the hub gained
	})
	if err := c.next(t, ChangedOverlay); err != nil {
		t.Fatal(err)
	}
	if err := c.next(t, ChangedInspector); err != nil {
		t.Fatal(err)
	}
	var cross [3]int
	var overlay string
	var style float64
	var tab string
	fyne.DoAndWait(func() {
		cross = r.Slices.Crosshair()
		_, overlay = r.Slices.Overlay()
		style = r.Slices.Style().Threshold
		tab = r.Tabs.Selected().Text
	})
	if cross != slicestest.Hubs[1] || overlay != normview.VolumeZDegree || style != 2 || tab != TabSlices {
		t.Fatalf("after the row: crosshair %v, overlay %q at |z| ≥ %g, tab %q", cross, overlay, style, tab)
	}
}

// sweepHelper serves the phantom job as a density sweep: sweep.json (three thresholds, the
// path measures not measured) and the hub-stability map.
type sweepHelper struct{ *phantomHelper }

const sweepJSON = `{"sweep":{"kind":"density","values":[0.01,0.02,0.05]},"hub_rule_sd":1,
"thresholds":[{"threshold":0.05,"hubs":40,"mean_degree":9,"clustering_coefficient":0.3,"characteristic_path_length":0,"global_efficiency":0,"largest_component_share":1,"modularity":0.3,"sigma":1.4},
{"threshold":0.01,"hubs":20,"mean_degree":2,"clustering_coefficient":0.1,"characteristic_path_length":0,"global_efficiency":0,"largest_component_share":0.5,"modularity":0.6,"sigma":2.5},
{"threshold":0.02,"hubs":30,"mean_degree":4,"clustering_coefficient":0.2,"characteristic_path_length":0,"global_efficiency":0,"largest_component_share":0.8,"modularity":0.5,"sigma":1.9}],
"auc":{"hubs":1.25,"clustering_coefficient":0.0085,"mean_degree":0.22,"modularity":0.0185,"sigma":0.07},
"small_world":{"random_networks":15,"swaps_per_edge":5,"path_sources":1024,"seed":1}}`

func (h sweepHelper) Summary(ctx context.Context, id string) (ipc.Summary, error) {
	s, err := h.phantomHelper.Summary(ctx, id)
	s.Volumes = append(s.Volumes, "hub_stability")
	s.Files = append(s.Files, ipc.FileInfo{Name: "sweep.json"})
	return s, err
}

func (h sweepHelper) Volume(ctx context.Context, id, name string) (*ipc.Volume, error) {
	if name != "hub_stability" {
		return h.phantomHelper.Volume(ctx, id, name)
	}
	v, err := h.phantomHelper.Volume(ctx, id, "hub_z")
	if err != nil {
		return nil, err
	}
	v.Header.Name, v.Header.Description = name, "share of thresholds at which the voxel is a hub"
	for i, x := range v.Data {
		v.Data[i] = float32(math.Max(0, math.Min(1, float64(x))))
	}
	v.Header.Min, v.Header.Max = 0, 1
	return v, nil
}

func (h sweepHelper) OpenFile(ctx context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error) {
	if name == "sweep.json" {
		return io.NopCloser(bytes.NewReader([]byte(sweepJSON))), ipc.FileInfo{Name: name}, nil
	}
	return h.phantomHelper.OpenFile(ctx, id, name)
}

// A sweep's result gets a Sweep tab: a curve per measured measure against the density, the
// bundle's own threshold (the loosest, 5 %) marked on each, the AUCs in words; its button shows
// the hub-stability map in the Slices tab.
func TestSweepTab(t *testing.T) {
	test.NewTempApp(t)
	h := sweepHelper{&phantomHelper{Service: slicestest.NewService()}}
	s, err := h.Summary(context.Background(), slicestest.JobID)
	if err != nil {
		t.Fatal(err)
	}
	r := openShown(t, h, s, 1100, 700)
	defer fyne.DoAndWait(r.close)
	<-r.SlicesReady
	if r.Sweep == nil || r.Norm != nil {
		t.Fatalf("sweep tab %v, norm tab %v", r.Sweep != nil, r.Norm != nil)
	}
	<-r.Sweep.Loaded()
	var text string
	var keys []string
	var cursor float64
	var hasCursor bool
	var y, q, sigma []float64
	fyne.DoAndWait(func() {
		text = r.Sweep.Summary.Text
		for k := range r.Sweep.Plots {
			keys = append(keys, k)
		}
		cursor, hasCursor = r.Sweep.Plots["hubs"].Cursor()
		_, y = r.Sweep.Plots["hubs"].Data()
		_, q = r.Sweep.Plots["modularity"].Data()
		_, sigma = r.Sweep.Plots["sigma"].Data()
	})
	if len(keys) != 6 || r.Sweep.Plots["characteristic_path_length"] != nil || r.Sweep.Plots["clustering_coefficient"] == nil {
		t.Fatalf("plots %v", keys)
	}
	if !hasCursor || cursor != 0.05 || len(y) != 3 || y[0] != 20 || y[2] != 40 {
		t.Fatalf("hub count curve %v, cursor %v at %g", y, hasCursor, cursor)
	}
	if fmt.Sprint(q) != "[0.6 0.5 0.3]" || fmt.Sprint(sigma) != "[2.5 1.9 1.4]" {
		t.Fatalf("Q curve %v, σ curve %v", q, sigma)
	}
	for _, want := range []string{"density = 0.05", "hubs 1.25", "modularity 0.0185", "sigma 0.07", "against 15 degree-preserving random networks"} {
		if !strings.Contains(text, want) {
			t.Fatalf("sweep in words lack %q: %q", want, text)
		}
	}
	c := make(changes, 16)
	fyne.DoAndWait(func() {
		r.OnSlicesChanged = func(what string, err error) { c <- [2]any{what, err} }
		r.Sweep.ShowStability.OnTapped()
	})
	if err := c.next(t, ChangedOverlay); err != nil {
		t.Fatal(err)
	}
	var overlay, tab string
	fyne.DoAndWait(func() { _, overlay = r.Slices.Overlay(); tab = r.Tabs.Selected().Text })
	if overlay != "hub_stability" || tab != TabSlices {
		t.Fatalf("overlay %q in tab %q", overlay, tab)
	}
}

// "Open results folder…" shows a cohort's folder (measures.tsv) in the result's place; a folder
// without a cohort's tables is refused in the status line.
func TestShowCohort(t *testing.T) {
	test.NewTempApp(t)
	u := New(context.Background(), Options{})
	test.NewTempWindow(t, u.Content()).Resize(fyne.NewSize(1000, 700))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "measures.tsv"), []byte("participant_id\trun\thubs.count\nsub-01\tsub-01_task-rest\t990\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fyne.DoAndWait(func() { u.ShowCohort(t.TempDir()) })
	if u.Cohort() != nil || !strings.Contains(u.Status.Text, "Not a results folder") {
		t.Fatalf("empty folder: status %q", u.Status.Text)
	}
	fyne.DoAndWait(func() { u.ShowCohort(dir) })
	if v := u.Cohort(); v == nil || v.Measures == nil || len(v.Measures.Shown()) != 1 || v.Global != nil {
		t.Fatalf("cohort view %+v", v)
	}
}

// openShown opens s's result as the app does, shows it in a test window of the given size and
// starts it; the caller defers fyne.DoAndWait(r.close) and waits for the channel it needs.
func openShown(t *testing.T, svc ipc.Service, s ipc.Summary, width, height float32) *Result {
	t.Helper()
	var r *Result
	var err error
	fyne.DoAndWait(func() { r, err = newResult(context.Background(), svc, s, nil) })
	if err != nil {
		t.Fatal(err)
	}
	fyne.DoAndWait(func() {
		w := test.NewTempWindow(t, r.Content())
		w.Resize(fyne.NewSize(width, height))
		r.start()
	})
	return r
}
