package app

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
	"github.com/go-gl/mathgl/mgl32"

	"github.com/hubscope/hubscope/app/report"
	"github.com/hubscope/hubscope/app/view3d"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/render"
)

// Connectome is the network drawn in the 3D view as edges between node spheres, as BrainNet
// Viewer and nilearn's view_connectome draw it: for a voxel network the strongest links among
// its hubs (the bundle's hub_links.tsv, between the hub spheres), for a region network every
// link between its regions (network.edge between the network.node positions, one sphere per
// region).
type Connectome struct {
	// Spheres replace the scene's hub spheres (region networks); nil keeps them.
	Spheres []render.Sphere
	// Listed is the number of links the bundle lists when it keeps only the strongest
	// (hub_links.tsv holds at most the 2,000 strongest links among the hubs), 0 when it
	// lists them all.
	Listed int
	pos    []mgl32.Vec3
	links  []link // strongest |w| first
	max    float64
}

type link struct {
	a, b int
	w    float64
}

// maxBrainNetMatrix bounds the matrix read (the helper writes .edge files of at most 1,000
// nodes), so a damaged or foreign file cannot make the app allocate without limit.
const maxBrainNetMatrix = 4096

// LoadConnectome reads the connectome of a result from its bundle files, given the hub
// spheres already placed (BrainScene, in hubs.tsv's order); nil without error when the bundle
// has neither hub_links.tsv nor a region network's network.node and network.edge.
func LoadConnectome(ctx context.Context, svc ipc.Service, s ipc.Summary, hubSpheres []render.Sphere) (*Connectome, error) {
	has := map[string]bool{}
	for _, f := range s.Files {
		has[f.Name] = true
	}
	read := func(name string) ([][]string, error) {
		rc, _, err := svc.OpenFile(ctx, s.Job.ID, name)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		rows, err := readFields(rc)
		if err != nil {
			return nil, fmt.Errorf("%s of %s: %w", name, s.Job.Name, err)
		}
		return rows, nil
	}
	c := &Connectome{}
	switch {
	case has["hub_links.tsv"]:
		// The strongest links among the hubs, between the hub spheres (rows of hubs.tsv).
		rows, err := read("hub_links.tsv")
		if err != nil {
			return nil, err
		}
		for _, sp := range hubSpheres {
			c.pos = append(c.pos, sp.Center)
		}
		for k, f := range rows {
			if k == 0 {
				if len(f) < 5 || f[0] != "hub_a" || f[1] != "hub_b" || f[4] != "weight" {
					return nil, fmt.Errorf("hub_links.tsv of %s: header %q, want hub_a, hub_b, node_a, node_b, weight", s.Job.Name, f)
				}
				continue
			}
			if len(f) < 5 {
				return nil, fmt.Errorf("hub_links.tsv of %s: line %d has %d columns, want 5", s.Job.Name, k+1, len(f))
			}
			a, ea := strconv.Atoi(f[0])
			b, eb := strconv.Atoi(f[1])
			w, ew := strconv.ParseFloat(f[4], 64)
			if ea != nil || eb != nil || ew != nil || a < 0 || b < 0 || a >= len(c.pos) || b >= len(c.pos) || math.IsNaN(w) || math.IsInf(w, 0) {
				return nil, fmt.Errorf("hub_links.tsv of %s: line %d (%s) is not two of the %d hubs and a finite weight", s.Job.Name, k+1, strings.Join(f, " "), len(c.pos))
			}
			c.links = append(c.links, link{a, b, w})
			c.max = max(c.max, math.Abs(w))
		}
		if len(c.links) >= hubLinksMax {
			c.Listed = len(c.links)
		}
	case has["network.edge"] && has["network.node"]:
		rows, err := read("network.node")
		if err != nil {
			return nil, err
		}
		hubOf := map[int]int{}
		for k, h := range s.Hubs {
			hubOf[h.Node] = k
		}
		top := 0.0
		for _, f := range rows {
			if len(f) < 5 {
				return nil, fmt.Errorf("network.node of %s: a line of %d columns, BrainNet's node files have 6", s.Job.Name, len(f))
			}
			top = max(top, num(f[4]))
		}
		for i, f := range rows {
			p := mgl32.Vec3{float32(num(f[0])), float32(num(f[1])), float32(num(f[2]))}
			id, ok := hubOf[i]
			if !ok {
				id = -1 // not a hub: not selectable
			}
			c.pos = append(c.pos, p)
			c.Spheres = append(c.Spheres, render.Sphere{Center: p, Radius: render.HubRadius(num(f[4]), top),
				Color: report.ModuleColor(int(num(f[3]))), ID: id})
		}
		if err := c.readMatrix(read, "network.edge", s.Job.Name); err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	sort.SliceStable(c.links, func(i, j int) bool { return math.Abs(c.links[i].w) > math.Abs(c.links[j].w) })
	return c, nil
}

// readMatrix reads a BrainNet .edge matrix of the connectome's nodes into its links (the
// upper triangle's non-zero entries).
func (c *Connectome) readMatrix(read func(string) ([][]string, error), edgeFile, job string) error {
	rows, err := read(edgeFile)
	if err != nil {
		return err
	}
	if len(rows) != len(c.pos) {
		return fmt.Errorf("%s of %s: %d rows for %d nodes", edgeFile, job, len(rows), len(c.pos))
	}
	for a, f := range rows {
		if len(f) != len(rows) {
			return fmt.Errorf("%s of %s: row %d has %d values, want %d", edgeFile, job, a+1, len(f), len(rows))
		}
		for b := a + 1; b < len(f); b++ {
			w, err := strconv.ParseFloat(f[b], 64)
			if err != nil || math.IsNaN(w) || math.IsInf(w, 0) {
				return fmt.Errorf("%s of %s: row %d, column %d: %q is not a finite number", edgeFile, job, a+1, b+1, f[b])
			}
			if w != 0 {
				c.links = append(c.links, link{a, b, w})
				c.max = max(c.max, math.Abs(w))
			}
		}
	}
	return nil
}

// Links is the number of links the connectome holds.
func (c *Connectome) Links() int { return len(c.links) }

// Edges returns the k strongest links (by |weight|) as render edges and the weakest |weight|
// among them (0 when none). Width and colour (render.EdgeWidth, render.EdgeColor) grow with
// |weight| over the range drawn, from the weakest link shown to the strongest, as nilearn's
// view_connectome scales its colour bar to the edges above its threshold: the top links of a
// hub network lie close together (0.72 to 0.9 on the demo), and a scale from 0 would draw them
// all alike. The weakest shown keeps 15 % of the scale, so it stays visible.
func (c *Connectome) Edges(k int) ([]render.Edge, float64) {
	k = min(max(k, 0), len(c.links))
	if k == 0 {
		return nil, 0
	}
	from := math.Abs(c.links[k-1].w)
	out := make([]render.Edge, k)
	for i, l := range c.links[:k] {
		f := 1.0
		if c.max > from {
			f = (math.Abs(l.w) - from) / (c.max - from)
		}
		f = 0.15 + 0.85*f
		if l.w < 0 {
			f = -f
		}
		out[i] = render.Edge{A: c.pos[l.a], B: c.pos[l.b], Width: render.EdgeWidth(f, 1), Color: render.EdgeColor(f, 1)}
	}
	return out, from
}

// hubLinksMax is the most links hub_links.tsv holds (the bundle keeps the strongest 2,000
// links among the hubs; helper/bundle's doc).
const hubLinksMax = 2000

// defaultLinks is how many links the view draws at first: enough to see the hub network's
// backbone, few enough that it stays readable (BrainNet and nilearn users threshold alike).
const defaultLinks = 200

// ConnectomeBar is the 3D view's edge control: a slider over the share of links drawn,
// strongest first (0 hides them), with a line saying how many and from which weight. It sets
// the view's scene's edges (and the region spheres) at once.
func ConnectomeBar(v *view3d.View, c *Connectome) (*widget.Slider, fyne.CanvasObject) {
	if c.Spheres != nil {
		s := *v.Scene()
		s.Spheres = c.Spheres
		v.SetScene(&s)
	}
	label := widget.NewLabel("")
	slider := widget.NewSlider(0, 100)
	slider.Step = 1
	apply := func(pct float64) {
		k := int(math.Ceil(pct / 100 * float64(c.Links())))
		edges, from := c.Edges(k)
		s := *v.Scene()
		s.Edges = edges
		v.SetScene(&s)
		if k == 0 {
			label.SetText(fmt.Sprintf("Links: none of %d drawn", c.Links()))
			return
		}
		if c.Listed > 0 {
			label.SetText(fmt.Sprintf("Links: the strongest %d (weights from %.3g up) of the %d strongest among the hubs", k, from, c.Listed))
			return
		}
		label.SetText(fmt.Sprintf("Links: the strongest %d of %d (weights from %.3g up)", k, c.Links(), from))
	}
	start := 100.0
	if n := c.Links(); n > defaultLinks {
		start = math.Floor(100 * defaultLinks / float64(n))
	}
	slider.Value = start
	apply(start)
	slider.OnChanged = apply
	return slider, container.NewBorder(nil, nil, label, nil, slider)
}

// readFields splits a whitespace-separated text file into lines of fields (BrainNet's .node
// and .edge files, hub_links.tsv), refusing more than maxBrainNetMatrix lines or fields per line.
func readFields(r io.Reader) ([][]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 64<<20)
	var rows [][]string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(rows) >= maxBrainNetMatrix || len(f) > maxBrainNetMatrix {
			return nil, fmt.Errorf("more than %d lines or values per line", maxBrainNetMatrix)
		}
		rows = append(rows, f)
	}
	return rows, sc.Err()
}

func num(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}
