package community

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// edge is one undirected edge i < j with its weight.
type edge struct {
	i, j int32
	w    float32
}

// fromEdges builds the symmetric CSR graph of an undirected edge list (no duplicates, i ≠ j).
func fromEdges(n int, edges []edge) *graph.Graph {
	deg := make([]int64, n)
	for _, e := range edges {
		deg[e.i]++
		deg[e.j]++
	}
	g := &graph.Graph{N: n, Offsets: make([]int64, n+1)}
	for i := 0; i < n; i++ {
		g.Offsets[i+1] = g.Offsets[i] + deg[i]
	}
	g.Adj = make([]int32, g.Offsets[n])
	g.Weights = make([]float32, g.Offsets[n])
	pos := append([]int64(nil), g.Offsets[:n]...)
	for _, e := range edges {
		g.Adj[pos[e.i]], g.Weights[pos[e.i]] = e.j, e.w
		pos[e.i]++
		g.Adj[pos[e.j]], g.Weights[pos[e.j]] = e.i, e.w
		pos[e.j]++
	}
	for i := 0; i < n; i++ {
		a, b := g.Offsets[i], g.Offsets[i+1]
		idx := make([]int, b-a)
		for k := range idx {
			idx[k] = k
		}
		adj := append([]int32(nil), g.Adj[a:b]...)
		ws := append([]float32(nil), g.Weights[a:b]...)
		sort.Slice(idx, func(x, y int) bool { return adj[idx[x]] < adj[idx[y]] })
		for k, o := range idx {
			g.Adj[a+int64(k)], g.Weights[a+int64(k)] = adj[o], ws[o]
		}
	}
	return g
}

// plantedPartition draws a stochastic block model: groups of the given sizes, each pair linked
// with probability pIn inside a group and pOut between groups, weights uniform in (0.2, 1].
func plantedPartition(sizes []int, pIn, pOut float64, seed uint64) (int, []edge, []int) {
	r := rand.New(rand.NewPCG(seed, 7))
	var truth []int
	for c, s := range sizes {
		for k := 0; k < s; k++ {
			truth = append(truth, c)
		}
	}
	n := len(truth)
	var edges []edge
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			p := pOut
			if truth[i] == truth[j] {
				p = pIn
			}
			if r.Float64() < p {
				edges = append(edges, edge{int32(i), int32(j), float32(0.2 + 0.8*r.Float64())})
			}
		}
	}
	return n, edges, truth
}

// writeEdges stores "i j w" lines for the Python reference.
func writeEdges(t testing.TB, dir string, n int, edges []edge) string {
	t.Helper()
	path := filepath.Join(dir, "edges.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "%d\n", n)
	for _, e := range edges {
		fmt.Fprintf(w, "%d %d %.9g\n", e.i, e.j, e.w)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// readEdges loads the "n" header and "i j w" lines that writeEdges (or a Python script) wrote.
func readEdges(t testing.TB, path string) (int, []edge) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if !sc.Scan() {
		t.Fatalf("%s: empty edge list", path)
	}
	n, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	if err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	var edges []edge
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		i, _ := strconv.Atoi(fs[0])
		j, _ := strconv.Atoi(fs[1])
		w := 1.0
		if len(fs) > 2 {
			w, _ = strconv.ParseFloat(fs[2], 64)
		}
		edges = append(edges, edge{int32(i), int32(j), float32(w)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n, edges
}

// writeJSON stores v as JSON in dir/name.
func writeJSON(t testing.TB, dir, name string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// igraphPreamble loads the edge list written by writeEdges as an igraph Graph g with edge
// attribute "weight".
const igraphPreamble = `
import sys, json, numpy as np, igraph as ig
def load(path):
    with open(path) as f:
        n = int(f.readline())
        rows = [l.split() for l in f if l.strip()]
    e = [(int(r[0]), int(r[1])) for r in rows]
    w = [float(np.float32(r[2])) for r in rows]
    g = ig.Graph(n=n, edges=e, directed=False)
    g.es["weight"] = w
    return g
`

// median of a copy of xs.
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// requireIgraph skips (or, strict, fails) when the Python reference is missing.
func requireIgraph(t testing.TB) {
	t.Helper()
	pyref.Require(t, "numpy", "igraph")
}
