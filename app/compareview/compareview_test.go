package compareview

import (
	"context"
	"image"
	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	sl "github.com/hubscope/hubscope/app/slices"
	"github.com/hubscope/hubscope/app/slices/slicestest"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// The phantom's comparison: t = +6 at hub 1 (q 0.01), −7.5 at hub 2 (q 0.02), −5 at Weak (q
// 0.04), 9 at Strong (q 0.3, not significant), 1.5 elsewhere in the brain (q 0.6).
type cmpService struct{ *slicestest.Service }

// Strong and Weak lie in none of the views through either hub.
var Strong, Weak = [3]int{15, 18, 4}, [3]int{15, 18, 24}

func (c cmpService) Summary(ctx context.Context, id string) (ipc.Summary, error) {
	s, err := c.Service.Summary(ctx, id)
	s.Volumes = append(s.Volumes, "t_degree", "q_degree", "p_degree")
	s.Comparison = &schema.Comparison{GroupColumn: "diagnosis", Groups: [2]string{"patient", "control"}, N: [2]int{6, 5},
		Alpha: 0.05, Maps: []string{"degree"}, Nodes: 5000, Significant: map[string]int{"degree": 3}}
	return s, err
}

func (c cmpService) Volume(ctx context.Context, id, name string) (*ipc.Volume, error) {
	var at [4]float64
	var other float64
	switch name {
	case "t_degree":
		at, other = [4]float64{6, -7.5, 9, -5}, 1.5
	case "q_degree":
		at, other = [4]float64{0.01, 0.02, 0.3, 0.04}, 0.6
	default:
		return c.Service.Volume(ctx, id, name)
	}
	d := slicestest.Dims
	vol := &ipc.Volume{Header: ipc.VolumeHeader{Name: name, Dims: d, Affine: slicestest.Affine}, Data: make([]float32, d[0]*d[1]*d[2])}
	for k := range d[2] {
		for j := range d[1] {
			for i := range d[0] {
				v, x := [3]int{i, j, k}, other
				switch {
				case !slicestest.InMask(v):
					x = math.NaN()
				case v == slicestest.Hubs[0]:
					x = at[0]
				case v == slicestest.Hubs[1]:
					x = at[1]
				case v == Strong:
					x = at[2]
				case v == Weak:
					x = at[3]
				}
				vol.Data[i+d[0]*(j+d[1]*k)] = float32(x)
			}
		}
	}
	vol.Header.Min, vol.Header.Max = -7.5, 9
	if name == "q_degree" {
		vol.Header.Min, vol.Header.Max = 0.01, 0.6
	}
	return vol, nil
}

// hotCold counts the snapshot's pixels drawn hot (red well above blue) and cold (blue well
// above red): the diverging scale's two halves. The colour bar below the views has as many of
// each, so the difference is the views'.
func hotCold(img *image.RGBA) (hot, cold int) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := img.RGBAAt(x, y)
			switch {
			case int(c.R) > int(c.B)+80:
				hot++
			case int(c.B) > int(c.R)+80:
				cold++
			}
		}
	}
	return hot, cold
}

// voxelPixels bounds the pixels one voxel takes in a view of the snapshot (three views side by
// side across its width, the grid's widest side across each).
func voxelPixels(img *image.RGBA) int {
	w := float64(img.Bounds().Dx()) / 3 / float64(slicestest.Dims[1])
	return int(math.Ceil(w+1) * math.Ceil(w+1))
}

