package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/ipc/settings"
)

// checkExports is run by networkx, nibabel and pandas on a bundle: the GraphML and GEXF hold the
// bundle's nodes and edges (edges.tsv) with nodes.tsv's positions, degree as networkx counts
// it, hubs.tsv's hubs and modules.nii.gz's module at each node's voxel; hubs.node lists
// hubs.tsv's hubs in order with BrainNet's six columns; network.edge is the symmetric matrix and
// hubs.edge its rows and columns of the hubs, in hubs.tsv's order.
const checkExports = `
import sys, numpy as np, pandas as pd, nibabel as nib, networkx as nx
d = sys.argv[1]
nodes = pd.read_csv(d + "/nodes.tsv", sep="\t")
edges = pd.read_csv(d + "/edges.tsv", sep="\t")
hubs = pd.read_csv(d + "/hubs.tsv", sep="\t", keep_default_na=False)
mod = np.asarray(nib.load(d + "/modules.nii.gz").dataobj)
hubset = set(hubs.node)
img = nib.load(d + "/modules.nii.gz")
assert img.header.get_intent()[0] == "label", img.header.get_intent()
lut = pd.read_csv(d + "/modules_dseg.tsv", sep="\t")
assert list(lut.columns) == ["index", "name", "color"], lut.columns
assert sorted(set(np.unique(mod)) - {0}) == list(lut["index"]), (np.unique(mod), lut["index"])
assert lut["color"].str.fullmatch("#[0-9a-f]{6}").all()
for g in (nx.read_graphml(d + "/network.graphml"), nx.read_gexf(d + "/network.gexf")):
    assert not g.is_directed()
    assert g.number_of_nodes() == len(nodes), (g.number_of_nodes(), len(nodes))
    assert g.number_of_edges() == len(edges), (g.number_of_edges(), len(edges))
    for i, j, w in zip(edges.i, edges.j, edges.weight):
        assert np.float32(g[str(i)][str(j)]["weight"]) == np.float32(w), (i, j)
    for r in nodes.itertuples():
        a = g.nodes[str(r.node)]
        assert abs(a["x"] - r.x_mm) < 1e-6 and abs(a["y"] - r.y_mm) < 1e-6 and abs(a["z"] - r.z_mm) < 1e-6, r.node
        assert a["degree"] == g.degree(str(r.node)), r.node
        assert a["module"] == mod[r.i, r.j, r.k], (r.node, a["module"], mod[r.i, r.j, r.k])
        assert a["hub"] == (r.node in hubset), r.node
lines = open(d + "/hubs.node").read().splitlines()
assert len(lines) == len(hubs), (len(lines), len(hubs))
for l, h in zip(lines, hubs.itertuples()):
    f = l.split()
    assert len(f) == 6, l
    x, y, z, c, s = map(float, f[:5])
    assert abs(x - h.x_mm) < 0.006 and abs(z - h.z_mm) < 0.006, (l, h)
    assert s == h.degree, l
    lab = h.atlas_label.replace(" ", "_") or "-"
    assert f[5] == lab, (f[5], lab)
import os
assert os.path.exists(d + "/network.edge") == (len(nodes) <= 1000), len(nodes)
if len(nodes) <= 1000:
  A = np.loadtxt(d + "/network.edge")
  assert A.shape == (len(nodes), len(nodes)) and (A == A.T).all()
  assert np.count_nonzero(A) == 2 * len(edges)
# hubs.edge: the network among hubs.tsv's hubs, in that order, from network.npz
import scipy.sparse as sp
assert os.path.exists(d + "/hubs.edge") == (len(hubs) <= 1000), len(hubs)
U = sp.load_npz(d + "/network.npz"); F = (U + U.T).toarray()
idx = list(hubs.node)
if len(hubs) <= 1000:
  H = np.loadtxt(d + "/hubs.edge", ndmin=2)
  assert H.shape == (len(idx), len(idx)), H.shape
  assert (H.astype(np.float32) == F[np.ix_(idx, idx)].astype(np.float32)).all()
# hub_links.tsv: the strongest links among the hubs (at most 2000), strongest first
L = pd.read_csv(d + "/hub_links.tsv", sep="\t")
assert list(L.columns) == ["hub_a", "hub_b", "node_a", "node_b", "weight"], L.columns
S = F[np.ix_(idx, idx)]
a, b = np.triu_indices(len(idx), 1)
w = S[a, b]; nz = w != 0
want = sorted(zip(-np.abs(w[nz]).astype(np.float32), a[nz], b[nz]))[:2000]
assert len(L) == len(want), (len(L), len(want))
for r, (nw_, ea, eb) in zip(L.itertuples(), want):
    assert (r.hub_a, r.hub_b) == (ea, eb), (r, ea, eb)
    assert (r.node_a, r.node_b) == (idx[ea], idx[eb]), r
    assert np.float32(r.weight) == np.float32(S[ea, eb]), r
print("ok", len(nodes), len(edges), len(hubs))
`

