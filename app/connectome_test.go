package app

import (
	"context"
	"io"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/go-gl/mathgl/mgl32"

	"github.com/hubscope/hubscope/app/view3d"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/render"
)

// bundleFiles serves fixed bundle files; the connectome reads nothing else.
type bundleFiles struct {
	ipc.Service
	files map[string]string
}

func (b bundleFiles) OpenFile(_ context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error) {
	s, ok := b.files[name]
	if !ok {
		return nil, ipc.FileInfo{}, ipc.Errorf(ipc.CodeNotFound, "no %s", name)
	}
	return io.NopCloser(strings.NewReader(s)), ipc.FileInfo{Name: name, Size: int64(len(s))}, nil
}

func (b bundleFiles) summary() ipc.Summary {
	s := ipc.Summary{Job: ipc.Job{ID: "j", Name: "scan.nii.gz"}}
	for n := range b.files {
		s.Files = append(s.Files, ipc.FileInfo{Name: n})
	}
	return s
}

// TestConnectomeView: the hub links of hub_links.tsv are drawn between the hub spheres, strongest
// links first as the slider asks (pixel checks in an offscreen frame: the edge's colour where
// a drawn link lies, the background where a link is left out), a region network gets one
// sphere per region from network.node, and a damaged matrix is refused in one line naming it.
func TestConnectomeView(t *testing.T) {
	test.NewTempApp(t)
	ctx := context.Background()
	hubs := []render.Sphere{
		{Center: mgl32.Vec3{-40, 0, 0}, Radius: 3, ID: 0},
		{Center: mgl32.Vec3{40, 0, 0}, Radius: 3, ID: 1},
		{Center: mgl32.Vec3{0, 0, 40}, Radius: 3, ID: 2},
	}
	svc := bundleFiles{files: map[string]string{"hub_links.tsv": "hub_a\thub_b\tnode_a\tnode_b\tweight\n0\t1\t10\t20\t0.8\n0\t2\t10\t30\t0.3\n"}}
	c, err := LoadConnectome(ctx, svc, svc.summary(), hubs)
	if err != nil || c == nil || c.Links() != 2 || c.Spheres != nil {
		t.Fatalf("connectome %+v, %v: want 2 links between the hub spheres", c, err)
	}
	v := view3d.New(&render.Scene{Spheres: hubs, Background: render.DefaultSurfaceColor})
	slider, bar := ConnectomeBar(v, c)
	if bar == nil || slider.Value != 100 || len(v.Scene().Edges) != 2 {
		t.Fatalf("slider at %g, %d edges drawn; want all 2 at first", slider.Value, len(v.Scene().Edges))
	}
	const w, h = 240, 200
	cam, _ := render.StandardView("anterior")
	r := render.NewRenderer(w, h)
	at := func(p mgl32.Vec3) [4]uint8 {
		s := v.Scene()
		img := r.Render(s, cam)
		x, y, _ := cam.Project(s, w, h, p)
		c := img.RGBAAt(int(x), int(y))
		return [4]uint8{c.R, c.G, c.B, c.A}
	}
	// The scale runs over the links drawn: the strongest at its top, the weakest at 15 %.
	colour := func(f float64) [4]uint8 {
		c := render.EdgeColor(f, 1)
		return [4]uint8{c.R, c.G, c.B, 255}
	}
	strong, weak := mgl32.Vec3{0, 0, 0}, mgl32.Vec3{-20, 0, 20} // midpoints of 0–1 and 0–2
	if got := at(strong); got != colour(1) {
		t.Errorf("strongest link's midpoint %v, want %v", got, colour(1))
	}
	if got := at(weak); got != colour(0.15) {
		t.Errorf("weaker link's midpoint %v, want %v", got, colour(0.15))
	}
	if w8, w3 := v.Scene().Edges[0].Width, v.Scene().Edges[1].Width; !(w8 > w3) {
		t.Errorf("widths %g (0.8) and %g (0.3): want the stronger wider", w8, w3)
	}
	slider.SetValue(50) // the strongest half: one link
	if n := len(v.Scene().Edges); n != 1 {
		t.Fatalf("at 50 %%: %d edges", n)
	}
	if got := at(weak); got == colour(0.15) {
		t.Error("the weaker link is still drawn at 50 %")
	}
	if got := at(strong); got != colour(1) {
		t.Errorf("the strongest link lost at 50 %%: %v", got)
	}
	slider.SetValue(0)
	if n := len(v.Scene().Edges); n != 0 {
		t.Fatalf("at 0 %%: %d edges", n)
	}

	// A region network: spheres from network.node (a hub keeps its hub index), links from
	// network.edge.
	reg := bundleFiles{files: map[string]string{
		"network.node": "-40\t0\t0\t1\t2\tA\n40\t0\t0\t2\t1\tB\n0\t0\t40\t1\t1\tC\n",
		"network.edge": "0 0.5 0\n0.5 0 -0.2\n0 -0.2 0\n",
	}}
	s := reg.summary()
	s.Hubs = []ipc.Hub{{Node: 0}}
	c, err = LoadConnectome(ctx, reg, s, nil)
	if err != nil || c.Links() != 2 || len(c.Spheres) != 3 || c.Spheres[0].ID != 0 || c.Spheres[1].ID != -1 {
		t.Fatalf("region connectome %+v, %v", c, err)
	}
	v = view3d.New(&render.Scene{})
	ConnectomeBar(v, c)
	if len(v.Scene().Spheres) != 3 || len(v.Scene().Edges) != 2 {
		t.Fatalf("region view: %d spheres, %d edges", len(v.Scene().Spheres), len(v.Scene().Edges))
	}
	if e := v.Scene().Edges[1]; e.Color != render.EdgeColor(-0.15, 1) {
		t.Errorf("negative link coloured %v", e.Color)
	}

	// A full hub_links.tsv (2,000 links) lists only the strongest: the label says so.
	var full strings.Builder
	full.WriteString("hub_a\thub_b\tnode_a\tnode_b\tweight\n")
	for i := 0; i < 2000; i++ {
		full.WriteString("0\t1\t10\t20\t0.5\n")
	}
	fs := bundleFiles{files: map[string]string{"hub_links.tsv": full.String()}}
	if c, err := LoadConnectome(ctx, fs, fs.summary(), hubs); err != nil || c.Listed != 2000 {
		t.Errorf("2,000 links: listed %v, %v", c, err)
	} else if _, bar := ConnectomeBar(view3d.New(&render.Scene{Spheres: hubs}), c); !strings.Contains(labelText(bar), "of the 2000 strongest among the hubs") {
		t.Errorf("label %q", labelText(bar))
	}

	// Nothing to draw, and a damaged matrix.
	if c, err := LoadConnectome(ctx, bundleFiles{}, ipc.Summary{}, hubs); c != nil || err != nil {
		t.Errorf("no connectome files: %v, %v", c, err)
	}
	bad := bundleFiles{files: map[string]string{"hub_links.tsv": "hub_a\thub_b\tnode_a\tnode_b\tweight\n0\t7\t10\t70\t0.5\n"}}
	if _, err := LoadConnectome(ctx, bad, bad.summary(), hubs); err == nil || !strings.Contains(err.Error(), "hub_links.tsv of scan.nii.gz: line 2") {
		t.Errorf("a link to hub 7 of 3: %v", err)
	}
	badm := bundleFiles{files: map[string]string{"network.node": "0 0 0 1 1 A\n1 0 0 1 1 B\n", "network.edge": "0 x\nx 0\n"}}
	if _, err := LoadConnectome(ctx, badm, badm.summary(), nil); err == nil || !strings.Contains(err.Error(), "network.edge of scan.nii.gz: row 1") {
		t.Errorf("damaged network.edge: %v", err)
	}
	short := bundleFiles{files: map[string]string{"network.node": "0 0 0 1 1 A\n1 0 0 1 1 B\n", "network.edge": "0\n"}}
	if _, err := LoadConnectome(ctx, short, short.summary(), nil); err == nil || !strings.Contains(err.Error(), "1 rows for 2 nodes") {
		t.Errorf("network.edge of another size: %v", err)
	}
}

// labelText is the text of the first label in a container tree.
func labelText(o fyne.CanvasObject) string {
	switch w := o.(type) {
	case *widget.Label:
		return w.Text
	case *fyne.Container:
		for _, c := range w.Objects {
			if t := labelText(c); t != "" {
				return t
			}
		}
	}
	return ""
}
