package nifti

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// streamRaw reads every volume's stored values through the stream (ReadRawVolume) after
// offering the reader InflateAll when try is set: the values, what InflateAll returned, and
// the first error (Open's or a read's).
func streamRaw(path string, try bool) (stream, inflated []byte, err error) {
	r, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	if try {
		inflated, _ = r.InflateAll(nil)
	}
	vol := make([]byte, r.Header.VoxelsPerVolume()*r.Header.DataType.Size())
	for {
		switch err := r.ReadRawVolume(vol); {
		case err == io.EOF:
			return stream, inflated, nil
		case err != nil:
			return stream, inflated, err
		}
		stream = append(stream, vol...)
	}
}

// stdlibRaw is the reference: the whole file inflated by Go's compress/gzip (every member),
// the header's data cut out and put in this machine's byte order.
func stdlibRaw(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	h := r.Header
	out := append([]byte(nil), all[h.VoxOffset:h.VoxOffset+h.dataBytes()]...)
	if h.LittleEndian != nativeLittle {
		swapBytes(out, h.DataType.Size())
	}
	return out
}

// TestInflateAllMatchesStream: a .nii.gz of one gzip member inflated at once
// (Reader.InflateAll, libdeflate where the build has it) gives the stored values the stream
// gives volume by volume and Go's compress/gzip gives, byte for byte: generated NIfTI-1 and
// NIfTI-2 files in both byte orders, written by compress/gzip and by this package's writer,
// one with bytes after the data inside the member, and the real images in the shared data.
// Without libdeflate (purego, no cgo) InflateAll declines and the stream is unchanged.
func TestInflateAllMatchesStream(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	write := func(name string, b []byte) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, v := range []int{1, 2} {
		for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			write(filepath.Base(t.Name())+"-"+o.String()+itoa(v)+"-i16.nii.gz", gzipBytes(seedImage(t, v, o, Int16, []int{5, 4, 3, 7})))
			write(filepath.Base(t.Name())+"-"+o.String()+itoa(v)+"-f64.nii.gz", gzipBytes(seedImage(t, v, o, Float64, []int{3, 4, 2, 5})))
		}
	}
	write("trailing.nii.gz", gzipBytes(append(seedImage(t, 1, binary.LittleEndian, Int16, []int{4, 3, 2, 6}), "bytes after the data"...)))
	ours := filepath.Join(dir, "ours.nii.gz")
	h := NewHeader([]int{6, 5, 4, 9}, Float32, testAffine(), 2)
	data := make([]float32, 6*5*4*9)
	for i := range data {
		data[i] = float32(i%97) * 0.5
	}
	if err := WriteImage(ours, h, data); err != nil {
		t.Fatal(err)
	}
	paths = append(paths, ours)
	check := func(t *testing.T, p string) {
		want := stdlibRaw(t, p)
		stream, _, err := streamRaw(p, false)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(stream, want) {
			t.Fatalf("%s: the stream's values differ from compress/gzip's", p)
		}
		after, inflated, err := streamRaw(p, true)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !libdeflateBuilt && inflated != nil:
			t.Fatalf("%s: InflateAll gave values in a build without libdeflate", p)
		case !libdeflateBuilt:
			if !bytes.Equal(after, want) {
				t.Fatalf("%s: the stream after a declined InflateAll differs", p)
			}
		case !bytes.Equal(inflated, want):
			t.Fatalf("%s: InflateAll's %d bytes differ from compress/gzip's %d", p, len(inflated), len(want))
		case len(after) != 0:
			t.Fatalf("%s: %d bytes read after InflateAll; want io.EOF at once", p, len(after))
		}
	}
	for _, p := range paths {
		check(t, p)
	}
	t.Run("shared", func(t *testing.T) {
		n := 0
		for _, p := range sharedData(t) {
			if strings.HasSuffix(p, ".gz") {
				check(t, p)
				n++
			}
		}
		t.Logf("%d real .nii.gz files", n)
	})
}

// errSame marks a bad file whose error is only compared with the stream's.
var errSame = errors.New("the stream's error")

