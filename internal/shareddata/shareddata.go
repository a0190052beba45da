// Package shareddata finds the project's shared test data (real scans, reference templates,
// scanner DICOM): the folder $HUBSCOPE_DATA names, else ../shared/data beside the repository.
// The data are not in the repository; tests that need them skip with a message saying what is
// missing and where it was looked for, and fail instead under HUBSCOPE_STRICT=1 (as CI runs).
package shareddata

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is the shared data folder: $HUBSCOPE_DATA, else shared/data beside the repository's
// root. It may not exist.
func Dir() string {
	if d := os.Getenv("HUBSCOPE_DATA"); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0) // …/internal/shareddata/shareddata.go
	if !ok {
		return filepath.Join("..", "shared", "data")
	}
	root := filepath.Join(filepath.Dir(file), "..", "..")
	return filepath.Clean(filepath.Join(root, "..", "shared", "data"))
}

// Strict reports whether missing data fail the test (HUBSCOPE_STRICT=1) instead of skipping it.
func Strict() bool { return os.Getenv("HUBSCOPE_STRICT") == "1" }

// Require returns Dir when every named file or folder (relative to it) exists; otherwise it
// skips the test, or fails it under HUBSCOPE_STRICT=1, naming what is missing.
func Require(t testing.TB, names ...string) string {
	t.Helper()
	dir := Dir()
	if len(names) == 0 {
		names = []string{"."}
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			msg := "shared test data missing: " + filepath.Join(dir, n) + " (set HUBSCOPE_DATA to the folder, or put it at ../shared/data beside the repository)"
			if Strict() {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return dir
}

// Path returns the path of one file of the shared data, skipping (or, under
// HUBSCOPE_STRICT=1, failing) the test when it is absent.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	name := filepath.Join(elem...)
	return filepath.Join(Require(t, name), name)
}
