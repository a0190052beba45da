package daemon

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// TestOpenFolder: a finished bundle and a two-group comparison's folder are opened by a
// request naming them (JobRequest.Open) as done jobs. A bundle with group.json (a group-mean
// network) carries it in its summary. A comparison is served as its reference bundle with the
// comparison's t-map beside the bundle's volumes: the summary says what was compared, the
// t-map's values are the file's at the bundle's nodes (NaN elsewhere) and it is described as
// Welch's t. A web request, a relative path, a folder that is neither and an open with a scan
// are refused.
func TestOpenFolder(t *testing.T) {
	scanPath, maskPath := phantom(t, 12)
	d := newDaemon(t, filepath.Join(t.TempDir(), "results"))
	set := settingsOf(`{"metrics": "none", "denoise": "none"}`)
	first, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: set})
	if err != nil {
		t.Fatal(err)
	}
	if evs := follow(t, d, first.ID); evs[len(evs)-1].Job.State != ipc.JobDone {
		t.Fatalf("first job: %s", evs[len(evs)-1].Job.Error)
	}
	sum, err := d.Summary(unix, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Group != nil || sum.Comparison != nil {
		t.Fatalf("a scan's summary with group %v, comparison %v", sum.Group, sum.Comparison)
	}
	// A copy of the bundle with group.json is a group-mean network's bundle.
	group := filepath.Join(t.TempDir(), "group")
	if err := os.CopyFS(group, os.DirFS(sum.Bundle)); err != nil {
		t.Fatal(err)
	}
	g := schema.Group{Mean: "fisher-z", MaskRule: "intersect", Nodes: 7, Volumes: 100,
		Subjects: []schema.GroupSubject{{Label: "sub-01", Path: "/data/sub-01.nii.gz"}, {Label: "sub-02", Path: "/data/sub-02.nii.gz"}}}
	b, _ := json.Marshal(g)
	if err := os.WriteFile(filepath.Join(group, schema.GroupFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	gj, err := d.Submit(unix, ipc.JobRequest{Open: group})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := d.Summary(unix, gj.ID)
	if err != nil {
		t.Fatal(err)
	}
	if gj.State != ipc.JobDone || gj.Name != "group" || gs.Group == nil || gs.Group.Mean != "fisher-z" || len(gs.Group.Subjects) != 2 || gs.Bundle != group || len(gs.Hubs) != len(sum.Hubs) {
		t.Fatalf("group bundle opened as %+v: group %+v, bundle %s, %d hubs", gj, gs.Group, gs.Bundle, len(gs.Hubs))
	}

	// A comparison's folder: t = degree − 10 on the grid, and compare.json naming the bundle.
	h, deg, err := nifti.ReadImage(filepath.Join(sum.Bundle, "degree.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	tmap := make([]float32, len(deg))
	for f, k := range deg {
		tmap[f] = k - 10
	}
	cmp := t.TempDir()
	if err := nifti.WriteImage(filepath.Join(cmp, "t_degree.nii.gz"), nifti.NewHeader([]int{h.Nx(), h.Ny(), h.Nz()}, nifti.Float32, h.Affine(), 0), tmap); err != nil {
		t.Fatal(err)
	}
	c := schema.Comparison{Deriv: "/deriv", GroupColumn: "diagnosis", Groups: [2]string{"patient", "control"}, N: [2]int{3, 4},
		Alpha: 0.05, Maps: []string{"degree"}, Significant: map[string]int{"degree": 2}, ReferenceBundle: sum.Bundle}
	b, _ = json.Marshal(c)
	if err := os.WriteFile(filepath.Join(cmp, schema.ComparisonFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cj, err := d.Submit(unix, ipc.JobRequest{Open: cmp})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := d.Summary(unix, cj.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cs.Comparison == nil || cs.Comparison.Groups != c.Groups || cs.Bundle != sum.Bundle || !slices.Contains(cs.Volumes, "t_degree") || !slices.Contains(cs.Volumes, "degree") ||
		!strings.Contains(cj.Name, "patient vs control") {
		t.Fatalf("comparison opened as %q: %+v, bundle %s, volumes %v", cj.Name, cs.Comparison, cs.Bundle, cs.Volumes)
	}
	vol, err := d.Volume(unix, cj.ID, "t_degree")
	if err != nil {
		t.Fatal(err)
	}
	mask, err := d.Volume(unix, cj.ID, "mask")
	if err != nil {
		t.Fatal(err)
	}
	nodes := 0
	for f, x := range vol.Data {
		switch {
		case mask.Data[f] == 1:
			nodes++
			if x != tmap[f] {
				t.Fatalf("t_degree at %d: %g, the file holds %g", f, x, tmap[f])
			}
		case !math.IsNaN(float64(x)):
			t.Fatalf("t_degree outside the nodes at %d: %g, want NaN", f, x)
		}
	}
	if nodes == 0 || vol.Header.Min >= 0 || !strings.HasPrefix(vol.Header.Description, "Welch's t") {
		t.Fatalf("t_degree: %d nodes, min %g, %q", nodes, vol.Header.Min, vol.Header.Description)
	}

	web := ipc.ContextWithTransport(context.Background(), ipc.TransportWeb)
	for _, c := range []struct {
		ctx  context.Context
		req  ipc.JobRequest
		code string
	}{
		{web, ipc.JobRequest{Open: group}, ipc.CodeForbidden},
		{unix, ipc.JobRequest{Open: "group"}, ipc.CodeBadRequest},
		{unix, ipc.JobRequest{Open: t.TempDir()}, ipc.CodeBadRequest},
		{unix, ipc.JobRequest{Open: group, Scan: scanPath}, ipc.CodeBadRequest},
	} {
		if _, err := d.Submit(c.ctx, c.req); !ipc.IsCode(err, c.code) {
			t.Errorf("%+v: %v, want %s", c.req, err, c.code)
		}
	}
}
