package report

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// metricsJSON is a trimmed metrics.json as the pipeline writes it for the demo phantom.
const metricsJSON = `{
 "scan": {"path": "/data/demo_phantom.nii.gz", "nodes": 8558, "time_points": 200, "tr_seconds": 2,
  "grid": [31, 37, 31], "mask_voxels": 8593, "dropped_zero_variance": 35, "dropped_non_finite": 0},
 "network": {"measure": "pearson", "abs": false, "threshold_mode": "density", "threshold": 0.3126,
  "threshold_inclusive": true, "edges": 366154, "density": 0.0099999, "mean_degree": 85.57,
  "isolated_nodes": 11, "largest_component": 8547, "backend": "cpu"},
 "hubs": {"rule": "degree > mean + 1 SD", "degree_cutoff": 176.6, "count": 789},
 "global": {"clustering_coefficient": 0.2793, "characteristic_path_length": 2.8417, "global_efficiency": 0.3751,
  "local_efficiency": 0.6103, "assortativity": -0.0605, "diameter": 6,
  "small_world": {"gamma": 6.3349, "lambda": 1.1923, "sigma": 5.3132, "sigma_sd": 0.0257, "random_networks": 15},
  "degree_distribution": {"power_law": {"alpha": 3.897, "xmin": 152}}},
 "modules": [{"method": "Leiden", "q": 0.798, "count": 3, "sizes": [1308, 1258, 12], "q_z_score": 412.5}]
}`

