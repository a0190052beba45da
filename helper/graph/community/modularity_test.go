package community

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// Two triangles joined by one edge, split into the two triangles: m = 7, each module has
// L_c = 6 and K_c = 7, so Q = 2 (6/14 − (7/14)²) = 5/14.
func TestModularityTwoTriangles(t *testing.T) {
	g := fromEdges(6, []edge{{0, 1, 1}, {0, 2, 1}, {1, 2, 1}, {3, 4, 1}, {3, 5, 1}, {4, 5, 1}, {2, 3, 1}})
	q, err := Modularity(g, []int{0, 0, 0, 1, 1, 1}, ModularityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := 5.0 / 14; math.Abs(q-want) > 1e-15 {
		t.Fatalf("Q = %.17g, want 5/14 = %.17g", q, want)
	}
	// Labels are names only: any non-negative relabelling gives the same Q.
	q2, err := Modularity(g, []int{42, 42, 42, 7, 7, 7}, ModularityOptions{})
	if err != nil || q2 != q {
		t.Fatalf("relabelled Q = %v (%v), want %v", q2, err, q)
	}
	// One module: Q = 1 − 1 = 0.
	if q1, _ := Modularity(g, make([]int, 6), ModularityOptions{}); math.Abs(q1) > 1e-15 {
		t.Fatalf("single-module Q = %v, want 0", q1)
	}
}

func TestModularityErrors(t *testing.T) {
	g := fromEdges(3, []edge{{0, 1, 1}})
	if _, err := Modularity(g, []int{0, 1}, ModularityOptions{}); err == nil {
		t.Fatal("short membership accepted")
	}
	if _, err := Modularity(g, []int{0, -1, 0}, ModularityOptions{}); err == nil {
		t.Fatal("negative label accepted")
	}
	empty := fromEdges(3, nil)
	if _, err := Modularity(empty, []int{0, 1, 2}, ModularityOptions{}); !errors.Is(err, ErrNoEdges) {
		t.Fatalf("edgeless graph: err = %v, want ErrNoEdges", err)
	}
	bad := fromEdges(3, []edge{{0, 1, -0.5}, {1, 2, 1}})
	if _, err := Modularity(bad, []int{0, 0, 1}, ModularityOptions{Weighted: true}); err == nil {
		t.Fatal("negative weight accepted for weighted modularity")
	}
	broken := &graph.Graph{N: 2, Offsets: []int64{0, 1, 2}, Adj: []int32{1, 5}}
	if _, err := Modularity(broken, []int{0, 0}, ModularityOptions{}); err == nil {
		t.Fatal("out-of-range neighbour accepted")
	}
}

// Q equals igraph's Graph.modularity to 1e-12 for the planted partition, a random partition
// and a perturbed one, binary and weighted, at γ = 1; at γ = 0.5 the reference is the dense
// double sum (1/2m) Σ_ij (A_ij − γ k_i k_j/2m) δ(c_i, c_j) in numpy, because python-igraph
// 0.10.2's modularity() ignores its resolution argument.
func TestModularityMatchesIgraph(t *testing.T) {
	requireIgraph(t)
	n, edges, truth := plantedPartition([]int{60, 50, 40, 30}, 0.25, 0.03, 11)
	g := fromEdges(n, edges)
	r := rand.New(rand.NewPCG(3, 4))
	random := make([]int, n)
	perturbed := append([]int(nil), truth...)
	for i := range random {
		random[i] = r.IntN(6)
		if r.Float64() < 0.2 {
			perturbed[i] = r.IntN(4)
		}
	}
	parts := [][]int{truth, random, perturbed}
	dir := t.TempDir()
	edgesPath := writeEdges(t, dir, n, edges)
	partsPath := writeJSON(t, dir, "parts.json", parts)
	out := pyref.Run(t, igraphPreamble+`
g = load(sys.argv[1]); parts = json.load(open(sys.argv[2]))
res = []
for p in parts:
    row = []
    p = np.array(p)
    for w in (None, "weight"):
        A = np.array(g.get_adjacency_sparse(attribute=w).todense(), dtype=float)
        k = A.sum(1); twom = k.sum(); same = p[:, None] == p[None, :]
        row.append(g.modularity(p.tolist(), weights=w))
        row.append(float(((A - 0.5 * np.outer(k, k) / twom) * same).sum() / twom))
    res.append(row)
print(json.dumps(res))
`, edgesPath, partsPath)
	var want [][]float64
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("reference output %q: %v", out, err)
	}
	for pi, p := range parts {
		k := 0
		for _, weighted := range []bool{false, true} {
			for _, gamma := range []float64{1, 0.5} {
				got, err := Modularity(g, p, ModularityOptions{Weighted: weighted, Resolution: gamma})
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(got-want[pi][k]) > 1e-12 {
					t.Errorf("partition %d weighted=%v γ=%v: Q = %.15f, igraph %.15f", pi, weighted, gamma, got, want[pi][k])
				}
				k++
			}
		}
	}
}
