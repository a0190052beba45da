package scan

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// matrixRefScript writes plain matrices with numpy (np.save in several dtypes, orders,
// byte orders and format versions; np.savetxt; a hand-written CSV with a header, quoted
// labels, a NaN row and a constant row) into argv[1] and prints, for each file, the matrix
// numpy holds (as float32) and the labels the file carries.
const matrixRefScript = `
import sys, os, json
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(3)
out = {}
def record(name, m, labels=None):
    m = np.asarray(m, dtype=np.float64).astype(np.float32).astype(np.float64)
    out[name] = {"rows": [[None if not np.isfinite(x) else float(x) for x in r] for r in m],
                 "labels": labels}

a = rng.standard_normal((5, 9)) * 100
np.save(os.path.join(d, "f32c.npy"), a.astype(np.float32)); record("f32c.npy", a)
np.save(os.path.join(d, "f64f.npy"), np.asfortranarray(a)); record("f64f.npy", a)
b = np.asfortranarray(a.astype(">f8"))
np.save(os.path.join(d, "f64be.npy"), b); record("f64be.npy", b)
i16 = (a * 10).astype(np.int16)
np.save(os.path.join(d, "i16.npy"), i16); record("i16.npy", i16)
u8 = rng.integers(0, 256, (4, 6)).astype(np.uint8)
np.save(os.path.join(d, "u8.npy"), u8); record("u8.npy", u8)
i64 = np.asfortranarray(rng.integers(-10**6, 10**6, (3, 7)))
np.save(os.path.join(d, "i64f.npy"), i64); record("i64f.npy", i64)
with open(os.path.join(d, "v2.npy"), "wb") as f:
    np.lib.format.write_array(f, a[:3], version=(2, 0))
record("v2.npy", a[:3])

np.savetxt(os.path.join(d, "plain.tsv"), a, delimiter="\t", header="regions x time")
record("plain.tsv", a)
np.savetxt(os.path.join(d, "plain.txt"), a[:4], fmt="%.9g")
record("plain.txt", np.array([[float("%.9g" % x) for x in r] for r in a[:4]]))

labels = ["Left, Amygdala", "R_Hippocampus", "Precuneus", "Thalamus"]
rows = a[:4].copy()
with open(os.path.join(d, "rois.csv"), "w") as f:
    f.write("region," + ",".join("t%d" % t for t in range(rows.shape[1])) + "\r\n")
    for name, r in zip(labels, rows):
        f.write('"%s", %s\r\n' % (name, ",".join(repr(float(x)) for x in r)))
record("rois.csv", rows, labels)
with open(os.path.join(d, "labels.txt"), "w") as f:
    for t, r in enumerate(rows):
        f.write("roi_%d  %s\n" % (t, "  ".join(repr(float(x)) for x in r)))
record("labels.txt", rows, ["roi_%d" % t for t in range(4)])
print(json.dumps(out))
`

// TestPlainMatricesMatchNumpy reads matrices written by numpy and compares every value.
func TestPlainMatricesMatchNumpy(t *testing.T) {
	pyref.Require(t, "numpy")
	dir := t.TempDir()
	var ref map[string]struct {
		Rows   [][]*float64
		Labels []string
	}
	if err := json.Unmarshal(pyref.Run(t, matrixRefScript, dir), &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref) != 11 {
		t.Fatalf("reference wrote %d files", len(ref))
	}
	for name, want := range ref {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			s, err := Load(context.Background(), path, Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.N != len(want.Rows) || s.L != len(want.Rows[0]) {
				t.Fatalf("%d×%d, numpy %d×%d", s.N, s.L, len(want.Rows), len(want.Rows[0]))
			}
			for v, row := range want.Rows {
				for c, x := range row {
					if got := s.Series(v)[c]; float64(got) != *x {
						t.Fatalf("row %d col %d: %v, numpy %v", v, c, got, *x)
					}
				}
			}
			if strings.Join(s.Labels, "|") != strings.Join(want.Labels, "|") {
				t.Fatalf("labels %q, want %q", s.Labels, want.Labels)
			}
			if s.IJK != nil || s.Dims != [3]int{} || s.Dropped.MaskVoxels != s.N || s.BytesRead <= 0 {
				t.Fatalf("plain matrix model: IJK %v Dims %v Dropped %+v BytesRead %d", s.IJK, s.Dims, s.Dropped, s.BytesRead)
			}
		})
	}
}

