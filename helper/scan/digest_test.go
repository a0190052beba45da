package scan

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fileSum is the reference digest: crypto/sha256 over the whole file read at once.
func fileSum(t *testing.T, path string) FileDigest {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return FileDigest{Path: path, Bytes: int64(len(b)), SHA256: hex.EncodeToString(s[:])}
}

// countOpens replaces openInput for the test and returns the number of opens per path.
func countOpens(t *testing.T) func(path string) int {
	var mu sync.Mutex
	opens := map[string]int{}
	t.Cleanup(func() { openInput = os.Open })
	openInput = func(p string) (*os.File, error) {
		mu.Lock()
		opens[p]++
		mu.Unlock()
		return os.Open(p)
	}
	return func(p string) int {
		mu.Lock()
		defer mu.Unlock()
		return opens[p]
	}
}

func writeBytes(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInputDigestsNIfTI checks Scan.Inputs against sha256 of the file for every NIfTI layout,
// including bytes the NIfTI reader never decodes (extensions before vox_offset, trailing
// bytes after the last volume) and the compressed bytes of a .nii.gz.
func TestInputDigestsNIfTI(t *testing.T) {
	dir := t.TempDir()
	dims := []int{9, 8, 7, 9}
	// A bright ellipsoid on a dark background, so that the automatic mask finds a "brain".
	value := func(i, j, k, tt int) float32 {
		x, y, z := float64(i-4)/3.5, float64(j-4)/3, float64(k-3)/2.5
		base := 50.0
		if x*x+y*y+z*z < 1 {
			base = 1000
		}
		return float32(base + 10*math.Sin(0.3*float64(tt)+float64(i*j+k)))
	}
	nii := filepath.Join(dir, "scan.nii")
	writeScan(t, nii, dims, testAffine, value)
	gz := filepath.Join(dir, "scan.nii.gz")
	writeScan(t, gz, dims, testAffine, value)
	raw := readBytes(t, nii)

	// Trailing bytes after the data.
	trailing := writeBytes(t, filepath.Join(dir, "trailing.nii"), append(append([]byte{}, raw...), []byte("trailing junk after the last volume")...))

	// One 32-byte extension between the header and the data: flag byte 348 set, vox_offset
	// (float32 at byte 108) moved from 352 to 384.
	ext := append([]byte{}, raw[:352]...)
	ext[348] = 1
	binary.LittleEndian.PutUint32(ext[108:], math.Float32bits(384))
	e := make([]byte, 32)
	binary.LittleEndian.PutUint32(e[0:], 32) // esize
	binary.LittleEndian.PutUint32(e[4:], 6)  // ecode: comment
	copy(e[8:], "an extension the reader skips")
	ext = append(append(ext, e...), raw[352:]...)
	extension := writeBytes(t, filepath.Join(dir, "ext.nii"), ext)

	// A .hdr/.img pair: magic "ni1", vox_offset 0, data in the .img.
	hb := append([]byte{}, raw[:348]...)
	copy(hb[344:], "ni1\x00")
	binary.LittleEndian.PutUint32(hb[108:], math.Float32bits(0))
	hdr := writeBytes(t, filepath.Join(dir, "pair.hdr"), hb)
	img := writeBytes(t, filepath.Join(dir, "pair.img"), raw[352:])

	mask := filepath.Join(dir, "mask.nii.gz")
	writeScan(t, mask, dims[:3], testAffine, func(i, j, k, _ int) float32 {
		if i > 0 && j > 0 {
			return 1
		}
		return 0
	})

	opens := countOpens(t)
	for _, p := range []string{nii, gz, trailing, extension, hdr, img} {
		for _, m := range []string{"", mask} {
			s, err := Load(context.Background(), p, Options{MaskPath: m}, nil)
			if err != nil {
				t.Fatalf("%s (mask %q): %v", p, m, err)
			}
			want := []FileDigest{fileSum(t, p)}
			if m != "" {
				want = append(want, fileSum(t, m))
			}
			if len(s.Inputs) != len(want) {
				t.Fatalf("%s (mask %q): Inputs %+v, want %+v", filepath.Base(p), m, s.Inputs, want)
			}
			for i := range want {
				if s.Inputs[i] != want[i] {
					t.Errorf("%s (mask %q): Inputs[%d] = %+v, want %+v", filepath.Base(p), m, i, s.Inputs[i], want[i])
				}
			}
		}
		if n := opens(p); n != 2 { // one digest per Load (with and without the mask)
			t.Errorf("%s: hashed %d times in 2 loads, want 2", filepath.Base(p), n)
		}
	}
	// The reference digests differ where the bytes do, so equality above is not vacuous.
	if fileSum(t, nii).SHA256 == fileSum(t, trailing).SHA256 || fileSum(t, hdr).SHA256 == fileSum(t, img).SHA256 {
		t.Fatal("test files are not distinct")
	}
}

// TestInputDigestsMatrix checks that a plain matrix is hashed as it is parsed: the digest
// equals sha256 of the file (trailing bytes after an .npy's array included) and the file is
// opened once.
func TestInputDigestsMatrix(t *testing.T) {
	dir := t.TempDir()
	csv := writeBytes(t, filepath.Join(dir, "m.csv"), []byte("# regions × time\nr1,1,2,3,5\nr2,2,1,4,3\nr3,0,3,1,2\n"))
	h := "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }"
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = append(b, byte(len(h)), byte(len(h)>>8))
	b = append(b, h...)
	for i := range 12 {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(i*i%7)+float32(i)/3))
	}
	npy := writeBytes(t, filepath.Join(dir, "m.npy"), b)
	npyTrail := writeBytes(t, filepath.Join(dir, "trail.npy"), append(append([]byte{}, b...), strings.Repeat("x", 100000)...))

	opens := countOpens(t)
	for _, p := range []string{csv, npy, npyTrail} {
		s, err := Load(context.Background(), p, Options{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if want := fileSum(t, p); len(s.Inputs) != 1 || s.Inputs[0] != want {
			t.Errorf("%s: Inputs %+v, want [%+v]", filepath.Base(p), s.Inputs, want)
		}
		if n := opens(p); n != 1 {
			t.Errorf("%s: opened %d times, want 1", filepath.Base(p), n)
		}
	}
}

// TestDigestCancelled checks that a cancelled load stops its hasher with the context's error.
func TestDigestCancelled(t *testing.T) {
	p := writeBytes(t, filepath.Join(t.TempDir(), "big"), make([]byte, 3<<20))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := digestAsync(ctx, p)(); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Fatalf("cancelled digest: %v", err)
	}
	d, err := digestAsync(context.Background(), p)()
	if err != nil || d != fileSum(t, p) {
		t.Fatalf("digest = %+v, %v", d, err)
	}
}
