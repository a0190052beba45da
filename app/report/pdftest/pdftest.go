// Package pdftest reads a PDF back the way a reader of the report would: rendered by poppler's
// pdftoppm and its text extracted by pdftotext. Tests skip without poppler-utils, except under
// HUBSCOPE_STRICT=1 (CI; scripts/setup-deps.sh's test profile installs them).
package pdftest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Read renders every page of pdf to PNG (pdftoppm, 40 dpi) and extracts its text
// (pdftotext -layout, UTF-8); it returns the text and the number of pages rendered.
func Read(t testing.TB, pdf []byte) (text string, pages int) {
	t.Helper()
	for _, tool := range []string{"pdftoppm", "pdftotext"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("HUBSCOPE_STRICT") == "1" {
				t.Fatalf("%s not found (poppler-utils) and HUBSCOPE_STRICT=1", tool)
			}
			t.Skipf("%s not found (install poppler-utils)", tool)
		}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "report.pdf")
	if err := os.WriteFile(in, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("pdftoppm", "-r", "40", "-png", in, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	rendered, _ := filepath.Glob(filepath.Join(dir, "page*.png"))
	out, err := exec.Command("pdftotext", "-layout", "-enc", "UTF-8", in, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out), len(rendered)
}
