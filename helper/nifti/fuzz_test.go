package nifti

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// seedImage is a small valid single-file image (header, extension flag, data) in the given
// version and byte order.
func seedImage(t testing.TB, version int, order binary.ByteOrder, dt DataType, dims []int) []byte {
	h := NewHeader(dims, dt, testAffine(), 2)
	b := rawHeader(t, version, order, &h, false)
	n := h.VoxelsPerVolume() * h.Volumes() * dt.Size()
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i * 7)
	}
	return append(b, data...)
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// FuzzHeader feeds arbitrary bytes to the header parser: it must never panic, and whatever
// it accepts must be a header whose sizes cannot overflow and that survives re-encoding.
func FuzzHeader(f *testing.F) {
	for _, v := range []int{1, 2} {
		for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			f.Add(seedImage(f, v, o, Int16, []int{3, 2, 2, 2})[:headerSize(v)])
			f.Add(seedImage(f, v, o, Float64, []int{2, 2, 1})[:headerSize(v)])
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, _, err := decodeHeader(b)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := h.Validate(); err != nil {
			t.Fatalf("decodeHeader accepted a header Validate rejects: %v", err)
		}
		if v := int64(h.VoxelsPerVolume()); v < 1 || v > MaxVoxelsPerVolume {
			t.Fatalf("voxels per volume %d out of range", v)
		}
		if n := h.dataBytes(); n < 0 || n > MaxDataBytes {
			t.Fatalf("data bytes %d out of range", n)
		}
		_ = h.Affine()
		_ = h.QformAffine()
		_ = h.TR()
		if h.TRSource() == "" {
			t.Fatal("no TR statement")
		}
		for _, w := range h.Check() {
			if w.Field == "" || w.Problem == "" || w.Fix == "" || w.Level < LevelInfo || w.Level > LevelError {
				t.Fatalf("incomplete warning %+v", w)
			}
		}
		enc, err := encodeNifti1(&h)
		if err != nil {
			return // NIfTI-2 sizes beyond int16
		}
		g, pair, err := decodeHeader(enc)
		if err != nil || pair {
			t.Fatalf("re-encoded header does not decode: %v (pair %v)", err, pair)
		}
		if g.Dim != normalisedDims(h) || g.DataType != h.DataType {
			t.Fatalf("re-encoded header: dims %v type %v, want %v %v", g.Dim, g.DataType, normalisedDims(h), h.DataType)
		}
	})
}

// normalisedDims is Dim as the writer stores it: unused axes set to 1.
func normalisedDims(h Header) [8]int64 {
	d := h.Dim
	for i := d[0] + 1; i < 8; i++ {
		d[i] = 1
	}
	return d
}

// FuzzGzip opens arbitrary bytes as a .nii.gz file and reads what it can: no panics, no
// allocation beyond a volume, every failure an error naming the file; and whatever
// Reader.InflateAll decodes at once (libdeflate) is what the stream reads without error.
func FuzzGzip(f *testing.F) {
	f.Add(gzipBytes(seedImage(f, 1, binary.LittleEndian, Int16, []int{3, 2, 2, 2})))
	f.Add(gzipBytes(seedImage(f, 2, binary.BigEndian, Float32, []int{2, 3, 2})))
	f.Add(gzipBytes(seedImage(f, 1, binary.BigEndian, Uint8, []int{4, 1, 1, 3})))
	f.Add(seedImage(f, 1, binary.LittleEndian, Int8, []int{2, 2, 2}))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "fuzz.nii.gz")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			if !bytes.Contains([]byte(err.Error()), []byte("fuzz.nii.gz")) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		defer r.Close()
		n := r.Header.VoxelsPerVolume()
		if n > 1<<16 {
			return // a valid header for a large image; reading it is not this target's concern
		}
		if whole := inflateAllOf(path); whole != nil {
			raw := make([]byte, n*r.Header.DataType.Size())
			var stream []byte
			for {
				err := r.ReadRawVolume(raw)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("InflateAll decoded %d bytes that the stream fails on: %v", len(whole), err)
				}
				stream = append(stream, raw...)
			}
			if !bytes.Equal(whole, stream) {
				t.Fatalf("InflateAll's %d bytes differ from the stream's %d", len(whole), len(stream))
			}
			return
		}
		vol := make([]float32, n)
		for v := 0; ; v++ {
			err := r.ReadVolume(vol)
			if errors.Is(err, io.EOF) {
				if v != r.Header.Volumes() {
					t.Fatalf("io.EOF after %d of %d volumes", v, r.Header.Volumes())
				}
				return
			}
			if err != nil {
				if !bytes.Contains([]byte(err.Error()), []byte("fuzz.nii.gz")) {
					t.Fatalf("error does not name the file: %v", err)
				}
				return
			}
		}
	})
}

// inflateAllOf is what Reader.InflateAll gives for path on a fresh Reader (nil when it
// declines or the file does not open).
func inflateAllOf(path string) []byte {
	r, err := Open(path)
	if err != nil {
		return nil
	}
	defer r.Close()
	v, _ := r.InflateAll(nil)
	return v
}
