package graph

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/internal/shareddata"
)

// refScript computes every exact measure with python-igraph and networkx on an edge list
// ("n" on the first line, then "u v w" per edge), or first builds the list from a real scan:
// Pearson r (numpy.corrcoef) of the masked Haxby slice, top 1 % of the upper triangle, weights
// rounded to float32 as HubScope stores them. It prints one JSON object.
const refScript = `
import sys, json, numpy as np, igraph as ig, networkx as nx
mode, path = sys.argv[1], sys.argv[2]
if mode == "scan":
    import nibabel as nib
    bold = np.asarray(nib.load(sys.argv[3]).dataobj, dtype=np.float64)
    mask = np.asarray(nib.load(sys.argv[4]).dataobj) > 0
    X = bold[mask]                       # voxels x time, in the mask's C order
    X = X[X.std(axis=1) > 0]
    R = np.corrcoef(X); n = R.shape[0]
    iu = np.triu_indices(n, 1); v = R[iu]
    k = int(round(0.01 * v.size)); sel = np.argsort(-v, kind="stable")[:k]
    rows, cols = iu[0][sel], iu[1][sel]; ws = v[sel].astype(np.float32).astype(np.float64)
    with open(path, "w") as f:
        f.write("%d\n" % n)
        for a, b, w in zip(rows, cols, ws): f.write("%d %d %r\n" % (a, b, float(w)))
with open(path) as f:
    n = int(f.readline()); E = []; W = []
    for line in f:
        a, b, w = line.split(); E.append((int(a), int(b))); W.append(float(w))
G = ig.Graph(n=n, edges=E, directed=False)
H = nx.Graph(); H.add_nodes_from(range(n))
for (a, b), w in zip(E, W): H.add_edge(a, b, weight=w)
out = {"n": n}
out["degree"] = G.degree()
out["clustering"] = [0.0 if np.isnan(c) else c for c in G.transitivity_local_undirected(mode="zero")]
out["avg_clustering"] = G.transitivity_avglocal_undirected(mode="zero")
out["nx_avg_clustering"] = nx.average_clustering(H)
apl = G.average_path_length(directed=False, unconn=True)
out["apl"] = None if np.isnan(apl) else apl
out["global_efficiency"] = nx.global_efficiency(H)
out["betweenness"] = G.betweenness(directed=False)
nb = nx.betweenness_centrality(H, normalized=True); out["nx_betweenness"] = [nb[i] for i in range(n)]
out["local_efficiency"] = [nx.global_efficiency(H.subgraph(H[v])) for v in range(n)]
out["nx_local_efficiency"] = nx.local_efficiency(H)
a = G.assortativity_degree(directed=False)
out["assortativity"] = None if np.isnan(a) else a
oc = nx.clustering(H, weight="weight"); out["onnela"] = [oc[i] for i in range(n)]
out["strength"] = [sum(d["weight"] for _, _, d in H.edges(i, data=True)) for i in range(n)]
comps = G.connected_components()
out["components"] = len(comps); out["largest"] = max(len(c) for c in comps)
out["diameter"] = G.diameter(directed=False, unconn=True) if G.ecount() else 0
if G.is_connected() and G.ecount() > 0:
    out["eigenvector"] = G.eigenvector_centrality(directed=False, scale=True)
    A = np.zeros((n, n))
    for a_, b_ in E: A[a_, b_] = A[b_, a_] = 1
    lam, vec = np.linalg.eigh(A); x = np.abs(vec[:, -1]); out["eig_numpy"] = list(x / x.max()); out["eig_lambda"] = lam[-1]
print(json.dumps(out))
`

type refResult struct {
	N                 int       `json:"n"`
	Degree            []int     `json:"degree"`
	Clustering        []float64 `json:"clustering"`
	AvgClustering     float64   `json:"avg_clustering"`
	NxAvgClustering   float64   `json:"nx_avg_clustering"`
	APL               *float64  `json:"apl"`
	GlobalEfficiency  float64   `json:"global_efficiency"`
	Betweenness       []float64 `json:"betweenness"`
	NxBetweenness     []float64 `json:"nx_betweenness"`
	LocalEfficiency   []float64 `json:"local_efficiency"`
	NxLocalEfficiency float64   `json:"nx_local_efficiency"`
	Assortativity     *float64  `json:"assortativity"`
	Onnela            []float64 `json:"onnela"`
	Strength          []float64 `json:"strength"`
	Components        int       `json:"components"`
	Largest           int       `json:"largest"`
	Diameter          int       `json:"diameter"`
	Eigenvector       []float64 `json:"eigenvector"`
	EigNumpy          []float64 `json:"eig_numpy"`
	EigLambda         float64   `json:"eig_lambda"`
}