// TestInflateAllDeclines: InflateAll declines what it cannot decode in one call as one member
// — several gzip members, truncated files, corrupt data, CRC-32 or size trailers, bytes after
// the member, a plain .nii, a read already begun — and the stream then behaves exactly as
// without it: the same values, or the same one-line error naming the file.
func TestInflateAllDeclines(t *testing.T) {
	dir := t.TempDir()
	img := seedImage(t, 1, binary.LittleEndian, Int16, []int{8, 6, 5, 12})
	gz := gzipBytes(img)
	half := len(img) / 2
	two := append(gzipBytes(img[:half]), gzipBytes(img[half:])...)
	flip := func(b []byte, at int) []byte {
		c := append([]byte(nil), b...)
		c[at] ^= 0x55
		return c
	}
	n := len(gz)
	cases := []struct {
		name string
		b    []byte
		want error // nil: reads succeed with the image's values
	}{
		{"two-members.nii.gz", two, nil},
		{"plain.nii", img, nil},
		{"cut-mid.nii.gz", gz[:n/2], ErrTruncated},
		{"cut-trailer.nii.gz", gz[:n-4], ErrTruncated},
		{"cut-last-byte.nii.gz", gz[:n-1], ErrTruncated},
		{"corrupt-data.nii.gz", flip(gz, n/2), ErrCorruptGzip},
		{"corrupt-crc.nii.gz", flip(gz, n-6), ErrCorruptGzip},
		{"corrupt-size.nii.gz", flip(gz, n-2), ErrCorruptGzip},
		// The stream reports these as "truncated data: got N of N bytes" (klauspost's reader
		// finds no second member's header): only the sameness is checked here.
		{"garbage-after.nii.gz", append(append([]byte(nil), gz...), "not gzip"...), errSame},
	}
	want := append([]byte(nil), img[352:]...)
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.b, 0o644); err != nil {
			t.Fatal(err)
		}
		plain, _, perr := streamRaw(p, false)
		got, inflated, err := streamRaw(p, true)
		if inflated != nil {
			t.Fatalf("%s: InflateAll gave %d bytes; want it to decline", c.name, len(inflated))
		}
		if c.want == nil {
			if err != nil || perr != nil || !bytes.Equal(got, want) || !bytes.Equal(plain, want) {
				t.Fatalf("%s: errors %v / %v, values equal %v / %v", c.name, err, perr, bytes.Equal(got, want), bytes.Equal(plain, want))
			}
			continue
		}
		if err == nil || perr == nil || err.Error() != perr.Error() || (c.want != errSame && !errors.Is(err, c.want)) {
			t.Fatalf("%s: error %v; without InflateAll %v; want the same error, wrapping %v", c.name, err, perr, c.want)
		}
		if msg := err.Error(); !strings.Contains(msg, p) || strings.Contains(msg, "\n") {
			t.Fatalf("%s: %q: want one line naming the file", c.name, msg)
		}
		if !bytes.Equal(got, plain) {
			t.Fatalf("%s: %d bytes read before the error, %d without InflateAll", c.name, len(got), len(plain))
		}
	}
	// A small file whose header and forged trailer both claim 64 MB: no buffer is sized from
	// them (deflate expands at most 1032-fold), and the stream finds the size trailer false.
	big := NewHeader([]int{256, 256, 256, 2}, Int16, testAffine(), 2)
	forged := gzipBytes(append(rawHeader(t, 1, binary.LittleEndian, &big, false), make([]byte, 4096)...))
	binary.LittleEndian.PutUint32(forged[len(forged)-4:], uint32(big.VoxOffset+big.dataBytes()))
	fp := filepath.Join(dir, "forged-size.nii.gz")
	if err := os.WriteFile(fp, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	fr, err := Open(fp)
	if err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	v, _ := fr.InflateAll(nil)
	runtime.ReadMemStats(&m1)
	fr.Close()
	if v != nil || m1.TotalAlloc-m0.TotalAlloc > 1<<20 {
		t.Fatalf("forged size: InflateAll gave %d bytes, allocated %d", len(v), m1.TotalAlloc-m0.TotalAlloc)
	}
	if _, _, err := streamRaw(fp, true); !errors.Is(err, ErrCorruptGzip) || !strings.Contains(err.Error(), fp) {
		t.Fatalf("forged size: %v; want a corrupt stream, naming the file", err)
	}

	// A read already begun: InflateAll declines, and the rest of the stream follows.
	p := filepath.Join(dir, "begun.nii.gz")
	if err := os.WriteFile(p, gz, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	vol := make([]byte, 8*6*5*2)
	if err := r.ReadRawVolume(vol); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.InflateAll(nil); v != nil {
		t.Fatal("InflateAll after a volume was read gave values")
	}
	if err := r.ReadRawVolume(vol); err != nil || !bytes.Equal(vol, want[len(vol):2*len(vol)]) {
		t.Fatalf("second volume after a declined InflateAll: %v", err)
	}
}
