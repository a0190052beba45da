package graph

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// TestParticipationAgainstNumpy: P and within-module z against the Brain Connectivity
// Toolbox's formulas evaluated on the dense adjacency with numpy.
func TestParticipationAgainstNumpy(t *testing.T) {
	pyref.Require(t, "numpy")
	g := geometricGraph(t, 400, 0.08, 95) // spatial graph: modules by position make sense
	rng := rand.New(rand.NewPCG(1, 95))
	module := make([]int32, g.N)
	for i := range module {
		module[i] = int32(rng.IntN(5))
	}
	path := filepath.Join(t.TempDir(), "edges.txt")
	writeEdges(t, g, path)
	labels := make([]string, len(module))
	for i, m := range module {
		labels[i] = fmt.Sprint(m)
	}
	out := pyref.Run(t, `
import sys, json, numpy as np
with open(sys.argv[1]) as f:
    n = int(f.readline()); A = np.zeros((n, n))
    for l in f:
        a, b, _ = l.split(); A[int(a), int(b)] = A[int(b), int(a)] = 1
ci = np.array([int(v) for v in sys.argv[2].split(",")])
k = A.sum(1)
# BCT participation_coef: P = 1 - sum_s (k_is/k_i)^2, 0 where k = 0
Kc2 = sum((A[:, ci == s].sum(1)) ** 2 for s in np.unique(ci))
P = np.where(k > 0, 1 - Kc2 / np.where(k > 0, k, 1) ** 2, 0)
# BCT module_degree_zscore (population SD)
Z = np.zeros(n)
for s in np.unique(ci):
    idx = ci == s; kap = A[np.ix_(idx, idx)].sum(1); sd = kap.std()
    Z[idx] = (kap - kap.mean()) / sd if sd > 0 else 0
print(json.dumps({"p": P.tolist(), "z": Z.tolist()}))
`, path, strings.Join(labels, ","))
	var ref struct{ P, Z []float64 }
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	p, err := ParticipationCoefficients(g, module)
	if err != nil {
		t.Fatal(err)
	}
	z, err := WithinModuleDegreeZ(g, module)
	if err != nil {
		t.Fatal(err)
	}
	checkSlice(t, "participation", p, ref.P, 1e-12)
	checkSlice(t, "within-module z", z, ref.Z, 1e-9)
	if _, err := ParticipationCoefficients(g, module[:10]); err == nil {
		t.Error("short module list accepted")
	}
}
