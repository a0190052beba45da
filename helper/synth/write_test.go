package synth

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
)

// readSeries reads a 4D image back through the nifti package as node-major series on the mask.
func readSeries(t *testing.T, path string, nodes []int) (nifti.Header, [][]float32) {
	t.Helper()
	r, err := nifti.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	vol := make([]float32, r.Header.VoxelsPerVolume())
	series := make([][]float32, len(nodes))
	for {
		err := r.ReadVolume(vol)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for v, f := range nodes {
			series[v] = append(series[v], vol[f])
		}
	}
	return r.Header, series
}

func maskNodes(in []bool) []int {
	var nodes []int
	for f, ok := range in {
		if ok {
			nodes = append(nodes, f)
		}
	}
	return nodes
}

func TestWriteMatchesGenerate(t *testing.T) {
	m, a := testMask(t, 8)
	nodes := maskNodes(m.In)
	for _, dt := range []nifti.DataType{nifti.Int16, nifti.Float32} {
		p := DefaultParams()
		p.Length, p.DataType = 40, dt
		s, want, err := Generate(m, a, p)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "phantom.nii.gz")
		tracker := progress.NewTracker()
		got, err := Write(context.Background(), m, a, p, out, tracker)
		if err != nil {
			t.Fatal(err)
		}
		if snap := tracker.Snapshot(); snap.Done != int64(p.Length) || snap.Total != int64(p.Length) {
			t.Errorf("%v: progress %d of %d volumes, want %d", dt, snap.Done, snap.Total, p.Length)
		}
		if !equalTruth(got, want) {
			t.Fatalf("%v: Write's truth differs from Generate's", dt)
		}
		h, series := readSeries(t, out, nodes)
		if h.DataType != dt || h.Nx() != m.Dims[0] || h.Ny() != m.Dims[1] || h.Nz() != m.Dims[2] || h.Volumes() != p.Length || math.Abs(h.TR()-p.TR) > 1e-6 {
			t.Fatalf("%v: header %v %d×%d×%d×%d TR %g", dt, h.DataType, h.Nx(), h.Ny(), h.Nz(), h.Volumes(), h.TR())
		}
		if ha := h.Affine(); !closeAffine(ha, a, 1e-4) {
			t.Fatalf("%v: affine %v, want %v", dt, ha, a)
		}
		// int16 rounds to the nearest integer; float32 is stored exactly.
		tol := 0.0
		if dt == nifti.Int16 {
			tol = 0.5 + 1e-3
		}
		worst := 0.0
		for v := range s.N {
			for tt, x := range s.Series(v) {
				worst = max(worst, math.Abs(float64(series[v][tt]-x)))
			}
		}
		if worst > tol {
			t.Errorf("%v: written series differ from Generate's by up to %g, want ≤ %g", dt, worst, tol)
		}
	}
}

func equalTruth(a, b *Truth) bool {
	if len(a.Modules) != len(b.Modules) || len(a.Hubs) != len(b.Hubs) {
		return false
	}
	for i := range a.Modules {
		if a.Modules[i] != b.Modules[i] {
			return false
		}
	}
	for h := range a.Hubs {
		if a.Hubs[h] != b.Hubs[h] || len(a.HubModules[h]) != len(b.HubModules[h]) {
			return false
		}
		for i := range a.HubModules[h] {
			if a.HubModules[h][i] != b.HubModules[h][i] {
				return false
			}
		}
	}
	return true
}

func closeAffine(a, b [4][4]float64, tol float64) bool {
	for r := range 4 {
		for c := range 4 {
			if math.Abs(a[r][c]-b[r][c]) > tol {
				return false
			}
		}
	}
	return true
}

