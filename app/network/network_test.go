package network

import (
	"bytes"
	"context"
	"encoding/csv"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// files is a Service that serves bundle files from a map and fails everything else.
type files struct {
	ipc.Service // nil: any other call panics, which the tests would show
	data        map[string][]byte
}

func (f files) OpenFile(_ context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error) {
	b, ok := f.data[name]
	if !ok {
		return nil, ipc.FileInfo{}, ipc.Errorf(ipc.CodeNotFound, "job %s has no file %s", id, name)
	}
	return io.NopCloser(bytes.NewReader(b)), ipc.FileInfo{Name: name, Size: int64(len(b))}, nil
}

const metricsJSON = `{"scan":{"path":"/d/phantom.nii.gz","nodes":8558},"network":{"edges":366154,"density":0.01,"mean_degree":85.6},
"hubs":{"rule":"degree > mean + 1 SD","count":4},
"global":{"clustering_coefficient":0.279,"characteristic_path_length":2.84,"global_efficiency":0.375,
 "small_world":{"gamma":6.33,"lambda":1.19,"sigma":5.31,"sigma_sd":0.03,"random_networks":15}},
"modules":[{"method":"Leiden","q":0.798,"count":3,"sizes":[600,300,100],"q_z_score":41.2}]}`

func pf(v float64) *float64 { return &v }

func sampleHubs() []ipc.Hub {
	return []ipc.Hub{
		{Node: 1, Voxel: [3]int{1, 2, 3}, MNI: [3]float64{-26, 32, 20}, Degree: 1315, Strength: 487.7, HubZ: 13.5, Module: 2, Participation: pf(0.41), Role: "connector", Region: "Frontal_Mid_L"},
		{Node: 2, Voxel: [3]int{4, 5, 6}, MNI: [3]float64{16, 56, 20}, Degree: 1301, Strength: 481.7, HubZ: 13.3, Module: 1, Participation: pf(0.12), Role: "provincial", Region: "Precuneus_R"},
		{Node: 3, Voxel: [3]int{7, 8, 9}, MNI: [3]float64{2, -60, 40}, Degree: 1200, Strength: 490.1, HubZ: 12.1, Module: 1, Participation: pf(0.05), Role: "provincial", Region: "Precuneus_L"},
		{Node: 4, Voxel: [3]int{0, 0, 0}, MNI: [3]float64{50, 0, -30}, Degree: 900, Strength: 300, HubZ: 9.1, Module: 3},
	}
}

func plotPNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for i := range 40 {
		img.Set(i, 30-i*3/4, color.Black)
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

func newTab(t *testing.T) (*Tab, fyne.Window) {
	test.NewTempApp(t)
	s := ipc.Summary{Job: ipc.Job{ID: "j1", Name: "phantom.nii.gz", State: ipc.JobDone}, Metrics: []byte(metricsJSON), Hubs: sampleHubs(),
		Files: []ipc.FileInfo{{Name: DegreeDistributionFile}}}
	svc := files{data: map[string][]byte{DegreeDistributionFile: plotPNG(t)}}
	w := test.NewTempWindow(t, nil)
	tab, err := NewTab(context.Background(), svc, s, w)
	if err != nil {
		t.Fatal(err)
	}
	return tab, w
}

func column(hubs []ipc.Hub, f func(ipc.Hub) string) []string {
	var out []string
	for _, h := range hubs {
		out = append(out, f(h))
	}
	return out
}

func region(h ipc.Hub) string { return regionText(h) }

func TestHubTableSortAndFilter(t *testing.T) {
	test.NewTempApp(t)
	h := NewHubTable(sampleHubs())
	if got := column(h.Shown(), region); !slices.Equal(got, []string{"Frontal_Mid_L", "Precuneus_R", "Precuneus_L", "outside the atlas"}) {
		t.Fatalf("initial order %v", got)
	}
	if h.Count.Text != "4 hubs" || h.HeaderText(ColRank) != "Rank" || h.HeaderSort(ColRank) != 1 {
		t.Errorf("count %q, rank header %q", h.Count.Text, h.HeaderText(ColRank))
	}
	h.HeaderTapped(ColStrength) // quantities: largest first
	if got := column(h.Shown(), region); !slices.Equal(got, []string{"Precuneus_L", "Frontal_Mid_L", "Precuneus_R", "outside the atlas"}) {
		t.Errorf("by strength %v", got)
	}
	if h.HeaderText(ColStrength) != "Strength" || h.HeaderSort(ColStrength) != -1 || h.HeaderSort(ColRank) != 0 {
		t.Errorf("headers %q %q", h.HeaderText(ColStrength), h.HeaderText(ColRank))
	}
	h.HeaderTapped(ColStrength) // again: reversed
	if got := column(h.Shown(), region); got[0] != "outside the atlas" || got[3] != "Precuneus_L" {
		t.Errorf("by strength ascending %v", got)
	}
	h.HeaderTapped(ColRegion)
	if got := column(h.Shown(), region); !slices.Equal(got, []string{"Frontal_Mid_L", "outside the atlas", "Precuneus_L", "Precuneus_R"}) {
		t.Errorf("by region %v", got)
	}
	h.SortBy(ColModule, false) // ties (module 1) keep rank order
	if got := column(h.Shown(), region); !slices.Equal(got, []string{"Precuneus_R", "Precuneus_L", "Frontal_Mid_L", "outside the atlas"}) {
		t.Errorf("by module %v", got)
	}

	test.Type(h.Filter, "precun")
	if got := column(h.Shown(), region); !slices.Equal(got, []string{"Precuneus_R", "Precuneus_L"}) {
		t.Errorf("filtered %v", got)
	}
	if h.Count.Text != `2 of 4 hubs match "precun"` {
		t.Errorf("count %q", h.Count.Text)
	}
	if r, c := h.Table.Length(); r != 2 || c != len(Columns) {
		t.Errorf("table length %d×%d", r, c)
	}
	h.SetFilter("")
	if len(h.Shown()) != 4 {
		t.Errorf("filter cleared: %d rows", len(h.Shown()))
	}
}

func TestHubTableExportCSV(t *testing.T) {
	test.NewTempApp(t)
	h := NewHubTable(sampleHubs())
	h.SortBy(ColHubZ, false)
	h.SetFilter("_")
	path := filepath.Join(t.TempDir(), "hubs.csv")
	if err := h.ExportCSV(path); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Rank", "Region", "x mm", "y mm", "z mm", "Degree", "Strength", "Hub z", "Module", "Participation", "Role", "i", "j", "k"},
		{"3", "Precuneus_L", "2", "-60", "40", "1200", "490.1", "12.10", "1", "0.05", "provincial", "7", "8", "9"},
		{"2", "Precuneus_R", "16", "56", "20", "1301", "481.7", "13.30", "1", "0.12", "provincial", "4", "5", "6"},
		{"1", "Frontal_Mid_L", "-26", "32", "20", "1315", "487.7", "13.50", "2", "0.41", "connector", "1", "2", "3"},
	}
	if !slices.EqualFunc(recs, want, slices.Equal) {
		t.Fatalf("csv:\n%q\nwant\n%q", recs, want)
	}
	if err := h.ExportCSV(filepath.Join(t.TempDir(), "no", "such", "dir.csv")); err == nil || !strings.Contains(err.Error(), "dir.csv") {
		t.Errorf("export to a missing folder: %v", err)
	}
}

func TestTabContent(t *testing.T) {
	tab, w := newTab(t)
	rows := tab.ModuleRows()
	if len(rows) != 3 || rows[0].Text() != "Module 1: 600 voxels (60.0 %), 2 hubs" || rows[2].Hubs != 1 {
		t.Errorf("module rows %+v", rows)
	}
	if rows[0].Colour == rows[1].Colour {
		t.Error("modules 1 and 2 share a colour")
	}
	var selected []int
	tab.Hubs.OnSelect = func(h ipc.Hub) { selected = append(selected, h.Node) }
	tab.Hubs.Table.Select(fyneCell(1, ColDegree))
	if !slices.Equal(selected, []int{2}) {
		t.Errorf("selected %v", selected)
	}
	w.SetContent(tab.Content())
	w.Resize(fyne.NewSize(1100, 700))
	// The degree plot arrives from a goroutine through fyne.Do.
	select {
	case <-tab.Loaded():
	case <-time.After(10 * time.Second):
		t.Fatal("degree plot not loaded in 10 s")
	}
	if _, ok := tab.Degree.Objects[0].(*canvas.Image); !ok {
		t.Fatalf("degree plot shows %T", tab.Degree.Objects[0])
	}
	markup := test.RenderObjectToMarkup(tab.Content())
	for _, want := range []string{"γ (normalised clustering)", "6.330", "Q z-score", "41.2", "Module 2: 300 voxels"} {
		if !strings.Contains(markup, want) {
			t.Errorf("tab lacks %q", want)
		}
	}
}

func TestTabWithoutPlot(t *testing.T) {
	test.NewTempApp(t)
	s := ipc.Summary{Job: ipc.Job{ID: "j2"}, Metrics: []byte(`{"hubs":{"count":0}}`)}
	tab, err := NewTab(context.Background(), files{}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	markup := test.RenderObjectToMarkup(tab.Content())
	for _, want := range []string{"No degree distribution plot", "No modules"} {
		if !strings.Contains(markup, want) {
			t.Errorf("tab lacks %q", want)
		}
	}
	if _, err := NewTab(context.Background(), files{}, ipc.Summary{Job: ipc.Job{Name: "x.nii"}, Metrics: []byte("[")}, nil); err == nil || !strings.Contains(err.Error(), "x.nii") {
		t.Errorf("bad metrics: %v", err)
	}
}

// TestTabInputChecks: the scan header's checks from the summary (provenance.json's
// input_checks) head the tab — the TR and its source, each warning with its level in words —
// and a summary without them shows no such section.
func TestTabInputChecks(t *testing.T) {
	test.NewTempApp(t)
	s := ipc.Summary{Job: ipc.Job{ID: "j3"}, Metrics: []byte(`{"hubs":{"count":0}}`), InputChecks: &schema.InputChecks{
		TR: "TR 2 s (header pixdim[4] = 2, time unit unset: assumed seconds)",
		Warnings: []schema.HeaderWarning{
			{Level: 30, Field: "xyzt_units", Problem: "time unit unset", Fix: "TR taken as seconds"},
			{Level: 35, Field: "pixdim[1]", Problem: "negative voxel size -3", Fix: "its absolute value used"},
		}}}
	tab, err := NewTab(context.Background(), files{}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TR 2 s (header pixdim[4] = 2, time unit unset: assumed seconds)",
		"Warning: xyzt_units: time unit unset (TR taken as seconds)",
		"Probably wrong: pixdim[1]: negative voxel size -3 (its absolute value used)"}
	if got := tab.InputLines(); !slices.Equal(got, want) {
		t.Errorf("input lines %q, want %q", got, want)
	}
	markup := test.RenderObjectToMarkup(tab.Content())
	for _, w := range append(want, "Scan header") {
		if w = w[:min(len(w), 40)]; !strings.Contains(markup, w) { // the labels wrap their words
			t.Errorf("tab lacks %q", w)
		}
	}
	s.InputChecks = nil
	if tab, _ := NewTab(context.Background(), files{}, s, nil); strings.Contains(test.RenderObjectToMarkup(tab.Content()), "Scan header") {
		t.Error("a summary without input checks shows a Scan header section")
	}
}
