package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/network"
)

// randomNetwork draws a strict-upper-triangle network with each pair present with probability
// p and weights in (−1, 1), deterministic for a seed. Gaps between edges of a row are
// geometric, so the cost is O(N + E), not O(N²).
func randomNetwork(n int, p float64, seed uint64) *network.Network {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	nw := &network.Network{N: n, Indptr: make([]uint64, n+1), Indices: []uint32{}, Weights: []float32{}}
	for i := 0; i < n; i++ {
		for j := i; p > 0; {
			gap := 1
			if p < 1 {
				gap += int(math.Floor(math.Log(1-rng.Float64()) / math.Log1p(-p)))
			}
			if j += gap; j >= n || gap <= 0 {
				break
			}
			nw.Indices = append(nw.Indices, uint32(j))
			nw.Weights = append(nw.Weights, float32(2*rng.Float64()-1))
		}
		nw.Indptr[i+1] = uint64(len(nw.Indices))
	}
	return nw
}

func equalNetworks(t *testing.T, what string, got, want *network.Network) {
	t.Helper()
	if got.N != want.N {
		t.Fatalf("%s: N = %d, want %d", what, got.N, want.N)
	}
	if len(got.Indptr) != len(want.Indptr) || len(got.Indices) != len(want.Indices) || len(got.Weights) != len(want.Weights) {
		t.Fatalf("%s: lengths indptr %d/%d indices %d/%d weights %d/%d", what,
			len(got.Indptr), len(want.Indptr), len(got.Indices), len(want.Indices), len(got.Weights), len(want.Weights))
	}
	for i := range want.Indptr {
		if got.Indptr[i] != want.Indptr[i] {
			t.Fatalf("%s: indptr[%d] = %d, want %d", what, i, got.Indptr[i], want.Indptr[i])
		}
	}
	for p := range want.Indices {
		if got.Indices[p] != want.Indices[p] {
			t.Fatalf("%s: indices[%d] = %d, want %d", what, p, got.Indices[p], want.Indices[p])
		}
		if math.Float32bits(got.Weights[p]) != math.Float32bits(want.Weights[p]) {
			t.Fatalf("%s: data[%d] = %v, want %v", what, p, got.Weights[p], want.Weights[p])
		}
	}
}

// scipyDump loads an .npz with scipy.sparse.load_npz and prints the matrix's arrays, the
// on-disk dtypes, and whether every member is byte-identical to np.save of what it holds.
const scipyDump = `
import io, json, sys, zipfile
import numpy as np, scipy.sparse as sp
for path in sys.argv[1:]:
  m = sp.load_npz(path)
  z = np.load(path)
  same = {}
  with zipfile.ZipFile(path) as zf:
    for name in zf.namelist():
        f = io.BytesIO(); np.save(f, z[name[:-4]])
        same[name] = zf.read(name) == f.getvalue()
  print(json.dumps({
    "format": m.format, "shape": list(m.shape),
    "indptr": m.indptr.tolist(), "indices": m.indices.tolist(),
    "data_bits": m.data.astype(np.float32).view(np.uint32).tolist(),
    "data_dtype": str(m.data.dtype),
    "disk": {k: str(z[k].dtype) for k in z.files},
    "members": zipfile.ZipFile(path).namelist(),
    "byte_identical": same,
    "sum": float(m.astype(np.float64).sum()),
}))
`

type scipyView struct {
	Format        string            `json:"format"`
	Shape         []int64           `json:"shape"`
	Indptr        []uint64          `json:"indptr"`
	Indices       []uint32          `json:"indices"`
	DataBits      []uint32          `json:"data_bits"`
	DataDtype     string            `json:"data_dtype"`
	Disk          map[string]string `json:"disk"`
	Members       []string          `json:"members"`
	ByteIdentical map[string]bool   `json:"byte_identical"`
	Sum           float64           `json:"sum"`
}

func (v scipyView) network() *network.Network {
	nw := &network.Network{N: int(v.Shape[0]), Indptr: v.Indptr, Indices: v.Indices, Weights: make([]float32, len(v.DataBits))}
	if nw.Indices == nil {
		nw.Indices = []uint32{}
	}
	for i, b := range v.DataBits {
		nw.Weights[i] = math.Float32frombits(b)
	}
	return nw
}

