package export

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/network"
)

// fixture: 5 nodes, 5 edges, one isolated node, labels that need XML escaping.
func fixture() Graph {
	nw := &network.Network{N: 5,
		Indptr:  []uint64{0, 3, 4, 5, 5, 5},
		Indices: []uint32{1, 2, 3, 2, 3},
		Weights: []float32{0.5, 0.25, -0.375, 0.8125, 0.1}}
	nodes := []Node{
		{X: -42.5, Y: 10, Z: 3.25, HasXYZ: true, Module: 1, Degree: 3, Strength: 0.375, Hub: true, Label: "Precentral_L"},
		{X: 1, Y: 2, Z: 3, HasXYZ: true, Module: 1, Degree: 2, Strength: 1.3125, Label: `A & B <"x">`},
		{X: -1, Y: -2, Z: -3, HasXYZ: true, Module: 2, Degree: 2, Strength: 1.0625, Label: "Cingulum Ant R"},
		{X: 0, Y: 0, Z: 0, HasXYZ: true, Module: 2, Degree: 2, Strength: -0.275},
		{X: 5, Y: 5, Z: 5, HasXYZ: true, Module: 3, Degree: 0},
	}
	return Graph{Network: nw, Nodes: nodes}
}

const readBack = `
import json, sys, networkx as nx
g = nx.read_graphml(sys.argv[2]) if sys.argv[1] == "graphml" else nx.read_gexf(sys.argv[2])
out = {"directed": g.is_directed(), "nodes": {}, "edges": []}
for n, d in g.nodes(data=True):
    d = dict(d)
    d.pop("label", None); d.pop("viz", None)
    out["nodes"][n] = d
for u, v, d in g.edges(data=True):
    out["edges"].append([int(u), int(v), d["weight"]])
print(json.dumps(out, default=lambda o: o.item()))
`

// TestNetworkxReadsBack: networkx reads both files with the same nodes, edges, weights and
// attributes (types included: hub is a bool, module an int).
func TestNetworkxReadsBack(t *testing.T) {
	pyref.Require(t, "networkx")
	g := fixture()
	dir := t.TempDir()
	for _, format := range []string{"graphml", "gexf"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			write := WriteGraphML
			if format == "gexf" {
				write = WriteGEXF
			}
			if err := write(&buf, g); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "network."+format)
			if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Directed bool
				Nodes    map[string]map[string]any
				Edges    [][3]float64
			}
			if err := json.Unmarshal(pyref.Run(t, readBack, format, p), &got); err != nil {
				t.Fatal(err)
			}
			if got.Directed {
				t.Error("read back as a directed graph")
			}
			if len(got.Nodes) != len(g.Nodes) {
				t.Fatalf("%d nodes read back, want %d", len(got.Nodes), len(g.Nodes))
			}
			for v, n := range g.Nodes {
				a := got.Nodes[strconv.Itoa(v)]
				want := map[string]any{"x": n.X, "y": n.Y, "z": n.Z, "module": float64(n.Module), "degree": float64(n.Degree),
					"strength": n.Strength, "hub": n.Hub, "atlas_label": n.Label}
				if format == "graphml" && n.Label == "" {
					delete(want, "atlas_label") // GraphML writes no value for a node outside every region
				}
				if len(a) != len(want) {
					t.Errorf("node %d: attributes %v, want %v", v, a, want)
				}
				for k, w := range want {
					if a[k] != w {
						t.Errorf("node %d %s = %#v, want %#v", v, k, a[k], w)
					}
				}
			}
			if int64(len(got.Edges)) != g.Network.Edges() {
				t.Fatalf("%d edges read back, want %d", len(got.Edges), g.Network.Edges())
			}
			want := map[[2]int]float32{}
			for i := 0; i < g.Network.N; i++ {
				cols, ws := g.Network.Row(i)
				for p, j := range cols {
					want[[2]int{i, int(j)}] = ws[p]
				}
			}
			for _, e := range got.Edges {
				i, j := int(e[0]), int(e[1])
				if i > j {
					i, j = j, i
				}
				w, ok := want[[2]int{i, j}]
				if !ok || float32(e[2]) != w {
					t.Errorf("edge %d–%d weight %v: want %v (present %v)", i, j, e[2], w, ok)
				}
				delete(want, [2]int{i, j})
			}
			if len(want) != 0 {
				t.Errorf("edges not read back: %v", want)
			}
		})
	}
}

// TestBrainNetNode: six columns by BrainNet Viewer's rules (textscan '%f %f %f %f %f %s'): five
// numbers and one whitespace-free label, "-" for none.
func TestBrainNetNode(t *testing.T) {
	g := fixture()
	var buf bytes.Buffer
	if err := WriteBrainNetNode(&buf, g.Nodes); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(g.Nodes) {
		t.Fatalf("%d lines for %d nodes", len(lines), len(g.Nodes))
	}
	for v, line := range lines {
		f := strings.Fields(line)
		if len(f) != 6 {
			t.Fatalf("line %d %q: %d columns, want 6", v+1, line, len(f))
		}
		for c := 0; c < 5; c++ {
			x, err := strconv.ParseFloat(f[c], 64)
			if err != nil || math.IsNaN(x) {
				t.Errorf("line %d column %d %q is not a number", v+1, c+1, f[c])
			}
		}
		if x, _ := strconv.ParseFloat(f[0], 64); math.Abs(x-g.Nodes[v].X) > 0.005 {
			t.Errorf("line %d x = %v, want %v", v+1, x, g.Nodes[v].X)
		}
		if want := BrainNetLabel(g.Nodes[v].Label); f[5] != want {
			t.Errorf("line %d label %q, want %q", v+1, f[5], want)
		}
	}
	if f := strings.Fields(lines[2]); f[5] != "Cingulum_Ant_R" || f[3] != "2" {
		t.Errorf("line 3: %q", lines[2])
	}
	if f := strings.Fields(lines[3]); f[5] != "-" {
		t.Errorf("a node without a label: %q, want -", f[5])
	}
	if err := WriteBrainNetNode(&buf, []Node{{Degree: 1}}); err == nil {
		t.Error("a node without a position was written")
	}
}

// TestBrainNetEdge: the dense matrix is symmetric and holds every edge's weight both ways.
func TestBrainNetEdge(t *testing.T) {
	g := fixture()
	var buf bytes.Buffer
	if err := WriteBrainNetEdge(&buf, g.Network); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	m := make([][]float64, len(lines))
	for r, line := range lines {
		for _, s := range strings.Split(line, "\t") {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			m[r] = append(m[r], x)
		}
		if len(m[r]) != g.Network.N {
			t.Fatalf("row %d has %d columns", r, len(m[r]))
		}
	}
	var nonzero int
	for i := range m {
		for j := range m {
			if m[i][j] != m[j][i] {
				t.Errorf("not symmetric at %d,%d", i, j)
			}
			if m[i][j] != 0 {
				nonzero++
			}
		}
	}
	if int64(nonzero) != 2*g.Network.Edges() || float32(m[3][0]) != -0.375 || float32(m[1][2]) != 0.8125 {
		t.Errorf("matrix %v", m)
	}
}
