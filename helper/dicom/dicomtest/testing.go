package dicomtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// Data is the folder of real scanner DICOM and dcm2niix's reference conversions (DataDir);
// the test is skipped without it, and fails under HUBSCOPE_STRICT (where the data must be
// present).
func Data(t testing.TB) string {
	t.Helper()
	dir := DataDir()
	_, err := os.Stat(filepath.Join(dir, "ref"))
	if dir == "" || err != nil {
		need(t, "DICOM test data missing (set HUBSCOPE_DATA): %v", err)
	}
	return dir
}

// Tool returns what find returns — dcm2niix, passing dicom.FindTool (this package cannot
// import package dicom, whose tests use it) — skipping the test where it is not installed
// and failing it under HUBSCOPE_STRICT, where scripts/setup-deps.sh installs it.
func Tool[T any](t testing.TB, find func(context.Context) (T, error)) T {
	t.Helper()
	tool, err := find(t.Context())
	if err != nil {
		need(t, "dcm2niix: %v", err)
	}
	return tool
}

// Converted is Data for a test that converts the data too: it also needs dcm2niix (find:
// dicom.FindTool).
func Converted[T any](t testing.TB, find func(context.Context) (T, error)) string {
	t.Helper()
	Tool(t, find)
	return Data(t)
}

func need(t testing.TB, format string, args ...any) {
	t.Helper()
	if pyref.Strict() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}
