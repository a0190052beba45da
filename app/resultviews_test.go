package app

import (
	"bytes"
	"context"
	"io"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hubscope/hubscope/app/normview"
	"github.com/hubscope/hubscope/app/slices/slicestest"
	"github.com/hubscope/hubscope/ipc"
)

// normHelper serves the phantom job compared with a normative cohort: the strongest hub was
// lost (z −3), the second gained (z 2.5), one cluster below the cohort at the first.
type normHelper struct{ *phantomHelper }

const normJSON = `{"z_cut":2,"nodes_compared":5000,"hubs_lost":1,"hubs_gained":1,"cohort_hubs":40,
"clusters":[{"sign":-1,"voxels":12,"peak_z":-3,"peak_ijk":[20,25,14],"peak_mm":[-10,14,0]}]}`

func (h normHelper) Summary(ctx context.Context, id string) (ipc.Summary, error) {
	s, err := h.phantomHelper.Summary(ctx, id)
	s.Volumes = append(s.Volumes, normview.VolumeZDegree, normview.VolumeLost, normview.VolumeGained)
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
// the hub lost and the hub gained as rows with their z, MNI position and atlas region; a tapped
// row puts the crosshair there over the degree z-map (|z| ≥ 2) in the Slices tab.
func TestNormTab(t *testing.T) {
	test.NewTempApp(t)
	h := normHelper{&phantomHelper{Service: slicestest.NewService()}}
	s, err := h.Summary(context.Background(), slicestest.JobID)
	if err != nil {
		t.Fatal(err)
	}
	var r *Result
	fyne.DoAndWait(func() { r, err = newResult(context.Background(), h, s, nil) })
	if err != nil {
		t.Fatal(err)
	}
	defer fyne.DoAndWait(r.close)
	fyne.DoAndWait(func() {
		w := test.NewTempWindow(t, r.Content())
		w.Resize(fyne.NewSize(1100, 700))
		r.start()
	})
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
	if rows[0].Kind != normview.KindClusterBelow || rows[1].Kind != normview.KindLost || rows[1].Voxel != hub || rows[1].Z != -3 || rows[1].Region != region || rows[2].Kind != normview.KindGained || rows[2].Z != 2.5 {
		t.Fatalf("rows %+v", rows)
	}
	if want := "Hubs lost: 1 of the cohort's 40 hubs have a degree z below −2."; !bytes.Contains([]byte(summary), []byte(want)) {
		t.Fatalf("summary %q", summary)
	}
	c := make(changes, 16)
	fyne.DoAndWait(func() {
		r.OnSlicesChanged = func(what string, err error) { c <- [2]any{what, err} }
		r.Norm.Table.OnSelect(2) // the hub gained
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