const checkSymmetric = `
import sys, json, numpy as np, scipy.sparse as sp
up, sym = sys.argv[1], sys.argv[2]
U = sp.load_npz(up + "/network.npz"); S = sp.load_npz(sym + "/network.npz")
assert json.load(open(up + "/network.json"))["matrix"] == "upper"
j = json.load(open(sym + "/network.json"))
assert j["matrix"] == "symmetric" and j["stored_entries"] == 2 * j["edges"] == S.nnz, j
assert abs(S - S.T).max() == 0
assert abs(sp.triu(S, k=1) - U).max() == 0 and abs(S - (U + U.T)).max() == 0
assert all((np.diff(S.indices[S.indptr[i]:S.indptr[i + 1]]) > 0).all() for i in range(S.shape[0])), "rows not sorted"
print("ok", U.nnz, S.nnz)
`

// TestExportsReadBack: a run's default exports on a phantom open in networkx with the
// bundle's own values (checkExports), and --export none writes none of them.
func TestExportsReadBack(t *testing.T) {
	pyref.Require(t, "numpy", "pandas", "nibabel", "networkx")
	const aal = "/usr/share/mricron/templates/aal.nii.gz"
	scanPath, maskPath, _ := phantom(t, 13) // 13 mm: under 1,000 nodes, so network.edge is written too
	cfg := Defaults()
	cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics = scanPath, maskPath, filepath.Join(t.TempDir(), "b"), "cpu", settings.MetricsBasic
	if _, err := os.Stat(aal); err == nil {
		cfg.Atlas = aal
	}
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := string(pyref.Run(t, checkExports, res.Dir))
	if !strings.HasPrefix(out, "ok") {
		t.Fatal(out)
	}
	t.Log(strings.TrimSpace(out))

	// --symmetric-npz: scipy loads the whole matrix (A == A.T, and its upper triangle is the
	// default bundle's network.npz), network.json says so, and ReadNetwork reads it back.
	cfg.Out, cfg.SymmetricNPZ = filepath.Join(t.TempDir(), "sym"), true
	sym, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	out = string(pyref.Run(t, checkSymmetric, res.Dir, sym.Dir))
	if !strings.HasPrefix(out, "ok") {
		t.Fatal(out)
	}
	nw, err := bundle.ReadNetwork(filepath.Join(sym.Dir, "network.npz"))
	if err != nil {
		t.Fatal(err)
	}
	up, err := bundle.ReadNetwork(filepath.Join(res.Dir, "network.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(nw.Indptr, up.Indptr) || !slices.Equal(nw.Indices, up.Indices) || !slices.Equal(nw.Weights, up.Weights) {
		t.Error("ReadNetwork of the symmetric network.npz differs from the upper-triangle one")
	}
	cfg.SymmetricNPZ = false

	cfg.Out, cfg.Export = filepath.Join(t.TempDir(), "none"), ExportNone
	res, err = Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"network.graphml", "network.gexf", "hubs.node", "network.edge"} {
		if _, err := os.Stat(filepath.Join(res.Dir, f)); err == nil {
			t.Errorf("--export none wrote %s", f)
		}
	}
	cfg.Export = "graphml,pajek"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "pajek") {
		t.Errorf("--export graphml,pajek: %v", err)
	}
}
