package nifti

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moduleRoot walks up from the test's working directory to the directory holding go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// sharedData lists the project's real test images (../shared/data beside the module root).
func sharedData(t testing.TB) []string {
	t.Helper()
	dir := filepath.Join(moduleRoot(t), "..", "shared", "data")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("shared test data not available: %v", err)
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".nii") || strings.HasSuffix(n, ".nii.gz") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	if len(out) == 0 {
		t.Fatalf("no NIfTI files in %s", dir)
	}
	return out
}

// readNpyFloat64 reads a 1-D little-endian float64 .npy file (format 1.0 or 2.0) as written by
// numpy.save.
func readNpyFloat64(t testing.TB, path string) []float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 10 || string(b[1:6]) != "NUMPY" {
		t.Fatalf("%s: not a .npy file", path)
	}
	var hlen, start int
	if b[6] == 1 {
		hlen, start = int(binary.LittleEndian.Uint16(b[8:])), 10
	} else {
		hlen, start = int(binary.LittleEndian.Uint32(b[8:])), 12
	}
	hdr := string(b[start : start+hlen])
	if !strings.Contains(hdr, "'<f8'") || !strings.Contains(hdr, "'fortran_order': False") {
		t.Fatalf("%s: want a C-order <f8 array, header %s", path, hdr)
	}
	raw := b[start+hlen:]
	out := make([]float64, len(raw)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return out
}

// readAll64 reads every volume of an image in float64.
func readAll64(t testing.TB, path string) (Header, []float64) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	n := r.Header.VoxelsPerVolume()
	out := make([]float64, 0, n*r.Header.Volumes())
	vol := make([]float64, n)
	for {
		err := r.ReadVolume64(vol)
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("ReadVolume64: %v", err)
		}
		out = append(out, vol...)
	}
	if len(out) != n*r.Header.Volumes() {
		t.Fatalf("read %d values, want %d", len(out), n*r.Header.Volumes())
	}
	return r.Header, out
}

func mathFloat32bits(f float32) uint32 { return math.Float32bits(f) }
func mathFloat64bits(f float64) uint64 { return math.Float64bits(f) }
