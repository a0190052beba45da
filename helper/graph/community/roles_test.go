package community

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// Participation coefficient and within-module z equal a numpy recomputation from the
// adjacency matrix (Guimerà & Amaral's definitions, bctpy's conventions) to 1e-12.
func TestRolesMatchNumpy(t *testing.T) {
	pyref.Require(t, "numpy")
	n, edges, truth := plantedPartition([]int{70, 50, 40, 1}, 0.2, 0.04, 5)
	// A module-less isolated node (the last one) and a perturbed partition exercise k_i = 0
	// and σ = 0.
	r := rand.New(rand.NewPCG(8, 9))
	part := append([]int(nil), truth...)
	for i := range part {
		if r.Float64() < 0.1 {
			part[i] = r.IntN(3)
		}
	}
	part[n-1] = 9
	g := fromEdges(n, edges)
	dir := t.TempDir()
	edgesPath := writeEdges(t, dir, n, edges)
	partPath := writeJSON(t, dir, "part.json", part)
	out := pyref.Run(t, `
import sys, json, numpy as np
with open(sys.argv[1]) as f:
    n = int(f.readline()); rows = [l.split() for l in f if l.strip()]
part = np.array(json.load(open(sys.argv[2])))
res = {}
for name, weighted in (("binary", False), ("weighted", True)):
    A = np.zeros((n, n))
    for r in rows:
        i, j, w = int(r[0]), int(r[1]), float(np.float32(r[2]))
        A[i, j] = A[j, i] = w if weighted else 1.0
    k = A.sum(1)
    P = np.zeros(n); Z = np.zeros(n)
    for i in range(n):
        if k[i] > 0:
            P[i] = 1 - sum((A[i, part == s].sum() / k[i]) ** 2 for s in np.unique(part))
    for s in np.unique(part):
        idx = np.where(part == s)[0]
        kap = A[np.ix_(idx, idx)].sum(1)
        sd = kap.std()
        Z[idx] = (kap - kap.mean()) / sd if sd > 0 else 0.0
    res[name] = {"P": P.tolist(), "Z": Z.tolist()}
print(json.dumps(res))
`, edgesPath, partPath)
	var want map[string]struct{ P, Z []float64 }
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("reference output: %v", err)
	}
	for _, weighted := range []bool{false, true} {
		name := map[bool]string{false: "binary", true: "weighted"}[weighted]
		p, err := ParticipationCoefficient(g, part, weighted)
		if err != nil {
			t.Fatal(err)
		}
		z, err := WithinModuleDegreeZScore(g, part, weighted)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if math.Abs(p[i]-want[name].P[i]) > 1e-12 {
				t.Errorf("%s P[%d] = %.15f, numpy %.15f", name, i, p[i], want[name].P[i])
			}
			if math.Abs(z[i]-want[name].Z[i]) > 1e-12 {
				t.Errorf("%s z[%d] = %.15f, numpy %.15f", name, i, z[i], want[name].Z[i])
			}
		}
	}
}

func TestClassifyRoles(t *testing.T) {
	z := []float64{0, 0, 0, 0, 3, 3, 3, 1}
	p := []float64{0.05, 0.3, 0.7, 0.9, 0.3, 0.5, 0.8, 0.5}
	want := []Role{UltraPeripheral, Peripheral, NonHubConnector, NonHubKinless, ProvincialHub, ConnectorHub, KinlessHub, Peripheral}
	got, err := ClassifyRoles(z, p, nil, DefaultRoleThresholds)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("node %d (z=%v, P=%v): %v, want %v", i, z[i], p[i], got[i], want[i])
		}
	}
	// The pipeline's own hub flags replace z ≥ 2.5.
	hubs := []bool{false, false, false, false, false, false, false, true}
	got, err = ClassifyRoles(z, p, hubs, DefaultRoleThresholds)
	if err != nil {
		t.Fatal(err)
	}
	if got[7] != ConnectorHub || got[4] != Peripheral || !got[7].IsHub() || got[4].IsHub() {
		t.Errorf("with hub flags: node 7 %v, node 4 %v", got[7], got[4])
	}
	if _, err := ClassifyRoles(z, p[:3], nil, DefaultRoleThresholds); err == nil {
		t.Error("length mismatch accepted")
	}
}
