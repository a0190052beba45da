package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirAndRequire(t *testing.T) {
	tmp := t.TempDir()
	if err := os.WriteFile(filepath.Join(tmp, "scan.nii"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HUBSCOPE_DATA", tmp)
	if Dir() != tmp {
		t.Fatalf("Dir = %s with HUBSCOPE_DATA=%s", Dir(), tmp)
	}
	if p := Path(t, "scan.nii"); p != filepath.Join(tmp, "scan.nii") {
		t.Fatalf("Path = %s", p)
	}
	t.Setenv("HUBSCOPE_DATA", "")
	if d := Dir(); filepath.Base(d) != "data" || filepath.Base(filepath.Dir(d)) != "shared" || !filepath.IsAbs(d) {
		t.Fatalf("Dir without HUBSCOPE_DATA = %s, want …/shared/data beside the repository", d)
	}
}

func repoRootForTest() string {
	wd, _ := os.Getwd() // …/internal/shareddata
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

func TestRootIsTheRepository(t *testing.T) {
	t.Setenv("HUBSCOPE_DATA", "")
	root := repoRootForTest()
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository root %s has no go.mod: %v", root, err)
	}
	if want := filepath.Join(filepath.Dir(root), "shared", "data"); Dir() != want {
		t.Fatalf("Dir = %s, want %s", Dir(), want)
	}
}
