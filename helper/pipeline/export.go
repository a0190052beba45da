package pipeline

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/export"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/realign"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/render"
)

// Export formats (--export): network.graphml, network.gexf, and BrainNet Viewer's hubs.node
// (plus network.edge for networks of at most BrainNetEdgeMax nodes).
const (
	ExportGraphML  = "graphml"
	ExportGEXF     = "gexf"
	ExportBrainNet = "brainnet"
	ExportAuto     = "auto"
	ExportNone     = "none"
)

// ExportXMLMaxEdges is auto's limit for GraphML and GEXF: about 90 bytes of XML per edge, so
// 10⁵ edges make files of ~10 MB that networkx and Gephi load in seconds, while a voxel
// network of 10⁷ edges would make a gigabyte no one can open (network.npz holds it in a
// tenth). Named explicitly they are written whatever the size.
const ExportXMLMaxEdges = 100_000

// BrainNetEdgeMax is the largest network whose dense BrainNet .edge matrix is written: region
// networks (atlases have 90 to 1,000 regions); a voxel network's N² text matrix is not usable.
const BrainNetEdgeMax = 1000

// parseExports reads --export: "auto" (default), "none", or a comma list of graphml, gexf,
// brainnet. explicit tells whether the formats were named (sizes then do not matter).
func parseExports(spec string) (set map[string]bool, explicit bool, err error) {
	set = map[string]bool{}
	switch strings.TrimSpace(spec) {
	case "", ExportAuto:
		return map[string]bool{ExportGraphML: true, ExportGEXF: true, ExportBrainNet: true}, false, nil
	case ExportNone:
		return set, true, nil
	}
	for _, f := range strings.Split(spec, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		switch f {
		case ExportGraphML, ExportGEXF, ExportBrainNet:
			set[f] = true
		default:
			return nil, false, fmt.Errorf("--export %q: unknown format %q; want auto, none, or a comma list of graphml, gexf, brainnet", spec, f)
		}
	}
	return set, true, nil
}

// exportNodes gathers every node's attributes for the exports: position (MNI through the scan's
// registration when there is one, else the scan's world coordinates), module (1…M, 0 without
// modules), degree, strength, hub flag and atlas region (or the matrix row's label).
func exportNodes(s *scan.Scan, m *Metrics, atl *atlas.Atlas, toMNI *[4][4]float64, regionPos [][3]float64) []export.Node {
	nodes := make([]export.Node, s.N)
	for v := range nodes {
		n := &nodes[v]
		n.Degree, n.Strength = m.degree[v], m.strength[v]
		if m.membership != nil {
			n.Module = m.membership[v] + 1 // as modules.nii.gz: 1 = largest module
		}
		if s.IJK != nil {
			x := s.World(v)
			if toMNI != nil {
				x = realign.Apply(*toMNI, x)
			}
			n.X, n.Y, n.Z, n.HasXYZ = x[0], x[1], x[2], true
			if atl != nil {
				_, n.Label = atl.Region(x)
			}
		} else if s.Labels != nil {
			n.Label = s.Labels[v]
		}
		if regionPos != nil { // atlas regions: their centroids
			n.X, n.Y, n.Z, n.HasXYZ = regionPos[v][0], regionPos[v][1], regionPos[v][2], true
		}
	}
	for _, h := range m.hubs {
		nodes[h].Hub = true
	}
	return nodes
}

