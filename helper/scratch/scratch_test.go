package scratch

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSweep: a finished process's folder and file are removed; this process's, names
// without a PID (other programs', older helpers') and other prefixes stay.
func TestSweep(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no signal 0: Sweep removes nothing here")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run a short-lived process: %v", err)
	}
	dead, live := strconv.Itoa(cmd.Process.Pid), strconv.Itoa(os.Getpid())
	dir := t.TempDir()
	mine, err := MkdirTemp(dir, "realign")
	if err != nil {
		t.Fatal(err)
	}
	if want := "hubscope-realign-" + live + "-"; !strings.HasPrefix(filepath.Base(mine), want) {
		t.Errorf("MkdirTemp made %s, want %s*", mine, want)
	}
	f, err := CreateTemp(dir, "numpy-dfc", ".py")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if tempPID(filepath.Base(f.Name())) != os.Getpid() {
		t.Errorf("CreateTemp made %s, whose PID is not read back", f.Name())
	}
	for _, n := range []string{"hubscope-dicom-zip-" + dead + "-123", "hubscope-realign-" + dead + "-45"} {
		os.MkdirAll(filepath.Join(dir, n, "converted"), 0o700)
		os.WriteFile(filepath.Join(dir, n, "converted", "x.nii"), []byte("x"), 0o600)
	}
	for _, n := range []string{"hubscope-nibabel-" + dead + "-6.py", "hubscope-dicom-123456", "hubscope--" + dead + "-7",
		"other-x-" + dead + "-8", "hubscope-x-" + dead + "-9z"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600)
	}
	Sweep(dir)
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{"hubscope--" + dead + "-7", "hubscope-dicom-123456", filepath.Base(f.Name()), filepath.Base(mine), "hubscope-x-" + dead + "-9z", "other-x-" + dead + "-8"}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("left %q, want %q", names, want)
	}
}

// TestCreateBeside: the file is made beside path under this process's name, and a dead
// process's leftover for the same path is removed.
func TestCreateBeside(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no signal 0")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run a short-lived process: %v", err)
	}
	dir := t.TempDir()
	stale := filepath.Join(dir, ".report.pdf."+strconv.Itoa(cmd.Process.Pid)+"-1.tmp")
	os.WriteFile(stale, []byte("x"), 0o600)
	f, err := CreateBeside(filepath.Join(dir, "report.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if want := ".report.pdf." + strconv.Itoa(os.Getpid()) + "-"; filepath.Dir(f.Name()) != dir || !strings.HasPrefix(filepath.Base(f.Name()), want) {
		t.Errorf("made %s, want %s/%s*", f.Name(), dir, want)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("a dead process's %s was left", stale)
	}
}
