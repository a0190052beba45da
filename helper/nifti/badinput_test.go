package nifti

import (
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// validImage is a small little-endian NIfTI-1 single file: 4×3×2×2 int16.
func validImage(t testing.TB) (Header, []byte) {
	h := NewHeader([]int{4, 3, 2, 2}, Int16, testAffine(), 2)
	b := rawHeader(t, 1, binary.LittleEndian, &h, false)
	return h, append(b, make([]byte, 4*3*2*2*2)...)
}

// patched returns a copy of b with the bytes at off replaced.
func patched(b []byte, off int, with []byte) []byte {
	c := append([]byte(nil), b...)
	copy(c[off:], with)
	return c
}

func le16(v int16) []byte    { return binary.LittleEndian.AppendUint16(nil, uint16(v)) }
func lef32(v float32) []byte { return binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)) }

// readEverything opens a file and reads all its volumes, returning the first error.
func readEverything(path string) error {
	r, err := Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	if r.Header.VoxelsPerVolume() > 1<<20 {
		_, _, err := ReadImage(path)
		return err
	}
	vol := make([]float32, r.Header.VoxelsPerVolume())
	for {
		if err := r.ReadVolume(vol); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func TestBadInputs(t *testing.T) {
	_, good := validImage(t)
	gz := gzipBytes(good)
	// A gzip stream whose first deflate block header (byte 10, after the 10-byte gzip header)
	// names the reserved block type 3.
	corrupt := patched(gz, 10, []byte{0x07})
	// A gzip stream whose CRC-32 trailer is wrong: the data decompress fine, the check fails.
	badCRC := append([]byte(nil), gz...)
	badCRC[len(badCRC)-8] ^= 0xff

	// NIfTI-2 header claiming 2^40 × 2^40 voxels (product overflows int64 once × 2^40 again).
	h2 := NewHeader([]int{2, 2, 2}, Int16, testAffine(), 0)
	huge2 := rawHeader(t, 2, binary.LittleEndian, &h2, false)
	for i, d := range []uint64{3, 1 << 40, 1 << 40, 1 << 40} {
		binary.LittleEndian.PutUint64(huge2[16+8*i:], d)
	}
	// NIfTI-2 header claiming 2^40 voxels in 1024 volumes of 2^30: fine for the header, far
	// more than the tiny file holds.
	tera := rawHeader(t, 2, binary.LittleEndian, &h2, false)
	for i, d := range []uint64{4, 1024, 1024, 1024, 1024} {
		binary.LittleEndian.PutUint64(tera[16+8*i:], d)
	}
	tera = append(tera, make([]byte, 4096)...)

	cases := []struct {
		name, file string
		data       []byte
		phrase     string
		kind       error
	}{
		{"truncated header", "short.nii", good[:120], "truncated header: got 120 of 348 bytes", ErrTruncated},
		{"truncated gzip header", "short.nii.gz", gzipBytes(good[:120]), "truncated header: got 120 of 348 bytes", ErrTruncated},
		{"empty file", "empty.nii", nil, "truncated header: got 0 of 348 bytes", ErrTruncated},
		{"wrong magic", "magic.nii", patched(good, 344, []byte("abc\x00")), "wrong magic", ErrNotNifti},
		{"not nifti", "text.nii", []byte(strings.Repeat("hello world\n", 40)), "not a NIfTI header", ErrNotNifti},
		{"pair magic in single file", "pairmagic.nii", patched(good, 344, []byte("ni1\x00")), "separate .img", ErrInvalidHeader},
		{"RGB", "rgb.nii", patched(patched(good, 70, le16(128)), 72, le16(24)), "unsupported datatype 128 (RGB24)", ErrUnsupportedDatatype},
		{"complex", "cplx.nii", patched(patched(good, 70, le16(32)), 72, le16(64)), "unsupported datatype 32 (complex64)", ErrUnsupportedDatatype},
		{"bitpix", "bitpix.nii", patched(good, 72, le16(8)), "bitpix 8 does not match datatype int16", ErrInvalidHeader},
		{"dim0 zero", "dim0.nii", patched(good, 40, le16(0)), "dim[0] = 0", ErrInvalidHeader},
		{"dim0 eight", "dim8.nii", patched(good, 40, le16(8)), "dim[0] = 8", ErrInvalidHeader},
		{"dim zero", "dimz.nii", patched(good, 44, le16(0)), "dim[2] = 0", ErrInvalidHeader},
		{"dim negative", "dimneg.nii", patched(good, 46, le16(-5)), "dim[3] = -5", ErrInvalidHeader},
		{"nifti1 huge", "big1.nii", patched(good, 40, append(le16(7), le16(32767)[0], le16(32767)[1], 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f)),
			"overflow a 64-bit voxel count", ErrTooLarge},
		{"nifti1 volume too large", "big3.nii", patched(good, 40, append(le16(3), 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f)),
			"voxels per volume", ErrTooLarge},
		{"overflow", "overflow.nii", huge2, "overflow a 64-bit voxel count", ErrTooLarge},
		{"claimed size", "tera.nii", tera, "claimed data size larger than the file", ErrTruncated},
		{"claimed size small", "short_data.nii", good[:len(good)-10], "header says 96 bytes of int16 data at offset 352, file has 438 bytes", ErrTruncated},
		{"vox_offset in header", "off.nii", patched(good, 108, lef32(100)), "vox_offset 100 lies inside the header", ErrInvalidHeader},
		{"vox_offset absurd", "offbig.nii", patched(good, 108, lef32(1e12)), "vox_offset", ErrInvalidHeader},
		{"vox_offset fraction", "offfrac.nii", patched(good, 108, lef32(352.5)), "vox_offset 352.5", ErrInvalidHeader},
		{"scl_inter", "inter.nii", patched(patched(good, 112, lef32(2)), 116, lef32(float32(math.Inf(1)))), "invalid scl_inter", ErrInvalidHeader},
		{"not gzip", "plain_named.nii.gz", []byte(strings.Repeat("x", 400)), "corrupt gzip stream", ErrCorruptGzip},
		{"corrupt deflate", "corrupt.nii.gz", corrupt, "corrupt gzip stream", ErrCorruptGzip},
		{"bad crc", "crc.nii.gz", badCRC, "corrupt gzip stream", ErrCorruptGzip},
		{"truncated gzip data", "cut.nii.gz", gzipBytes(good[:len(good)-20]), "truncated data: got 76 of 96 bytes", ErrTruncated},
		{"truncated gzip file", "cutfile.nii.gz", gz[:len(gz)-12], "truncated data", ErrTruncated},
		{"tera gzip", "tera.nii.gz", gzipBytes(tera), "truncated data: got 4096 of 2199023255552 bytes", ErrTruncated},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			if err := os.WriteFile(path, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := readEverything(path)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatalf("no error; want %q", c.phrase)
			}
			msg := err.Error()
			if !strings.Contains(msg, path) || !strings.Contains(msg, c.phrase) {
				t.Errorf("error %q; want the file name and %q", msg, c.phrase)
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("error %q is not %v", msg, c.kind)
			}
			// One volume of the largest claim here is 2^30 values: reading must not size
			// anything from the claim, only from the data that arrive.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
				t.Errorf("allocated %d MiB for a bad input", grew>>20)
			}
		})
	}
}

func TestMissingFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "absent.nii.gz")
	if _, err := Open(path); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("missing file: %v", err)
	}
	// A header without its image, and an image without its header.
	h, _ := validImage(t)
	os.WriteFile(filepath.Join(dir, "lonely.hdr"), rawHeader(t, 1, binary.LittleEndian, &h, true), 0o600)
	_, err := Open(filepath.Join(dir, "lonely.hdr"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "lonely.hdr") || !strings.Contains(err.Error(), "lonely.img") {
		t.Errorf("header without image: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "orphan.img"), make([]byte, 96), 0o600)
	_, err = Open(filepath.Join(dir, "orphan.img"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "orphan.hdr") {
		t.Errorf("image without header: %v", err)
	}
	// A pair whose image is shorter than the header claims.
	os.WriteFile(filepath.Join(dir, "lonely.img"), make([]byte, 50), 0o600)
	_, err = Open(filepath.Join(dir, "lonely.hdr"))
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "lonely.img") {
		t.Errorf("short .img: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("directory: %v", err)
	}
}

// TestReadVolumeMisuse: wrong destination size, reading after Close.
func TestReadVolumeMisuse(t *testing.T) {
	_, good := validImage(t)
	path := filepath.Join(t.TempDir(), "ok.nii")
	os.WriteFile(path, good, 0o600)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ReadVolume(make([]float32, 5)); err == nil || !strings.Contains(err.Error(), "ok.nii") {
		t.Errorf("short destination: %v", err)
	}
	r.Close()
	if err := r.ReadVolume(make([]float32, 24)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("after Close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
