package dicomtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/nifti"
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

// BoxMask writes a 16×16×10 box inside the brain of the ax_asc_35sl series, on the grid of its
// dcm2niix reference (the conversion's exact grid), and returns its path: as a mask it keeps a
// converted run quick under the race detector (the automatic mask's 31,000 voxels correlate
// 20-fold slower there). data is the DICOM test data folder (Data).
func BoxMask(t testing.TB, data string) string {
	t.Helper()
	ref, err := nifti.Open(filepath.Join(data, "ref", "ax_asc_35sl_6.nii"))
	if err != nil {
		t.Fatal(err)
	}
	mh := nifti.NewHeader([]int{64, 64, 35}, nifti.Uint8, ref.Header.Affine(), 0)
	ref.Close()
	box := make([]float32, 64*64*35)
	for k := 12; k < 22; k++ {
		for j := 24; j < 40; j++ {
			for i := 24; i < 40; i++ {
				box[i+64*(j+64*k)] = 1
			}
		}
	}
	mask := filepath.Join(t.TempDir(), "box.nii.gz")
	if err := nifti.WriteImage(mask, mh, box); err != nil {
		t.Fatal(err)
	}
	return mask
}
