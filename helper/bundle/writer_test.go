package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/scan"
)

// entries lists the names in dir (hidden ones included).
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func writeText(w *Writer, name, text string) error {
	return w.WriteFile(name, func(out io.Writer) error {
		_, err := io.WriteString(out, text)
		return err
	})
}

func TestCommitRenamesIntoPlace(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "sub-01")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeText(w, "a.txt", "alpha\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeText(w, "dfc/window_001.txt", "w1\n"); err != nil {
		t.Fatal(err)
	}
	// Before Commit only the partial directory exists, and it says what it is.
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("bundle visible before Commit: %v", err)
	}
	names := entries(t, parent)
	if len(names) != 1 || !strings.HasPrefix(names[0], ".sub-01.partial-") {
		t.Fatalf("before Commit the parent holds %v, want one .sub-01.partial-* directory", names)
	}
	got, err := w.Commit()
	if err != nil || got != dir {
		t.Fatalf("Commit = %q, %v", got, err)
	}
	if names := entries(t, parent); len(names) != 1 || names[0] != "sub-01" {
		t.Fatalf("after Commit the parent holds %v, want only sub-01", names)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "dfc", "window_001.txt")); err != nil || string(b) != "w1\n" {
		t.Fatalf("dfc/window_001.txt = %q, %v", b, err)
	}
	want := []string{Marker, "a.txt", "dfc"}
	if names := entries(t, dir); strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("bundle holds %v, want %v (no owner file left behind)", names, want)
	}
	if _, err := w.Commit(); err == nil {
		t.Error("second Commit succeeded")
	}
	if err := writeText(w, "late.txt", "x"); err == nil {
		t.Error("write after Commit succeeded")
	}
	w.Abort() // after Commit: must not remove the bundle
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Errorf("Abort after Commit removed the bundle: %v", err)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeText(w, "a.txt", "alpha"); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	w.Abort()
	if names := entries(t, parent); len(names) != 0 {
		t.Fatalf("after Abort the parent holds %v", names)
	}
	if _, err := w.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
	if names := entries(t, parent); len(names) != 0 {
		t.Fatalf("Commit after Abort left %v", names)
	}
}