func TestWriteTruthFiles(t *testing.T) {
	m, a := testMask(t, 8)
	p := DefaultParams()
	p.Length = 40
	out := filepath.Join(t.TempDir(), "sub-01_bold.nii.gz")
	tr, err := Write(context.Background(), m, a, p, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	modPath, hubPath := TruthPaths(out)
	if want := filepath.Join(filepath.Dir(out), "sub-01_bold_truth_modules.nii.gz"); modPath != want {
		t.Fatalf("module map at %s, want %s", modPath, want)
	}
	h, labels, err := nifti.ReadImage(modPath)
	if err != nil {
		t.Fatal(err)
	}
	if h.DataType != nifti.Int16 || h.Volumes() != 1 || !closeAffine(h.Affine(), a, 1e-4) {
		t.Fatalf("module map: %v, %d volumes, affine %v", h.DataType, h.Volumes(), h.Affine())
	}
	nodes := maskNodes(m.In)
	for f, x := range labels {
		if !m.In[f] && x != 0 {
			t.Fatalf("module map: label %v outside the mask at %d", x, f)
		}
	}
	for v, f := range nodes {
		if labels[f] != float32(tr.Modules[v]) {
			t.Fatalf("module map: node %d labelled %v, truth %d", v, labels[f], tr.Modules[v])
		}
	}

	raw, err := os.ReadFile(hubPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if lines[0] != "node\ti\tj\tk\tx\ty\tz\tmodules" || len(lines) != 1+len(tr.Hubs) {
		t.Fatalf("hub table: header %q, %d rows for %d hubs", lines[0], len(lines)-1, len(tr.Hubs))
	}
	for h, line := range lines[1:] {
		f := strings.Split(line, "\t")
		node, _ := strconv.Atoi(f[0])
		i, _ := strconv.Atoi(f[1])
		j, _ := strconv.Atoi(f[2])
		k, _ := strconv.Atoi(f[3])
		x, _ := strconv.ParseFloat(f[4], 64)
		if node != tr.Hubs[h] || m.Flat(i, j, k) != nodes[node] || f[7] != joinInts(tr.HubModules[h]) {
			t.Fatalf("hub table row %q; truth node %d (flat %d) modules %v", line, tr.Hubs[h], nodes[tr.Hubs[h]], tr.HubModules[h])
		}
		if wantX := a[0][0]*float64(i) + a[0][1]*float64(j) + a[0][2]*float64(k) + a[0][3]; math.Abs(x-wantX) > 1e-9 {
			t.Fatalf("hub table row %q: x %g, want %g", line, x, wantX)
		}
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// cancelAfter is a Reporter that cancels its context once n volumes have been reported.
type cancelAfter struct {
	progress.Reporter
	n      int64
	done   int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Add(n int64) {
	c.done += n
	if c.done >= c.n {
		c.cancel()
	}
}

func TestWriteCancelled(t *testing.T) {
	m, a := testMask(t, 8)
	p := DefaultParams()
	dir := t.TempDir()
	out := filepath.Join(dir, "phantom.nii.gz")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep := &cancelAfter{Reporter: progress.Discard, n: 3, cancel: cancel}
	_, err := Write(ctx, m, a, p, out, rep)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if rep.done != 3 {
		t.Errorf("%d volumes written after cancelling at 3", rep.done)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("left behind after cancellation: %s", e.Name())
	}
}

func TestWriteRejectsBadOutput(t *testing.T) {
	m, a := testMask(t, 8)
	dir := t.TempDir()
	if _, err := Write(context.Background(), m, a, DefaultParams(), filepath.Join(dir, "phantom.img"), nil); err == nil || !strings.Contains(err.Error(), "phantom.img") {
		t.Errorf("error %v, want one naming phantom.img", err)
	}
	if _, err := Write(context.Background(), m, a, DefaultParams(), filepath.Join(dir, "missing", "phantom.nii"), nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

// TestWriteNibabel reads the written scan and truth map with nibabel, the reference NIfTI reader,
// and compares them with Generate's series and the truth.
func TestWriteNibabel(t *testing.T) {
	pyref.Require(t, "numpy", "nibabel")
	m, a := testMask(t, 8)
	p := DefaultParams()
	p.Length = 30
	dir := t.TempDir()
	out := filepath.Join(dir, "phantom.nii.gz")
	tr, err := Write(context.Background(), m, a, p, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := Generate(m, a, p)
	if err != nil {
		t.Fatal(err)
	}
	// Generate's series and labels in node order, for python to compare against.
	ref := filepath.Join(dir, "ref.f32")
	buf := make([]byte, 0, 4*len(s.Data))
	for _, x := range s.Data {
		buf = appendF32(buf, x)
	}
	if err := os.WriteFile(ref, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	modPath, _ := TruthPaths(out)
	lab := filepath.Join(dir, "labels.i32")
	buf = buf[:0]
	for _, l := range tr.Modules {
		buf = appendF32(buf, float32(l))
	}
	if err := os.WriteFile(lab, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	outText := string(pyref.Run(t, `
import sys, numpy as np, nibabel as nib
img = nib.load(sys.argv[1]); d = np.asarray(img.dataobj)
assert d.dtype == np.int16, d.dtype
x = d.reshape(-1, d.shape[3], order='F')            # flat index i + Nx*(j + Ny*k), then time
inside = np.flatnonzero(x.any(axis=1))
ref = np.fromfile(sys.argv[2], '<f4').reshape(len(inside), -1)
lab = nib.load(sys.argv[3]); labels = np.asarray(lab.dataobj).reshape(-1, order='F')
want_labels = np.fromfile(sys.argv[4], '<f4')
print(d.shape[3], img.header.get_zooms()[3], np.abs(x[inside] - ref).max(),
      int((labels[inside] != want_labels).sum()), int((labels != 0).sum()), np.abs(img.affine - lab.affine).max())
`, out, ref, modPath, lab))
	f := strings.Fields(outText)
	if len(f) != 6 {
		t.Fatalf("python said %q", outText)
	}
	vols, _ := strconv.Atoi(f[0])
	zoomT, _ := strconv.ParseFloat(f[1], 64)
	diff, _ := strconv.ParseFloat(f[2], 64)
	if vols != p.Length || zoomT != p.TR || diff > 0.5+1e-3 || f[3] != "0" || f[4] != strconv.Itoa(s.N) || f[5] != "0.0" {
		t.Fatalf("nibabel: %d volumes, TR %g, max |written − generated| %g, %s mislabelled, %s labelled voxels (want %d), affine difference %s",
			vols, zoomT, diff, f[3], f[4], s.N, f[5])
	}
}

func appendF32(b []byte, x float32) []byte {
	u := math.Float32bits(x)
	return append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
}
