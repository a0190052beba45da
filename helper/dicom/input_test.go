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

// copyDir copies the regular files of src into dst (created).
func copyDir(t *testing.T, src, dst string) []string {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, e.Name())
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

type zipEntry struct {
	name string
	data []byte
	mode fs.FileMode
}

func writeZip(t *testing.T, path string, entries []zipEntry) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// empty fails unless dir holds nothing (nothing left behind after a refusal).
func empty(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("left behind in %s: %s", dir, e.Name())
	}
}

func TestZipRefusals(t *testing.T) {
	zeros := make([]byte, 4<<20) // deflates ~4000-fold: past MaxZipRatio
	cases := []struct {
		name    string
		entries []zipEntry
		want    string
	}{
		{"slip-dotdot", []zipEntry{{name: "../../evil.dcm", data: []byte("x")}}, "zip-slip"},
		{"slip-inner", []zipEntry{{name: "a/../../evil.dcm", data: []byte("x")}}, "zip-slip"},
		{"slip-absolute", []zipEntry{{name: "/tmp/evil.dcm", data: []byte("x")}}, "zip-slip"},
		{"slip-backslash", []zipEntry{{name: `..\evil.dcm`, data: []byte("x")}}, "zip-slip"},
		{"slip-drive", []zipEntry{{name: "C:/evil.dcm", data: []byte("x")}}, "zip-slip"},
		{"symlink", []zipEntry{{name: "link", data: []byte("/etc/passwd"), mode: fs.ModeSymlink | 0o777}}, "link"},
		{"bomb-ratio", []zipEntry{{name: "zeros.dcm", data: zeros}}, "zip bomb"},
		{"duplicate", []zipEntry{{name: "a.dcm", data: []byte("x")}, {name: "a.dcm", data: []byte("y")}}, "twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			z := filepath.Join(dir, "export.zip")
			writeZip(t, z, c.entries)
			tmp := t.TempDir()
			_, err := Prepare(t.Context(), z, Options{TempDir: tmp})
			var ze *ZipError
			if !errors.As(err, &ze) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), z) {
				t.Fatalf("got %v, want a ZipError naming %s and %q", err, z, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
			empty(t, tmp)
			if _, err := os.Stat(filepath.Join(dir, "..", "evil.dcm")); err == nil {
				t.Error("zip-slip wrote outside")
			}
		})
	}
}

func TestZipBounds(t *testing.T) {
	defer func(n int, e, tot int64) { MaxZipEntries, MaxZipEntryBytes, MaxZipTotalBytes = n, e, tot }(MaxZipEntries, MaxZipEntryBytes, MaxZipTotalBytes)
	dir := t.TempDir()
	z := filepath.Join(dir, "export.zip")
	var ents []zipEntry
	for _, n := range []string{"a", "b", "c", "d"} {
		ents = append(ents, zipEntry{name: n + ".dcm", data: bytes.Repeat([]byte(n), 1000)})
	}
	writeZip(t, z, ents)
	for _, c := range []struct {
		name       string
		n          int
		entry, tot int64
		want       string
	}{
		{"entries", 3, 1 << 20, 1 << 20, "4 entries"},
		{"entry-size", 10, 999, 1 << 20, "one file"},
		{"total", 10, 1 << 20, 3999, "in all"},
	} {
		MaxZipEntries, MaxZipEntryBytes, MaxZipTotalBytes = c.n, c.entry, c.tot
		tmp := t.TempDir()
		_, err := Prepare(t.Context(), z, Options{TempDir: tmp})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "zip bomb") {
			t.Errorf("%s: got %v", c.name, err)
		}
		empty(t, tmp)
		// The expansion bound holds even where the declared sizes lie: extract directly.
		zr, err := zip.OpenReader(z)
		if err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		_, xerr := extractZip(z, &zr.Reader, out)
		zr.Close()
		if c.name != "entries" && (xerr == nil || !strings.Contains(xerr.Error(), "zip bomb")) {
			t.Errorf("%s: extraction past the bound not refused: %v", c.name, xerr)
		}
	}
}

func TestZipConverts(t *testing.T) {
	data := dicomData(t)
	needTool(t)
	var ents []zipEntry
	for _, p := range copyDir(t, filepath.Join(data, "ax_asc_35sl"), t.TempDir()) {
		b, _ := os.ReadFile(p)
		ents = append(ents, zipEntry{name: "export/DICOM/" + filepath.Base(p), data: b})
	}
	ents = append(ents, zipEntry{name: "export/README.txt", data: []byte("not DICOM")})
	z := filepath.Join(t.TempDir(), "scan.zip")
	writeZip(t, z, ents)
	tmp := t.TempDir()
	p, err := Prepare(t.Context(), z, Options{TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p.NIfTI)
	want, _ := os.ReadFile(filepath.Join(data, "ref", "ax_asc_35sl_6.nii"))
	if !bytes.Equal(got, want) || p.Kind != "zip" || p.Listing.Skipped != 1 {
		t.Errorf("zip conversion: %d bytes (want %d), kind %s, skipped %d", len(got), len(want), p.Kind, p.Listing.Skipped)
	}
	// The extracted files are gone already; only the converted pair stays until Remove.
	var left []string
	filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, filepath.Base(p))
		}
		return nil
	})
	if strings.Join(left, ",") != "series_6.json,series_6.nii" {
		t.Errorf("temporary folder holds %v", left)
	}
	grepIdentity(t, tmp, p.Series.Identities())
	p.Remove()
	empty(t, tmp)
}

func TestDICOMDIR(t *testing.T) {
	data := dicomData(t)
	dir := t.TempDir()
	files := copyDir(t, filepath.Join(data, "sag_int_36sl"), filepath.Join(dir, "DICOM", "S1"))
	var refs []string
	for _, f := range files {
		refs = append(refs, "DICOM/S1/"+strings.ToUpper(filepath.Base(f))) // case differs on disk
	}
	dd := filepath.Join(dir, "DICOMDIR")
	if err := os.WriteFile(dd, dicomtest.DICOMDIR(refs), 0o644); err != nil {
		t.Fatal(err)
	}
	// A stray file outside the DICOMDIR's records is not read.
	os.WriteFile(filepath.Join(dir, "DICOM", "stray.dcm"), []byte("DICM but not really"), 0o644)
	src, err := Open(dd, "")
	if err != nil {
		t.Fatal(err)
	}
	if src.Kind != "DICOMDIR" || len(src.Files) != 2 {
		t.Fatalf("DICOMDIR: kind %s, files %v", src.Kind, src.Files)
	}
	lst, err := List(t.Context(), src)
	if err != nil || len(lst.Series) != 1 || lst.Series[0].Number != 21 {
		t.Fatalf("DICOMDIR listing: %v %+v", err, lst)
	}
	// A referenced file that is missing, and one outside the folder, are refused.
	os.WriteFile(dd, dicomtest.DICOMDIR(append(refs, "DICOM/S1/GONE")), 0o644)
	if _, err := Open(dd, ""); err == nil || !strings.Contains(err.Error(), "1 of the 3 files it references are missing (first: DICOM/S1/GONE)") {
		t.Errorf("missing file: %v", err)
	}
	os.WriteFile(dd, dicomtest.DICOMDIR([]string{"../etc/passwd"}), 0o644)
	if _, err := Open(dd, ""); err == nil || !strings.Contains(err.Error(), "outside its folder") {
		t.Errorf("escaping reference: %v", err)
	}
}
