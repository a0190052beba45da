// Package export writes a network with its node attributes in the file formats other tools
// open directly: GraphML and GEXF 1.2 (networkx's read_graphml/read_gexf, Gephi, Cytoscape)
// and BrainNet Viewer's node and edge files (Xia, Wang & He 2013, the viewer Wang et al. drew
// their hub figures with). It does I/O only: every value it writes was computed elsewhere.
package export

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/network"
)

// Node is one node's attributes. Module is 1…M (0: no module, e.g. a network measured without
// modules); Label is the atlas region ("" outside every region or without an atlas).
type Node struct {
	X, Y, Z  float64 // MNI / world position in mm (HasXYZ false for a plain matrix's rows)
	HasXYZ   bool
	Module   int
	Degree   int
	Strength float64
	Hub      bool
	Label    string
}

// Graph is an undirected weighted network (the strict upper triangle of nw) with its nodes.
type Graph struct {
	Network *network.Network
	Nodes   []Node
}

func (g Graph) check() error {
	if g.Network == nil {
		return fmt.Errorf("no network")
	}
	if len(g.Nodes) != g.Network.N {
		return fmt.Errorf("%d node records for %d nodes", len(g.Nodes), g.Network.N)
	}
	return nil
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func f64(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
func f32(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }

// nodeAttrs lists the node attributes in file order: name, GraphML/GEXF type, value.
func nodeAttrs(n Node, xyz bool) [][3]string {
	var a [][3]string
	if xyz {
		a = append(a, [3]string{"x", "double", f64(n.X)}, [3]string{"y", "double", f64(n.Y)}, [3]string{"z", "double", f64(n.Z)})
	}
	return append(a,
		[3]string{"module", "int", strconv.Itoa(n.Module)},
		[3]string{"degree", "int", strconv.Itoa(n.Degree)},
		[3]string{"strength", "double", f64(n.Strength)},
		[3]string{"hub", "boolean", strconv.FormatBool(n.Hub)},
		[3]string{"atlas_label", "string", n.Label})
}

// WriteGraphML writes the graph as GraphML (graphml.graphdrawing.org): node ids are the node
// numbers of nodes.tsv, each edge once (i < j) with its weight, node attributes as declared
// keys. networkx.read_graphml gives string node ids "0"…"N-1" with typed attributes.
func WriteGraphML(out io.Writer, g Graph) error {
	if err := g.check(); err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<16)
	xyz := len(g.Nodes) > 0 && g.Nodes[0].HasXYZ
	fmt.Fprintln(w, `<?xml version="1.0" encoding="UTF-8"?>`)
	fmt.Fprintln(w, `<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">`)
	if len(g.Nodes) > 0 {
		for _, a := range nodeAttrs(g.Nodes[0], xyz) {
			fmt.Fprintf(w, "  <key id=%q for=\"node\" attr.name=%q attr.type=%q/>\n", a[0], a[0], a[1])
		}
	}
	fmt.Fprintln(w, `  <key id="weight" for="edge" attr.name="weight" attr.type="double"/>`)
	fmt.Fprintln(w, `  <graph id="G" edgedefault="undirected">`)
	for v, n := range g.Nodes {
		fmt.Fprintf(w, "    <node id=\"%d\">", v)
		for _, a := range nodeAttrs(n, xyz) {
			if a[0] == "atlas_label" && a[2] == "" {
				continue // GraphML's missing value: networkx leaves the attribute out
			}
			fmt.Fprintf(w, "<data key=%q>%s</data>", a[0], esc(a[2]))
		}
		fmt.Fprintln(w, "</node>")
	}
	nw := g.Network
	for i := 0; i < nw.N; i++ {
		cols, ws := nw.Row(i)
		for p, j := range cols {
			fmt.Fprintf(w, "    <edge source=\"%d\" target=\"%d\"><data key=\"weight\">%s</data></edge>\n", i, j, f32(ws[p]))
		}
	}
	fmt.Fprintln(w, "  </graph>")
	fmt.Fprintln(w, "</graphml>")
	return w.Flush()
}

// WriteGEXF writes the graph as GEXF 1.2 (gexf.net, the format Gephi opens natively): an
// undirected static graph, node attributes declared in <attributes class="node">, each edge
// once with its weight; the node position is also given as viz:position so that Gephi places
// the nodes where they are in the brain.
func WriteGEXF(out io.Writer, g Graph) error {
	if err := g.check(); err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<16)
	xyz := len(g.Nodes) > 0 && g.Nodes[0].HasXYZ
	fmt.Fprintln(w, `<?xml version="1.0" encoding="UTF-8"?>`)
	fmt.Fprintln(w, `<gexf xmlns="http://www.gexf.net/1.2draft" xmlns:viz="http://www.gexf.net/1.2draft/viz" version="1.2">`)
	fmt.Fprintln(w, `  <graph mode="static" defaultedgetype="undirected">`)
	fmt.Fprintln(w, `    <attributes class="node" mode="static">`)
	if len(g.Nodes) > 0 {
		for k, a := range nodeAttrs(g.Nodes[0], xyz) {
			fmt.Fprintf(w, "      <attribute id=\"%d\" title=%q type=%q/>\n", k, a[0], a[1])
		}
	}
	fmt.Fprintln(w, `    </attributes>`)
	fmt.Fprintln(w, `    <nodes>`)
	for v, n := range g.Nodes {
		fmt.Fprintf(w, "      <node id=\"%d\" label=\"%d\"><attvalues>", v, v)
		for k, a := range nodeAttrs(n, xyz) {
			fmt.Fprintf(w, "<attvalue for=\"%d\" value=\"%s\"/>", k, escAttr(a[2]))
		}
		fmt.Fprint(w, "</attvalues>")
		if xyz {
			fmt.Fprintf(w, "<viz:position x=\"%s\" y=\"%s\" z=\"%s\"/>", f64(n.X), f64(n.Y), f64(n.Z))
		}
		fmt.Fprintln(w, "</node>")
	}
	fmt.Fprintln(w, `    </nodes>`)
	fmt.Fprintln(w, `    <edges>`)
	nw := g.Network
	id := 0
	for i := 0; i < nw.N; i++ {
		cols, ws := nw.Row(i)
		for p, j := range cols {
			fmt.Fprintf(w, "      <edge id=\"%d\" source=\"%d\" target=\"%d\" weight=\"%s\"/>\n", id, i, j, f32(ws[p]))
			id++
		}
	}
	fmt.Fprintln(w, `    </edges>`)
	fmt.Fprintln(w, `  </graph>`)
	fmt.Fprintln(w, `</gexf>`)
	return w.Flush()
}

func escAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "\n", "&#10;", "\t", "&#9;", "\r", "&#13;").Replace(s)
}

// BrainNetLabel is a region name as BrainNet Viewer's .node file can hold it: the sixth column
// is one whitespace-free token and "-" means no label (BrainNet_LoadFiles reads the file with
// textscan '%f %f %f %f %f %s').
func BrainNetLabel(s string) string {
	s = strings.Join(strings.Fields(s), "_")
	if s == "" {
		return "-"
	}
	return s
}

// WriteBrainNetNode writes BrainNet Viewer's node file for the given nodes (in order): one line
// per node, six tab-separated columns x y z (mm) colour size label. Colour is the module number
// (BrainNet colours nodes by this value; 1 for nodes without a module) and size the degree.
func WriteBrainNetNode(out io.Writer, nodes []Node) error {
	w := bufio.NewWriter(out)
	for _, n := range nodes {
		if !n.HasXYZ {
			return fmt.Errorf("a BrainNet node file needs node positions; this network's nodes have none")
		}
		colour := n.Module
		if colour < 1 {
			colour = 1
		}
		fmt.Fprintf(w, "%.2f\t%.2f\t%.2f\t%d\t%d\t%s\n", n.X, n.Y, n.Z, colour, n.Degree, BrainNetLabel(n.Label))
	}
	return w.Flush()
}

// WriteBrainNetEdge writes BrainNet Viewer's edge file: the symmetric N×N weight matrix, one
// row per line, tab-separated, 0 where there is no edge (the order of the .node file holding
// every node). Meant for region networks: it is dense.
func WriteBrainNetEdge(out io.Writer, nw *network.Network) error {
	w := bufio.NewWriter(out)
	row := make([]float32, nw.N)
	// Column i of the symmetric matrix is row i's lower part; build each row from the upper
	// triangle by collecting, for row r, every (i < r) edge too.
	lower := make([][]struct {
		j int
		w float32
	}, nw.N)
	for i := 0; i < nw.N; i++ {
		cols, ws := nw.Row(i)
		for p, j := range cols {
			lower[j] = append(lower[j], struct {
				j int
				w float32
			}{i, ws[p]})
		}
	}
	for r := 0; r < nw.N; r++ {
		clear(row)
		for _, e := range lower[r] {
			row[e.j] = e.w
		}
		cols, ws := nw.Row(r)
		for p, j := range cols {
			row[j] = ws[p]
		}
		for j, v := range row {
			if j > 0 {
				w.WriteByte('\t')
			}
			w.WriteString(f32(v))
		}
		w.WriteByte('\n')
	}
	return w.Flush()
}

// WriteBrainNetSubEdge writes BrainNet Viewer's edge file of the network among the given nodes,
// in that order (e.g. the hubs of hubs.node): the symmetric len(nodes)×len(nodes) weight matrix,
// zero where two of them are not linked and on the diagonal.
func WriteBrainNetSubEdge(out io.Writer, nw *network.Network, nodes []int) error {
	pos := make(map[int]int, len(nodes))
	for k, v := range nodes {
		pos[v] = k
	}
	n := len(nodes)
	m := make([]float32, n*n)
	for a, v := range nodes {
		cols, ws := nw.Row(v) // the upper triangle: each edge once
		for p, j := range cols {
			if b, ok := pos[int(j)]; ok {
				m[a*n+b], m[b*n+a] = ws[p], ws[p]
			}
		}
	}
	w := bufio.NewWriter(out)
	for a := 0; a < n; a++ {
		for b, v := range m[a*n : (a+1)*n] {
			if b > 0 {
				w.WriteByte('\t')
			}
			w.WriteString(f32(v))
		}
		w.WriteByte('\n')
	}
	return w.Flush()
}