// writeExports writes the exports asked for by cfg.Export into the bundle.
func writeExports(w *bundle.Writer, cfg Config, s *scan.Scan, nw *network.Network, m *Metrics, atl *atlas.Atlas, toMNI *[4][4]float64, regionPos [][3]float64, rep progress.Reporter) error {
	set, explicit, err := parseExports(cfg.Export)
	if err != nil || len(set) == 0 {
		return err
	}
	nodes := exportNodes(s, m, atl, toMNI, regionPos)
	g := export.Graph{Network: nw, Nodes: nodes}
	for _, f := range []struct {
		format, name string
		write        func(io.Writer, export.Graph) error
	}{{ExportGraphML, "network.graphml", export.WriteGraphML}, {ExportGEXF, "network.gexf", export.WriteGEXF}} {
		if !set[f.format] {
			continue
		}
		if !explicit && nw.Edges() > ExportXMLMaxEdges {
			rep.Note(fmt.Sprintf("%s not written: %d edges exceed %d (about %d MB of XML); ask for it with --export %s",
				f.name, nw.Edges(), ExportXMLMaxEdges, nw.Edges()*90>>20, f.format))
			continue
		}
		if err := w.WriteFile(f.name, func(out io.Writer) error { return f.write(out, g) }); err != nil {
			return err
		}
	}
	if !set[ExportBrainNet] {
		return nil
	}
	if s.IJK == nil && regionPos == nil {
		if explicit {
			rep.Note("BrainNet Viewer files not written: the nodes of a time-series matrix have no positions")
		}
		return nil
	}
	hubs := make([]export.Node, len(m.hubs))
	for k, v := range m.hubs {
		hubs[k] = nodes[v]
	}
	if err := w.WriteFile("hubs.node", func(out io.Writer) error { return export.WriteBrainNetNode(out, hubs) }); err != nil {
		return err
	}
	// hubs.edge: the links among the hubs, in hubs.node's order (BrainNet draws the hub
	// network from the pair); hub_links.tsv: the strongest of them, for the app's connectome
	// view, whatever the number of hubs.
	if regionPos == nil {
		if len(m.hubs) <= BrainNetEdgeMax {
			if err := w.WriteFile("hubs.edge", func(out io.Writer) error { return export.WriteBrainNetSubEdge(out, nw, m.hubs) }); err != nil {
				return err
			}
		}
		if err := writeHubLinks(w, nw, m.hubs); err != nil {
			return err
		}
	}
	if s.N > BrainNetEdgeMax {
		return nil
	}
	if err := w.WriteFile("network.node", func(out io.Writer) error { return export.WriteBrainNetNode(out, nodes) }); err != nil {
		return err
	}
	return w.WriteFile("network.edge", func(out io.Writer) error { return export.WriteBrainNetEdge(out, nw) })
}

// writeModules writes modules.nii.gz as a label image (NIFTI_INTENT_LABEL) and its lookup table
// modules_dseg.tsv (BIDS's discrete segmentation table: index, name, color as #rrggbb) with one
// row per module 1…M in the app's module colours, so that viewers colour it as the app does.
func writeModules(w *bundle.Writer, s *scan.Scan, labels []float32, dt nifti.DataType) error {
	if err := w.WriteLabelMap("modules.nii.gz", s, labels, dt); err != nil {
		return err
	}
	var top int
	for _, v := range labels {
		top = max(top, int(v))
	}
	return w.WriteTSV("modules_dseg.tsv", []string{"index", "name", "color"}, func(emit func(...string) error) error {
		for m := 1; m <= top; m++ {
			c := render.ModuleColor(m)
			if err := emit(fmt.Sprint(m), fmt.Sprintf("module_%d", m), fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)); err != nil {
				return err
			}
		}
		return nil
	})
}

// HubLinksMax is the number of links among the hubs hub_links.tsv keeps: the strongest, enough
// for the connectome view's densest useful drawing, small enough to fetch at once.
const HubLinksMax = 2000

// writeHubLinks writes hub_links.tsv: the HubLinksMax strongest links (by |weight|, ties by
// the hubs' rows) between two hubs, as hub_a < hub_b (rows of hubs.tsv, from 0), their node
// numbers and the weight, strongest first.
func writeHubLinks(w *bundle.Writer, nw *network.Network, hubs []int) error {
	row := make(map[int]int, len(hubs))
	for k, v := range hubs {
		row[v] = k
	}
	type link struct {
		a, b int
		w    float32
	}
	var links []link
	for a, v := range hubs {
		cols, ws := nw.Row(v) // each edge once (upper triangle)
		for p, j := range cols {
			if b, ok := row[int(j)]; ok {
				links = append(links, link{min(a, b), max(a, b), ws[p]})
			}
		}
	}
	slices.SortFunc(links, func(x, y link) int {
		if c := cmp.Compare(math.Abs(float64(y.w)), math.Abs(float64(x.w))); c != 0 {
			return c
		}
		if x.a != y.a {
			return cmp.Compare(x.a, y.a)
		}
		return cmp.Compare(x.b, y.b)
	})
	links = links[:min(len(links), HubLinksMax)]
	return w.WriteTSV("hub_links.tsv", []string{"hub_a", "hub_b", "node_a", "node_b", "weight"}, func(emit func(...string) error) error {
		for _, l := range links {
			if err := emit(strconv.Itoa(l.a), strconv.Itoa(l.b), strconv.Itoa(hubs[l.a]), strconv.Itoa(hubs[l.b]), strconv.FormatFloat(float64(l.w), 'g', -1, 32)); err != nil {
				return err
			}
		}
		return nil
	})
}
