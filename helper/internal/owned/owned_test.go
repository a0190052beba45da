package owned

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestSweep: a temporary file of a finished process is removed; this process's, another
// base's and one without a PID in its name stay.
func TestSweep(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run a short-lived process: %v", err)
	}
	dead, live := strconv.Itoa(cmd.Process.Pid), strconv.Itoa(os.Getpid())
	dir := t.TempDir()
	for _, n := range []string{".s.nii.gz." + dead + "-123.tmp", ".s.nii.gz." + live + "-456.tmp", ".s.nii.gz.x." + dead + "-7.tmp",
		".s.nii.gz.789.tmp", ".other.nii." + dead + "-1.tmp", "s.nii.gz"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600)
	}
	Sweep(dir, "s.nii.gz")
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	// os.ReadDir sorts by name, and where the live PID sorts against "789" depends on its digits.
	want := []string{".other.nii." + dead + "-1.tmp", ".s.nii.gz." + live + "-456.tmp", ".s.nii.gz.789.tmp", ".s.nii.gz.x." + dead + "-7.tmp", "s.nii.gz"}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("left %q, want %q", names, want)
	}
	if p := Pattern("s.nii.gz"); p != ".s.nii.gz."+live+"-*.tmp" {
		t.Errorf("pattern %q", p)
	}
}
