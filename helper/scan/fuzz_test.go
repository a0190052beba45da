package scan

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkLoaded is what every matrix reader promises: an error names the file; a scan has
// N ≥ 1 rows of L ≥ 3 finite, non-constant values, and labels (when any) one per row.
func checkLoaded(t *testing.T, path string, s *Scan, err error) {
	t.Helper()
	if err != nil {
		if !strings.Contains(err.Error(), filepath.Base(path)) {
			t.Fatalf("error does not name the file: %v", err)
		}
		return
	}
	if s.N < 1 || s.L < 3 || len(s.Data) != s.N*s.L {
		t.Fatalf("scan %d×%d with %d values", s.N, s.L, len(s.Data))
	}
	if s.Labels != nil && len(s.Labels) != s.N {
		t.Fatalf("%d labels for %d rows", len(s.Labels), s.N)
	}
	for v := 0; v < s.N; v++ {
		x := s.Series(v)
		constant := true
		for _, y := range x {
			if math.IsNaN(float64(y)) || math.IsInf(float64(y), 0) {
				t.Fatalf("row %d keeps a non-finite value: %v", v, x)
			}
			constant = constant && y == x[0]
		}
		if constant {
			t.Fatalf("row %d is constant: %v", v, x)
		}
	}
}

// FuzzMatrixText loads arbitrary bytes as a CSV, TSV or whitespace matrix (the extension
// chosen by ext): no panic, and checkLoaded's promises. The seeds include the case of
// a header row and two data rows.
func FuzzMatrixText(f *testing.F) {
	f.Add(byte(0), []byte("a,b,c,d\n1,2,3,4\n4,3,5,1\n"))
	f.Add(byte(1), []byte("roi\tt1\tt2\tt3\nA\t1\t2\t3\nB\t3\t1\t2\nC\tn/a\t1\t1\n"))
	f.Add(byte(2), []byte("# comment\n1 2 3 4\n2 2 2 2\n1e3 -1 NaN 4\n"))
	f.Add(byte(0), []byte("1,2,3\n1,2\n"))
	f.Add(byte(1), []byte("\xef\xbb\xbfx\ty\tz\n0x1\t1\t2\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, ext byte, b []byte) {
		path := filepath.Join(dir, "fuzz"+[]string{".csv", ".tsv", ".txt"}[int(ext)%3])
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Load(context.Background(), path, Options{}, nil)
		checkLoaded(t, path, s, err)
	})
}

// npyBytes is a .npy file (format 1.0) with the given header dictionary and data.
func npyBytes(dict string, data []byte) []byte {
	hdr := dict
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), binary.LittleEndian.AppendUint16(nil, uint16(len(hdr)))...)
	return append(append(b, hdr...), data...)
}

// FuzzNpy loads arbitrary bytes as a .npy matrix: no panic, no allocation from a lying
// shape beyond the file, and checkLoaded's promises.
func FuzzNpy(f *testing.F) {
	var f4, f8 bytes.Buffer
	for i := 0; i < 12; i++ {
		binary.Write(&f4, binary.LittleEndian, float32(i*i%7))
		binary.Write(&f8, binary.BigEndian, float64(i%5)-0.5)
	}
	f.Add(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", f4.Bytes()))
	f.Add(npyBytes("{'descr': '>f8', 'fortran_order': True, 'shape': (2, 6), }", f8.Bytes()))
	f.Add(npyBytes("{'descr': '|u1', 'fortran_order': False, 'shape': (4, 3), }", []byte("abcdefghijkl")))
	f.Add(npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (1000000000, 1000000000), }", nil))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "fuzz.npy")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Load(context.Background(), path, Options{}, nil)
		checkLoaded(t, path, s, err)
	})
}
