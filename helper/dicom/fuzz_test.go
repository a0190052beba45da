package dicom

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/dicom/dicomtest"
)

// FuzzReadHeader: any bytes either read as a header or fail with ErrNotDICOM or a
// *CorruptError — never a panic, a hang or an unbounded allocation.
func FuzzReadHeader(f *testing.F) {
	f.Add(dicomtest.Build("1.2.840.10008.5.1.4.1.1.4", "1.2.840.10008.1.2", false, []dicomtest.Element{
		{Tag: 0x0008103E, VR: "LO", Value: []byte("rest")}, {Tag: 0x7FE00010, VR: "OW", Value: make([]byte, 8)}}))
	f.Add(dicomtest.DICOMDIR([]string{"A/B"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ReadHeader(bytes.NewReader(b), int64(len(b)))
		var ce *CorruptError
		switch {
		case err == nil:
			if h.PixelBytes > int64(len(b)) {
				t.Fatalf("pixel data of %d bytes in a %d-byte file accepted", h.PixelBytes, len(b))
			}
		case errors.Is(err, ErrNotDICOM), errors.As(err, &ce):
		default:
			t.Fatalf("unexpected error type %T: %v", err, err)
		}
		// Unknown size (a stream) must not hang either.
		ReadHeader(bytes.NewReader(b), -1)
	})
}

// FuzzZip: any bytes given as a .zip either extract inside the private folder only (every
// file under it, none outside, no links) or are refused with nothing left behind.
func FuzzZip(f *testing.F) {
	for _, names := range [][]string{{"a/IM_0001"}, {"../evil"}, {"a/../../evil"}} {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, n := range names {
			w, _ := zw.Create(n)
			w.Write([]byte("DICM"))
		}
		zw.Close()
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		z := filepath.Join(root, "in.zip")
		if err := os.WriteFile(z, b, 0o600); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(root, "tmp")
		os.Mkdir(tmp, 0o700)
		src, err := openZip(z, tmp)
		if err != nil {
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Fatalf("refused (%v) but left %d entries", err, len(ents))
			}
		} else {
			for _, p := range src.Files {
				if rel, err := filepath.Rel(src.tmp, p); err != nil || !filepath.IsLocal(rel) {
					t.Fatalf("extracted %s outside %s", p, src.tmp)
				}
			}
			filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type()&fs.ModeSymlink != 0 {
					t.Fatalf("link extracted: %s", p)
				}
				return nil
			})
			src.Close()
		}
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if e.Name() != "in.zip" && e.Name() != "tmp" && !strings.HasPrefix(e.Name(), ".") {
				t.Fatalf("written beside the zip: %s", e.Name())
			}
		}
	})
}
