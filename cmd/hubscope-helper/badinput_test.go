package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
)

// badInput is one broken or hostile input and a phrase its one-line refusal must hold.
type badInput struct {
	name   string // file name in the corpus folder
	data   []byte // nil: made by setup
	phrase string
	setup  func(t *testing.T, path string)
	args   []string // extra arguments
}

// goodScan is a small valid 4D float32 NIfTI-1 (single file, uncompressed) whose voxels have
// distinct, varying series.
func goodScan(t *testing.T) []byte {
	t.Helper()
	dims := []int{6, 5, 4, 12}
	h := nifti.NewHeader(dims, nifti.Float32, [4][4]float64{{3, 0, 0, -9}, {0, 3, 0, -7}, {0, 0, 3, -5}, {0, 0, 0, 1}}, 2)
	n := 6 * 5 * 4
	data := make([]float32, n*12)
	for i := range data {
		v, tt := i%n, i/n
		data[i] = 100 + float32(v) + float32(math.Sin(float64(tt*(v%7+1))))
	}
	p := filepath.Join(t.TempDir(), "good.nii")
	if err := nifti.WriteImage(p, h, data); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func patch(b []byte, off int, with ...any) []byte {
	c := append([]byte(nil), b...)
	var buf bytes.Buffer
	for _, w := range with {
		binary.Write(&buf, binary.LittleEndian, w)
	}
	copy(c[off:], buf.Bytes())
	return c
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func npy(dict string, data []byte) []byte {
	hdr := dict
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	b := append([]byte("\x93NUMPY\x01\x00"), binary.LittleEndian.AppendUint16(nil, uint16(len(hdr)+1))...)
	return append(append(append(b, hdr...), '\n'), data...)
}

// TestBadInputCorpus runs `hubscope-helper run` on every input of the corpus: broken and
// hostile NIfTI files (every unsupported datatype, header fields out of range, lying sizes,
// corrupt compression), matrices (CSV/TSV/NPY) that cannot make a network, and paths that are
// not files. Each must end with exit code 1, exactly one line of error that names the file
// and says the problem, and no output folder (nothing at all beside where it would be).
func TestBadInputCorpus(t *testing.T) {
	good := goodScan(t)
	const hs = 348 // NIfTI-1 header bytes
	cases := []badInput{
		{name: "empty.nii", data: []byte{}, phrase: "truncated header"},
		{name: "short.nii", data: good[:200], phrase: "truncated header"},
		{name: "text.nii", data: []byte(strings.Repeat("not an image\n", 40)), phrase: "not a NIfTI header"},
		{name: "magic.nii", data: patch(good, 344, []byte("xx1\x00")), phrase: "wrong magic"},
		{name: "binary.nii", data: patch(good, 70, int16(1), int16(1)), phrase: "unsupported datatype 1"},
		{name: "complex64.nii", data: patch(good, 70, int16(32), int16(64)), phrase: "unsupported datatype 32"},
		{name: "rgb24.nii", data: patch(good, 70, int16(128), int16(24)), phrase: "unsupported datatype 128"},
		{name: "float128.nii", data: patch(good, 70, int16(1536), int16(128)), phrase: "unsupported datatype 1536"},
		{name: "complex128.nii", data: patch(good, 70, int16(1792), int16(128)), phrase: "unsupported datatype 1792"},
		{name: "complex256.nii", data: patch(good, 70, int16(2048), int16(256)), phrase: "unsupported datatype 2048"},
		{name: "rgba32.nii", data: patch(good, 70, int16(2304), int16(32)), phrase: "unsupported datatype 2304"},
		{name: "unknown_type.nii", data: patch(good, 70, int16(77), int16(16)), phrase: "unsupported datatype 77"},
		{name: "bitpix.nii", data: patch(good, 72, int16(16)), phrase: "bitpix 16 does not match"},
		{name: "dim0_zero.nii", data: patch(good, 40, int16(0)), phrase: "dim[0] = 0"},
		{name: "dim0_eight.nii", data: patch(good, 40, int16(8)), phrase: "dim[0] = 8"},
		{name: "dim_negative.nii", data: patch(good, 42, int16(-6)), phrase: "dim[1] = -6"},
		{name: "dim_zero.nii", data: patch(good, 48, int16(0)), phrase: "dim[4] = 0"},
		{name: "huge.nii", data: patch(good, 40, int16(4), int16(32767), int16(32767), int16(32767), int16(100)), phrase: "voxels per volume"},
		{name: "lying_size.nii", data: patch(good, 48, int16(1000)), phrase: "claimed data size larger than the file"},
		{name: "vox_offset_inside.nii", data: patch(good, 108, float32(100)), phrase: "vox_offset 100 lies inside the header"},
		{name: "vox_offset_fraction.nii", data: patch(good, 108, float32(352.5)), phrase: "vox_offset 352.5"},
		{name: "vox_offset_beyond.nii", data: patch(good, 108, float32(1e9)), phrase: "claimed data size larger than the file"},
		{name: "slope_inf.nii", data: patch(good, 112, float32(math.Inf(1))), phrase: "scl_slope +Inf"},
		{name: "slope_negative.nii", data: patch(good, 112, float32(-1)), phrase: "scl_slope -1"},
		{name: "inter_nan.nii", data: patch(good, 112, float32(2), float32(math.NaN())), phrase: "invalid scl_inter"},
		{name: "five_d.nii", data: patch(good, 40, int16(5), int16(6), int16(5), int16(4), int16(2), int16(6)), phrase: "name the time axis with --time-axis"},
		{name: "time_axis_absent.nii", data: good, phrase: "time axis 6 named, but the image has 4 dimensions", args: []string{"--time-axis", "6"}},
		{name: "five_d_no_index.nii", data: patch(good, 40, int16(5), int16(6), int16(5), int16(4), int16(2), int16(6)), phrase: "axis 4 has 2 entries besides the time axis 5; choose one with --index 4=I (0 to 1)", args: []string{"--time-axis", "5"}},
		{name: "five_d_index_range.nii", data: patch(good, 40, int16(5), int16(6), int16(5), int16(4), int16(2), int16(6)), phrase: "--index 4=2: axis 4 has 2 entries (0 to 1)", args: []string{"--time-axis", "5", "--index", "4=2"}},
		{name: "five_d_index_time.nii", data: patch(good, 40, int16(5), int16(6), int16(5), int16(4), int16(2), int16(6)), phrase: "--index 5=0: axis 5 is the time axis", args: []string{"--time-axis", "5", "--index", "4=0,5=0"}},
		{name: "index_absent.nii", data: good, phrase: "--index 6=0: the image has 4 dimensions", args: []string{"--index", "6=0"}},
		{name: "three_d.nii", data: patch(good, 40, int16(3)), phrase: "3D image"},
		{name: "two_volumes.nii", data: patch(good, 48, int16(2)), phrase: "2 volumes"},
		{name: "constant.nii", data: append(append([]byte(nil), good[:352]...), make([]byte, len(good)-352)...), phrase: "every series is constant"},
		{name: "truncated.nii.gz", data: gz(good)[:len(gz(good))/2], phrase: "truncated"},
		{name: "corrupt.nii.gz", data: patch(gz(good), 10, byte(7)), phrase: "corrupt gzip stream"},
		// Compression is recognised by its magic bytes, not the name: a plain header read as such.
		{name: "not_gzip.nii.gz", data: good[:hs], phrase: "claimed data size larger than the file"},
		{name: "pair_magic.nii", data: patch(good, 344, []byte("ni1\x00")), phrase: "separate .img"},
		{name: "empty.csv", data: []byte{}, phrase: "no data rows"},
		{name: "header_only.csv", data: []byte("a,b,c,d\n"), phrase: "no data rows"},
		{name: "one_row.csv", data: []byte("1,2,3,4\n"), phrase: "only 1 usable node"},
		{name: "two_columns.csv", data: []byte("1,2\n3,4\n5,7\n"), phrase: "2 time points"},
		{name: "ragged.csv", data: []byte("1,2,3,4\n1,2,3\n"), phrase: "line 2"},
		{name: "words.tsv", data: []byte("1\t2\t3\t4\n1\ttwo\t3\t4\n"), phrase: "line 2, column 2"},
		{name: "constant.csv", data: []byte("1,1,1,1\n2,2,2,2\n3,3,3,3\n"), phrase: "constant"},
		{name: "nan.csv", data: []byte("1,NaN,3,4\nNaN,2,3,4\n"), phrase: "NaN/Inf"},
		{name: "binary.csv", data: []byte("\x00\x01\x02\xff\xfe,1,2\n"), phrase: "at least 3 are needed"},
		{name: "bad_magic.npy", data: []byte("\x93NUMPX\x01\x00junkjunk"), phrase: "npy"},
		{name: "three_d.npy", data: npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }", make([]byte, 96)), phrase: "2D"},
		{name: "complex.npy", data: npy("{'descr': '<c8', 'fortran_order': False, 'shape': (3, 4), }", make([]byte, 96)), phrase: "c8"},
		{name: "truncated.npy", data: npy("{'descr': '<f8', 'fortran_order': False, 'shape': (30, 40), }", make([]byte, 100)), phrase: "truncated"},
		{name: "object.npy", data: npy("{'descr': '|O', 'fortran_order': False, 'shape': (3, 4), }", make([]byte, 96)), phrase: "|O"},
		{name: "missing.nii.gz", phrase: "no such file", setup: func(t *testing.T, path string) {}},
		// A folder is taken for a DICOM series folder; one named like a file is told apart.
		{name: "folder.nii.gz", phrase: "a folder, not a NIfTI file; taken for a DICOM folder, it holds no DICOM images", setup: func(t *testing.T, path string) { os.Mkdir(path, 0o755) }},
		{name: "folder.csv", phrase: "a folder, not a matrix file", setup: func(t *testing.T, path string) {
			os.Mkdir(path, 0o755)
			os.WriteFile(filepath.Join(path, "notes.txt"), []byte("not DICOM"), 0o600)
		}},
		{name: "series_folder", phrase: "no DICOM images found (0 file(s) looked at)", setup: func(t *testing.T, path string) { os.Mkdir(path, 0o755) }},
		{name: "loop.nii.gz", phrase: "too many levels of symbolic links", setup: func(t *testing.T, path string) { os.Symlink(path, path) }},
		{name: "unreadable.nii", phrase: "permission denied", setup: func(t *testing.T, path string) {
			if os.Geteuid() == 0 {
				t.Skip("root reads files whatever their mode")
			}
			os.WriteFile(path, good, 0o000)
		}},
	}
	corpus := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(corpus, c.name)
			if c.setup != nil {
				c.setup(t, path)
			} else if err := os.WriteFile(path, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			parent := t.TempDir()
			out := filepath.Join(parent, "bundle")
			args := append([]string{"run", path, "--out", out, "--backend", "cpu", "--metrics", "none"}, c.args...)
			code, stdout, stderr := runHelper(t, args...)
			if code != 1 {
				t.Fatalf("exit code %d, want 1\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			var errLines []string
			for _, l := range strings.Split(stderr, "\n") {
				if strings.HasPrefix(l, "hubscope-helper") {
					errLines = append(errLines, l)
				}
			}
			if len(errLines) != 1 {
				t.Fatalf("%d error lines, want 1:\n%s", len(errLines), stderr)
			}
			if !strings.Contains(errLines[0], c.name) || !strings.Contains(errLines[0], c.phrase) {
				t.Errorf("error line %q: want the file %s and %q", errLines[0], c.name, c.phrase)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("left %v where the bundle would be", ents)
			}
		})
	}
}
