package synth

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// What other packages' tests rely on: at density 1 %, the planted hubs are the highest-degree
// nodes, and Louvain finds the planted modules. Checked on the MNI mask at 8 mm (3,735 voxels,
// mean degree 37), the smallest grid the recovery is meant to hold on.

func TestHubsHaveTheHighestDegree(t *testing.T) {
	if raceEnabled {
		t.Skip("O(N²·L) single-goroutine check; under -race TestRecoveryIgraph checks the same claim")
	}
	m, a := testMask(t, 8)
	p := DefaultParams()
	s, tr, err := Generate(m, a, p)
	if err != nil {
		t.Fatal(err)
	}
	deg := densityDegrees(normalized(s), 0.01)
	recall, minHub, maxOrdinary := hubRecall(deg, tr.Hubs)
	mean, sd := meanSD(deg)
	t.Logf("N %d: degree mean %.1f, SD %.1f; hubs ≥ %d, ordinary voxels ≤ %d; top-%d recall %.2f", s.N, mean, sd, minHub, maxOrdinary, len(tr.Hubs), recall)
	if recall < 0.9 {
		t.Errorf("only %.2f of the planted hubs are among the %d highest-degree nodes", recall, len(tr.Hubs))
	}
	// Wang et al.'s hub criterion, degree > mean + 1 SD, must catch every planted hub.
	if float64(minHub) <= mean+sd {
		t.Errorf("weakest hub has degree %d, not above mean + 1 SD = %.1f", minHub, mean+sd)
	}
}

// hubRecall is the share of planted hubs among the len(hubs) highest-degree nodes (ties broken by
// node index), with the smallest hub degree and the largest ordinary degree.
func hubRecall(deg []int, hubs []int) (recall float64, minHub, maxOrdinary int) {
	order := make([]int, len(deg))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return deg[b] - deg[a] })
	isHub := make([]bool, len(deg))
	for _, h := range hubs {
		isHub[h] = true
	}
	hit := 0
	for _, v := range order[:len(hubs)] {
		if isHub[v] {
			hit++
		}
	}
	minHub = int(^uint(0) >> 1)
	for v, d := range deg {
		if isHub[v] {
			minHub = min(minHub, d)
		} else {
			maxOrdinary = max(maxOrdinary, d)
		}
	}
	return float64(hit) / float64(len(hubs)), minHub, maxOrdinary
}

func meanSD(x []int) (float64, float64) {
	mean := 0.0
	for _, v := range x {
		mean += float64(v)
	}
	mean /= float64(len(x))
	ss := 0.0
	for _, v := range x {
		ss += (float64(v) - mean) * (float64(v) - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)))
}

// TestRecoveryIgraph builds the density-1 % network with numpy (np.corrcoef) and runs igraph's
// Louvain (community_multilevel) on it: the modules it finds must match the planted ones
// (NMI ≥ 0.9) and the highest-degree nodes must be the planted hubs.
func TestRecoveryIgraph(t *testing.T) {
	pyref.Require(t, "numpy", "igraph")
	m, a := testMask(t, 8)
	p := DefaultParams()
	s, tr, err := Generate(m, a, p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, labels, hubs := filepath.Join(dir, "x.f32"), filepath.Join(dir, "labels.txt"), filepath.Join(dir, "hubs.txt")
	buf := make([]byte, 0, 4*len(s.Data))
	for _, x := range s.Data {
		buf = appendF32(buf, x)
	}
	if err := os.WriteFile(data, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	var lb, hb strings.Builder
	for _, l := range tr.Modules {
		lb.WriteString(strconv.Itoa(int(l)) + "\n")
	}
	for _, h := range tr.Hubs {
		hb.WriteString(strconv.Itoa(h) + "\n")
	}
	if err := os.WriteFile(labels, []byte(lb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hubs, []byte(hb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := pyref.Run(t, `
import sys, random, numpy as np, igraph as ig
L = int(sys.argv[2])
x = np.fromfile(sys.argv[1], '<f4').reshape(-1, L).astype(np.float64)
truth = np.loadtxt(sys.argv[3], dtype=int); hubs = np.loadtxt(sys.argv[4], dtype=int)
r = np.corrcoef(x); n = len(r)
iu = np.triu_indices(n, 1); vals = r[iu]
k = int(round(0.01 * len(vals)))
keep = np.argsort(-vals, kind='stable')[:k]
g = ig.Graph(n=n, edges=list(zip(iu[0][keep].tolist(), iu[1][keep].tolist())))
deg = np.array(g.degree())
top = np.argsort(-deg, kind='stable')[:len(hubs)]
recall = len(set(top.tolist()) & set(hubs.tolist())) / len(hubs)
random.seed(1)  # python-igraph draws from Python's random module: one fixed Louvain run
part = g.community_multilevel()
nmi = ig.compare_communities(part.membership, truth.tolist(), method='nmi')
print(recall, nmi, int((deg == 0).sum()))
`, data, strconv.Itoa(s.L), labels, hubs)
	f := strings.Fields(string(out))
	if len(f) != 3 {
		t.Fatalf("python said %q", out)
	}
	recall, _ := strconv.ParseFloat(f[0], 64)
	nmi, _ := strconv.ParseFloat(f[1], 64)
	t.Logf("igraph: top-%d degree recall %.2f, Louvain NMI %.3f, %s isolated nodes", len(tr.Hubs), recall, nmi, f[2])
	if recall < 0.9 || nmi < 0.9 {
		t.Errorf("recovery by numpy + igraph: hub recall %.2f (want ≥ 0.9), Louvain NMI %.3f (want ≥ 0.9)", recall, nmi)
	}
}