func TestFailedWritePoisonsCommit(t *testing.T) {
	boom := errors.New("disk on fire")
	for name, failing := range map[string]func(w *Writer) error{
		"fill error": func(w *Writer) error {
			return w.WriteFile("half.bin", func(out io.Writer) error {
				io.WriteString(out, "partial content")
				return boom
			})
		},
		"row error": func(w *Writer) error {
			return w.WriteTSV("t.tsv", []string{"a", "b"}, func(emit func(...string) error) error {
				return emit("1")
			})
		},
		"tab in field": func(w *Writer) error {
			return w.WriteTSV("t.tsv", []string{"a"}, func(emit func(...string) error) error {
				return emit("x\ty")
			})
		},
		// NaN and ±Inf are written as null (TestMarshalFiniteMatchesEncodingJSON); a value
		// JSON cannot hold at all still fails the write.
		"channel in JSON": func(w *Writer) error {
			return w.WriteJSON("m.json", map[string]any{"x": make(chan int)})
		},
		"escaping name": func(w *Writer) error { return writeText(w, "../escape.txt", "x") },
		"absolute name": func(w *Writer) error { return writeText(w, "/tmp/abs.txt", "x") },
		"same name twice": func(w *Writer) error {
			writeText(w, "dup.txt", "1")
			return writeText(w, "dup.txt", "2")
		},
		"invalid network": func(w *Writer) error {
			return w.WriteNetwork(&network.Network{N: 2, Indptr: []uint64{0, 1, 1}, Indices: []uint32{0}, Weights: []float32{1}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			w, err := Create(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := writeText(w, "good.txt", "fine"); err != nil {
				t.Fatal(err)
			}
			err = failing(w)
			if err == nil {
				t.Fatal("failing write returned no error")
			}
			if !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the bundle", err)
			}
			if _, cerr := w.Commit(); cerr == nil || !strings.Contains(cerr.Error(), err.Error()) {
				t.Errorf("Commit after a failed write: %v, want the first failure (%v)", cerr, err)
			}
			if names := entries(t, parent); len(names) != 0 {
				t.Fatalf("failed bundle left %v", names)
			}
		})
	}
}

func TestCreateExisting(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	writeText(w, "old.txt", "old")
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir, false); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("Create on an existing bundle without overwrite: %v", err)
	}
	// Overwrite replaces the earlier bundle entirely.
	w, err = Create(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	writeText(w, "new.txt", "new")
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if names := entries(t, dir); strings.Join(names, ",") != Marker+",new.txt" {
		t.Fatalf("replaced bundle holds %v", names)
	}
	if names := entries(t, parent); len(names) != 1 {
		t.Fatalf("replacing left %v in the parent", names)
	}
	// A directory of other data is never replaced, nor is a file.
	other := filepath.Join(parent, "home")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "thesis.tex"), []byte("years of work"), 0o644)
	if _, err := Create(other, true); err == nil || !strings.Contains(err.Error(), "not a HubScope bundle") {
		t.Fatalf("Create(overwrite) on a non-bundle directory: %v", err)
	}
	file := filepath.Join(parent, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Create(file, true); err == nil {
		t.Fatal("Create(overwrite) on a file succeeded")
	}
	// An empty directory may be used.
	empty := filepath.Join(parent, "empty")
	os.Mkdir(empty, 0o755)
	w, err = Create(empty, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	// Someone creates the destination between Create and Commit: no overwrite, no commit.
	late := filepath.Join(parent, "late")
	w, err = Create(late, false)
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(late, 0o755)
	if _, err := w.Commit(); err == nil {
		t.Fatal("Commit over a directory that appeared meanwhile succeeded")
	}
	if names := entries(t, late); len(names) != 0 {
		t.Fatalf("the other directory was touched: %v", names)
	}
}

func TestStalePartialRemoved(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	// A finished process's id stands for a crashed writer on this host.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run a short-lived process: %v", err)
	}
	host, _ := os.Hostname()
	mk := func(name, owner string, age time.Duration) string {
		p := filepath.Join(parent, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, "network.npz"), []byte("half"), 0o644)
		if owner != "" {
			os.WriteFile(filepath.Join(p, ownerFile), []byte(owner), 0o644)
		}
		old := time.Now().Add(-age)
		os.Chtimes(p, old, old)
		return p
	}
	crashed := mk(".out.partial-111", fmt.Sprintf("%d %s\n", cmd.Process.Pid, host), 0)
	orphan := mk(".out.partial-222", "", time.Hour)
	live := mk(".out.partial-333", fmt.Sprintf("%d %s\n", os.Getpid(), host), time.Hour)
	fresh := mk(".out.partial-444", "", 0)
	otherBundle := mk(".outer.partial-555", "", time.Hour)
	foreign := mk(".out.partial-666", "1 some-other-node\n", time.Hour)
	foreignOld := mk(".out.partial-777", "1 some-other-node\n", 48*time.Hour)
	// Killed between creating the directory and writing its owner file: the PID in the
	// name tells (TestKill9DuringRun found this window).
	killedEarly := mk(fmt.Sprintf(".out.partial-%d-123", cmd.Process.Pid), "", 5*time.Second)
	liveEarly := mk(fmt.Sprintf(".out.partial-%d-456", os.Getpid()), "", 5*time.Second)
	justMade := mk(fmt.Sprintf(".out.partial-%d-789", cmd.Process.Pid), "", 0)
	// Killed between creating the owner file and writing it: an empty owner file.
	emptyOwner := mk(fmt.Sprintf(".out.partial-%d-321", cmd.Process.Pid), "", 0)
	os.WriteFile(filepath.Join(emptyOwner, ownerFile), nil, 0o644)
	liveEmptyOwner := mk(fmt.Sprintf(".out.partial-%d-654", os.Getpid()), "", 0)
	os.WriteFile(filepath.Join(liveEmptyOwner, ownerFile), nil, 0o644)
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for p, wantGone := range map[string]bool{crashed: true, orphan: true, live: false, fresh: false, otherBundle: false, foreign: false, foreignOld: true,
		killedEarly: true, liveEarly: false, justMade: true, emptyOwner: true, liveEmptyOwner: false} {
		_, err := os.Stat(p)
		if gone := errors.Is(err, os.ErrNotExist); gone != wantGone {
			t.Errorf("%s: removed = %v, want %v", filepath.Base(p), gone, wantGone)
		}
	}
}