func samplePNG(t *testing.T, c color.Color) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	for i := range 12 {
		img.Set(i%4, i/4, c)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func sampleSummary() ipc.Summary {
	pc := 0.4
	hubs := []ipc.Hub{
		{Node: 5433, Voxel: [3]int{19, 26, 15}, MNI: [3]float64{-26, 32, 20}, Degree: 1315, HubZ: 13.5, Module: 2, Participation: &pc, Role: "connector", Region: "Frontal_Mid_L"},
		{Node: 5491, Voxel: [3]int{12, 30, 15}, MNI: [3]float64{16, 56, 20}, Degree: 1301, HubZ: 13.3, Module: 1, Role: "provincial", Region: "Frontal_Sup_R & <co>"},
		{Node: 17, Degree: 900, HubZ: 9.1},
	}
	set := settings.Defaults()
	set.Measure = settings.Spearman
	return ipc.Summary{
		Job:    ipc.Job{ID: "j1", Name: "demo_phantom.nii.gz", State: ipc.JobDone, Settings: set},
		Bundle: "/home/dr/results/demo_phantom", Metrics: []byte(metricsJSON), Hubs: hubs,
		Atlas: &ipc.AtlasInfo{Name: "AAL (Tzourio-Mazoyer et al. 2002)", Citation: "Tzourio-Mazoyer N et al., NeuroImage 15:273-289, 2002"},
	}
}

// node is a parsed element with its text and children.
type node struct {
	Name     string
	Attr     map[string]string
	Text     string
	Children []*node
}

func parse(t *testing.T, r io.Reader) *node {
	t.Helper()
	d := xml.NewDecoder(r)
	d.Strict = true
	root := &node{Name: "#document"}
	stack := []*node{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("report is not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{Name: tok.Name.Local, Attr: map[string]string{}}
			for _, a := range tok.Attr {
				n.Attr[a.Name.Local] = a.Value
			}
			top := stack[len(stack)-1]
			top.Children = append(top.Children, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			for _, n := range stack {
				n.Text += string(tok)
			}
		}
	}
	return root
}

func (n *node) find(pred func(*node) bool) []*node {
	var out []*node
	if pred(n) {
		out = append(out, n)
	}
	for _, c := range n.Children {
		out = append(out, c.find(pred)...)
	}
	return out
}

func (n *node) byID(t *testing.T, id string) *node {
	t.Helper()
	r := n.find(func(m *node) bool { return m.Attr["id"] == id })
	if len(r) != 1 {
		t.Fatalf("%d elements with id %q", len(r), id)
	}
	return r[0]
}

func rows(n *node) [][]string {
	var out [][]string
	for _, tr := range n.find(func(m *node) bool { return m.Name == "tr" }) {
		var cells []string
		for _, c := range tr.Children {
			cells = append(cells, strings.TrimSpace(c.Text))
		}
		out = append(out, cells)
	}
	return out
}

func TestReportContent(t *testing.T) {
	var b bytes.Buffer
	figs := []Figure{{"3D view", samplePNG(t, color.RGBA{0x44, 0x77, 0xAA, 0xFF})}, {"Axial slice", samplePNG(t, color.Gray{128})}, {"Degree distribution", samplePNG(t, color.White)}}
	if err := Write(&b, Report{Summary: sampleSummary(), Figures: figs, MaxHubs: 2}); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("HUBSCOPE_KEEP_REPORT") != "" {
		os.WriteFile(os.Getenv("HUBSCOPE_KEEP_REPORT"), b.Bytes(), 0o644)
	}
	doc := parse(t, bytes.NewReader(b.Bytes()))
	text := doc.Text

	imgs := doc.find(func(n *node) bool { return n.Name == "img" })
	if len(imgs) != 3 {
		t.Fatalf("%d images, want 3", len(imgs))
	}
	for i, img := range imgs {
		src := img.Attr["src"]
		data, ok := strings.CutPrefix(src, "data:image/png;base64,")
		if !ok {
			t.Fatalf("image %d is not a PNG data URI: %.40s", i, src)
		}
		raw, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(raw, figs[i].PNG) || img.Attr["alt"] != figs[i].Title {
			t.Errorf("image %d does not carry figure %q", i, figs[i].Title)
		}
	}
	if n := len(doc.find(func(n *node) bool { return n.Name == "link" || n.Name == "script" })); n != 0 {
		t.Errorf("report refers to %d outside resources", n)
	}

	hubs := rows(doc.byID(t, "hubs"))
	if len(hubs) != 3 { // header + MaxHubs
		t.Fatalf("hub rows %v", hubs)
	}
	if got := hubs[1]; got[1] != "Frontal_Mid_L" || got[2] != "-26, 32, 20" || got[3] != "1315" || got[4] != "13.5" || got[5] != "2" || got[6] != "connector" {
		t.Errorf("first hub row %q", got)
	}
	if got := hubs[2][1]; got != "Frontal_Sup_R & <co>" {
		t.Errorf("region text not escaped and restored: %q", got)
	}
	if !strings.Contains(text, "The 2 strongest of 3 hubs") {
		t.Error("no note that the hub table is cut")
	}

	meas := map[string]string{}
	for _, r := range rows(doc.byID(t, "measures")) {
		meas[r[0]] = r[1]
	}
	for k, v := range map[string]string{"γ (normalised clustering)": "6.335", "λ (normalised path length)": "1.192", "σ (small-worldness)": "5.313 ± 0.026", "Q (modularity, Leiden)": "0.798", "Q z-score": "412.5", "Hubs": "789"} {
		if meas[k] != v {
			t.Errorf("measure %q = %q, want %q", k, meas[k], v)
		}
	}
	mods := rows(doc.byID(t, "modules"))
	if len(mods) != 4 || mods[1][1] != "1308" || mods[3][2] != "0.5 %" {
		t.Errorf("module rows %q", mods)
	}
	sw := doc.find(func(n *node) bool { return n.Attr["class"] == "sw" })
	if len(sw) != 3 || sw[0].Attr["style"] != "background:#e69f00" {
		t.Errorf("module colour swatches: %d, first style %q", len(sw), sw[0].Attr["style"])
	}
	set := map[string]string{}
	for _, r := range rows(doc.byID(t, "settings")) {
		set[r[0]] = r[1]
	}
	if set["Connectivity"] != "Spearman rank correlation" || set["Links kept"] != "strongest 1 % of all voxel pairs (exact density)" || !strings.Contains(set["Brain mask"], "automatic") || set["Random networks"] != "15 (degree-preserving rewiring)" {
		t.Errorf("settings %v", set)
	}
	for _, want := range []string{"demo_phantom.nii.gz", "31 × 37 × 31 voxels, 200 volumes, TR 2 s", "8558 of 8593", "NeuroImage 15:273-289", "HubScope " + schema.Version, "/home/dr/results/demo_phantom"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestReportRejectsBadInput(t *testing.T) {
	s := sampleSummary()
	if err := Write(io.Discard, Report{Summary: s, Figures: []Figure{{"3D view", []byte("not a png")}}}); err == nil || !strings.Contains(err.Error(), "3D view") {
		t.Errorf("bad figure: %v", err)
	}
	s.Metrics = []byte("{")
	if err := Write(io.Discard, Report{Summary: s}); err == nil || !strings.Contains(err.Error(), "metrics.json") {
		t.Errorf("bad metrics: %v", err)
	}
}

// Basic metrics: no small-world rows, the basic clustering coefficient instead.
func TestGlobalMeasuresBasic(t *testing.T) {
	m, err := ParseMetrics([]byte(`{"network":{"edges":10,"density":0.01},"hubs":{"count":2,"rule":"r"},"global_basic":{"clustering_coefficient":0.25}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := m.GlobalMeasures()
	if len(got) != 3 || got[0].Name != "C_p (clustering coefficient)" || got[0].Value != "0.250" {
		t.Errorf("basic measures %+v", got)
	}
}

// The Q row counts modules of at least 2 nodes apart from nodes on their own, from metrics.json's
// keys; a bundle written before those keys existed is counted from its sizes, not shown as
// "0 modules".
func TestModuleCountsInQRow(t *testing.T) {
	for _, c := range []struct{ name, modules, want string }{
		{"current", `{"method":"Leiden","q":0.7,"count":4,"modules_of_two_or_more":2,"single_node_modules":2,"sizes":[9,4,1,1]}`,
			"2 modules of at least 2 nodes (and 2 nodes on their own)"},
		{"older bundle", `{"method":"Leiden","q":0.7,"count":3,"sizes":[9,4,1]}`,
			"2 modules of at least 2 nodes (and 1 node on its own)"},
		{"no single nodes", `{"method":"Leiden","q":0.7,"count":2,"sizes":[5000,3558]}`,
			"2 modules of at least 2 nodes"},
	} {
		m, err := ParseMetrics([]byte(`{"network":{"edges":10},"modules":[` + c.modules + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, r := range m.GlobalMeasures() {
			if strings.HasPrefix(r.Name, "Q (modularity") {
				got = r.Meaning
			}
		}
		if got != c.want {
			t.Errorf("%s: Q row says %q, want %q", c.name, got, c.want)
		}
	}
}