// writeEdges writes g in refScript's edge-list format; weights as float64 text of the float32
// values so both sides see identical numbers.
func writeEdges(t *testing.T, g *Graph, path string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", g.N)
	for i := 0; i < g.N; i++ {
		for p := g.Offsets[i]; p < g.Offsets[i+1]; p++ {
			j := g.Adj[p]
			if int(j) > i {
				w := 1.0
				if g.Weights != nil {
					w = float64(g.Weights[p])
				}
				fmt.Fprintf(&b, "%d %d %s\n", i, j, strconv.FormatFloat(w, 'g', -1, 64))
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readEdges(t *testing.T, path string) *Graph {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	n, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	if err != nil {
		t.Fatalf("%s: node count: %v", path, err)
	}
	var edges [][2]int32
	var ws []float32
	for sc.Scan() {
		var a, b int32
		var w float64
		if _, err := fmt.Sscan(sc.Text(), &a, &b, &w); err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		edges = append(edges, [2]int32{a, b})
		ws = append(ws, float32(w))
	}
	g, err := FromEdges(n, edges, ws)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}

func runReference(t *testing.T, args ...string) refResult {
	t.Helper()
	var r refResult
	if err := json.Unmarshal(pyref.Run(t, refScript, args...), &r); err != nil {
		t.Fatalf("reference output: %v", err)
	}
	return r
}

// randomGraph is G(n, p) with uniform weights in (0.2, 1], plus `isolated` extra nodes of
// degree zero appended at the end.
func randomGraph(t testing.TB, n int, p float64, isolated int, seed uint64) *Graph {
	rng := rand.New(rand.NewPCG(seed, 1))
	var edges [][2]int32
	var ws []float32
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if rng.Float64() < p {
				edges = append(edges, [2]int32{int32(i), int32(j)})
				ws = append(ws, float32(0.2+0.8*rng.Float64()))
			}
		}
	}
	g, err := FromEdges(n+isolated, edges, ws)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// geometricGraph is a random geometric graph in the unit square (radius r): high clustering,
// long paths and, for small r, several components — the regime where L_p and E_glob differ
// most between conventions.
func geometricGraph(t testing.TB, n int, r float64, seed uint64) *Graph {
	rng := rand.New(rand.NewPCG(seed, 2))
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range xs {
		xs[i], ys[i] = rng.Float64(), rng.Float64()
	}
	var edges [][2]int32
	var ws []float32
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if d := math.Hypot(xs[i]-xs[j], ys[i]-ys[j]); d < r {
				edges = append(edges, [2]int32{int32(i), int32(j)})
				ws = append(ws, float32(1-d/r/2))
			}
		}
	}
	g, err := FromEdges(n, edges, ws)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func close(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func checkSlice(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, reference has %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if !close(got[i], want[i], tol) {
			if bad < 5 {
				t.Errorf("%s[%d] = %.17g, reference %.17g", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ from the reference", what, bad, len(got))
	}
}

func checkAgainstReference(t *testing.T, g *Graph, ref refResult) {
	ctx := context.Background()
	const tol = 1e-9
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if ref.N != g.N {
		t.Fatalf("reference has %d nodes, graph %d", ref.N, g.N)
	}
	for i, k := range Degrees(g) {
		if k != ref.Degree[i] {
			t.Fatalf("degree[%d] = %d, igraph %d", i, k, ref.Degree[i])
		}
	}
	checkSlice(t, "strength", Strengths(g), ref.Strength, tol)
	c, err := ClusteringCoefficients(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	checkSlice(t, "clustering", c, ref.Clustering, tol)
	cp, err := MeanClustering(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if !close(cp, ref.AvgClustering, tol) || !close(cp, ref.NxAvgClustering, tol) {
		t.Errorf("C_p = %.17g, igraph %.17g, networkx %.17g", cp, ref.AvgClustering, ref.NxAvgClustering)
	}
	wc, err := WeightedClusteringCoefficients(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	checkSlice(t, "Onnela clustering", wc, ref.Onnela, tol)

	ps, err := ShortestPaths(ctx, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ref.APL == nil {
		if ps.ConnectedPairs != 0 {
			t.Errorf("igraph finds no connected pair, we find %d", ps.ConnectedPairs)
		}
	} else if !close(ps.CharacteristicPathLength, *ref.APL, tol) {
		t.Errorf("L_p = %.17g, igraph %.17g", ps.CharacteristicPathLength, *ref.APL)
	}
	if !close(ps.GlobalEfficiency, ref.GlobalEfficiency, tol) {
		t.Errorf("E_glob = %.17g, networkx %.17g", ps.GlobalEfficiency, ref.GlobalEfficiency)
	}
	if ps.Diameter != ref.Diameter {
		t.Errorf("diameter = %d, igraph %d", ps.Diameter, ref.Diameter)
	}
	nc, largest, _ := LargestComponent(g)
	if nc != ref.Components || largest != ref.Largest {
		t.Errorf("components %d (largest %d), igraph %d (largest %d)", nc, largest, ref.Components, ref.Largest)
	}

	bc, err := Betweenness(ctx, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSlice(t, "betweenness (igraph)", bc, ref.Betweenness, tol)
	NormalizeBetweenness(bc)
	checkSlice(t, "betweenness (networkx normalized)", bc, ref.NxBetweenness, tol)

	le, err := LocalEfficiencies(ctx, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSlice(t, "local efficiency", le, ref.LocalEfficiency, tol)
	if m := mean(le); !close(m, ref.NxLocalEfficiency, tol) {
		t.Errorf("mean local efficiency %.17g, networkx local_efficiency %.17g", m, ref.NxLocalEfficiency)
	}

	r, ok := DegreeAssortativity(g)
	switch {
	case ref.Assortativity == nil && ok:
		t.Errorf("assortativity %g, igraph says undefined", r)
	case ref.Assortativity != nil && !ok:
		t.Errorf("assortativity undefined, igraph %g", *ref.Assortativity)
	case ok && !close(r, *ref.Assortativity, tol):
		t.Errorf("assortativity %.17g, igraph %.17g", r, *ref.Assortativity)
	}

	if ref.Eigenvector != nil {
		x, lambda, err := EigenvectorCentrality(ctx, g, EigenvectorOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkSlice(t, "eigenvector centrality (igraph)", x, ref.Eigenvector, tol)
		checkSlice(t, "eigenvector centrality (numpy eigh)", x, ref.EigNumpy, tol)
		if !close(lambda, ref.EigLambda, tol) {
			t.Errorf("leading eigenvalue %.17g, numpy %.17g", lambda, ref.EigLambda)
		}
	}
}

func TestMeasuresMatchIgraphNetworkx(t *testing.T) {
	pyref.Require(t, "numpy", "igraph", "networkx")
	cases := []struct {
		name string
		g    *Graph
	}{
		{"gnp_500_connected", randomGraph(t, 500, 0.03, 0, 11)},
		{"gnp_800_sparse_with_isolated", randomGraph(t, 800, 0.002, 7, 12)},
		{"geometric_700_disconnected", geometricGraph(t, 700, 0.06, 13)},
		{"geometric_500_connected", geometricGraph(t, 500, 0.1, 14)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "edges.txt")
			writeEdges(t, tc.g, path)
			ref := runReference(t, "edges", path)
			if strings.HasSuffix(tc.name, "_connected") && ref.Eigenvector == nil {
				t.Fatal("graph meant to be connected is not; eigenvector centrality would go unchecked")
			}
			checkAgainstReference(t, tc.g, ref)
		})
	}
}

// TestMeasuresOnRealScan builds the network of a real resting-state slice (Haxby et al. 2001,
// 530 voxels) in Python and checks every measure on it.
func TestMeasuresOnRealScan(t *testing.T) {
	pyref.Require(t, "numpy", "nibabel", "igraph", "networkx")
	bold := filepath.Join(shareddata.Dir(), "haxby2001_slice_bold.nii.gz")
	mask := filepath.Join(shareddata.Dir(), "haxby2001_slice_mask.nii.gz")
	if _, err := os.Stat(bold); err != nil {
		if pyref.Strict() {
			t.Fatalf("real scan missing: %v", err)
		}
		t.Skipf("real scan missing: %v", err)
	}
	path := filepath.Join(t.TempDir(), "edges.txt")
	ref := runReference(t, "scan", path, bold, mask)
	g := readEdges(t, path)
	if g.Edges() < 1000 {
		t.Fatalf("scan network has only %d edges", g.Edges())
	}
	checkAgainstReference(t, g, ref)

	// Eigenvector centrality on the giant component, against numpy's dense eigh.
	h, _, err := LargestComponentSubgraph(g)
	if err != nil {
		t.Fatal(err)
	}
	p2 := filepath.Join(t.TempDir(), "giant.txt")
	writeEdges(t, h, p2)
	ref2 := runReference(t, "edges", p2)
	if ref2.Eigenvector == nil {
		t.Fatal("reference did not treat the largest component as connected")
	}
	checkAgainstReference(t, h, ref2)
}