// TestWriteNetworkLoadsInScipy writes networks through a bundle and checks that
// scipy.sparse.load_npz returns exactly the same CSR matrix, with scipy's own on-disk dtypes,
// each member byte-identical to what np.save writes for it.
func TestWriteNetworkLoadsInScipy(t *testing.T) {
	pyref.Require(t, "numpy", "scipy")
	cases := []struct {
		name     string
		nw       *network.Network
		compress bool
		wide     bool
	}{
		{"N=1", randomNetwork(1, 0, 1), true, false},
		{"N=0", randomNetwork(0, 0, 1), false, false},
		{"E=0", randomNetwork(40, 0, 2), true, false},
		{"dense-ish stored", randomNetwork(150, 0.2, 3), false, false},
		{"sparse deflated", randomNetwork(300, 0.02, 4), true, false},
		{"int64 indices", randomNetwork(120, 0.1, 5), true, true},
	}
	// One Python process for all cases: interpreter start-up dominates the test's time.
	dir := t.TempDir()
	var paths []string
	for i, c := range cases {
		path := filepath.Join(dir, fmt.Sprintf("case%d.npz", i))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeNPZWith(f, c.nw, c.compress, c.wide); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	lines := strings.Split(strings.TrimSpace(string(pyref.Run(t, scipyDump, paths...))), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("python printed %d results for %d files", len(lines), len(cases))
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var v scipyView
			if err := json.Unmarshal([]byte(lines[i]), &v); err != nil {
				t.Fatal(err)
			}
			if v.Format != "csr" || len(v.Shape) != 2 || v.Shape[0] != int64(c.nw.N) || v.Shape[1] != int64(c.nw.N) {
				t.Fatalf("scipy sees %s %v, want csr [%d %d]", v.Format, v.Shape, c.nw.N, c.nw.N)
			}
			if strings.Join(v.Members, ",") != "indices.npy,indptr.npy,format.npy,shape.npy,data.npy" {
				t.Errorf("members %v, want scipy's order", v.Members)
			}
			idx := "int32"
			if c.wide {
				idx = "int64"
			}
			if v.Disk["indices"] != idx || v.Disk["indptr"] != idx || v.Disk["data"] != "float32" ||
				v.Disk["shape"] != "int64" || v.Disk["format"] != "|S3" || v.DataDtype != "float32" {
				t.Errorf("on-disk dtypes %v (data loaded as %s), want %s indices, float32 data, |S3 format", v.Disk, v.DataDtype, idx)
			}
			for name, same := range v.ByteIdentical {
				if !same {
					t.Errorf("%s differs from np.save's bytes for the same array", name)
				}
			}
			equalNetworks(t, "scipy.sparse.load_npz", v.network(), c.nw)
			var sum float64
			for _, w := range c.nw.Weights {
				sum += float64(w)
			}
			if math.Abs(sum-v.Sum) > 1e-9*(1+math.Abs(sum)) {
				t.Errorf("scipy sum %v, ours %v", v.Sum, sum)
			}
			back, err := ReadNetwork(paths[i])
			if err != nil {
				t.Fatal(err)
			}
			equalNetworks(t, "ReadNetwork", back, c.nw)
		})
	}
}