func TestPathRejectsEscapes(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "out"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	p := w.Path("maps/degree.nii.gz")
	if !strings.HasPrefix(p, w.tmp) {
		t.Fatalf("Path = %q, not inside %q", p, w.tmp)
	}
	if fi, err := os.Stat(filepath.Dir(p)); err != nil || !fi.IsDir() {
		t.Fatalf("Path did not create maps/: %v", err)
	}
	if p := w.Path("../x"); p != "" {
		t.Errorf("Path(../x) = %q", p)
	}
}

// TestTablesParseInNumpy writes nodes.tsv and edges.tsv for a small image scan and checks them
// with numpy: node coordinates against nibabel's apply_affine, edges against the CSR.
func TestTablesParseInNumpy(t *testing.T) {
	pyref.Require(t, "numpy", "nibabel")
	s := smallScan()
	nw := randomNetwork(s.N, 0.3, 11)
	dir := filepath.Join(t.TempDir(), "out")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteNodes(s); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteNetwork(nw); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	aff, _ := json.Marshal(s.Affine)
	out := pyref.Run(t, `
import json, sys
import numpy as np, scipy.sparse as sp
from nibabel.affines import apply_affine
d, aff = sys.argv[1], np.array(json.loads(sys.argv[2]))
nodes = np.genfromtxt(d + '/nodes.tsv', delimiter='\t', names=True)
xyz = apply_affine(aff, np.stack([nodes['i'], nodes['j'], nodes['k']], axis=1))
mm = np.stack([nodes['x_mm'], nodes['y_mm'], nodes['z_mm']], axis=1)
edges = np.genfromtxt(d + '/edges.tsv', delimiter='\t', names=True, dtype=None)
m = sp.load_npz(d + '/network.npz').tocoo()
order = np.lexsort((m.col, m.row))
print(json.dumps({
  "names": list(nodes.dtype.names), "n": int(nodes.size), "node": nodes['node'].tolist(),
  "ijk": np.stack([nodes['i'], nodes['j'], nodes['k']], axis=1).astype(int).tolist(),
  "mm_err": float(np.abs(xyz - mm).max()),
  "edge_names": list(edges.dtype.names),
  "edges_match": bool(np.array_equal(edges['i'], m.row[order]) and np.array_equal(edges['j'], m.col[order])
                       and np.array_equal(edges['weight'].astype(np.float32), m.data[order])),
  "n_edges": int(edges.size),
}))
`, dir, string(aff))
	var v struct {
		Names      []string   `json:"names"`
		N          int        `json:"n"`
		Node       []float64  `json:"node"`
		IJK        [][3]int32 `json:"ijk"`
		MMErr      float64    `json:"mm_err"`
		EdgeNames  []string   `json:"edge_names"`
		EdgesMatch bool       `json:"edges_match"`
		NEdges     int        `json:"n_edges"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if strings.Join(v.Names, ",") != "node,i,j,k,x_mm,y_mm,z_mm" || v.N != s.N {
		t.Fatalf("nodes.tsv columns %v, %d rows", v.Names, v.N)
	}
	for n := 0; n < s.N; n++ {
		if v.Node[n] != float64(n) || v.IJK[n] != s.IJK[n] {
			t.Fatalf("nodes.tsv row %d: node %v ijk %v, want %d %v", n, v.Node[n], v.IJK[n], n, s.IJK[n])
		}
	}
	if v.MMErr > 5e-4 {
		t.Errorf("world coordinates differ from nibabel's apply_affine by %g mm", v.MMErr)
	}
	if strings.Join(v.EdgeNames, ",") != "i,j,weight" || !v.EdgesMatch || int64(v.NEdges) != nw.Edges() {
		t.Errorf("edges.tsv: columns %v, %d rows (want %d), equal to network.npz: %v", v.EdgeNames, v.NEdges, nw.Edges(), v.EdgesMatch)
	}
}

func TestNodesOfPlainMatrix(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	s := &scan.Scan{N: 3, L: 5, Labels: []string{"Precuneus_L", "Precuneus_R", "Cingulum Ant"}}
	if err := w.WriteNodes(s); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "nodes.tsv"))
	want := "node\tlabel\n0\tPrecuneus_L\n1\tPrecuneus_R\n2\tCingulum Ant\n"
	if string(b) != want {
		t.Errorf("nodes.tsv = %q, want %q", b, want)
	}
}

func TestEdgeListOmittedForLargeNetworks(t *testing.T) {
	// The first EdgeListMax+1 pairs (i, j) in row order: one edge over the limit.
	n := 1500
	nw := &network.Network{N: n, Indptr: make([]uint64, n+1)}
	remaining := EdgeListMax + 1
	for i := 0; i < n; i++ {
		for j := i + 1; j < n && remaining > 0; j++ {
			nw.Indices = append(nw.Indices, uint32(j))
			nw.Weights = append(nw.Weights, 0.5)
			remaining--
		}
		nw.Indptr[i+1] = uint64(len(nw.Indices))
	}
	if nw.Edges() != EdgeListMax+1 {
		t.Fatalf("built %d edges", nw.Edges())
	}
	dir := filepath.Join(t.TempDir(), "out")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteNetwork(nw); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "edges.tsv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("edges.tsv written for %d edges: %v", nw.Edges(), err)
	}
	back, err := ReadNetwork(filepath.Join(dir, "network.npz"))
	if err != nil {
		t.Fatal(err)
	}
	equalNetworks(t, "ReadNetwork", back, nw)
}

func TestWriteJSONStableOrder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	type metrics struct {
		Nodes      int            `json:"nodes"`
		Clustering float64        `json:"clustering"`
		Sigma      *float64       `json:"sigma"`
		Extra      map[string]int `json:"extra"`
	}
	if err := w.WriteJSON("metrics.json", metrics{Nodes: 3, Clustering: 0.25, Extra: map[string]int{"b": 2, "a": 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "metrics.json"))
	want := "{\n  \"nodes\": 3,\n  \"clustering\": 0.25,\n  \"sigma\": null,\n  \"extra\": {\n    \"a\": 1,\n    \"b\": 2\n  }\n}\n"
	if string(b) != want {
		t.Errorf("metrics.json =\n%s\nwant\n%s", b, want)
	}
}

// smallScan is a 4×5×3 grid with an oblique affine and 11 nodes in flat-index order.
func smallScan() *scan.Scan {
	s := &scan.Scan{
		Dims: [3]int{4, 5, 3},
		Affine: [4][4]float64{
			{-2.5, 0.1, 0, 90.25},
			{0.05, 2.5, 0.2, -126.5},
			{0, -0.1, 3.1, -72},
			{0, 0, 0, 1},
		},
		TR: 2,
		L:  4,
	}
	s.Mask = scan.Mask{Dims: s.Dims, In: make([]bool, 60)}
	for _, f := range []int{0, 3, 7, 12, 19, 20, 31, 33, 44, 58, 59} {
		s.Mask.In[f] = true
	}
	for f, in := range s.Mask.In {
		if in {
			s.IJK = append(s.IJK, [3]int32{int32(f % 4), int32(f / 4 % 5), int32(f / 20)})
		}
	}
	s.N = len(s.IJK)
	s.Data = make([]float32, s.N*s.L)
	return s
}

// TestConcurrentWrites writes maps, tables and files from several goroutines, as the pipeline
// does when stages finish in parallel (run under -race).
func TestConcurrentWrites(t *testing.T) {
	s := smallScan()
	dir := filepath.Join(t.TempDir(), "out")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 16)
	for g := 0; g < 8; g++ {
		go func() {
			name := fmt.Sprintf("part%d", g)
			if err := writeText(w, name+".txt", name); err != nil {
				errs <- err
				return
			}
			v := make([]float32, s.N)
			for i := range v {
				v[i] = float32(g)
			}
			errs <- w.WriteNodeMap(name+".nii.gz", s, v, nifti.Int16)
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := len(entries(t, dir)); n != 17 {
		t.Errorf("bundle holds %d entries, want 16 files and the marker", n)
	}
}