// TestMatrixDropping drops the constant and NaN rows of a labelled CSV with their labels.
func TestMatrixDropping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "roi.csv")
	text := "# ROI series\nA,1,2,3,4\nB,5,5,5,5\nC,1,nan,2,3\n\nD,4,3,2,1\nE,1,2,Inf,4\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := &recorder{}
	s, err := Load(context.Background(), path, Options{}, rep)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 2 || strings.Join(s.Labels, ",") != "A,D" || s.Dropped != (DropStats{MaskVoxels: 5, ZeroVariance: 1, NonFinite: 2}) {
		t.Fatalf("N %d labels %q dropped %+v", s.N, s.Labels, s.Dropped)
	}
	if got := s.Series(1); got[0] != 4 || got[3] != 1 {
		t.Fatalf("row D = %v", got)
	}
	if len(rep.notes) != 1 || !strings.Contains(rep.notes[0], "dropped 3 of 5 rows") {
		t.Fatalf("notes %q", rep.notes)
	}
	if rep.stages[0] != "load" || rep.adds[0] != int64(len(text)) || rep.totals[0] != int64(len(text)) {
		t.Fatalf("progress %v %v %v", rep.stages, rep.totals, rep.adds)
	}
}

// TestMatrixErrors checks that malformed matrices give errors naming file, line and problem.
func TestMatrixErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	npy := func(name, header string, data int) string {
		h := header
		for (10+len(h)+1)%64 != 0 {
			h += " "
		}
		h += "\n"
		b := []byte("\x93NUMPY\x01\x00")
		b = append(b, byte(len(h)), byte(len(h)>>8))
		b = append(b, h...)
		b = append(b, make([]byte, data)...)
		return write(name, string(b))
	}
	cases := []struct {
		name, path string
		want       []string
	}{
		{"ragged", write("ragged.csv", "1,2,3,4\n5,6,7,8\n9,10,11\n"), []string{"ragged.csv", "line 3", "3 values", "has 4"}},
		{"not a number", write("word.tsv", "# c\n1\t2\t3\n4\t5\tfive\n"), []string{"word.tsv", "line 3, column 3", `"five"`}},
		{"empty value", write("hole.csv", "1,2,3\n4,,6\n"), []string{"hole.csv", "line 2, column 2", "empty value"}},
		{"too short", write("short.txt", "1 2\n3 4\n"), []string{"short.txt", "2 time points", "at least 3"}},
		{"no rows", write("empty.csv", "# nothing\n\n"), []string{"empty.csv", "no data rows"}},
		{"all constant", write("flat.csv", "1,1,1\n2,2,2\n"), []string{"flat.csv", "every one of the 2"}},
		{"out of range", write("big.csv", "1,2,1e60\n"), []string{"big.csv", "line 1, column 3", "float32 range"}},
		{"1D npy", npy("vec.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }", 32), []string{"vec.npy", "1 dimensions", "2D"}},
		{"3D npy", npy("cube.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }", 96), []string{"cube.npy", "3 dimensions"}},
		{"truncated npy", npy("cut.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (10, 20), }", 100), []string{"cut.npy", "truncated", "1600 bytes"}},
		{"complex npy", npy("cplx.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 4), }", 64), []string{"cplx.npy", "<c8", "not supported"}},
		{"structured npy", npy("rec.npy", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 4), }", 32), []string{"rec.npy"}},
		{"not npy", write("fake.npy", "hello world, not numpy"), []string{"fake.npy", "not a .npy file"}},
		{"missing", filepath.Join(dir, "gone.csv"), []string{"gone.csv"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Load(context.Background(), c.path, Options{}, nil)
			if err == nil {
				t.Fatalf("no error; loaded %d×%d", s.N, s.L)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestMatrixCancelled: a cancelled context stops a matrix load with the context's error.
func TestMatrixCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.csv")
	if err := os.WriteFile(path, []byte("1,2,3\n4,5,7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, path, Options{}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}