// TestReadNetworkReadsScipy reads files written by scipy.sparse.save_npz itself, in the dtypes
// other tools produce, and refuses matrices that are not a strict upper triangle in CSR.
func TestReadNetworkReadsScipy(t *testing.T) {
	pyref.Require(t, "numpy", "scipy")
	dir := t.TempDir()
	out := pyref.Run(t, `
import json, os, sys
import numpy as np, scipy.sparse as sp
d = sys.argv[1]
rng = np.random.default_rng(7)
a = sp.random(257, 257, density=0.05, random_state=rng, dtype=np.float64)
a = sp.triu(a + a.T, k=1).tocsr()
a.data = (a.data * 2 - 1)
a.sort_indices()
f32 = a.astype(np.float32)
sp.save_npz(os.path.join(d, 'compressed.npz'), f32)
sp.save_npz(os.path.join(d, 'stored.npz'), f32, compressed=False)
sp.save_npz(os.path.join(d, 'float64.npz'), a)
w = f32.copy(); w.indices = w.indices.astype(np.int64); w.indptr = w.indptr.astype(np.int64)
sp.save_npz(os.path.join(d, 'int64.npz'), w)
u = f32.copy(); u.indices = u.indices.astype(np.uint32); u.indptr = u.indptr.astype(np.uint64)
np.savez(os.path.join(d, 'unsigned.npz'), indices=u.indices, indptr=u.indptr, format=np.array('csr'), shape=np.array(u.shape), data=u.data)
sp.save_npz(os.path.join(d, 'csc.npz'), f32.tocsc())
sp.save_npz(os.path.join(d, 'symmetric.npz'), (f32 + f32.T).tocsr())
sp.save_npz(os.path.join(d, 'asymmetric.npz'), (f32 + 2 * f32.T).tocsr())
sp.save_npz(os.path.join(d, 'rect.npz'), sp.random(3, 4, density=0.5, format='csr', dtype=np.float32, random_state=rng))
np.savez(os.path.join(d, 'plain.npz'), x=np.arange(3))
print(json.dumps({"shape": list(f32.shape), "indptr": f32.indptr.tolist(), "indices": f32.indices.tolist(),
    "data_bits": f32.data.view(np.uint32).tolist(),
    "data64_bits": a.data.astype(np.float32).view(np.uint32).tolist()}))
`, dir)
	var v scipyView
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	want := v.network()
	if want.Edges() == 0 {
		t.Fatal("reference network is empty; the test would prove nothing")
	}
	// symmetric: the whole matrix (run --symmetric-npz writes it) reads as its upper triangle;
	// a full matrix whose triangles differ is refused.
	for _, name := range []string{"compressed", "stored", "float64", "int64", "unsigned", "symmetric"} {
		got, err := ReadNetwork(filepath.Join(dir, name+".npz"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		equalNetworks(t, name, got, want)
	}
	for name, msg := range map[string]string{
		"csc": `"csc"`, "asymmetric": "strict upper triangle", "rect": "3×4", "plain": "no format.npy",
	} {
		_, err := ReadNetwork(filepath.Join(dir, name+".npz"))
		if err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), name+".npz") {
			t.Errorf("%s: error %v, want one naming the file and saying %s", name, err, msg)
		}
	}
	if _, err := ReadNetwork(filepath.Join(dir, "missing.npz")); err == nil {
		t.Error("missing file read without error")
	}
}

// TestReadNetworkRejectsCorruptMembers checks that a member whose size disagrees with its
// header is refused before anything is sized from the header.
func TestReadNetworkRejectsCorruptMembers(t *testing.T) {
	nw := randomNetwork(30, 0.3, 9)
	var buf bytes.Buffer
	if err := writeNPZWith(&buf, nw, false, false); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	// Rewrite data.npy's header to claim far more values than the member holds (same length).
	i := bytes.Index(good, []byte("'descr': '<f4', 'fortran_order': False, 'shape': ("))
	if i < 0 {
		t.Fatal("data.npy header not found in stored zip")
	}
	bad := append([]byte(nil), good...)
	j := i + len("'descr': '<f4', 'fortran_order': False, 'shape': (")
	copy(bad[j:], "999999999999,)")
	path := filepath.Join(t.TempDir(), "bad.npz")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadNetwork(path)
	if err == nil || !strings.Contains(err.Error(), "data.npy") {
		t.Errorf("corrupt data.npy: error %v, want one naming data.npy", err)
	}
}

// BenchmarkWriteNetwork times network.npz alone (in memory) and a whole bundle holding it on
// disk (Create, WriteNetwork, Commit with its fsyncs) for 10⁷ edges, and ReadNetwork of it.
func BenchmarkWriteNetwork(b *testing.B) {
	nw := randomNetwork(100_000, 0.002, 1)
	b.Logf("N = %d, E = %d", nw.N, nw.Edges())
	for _, compress := range []bool{false, true} {
		name := "stored"
		if compress {
			name = "deflate1"
		}
		b.Run("npz/"+name, func(b *testing.B) {
			b.SetBytes(nw.Edges() * 8)
			for range b.N {
				var n countWriter
				if err := writeNPZWith(&n, nw, compress, false); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(n)/float64(nw.Edges()), "bytes/edge")
			}
		})
		b.Run("bundle/"+name, func(b *testing.B) {
			b.SetBytes(nw.Edges() * 8)
			for i := range b.N {
				w, err := Create(filepath.Join(b.TempDir(), fmt.Sprint(i)), false)
				if err != nil {
					b.Fatal(err)
				}
				w.CompressNetwork = compress
				if err := w.WriteNetwork(nw); err != nil {
					b.Fatal(err)
				}
				if _, err := w.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	path := filepath.Join(b.TempDir(), "network.npz")
	f, _ := os.Create(path)
	if err := writeNPZWith(f, nw, false, false); err != nil {
		b.Fatal(err)
	}
	f.Close()
	b.Run("read/stored", func(b *testing.B) {
		b.SetBytes(nw.Edges() * 8)
		for range b.N {
			if _, err := ReadNetwork(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