// A comparison's t-map: the three significant nodes as rows (smallest q first) with their t, q,
// MNI position and atlas region; the slices show t_degree over the anatomy from |t| ≥ 5 (the
// smallest significant |t|, Weak's), the crosshair on the first row, whose voxel is drawn hot and the
// rest of the brain (|t| 1.5) not at all; a tapped second row moves the crosshair to the cold
// node.
func TestComparisonView(t *testing.T) {
	test.NewTempApp(t)
	svc := cmpService{slicestest.NewService()}
	s, err := svc.Summary(context.Background(), slicestest.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if !Has(s) {
		t.Fatal("Has: false for a comparison")
	}
	loaded := make(chan error, 4)
	var v *View
	fyne.DoAndWait(func() {
		v = New(context.Background(), svc, s)
		v.OnLoaded = func(err error) { loaded <- err }
		test.NewTempWindow(t, v).Resize(fyne.NewSize(1200, 700))
		v.Start()
	})
	defer v.Close()
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	var rows []Row
	var header, overlay string
	var cross [3]int
	var style sl.Style
	var snap *image.RGBA
	fyne.DoAndWait(func() {
		rows, header, cross, style = v.Rows, v.Header.Text, v.Viewer.Crosshair(), v.Viewer.Style()
		_, overlay = v.Viewer.Overlay()
		snap, err = v.Viewer.Snapshot()
	})
	if err != nil {
		t.Fatal(err)
	}
	h0, h1 := slicestest.Hubs[0], slicestest.Hubs[1]
	if len(rows) != 3 || rows[0].Voxel != h0 || rows[0].T != 6 || math.Abs(rows[0].Q-0.01) > 1e-6 || rows[1].Voxel != h1 || rows[1].T != -7.5 || rows[2].Voxel != Weak {
		t.Fatalf("rows %+v", rows)
	}
	mni := sl.World(slicestest.Affine, h0)
	if !rows[0].InMNI || rows[0].MNI != mni || rows[0].Region != slicestest.AtlasLabels[slicestest.Region(h0)] || rows[0].Region == "" {
		t.Fatalf("row 1 at %v in MNI %v, region %q", rows[0].MNI, rows[0].InMNI, rows[0].Region)
	}
	if c := rows[0].Cells(); c[0] != "6.00" || c[5] != rows[0].Region {
		t.Fatalf("cells %q", c)
	}
	if overlay != "t_degree" || !style.Signed || style.Colormap != sl.ColdHot || style.Threshold != 5 || cross != h0 {
		t.Fatalf("slices: overlay %q, style %+v, crosshair %v", overlay, style, cross)
	}
	for _, want := range []string{"patient (6 runs) against control (5 runs)", "3 nodes are significant at q <= 0.05", "|t| >= 5.00"} {
		if !strings.Contains(header, want) {
			t.Errorf("header %q lacks %q", header, want)
		}
	}
	// One voxel of t = 6 in each of the three views: hot, and no more than that voxel (the
	// rest of the brain, |t| 1.5, lies below the threshold).
	hot, cold := hotCold(snap)
	if d := hot - cold; d <= 0 || d > 3*voxelPixels(snap) {
		t.Errorf("at the first row: %d hot and %d cold pixels, want one voxel's worth more hot", hot, cold)
	}
	fyne.DoAndWait(func() {
		v.Table.OnSelect(1)
		cross = v.Viewer.Crosshair()
		snap, err = v.Viewer.Snapshot()
	})
	if err != nil {
		t.Fatal(err)
	}
	if cross != h1 {
		t.Fatalf("after the second row: crosshair %v, want %v", cross, h1)
	}
	hot, cold = hotCold(snap)
	if d := cold - hot; d <= 0 || d > 3*voxelPixels(snap) {
		t.Errorf("at the second row: %d hot and %d cold pixels, want one voxel's worth more cold", hot, cold)
	}
	// Another false discovery rate: at q <= 0.01 only the first node, the slices from its |t|
	// and the crosshair back on it; the picker offers the comparison's own rate.
	var q string
	fyne.DoAndWait(func() {
		v.Q.SetSelected("0.01")
		rows, header, cross, style, q = v.Rows, v.Header.Text, v.Viewer.Crosshair(), v.Viewer.Style(), v.Q.Selected
	})
	if len(rows) != 1 || rows[0].Voxel != h0 || style.Threshold != 6 || cross != h0 || q != "0.01" ||
		!strings.Contains(header, "1 node is significant at q <= 0.01") || !strings.Contains(header, "|t| >= 6.00") {
		t.Fatalf("at q <= 0.01: rows %+v, threshold %g, crosshair %v, header %q", rows, style.Threshold, cross, header)
	}
	if got := strings.Join(v.Q.Options, ","); got != "0.001,0.01,0.05,0.1" {
		t.Errorf("rates offered %s", got)
	}
	if got := strings.Join(qChoices(0.2), ","); got != "0.001,0.01,0.05,0.1,0.2" {
		t.Errorf("rates offered for a comparison at 0.2: %s", got)
	}
	// Only the anatomy and the t-maps reach the viewer.
	for _, n := range viewerSummary(s).Volumes {
		if n == "degree" || n == "q_degree" || n == "hubs" {
			t.Errorf("the viewer is offered %q", n)
		}
	}
}
